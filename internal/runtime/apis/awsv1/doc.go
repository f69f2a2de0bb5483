// Package awsv1 holds the karpenter.k8s.aws/v1 API: the EC2NodeClass, which
// tells the runtime how to launch EC2 instances (subnets, security groups,
// AMIs, IAM, user data, kubelet settings, storage, instance metadata).
//
// It is a separate package from v1 (karpenter.sh/v1) because each Go package
// maps to one API group. The well-known AWS labels, annotations and condition
// types are declared in v1 with the core ones, so callers find every
// well-known key in one place.
//
// Wire compatible with Karpenter's EC2NodeClass up to v1.14; left out are
// fields that are unreleased there or not yet supported here:
// connectionTracking, cpuOptions, enclaveOptions, and the open-map kubelet
// configuration with CEL expressions.
//
// +kubebuilder:object:generate=true
// +groupName=karpenter.k8s.aws
// +versionName=v1
package awsv1
