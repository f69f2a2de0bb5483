// Package userdata writes the user data nodes boot with, per AMI family:
// an AL2023 NodeConfig, an AL2 bootstrap.sh call (both in MIME multipart
// after the node class's own parts) or Bottlerocket TOML settings merged
// over the node class's. Every format carries the cluster connection, the
// kubelet settings, the NodeClaim's labels and its taints including
// karpenter.sh/unregistered:NoExecute, which the runtime lifts once the node
// registers.
package userdata
