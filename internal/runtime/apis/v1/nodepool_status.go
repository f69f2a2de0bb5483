package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NodePoolStatus is what the runtime observed about a NodePool.
type NodePoolStatus struct {
	// Resources is the total capacity of the nodes the pool owns.
	// +optional
	Resources corev1.ResourceList `json:"resources,omitempty"`
	// Nodes is the number of nodes the pool owns.
	// +kubebuilder:default:=0
	// +optional
	Nodes *int64 `json:"nodes,omitempty"`
	// NodeClassObservedGeneration is the generation of the node class last
	// seen; a change resets NodeRegistrationHealthy.
	// +optional
	NodeClassObservedGeneration int64 `json:"nodeClassObservedGeneration,omitempty"`
	// Conditions: ValidationSucceeded, NodeClassReady, NodeRegistrationHealthy, Ready.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}
