// Package e2e runs whole-system scenarios: the sandbox control plane
// (kube-apiserver, kube-scheduler, kube-controller-manager, kwok), the local
// AWS with its kubelet stand-in, the CRDs, and the real controller binary
// (bin/terraform-provider-joist controller, from `make build`) as a
// subprocess talking to both over loopback. Scenarios assert on the
// resulting Kubernetes objects and EC2 instances.
package e2e
