package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NodeClaimStatus is what the runtime observed about a NodeClaim's instance and Node.
type NodeClaimStatus struct {
	// NodeName is the name of the Node that registered for this claim.
	// +optional
	NodeName string `json:"nodeName,omitempty"`
	// ProviderID of the instance (aws:///<zone>/<instance-id>).
	// +optional
	ProviderID string `json:"providerID,omitempty"`
	// ImageID of the instance's machine image.
	// +optional
	ImageID string `json:"imageID,omitempty"`
	// Capacity of the instance.
	// +optional
	Capacity corev1.ResourceList `json:"capacity,omitempty"`
	// Allocatable is Capacity less system overhead.
	// +optional
	Allocatable corev1.ResourceList `json:"allocatable,omitempty"`
	// Conditions: Launched, Registered, Initialized, Ready, and the
	// disruption and termination conditions.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// LastPodEventTime is the last time a pod was bound to or removed from the node.
	// +optional
	LastPodEventTime metav1.Time `json:"lastPodEventTime,omitempty"`
}
