// Package v1alpha1 holds the karpenter.sh/v1alpha1 API: NodeOverlay, which
// adjusts the prices and adds extended resources to the instance types the
// scheduler sees, wire compatible with Karpenter v1.15's. Its validation is
// the CRD's (OpenAPI and CEL from the markers below), plus the rules of
// Validate, which the controller reports on the overlay's status.
//
// +kubebuilder:object:generate=true
// +groupName=karpenter.sh
package v1alpha1
