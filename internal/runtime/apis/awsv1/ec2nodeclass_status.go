package awsv1

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// EC2NodeClassStatus holds what the selectors resolved to.
type EC2NodeClassStatus struct {
	// Subnets selected, most available IPs first.
	// +optional
	Subnets []Subnet `json:"subnets,omitempty"`
	// SecurityGroups selected.
	// +optional
	SecurityGroups []SecurityGroup `json:"securityGroups,omitempty"`
	// CapacityReservations selected.
	// +optional
	CapacityReservations []CapacityReservation `json:"capacityReservations,omitempty"`
	// AMIs selected, with the instance-type requirements each suits.
	// +optional
	AMIs []AMI `json:"amis,omitempty"`
	// InstanceProfile nodes are launched with.
	// +optional
	InstanceProfile string `json:"instanceProfile,omitempty"`
	// Conditions: SubnetsReady, SecurityGroupsReady, AMIsReady,
	// InstanceProfileReady, CapacityReservationsReady, PlacementGroupReady,
	// ValidationSucceeded, Ready.
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Subnet is a resolved subnet.
type Subnet struct {
	// ID of the subnet.
	// +required
	ID string `json:"id"`
	// Zone of the subnet.
	// +required
	Zone string `json:"zone"`
	// ZoneID of the subnet's zone.
	// +optional
	ZoneID string `json:"zoneID,omitempty"`
}

// SecurityGroup is a resolved security group.
type SecurityGroup struct {
	// ID of the security group.
	// +required
	ID string `json:"id"`
	// Name of the security group.
	// +optional
	Name string `json:"name,omitempty"`
}

// AMI is a resolved AMI and the instance types it suits.
type AMI struct {
	// ID of the AMI.
	// +required
	ID string `json:"id"`
	// Deprecated AMIs are used only when no other fits.
	// +optional
	Deprecated bool `json:"deprecated,omitempty"`
	// Name of the AMI.
	// +optional
	Name string `json:"name,omitempty"`
	// Requirements an instance type must meet to use the AMI.
	// +required
	Requirements []corev1.NodeSelectorRequirement `json:"requirements"`
}

// CapacityReservation is a resolved capacity reservation.
type CapacityReservation struct {
	// AvailabilityZone of the reservation.
	// +required
	AvailabilityZone string `json:"availabilityZone"`
	// EndTime after which the reservation is released.
	// +optional
	EndTime *metav1.Time `json:"endTime,omitempty"`
	// ID of the reservation.
	// +kubebuilder:validation:Pattern:="^cr-[0-9a-z]+$"
	// +required
	ID string `json:"id"`
	// InstanceMatchCriteria: open or targeted.
	// +kubebuilder:validation:Enum:={open,targeted}
	// +required
	InstanceMatchCriteria string `json:"instanceMatchCriteria"`
	// InstanceType the reservation is for.
	// +required
	InstanceType string `json:"instanceType"`
	// OwnerID is the owning account.
	// +kubebuilder:validation:Pattern:="^[0-9]{12}$"
	// +required
	OwnerID string `json:"ownerID"`
	// ReservationType: default (ODCR) or capacity-block.
	// +kubebuilder:validation:Enum:={default,capacity-block}
	// +kubebuilder:default=default
	// +optional
	ReservationType CapacityReservationType `json:"reservationType,omitempty"`
	// State: active, or expiring (a capacity block within 40 minutes of its end).
	// +kubebuilder:validation:Enum:={active,expiring}
	// +kubebuilder:default=active
	// +optional
	State CapacityReservationState `json:"state,omitempty"`
	// Interruptible reservations may be reclaimed by their owner.
	// +optional
	Interruptible bool `json:"interruptible,omitempty"`
}

// CapacityReservationType is default (an ODCR) or capacity-block.
type CapacityReservationType string

const (
	CapacityReservationTypeDefault       CapacityReservationType = "default"
	CapacityReservationTypeCapacityBlock CapacityReservationType = "capacity-block"
)

// CapacityReservationState is active or expiring.
type CapacityReservationState string

const (
	CapacityReservationStateActive   CapacityReservationState = "active"
	CapacityReservationStateExpiring CapacityReservationState = "expiring"
)

// CapacityBlockExpiringWindow is how long before a capacity block ends that it counts as expiring.
const CapacityBlockExpiringWindow = 40 * time.Minute
