package v1alpha1

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NodeSelectorRequirement selects the instance types (and NodePools) an
// overlay applies to, by their labels.
type NodeSelectorRequirement struct {
	// Key is the label key the requirement applies to.
	// +kubebuilder:validation:MaxLength=316
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*(\/))?([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$`
	// +kubebuilder:validation:XValidation:message="label domain \"karpenter.sh\" is restricted, use a well-known key or a key in a domain of your own",rule="self in [\"karpenter.sh/capacity-type\", \"karpenter.sh/nodepool\"] || !self.find(\"^([^/]+)\").endsWith(\"karpenter.sh\")"
	// +kubebuilder:validation:XValidation:message="label \"kubernetes.io/hostname\" is restricted, an overlay applies to instance types, not nodes",rule="self != \"kubernetes.io/hostname\""
	// +kubebuilder:validation:XValidation:message="label domain \"karpenter.k8s.aws\" is restricted, use a well-known key or a key in a domain of your own",rule="self in [\"karpenter.k8s.aws/ec2nodeclass\", \"karpenter.k8s.aws/instance-encryption-in-transit-supported\", \"karpenter.k8s.aws/instance-category\", \"karpenter.k8s.aws/instance-hypervisor\", \"karpenter.k8s.aws/instance-family\", \"karpenter.k8s.aws/instance-generation\", \"karpenter.k8s.aws/instance-local-nvme\", \"karpenter.k8s.aws/instance-size\", \"karpenter.k8s.aws/instance-cpu\", \"karpenter.k8s.aws/instance-cpu-manufacturer\", \"karpenter.k8s.aws/instance-cpu-sustained-clock-speed-mhz\", \"karpenter.k8s.aws/instance-memory\", \"karpenter.k8s.aws/instance-ebs-bandwidth\", \"karpenter.k8s.aws/instance-network-bandwidth\", \"karpenter.k8s.aws/instance-gpu-name\", \"karpenter.k8s.aws/instance-gpu-manufacturer\", \"karpenter.k8s.aws/instance-gpu-count\", \"karpenter.k8s.aws/instance-gpu-memory\", \"karpenter.k8s.aws/instance-accelerator-name\", \"karpenter.k8s.aws/instance-accelerator-manufacturer\", \"karpenter.k8s.aws/instance-accelerator-count\", \"karpenter.k8s.aws/instance-capability-flex\"] || !self.find(\"^([^/]+)\").endsWith(\"karpenter.k8s.aws\")"
	// +required
	Key string `json:"key"`
	// Operator relates the key to the values: In, NotIn, Exists,
	// DoesNotExist, Gt, Lt, Gte or Lte.
	// +kubebuilder:validation:Enum:=In;NotIn;Exists;DoesNotExist;Gt;Lt;Gte;Lte
	// +required
	Operator corev1.NodeSelectorOperator `json:"operator"`
	// Values are label values; In and NotIn need at least one, Gt, Lt, Gte
	// and Lte exactly one non-negative integer. Each value is checked as a
	// label value (Karpenter's CRD puts the same bounds on the list, where the
	// apiserver ignores them, and its controller refuses such values).
	// +kubebuilder:validation:items:MaxLength=63
	// +kubebuilder:validation:items:Pattern=`^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$`
	// +listType=atomic
	// +optional
	Values []string `json:"values,omitempty"`
}

// NodeOverlaySpec says which instance types an overlay applies to and what
// it changes about them.
// +kubebuilder:validation:XValidation:message="cannot set both 'price' and 'priceAdjustment', keep one",rule="!has(self.price) || !has(self.priceAdjustment)"
type NodeOverlaySpec struct {
	// Requirements select the instance types the overlay applies to, by
	// their well-known labels (instance type, family, zone, capacity type,
	// ...), the NodePool (karpenter.sh/nodepool) or the NodePool template's
	// labels. An empty list selects every instance type of every pool.
	// +kubebuilder:validation:XValidation:message="requirements with operator 'NotIn' must have a value defined",rule="self.all(x, x.operator == 'NotIn' ? x.values.size() != 0 : true)"
	// +kubebuilder:validation:XValidation:message="requirements with operator 'In' must have a value defined",rule="self.all(x, x.operator == 'In' ? x.values.size() != 0 : true)"
	// +kubebuilder:validation:XValidation:message="requirements operator 'Gt', 'Lt', 'Gte' or 'Lte' must have a single positive integer value",rule="self.all(x, (x.operator == 'Gt' || x.operator == 'Lt' || x.operator == 'Gte' || x.operator == 'Lte') ? (x.values.size() == 1 && int(x.values[0]) >= 0) : true)"
	// +kubebuilder:validation:MaxItems:=100
	// +listType=atomic
	// +required
	Requirements []NodeSelectorRequirement `json:"requirements,omitempty"`
	// PriceAdjustment changes the price of the matching offerings: a signed
	// amount in dollars per hour ("-0.5", "+1.2") or a signed percentage
	// ("+10%", "-15%", at most "-100%"). A price never goes below 0.
	// +kubebuilder:validation:Pattern=`^(([+-]{1}(\d*\.?\d+))|(\+{1}\d*\.?\d+%)|(^(-\d{1,2}(\.\d+)?%)$)|(-100%))$`
	// +optional
	PriceAdjustment *string `json:"priceAdjustment,omitempty"`
	// Price replaces the price of the matching offerings, in dollars per hour.
	// +kubebuilder:validation:Pattern=`^\d+(\.\d+)?$`
	// +optional
	Price *string `json:"price,omitempty"`
	// Capacity adds extended resources to the matching instance types'
	// capacity and allocatable (a device plugin must then register them on
	// the node). It cannot change cpu, memory, ephemeral-storage or pods.
	// +kubebuilder:validation:XValidation:message="capacity may only add extended resources, not cpu, memory, ephemeral-storage or pods",rule="self.all(x, !(x in ['cpu', 'memory', 'ephemeral-storage', 'pods']))"
	// +optional
	Capacity corev1.ResourceList `json:"capacity,omitempty"`
	// Weight orders overlays: a higher weight wins where two change the same
	// price or resource of an instance type; unset counts as 0. Two overlays
	// of the same weight that change the same thing conflict: the one whose
	// name comes later in the alphabet is applied, the other is not.
	// +kubebuilder:validation:Minimum:=1
	// +kubebuilder:validation:Maximum:=10000
	// +optional
	Weight *int32 `json:"weight,omitempty"`
}

// NodeOverlayStatus is what the controller observed about an overlay.
type NodeOverlayStatus struct {
	// Conditions: ValidationSucceeded (False with reason RuntimeValidation
	// or Conflict when the overlay is not applied) and Ready.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// NodeOverlay adjusts the instance types the scheduler considers: their
// offerings' prices and their extended resources. Karpenter's NodeOverlay
// feature gate turns it on.
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:path=nodeoverlays,scope=Cluster,categories=karpenter,shortName={overlays}
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status",description=""
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description=""
// +kubebuilder:printcolumn:name="Weight",type="integer",JSONPath=".spec.weight",priority=1,description=""
// +kubebuilder:subresource:status
type NodeOverlay struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec   NodeOverlaySpec   `json:"spec"`
	Status NodeOverlayStatus `json:"status,omitempty"`
}

// NodeOverlayList is a list of NodeOverlays.
// +kubebuilder:object:root=true
type NodeOverlayList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []NodeOverlay `json:"items"`
}

// NodeSelectorRequirement is the requirement as corev1 spells it.
func (r NodeSelectorRequirement) NodeSelectorRequirement() corev1.NodeSelectorRequirement {
	return corev1.NodeSelectorRequirement{Key: r.Key, Operator: r.Operator, Values: r.Values}
}

// Weight is the overlay's weight, 0 when unset.
func (in *NodeOverlay) Weight() int32 {
	if in.Spec.Weight == nil {
		return 0
	}
	return *in.Spec.Weight
}

// PriceChange is the overlay's price or price adjustment ("" for neither).
func (in *NodeOverlay) PriceChange() string {
	switch {
	case in.Spec.Price != nil:
		return *in.Spec.Price
	case in.Spec.PriceAdjustment != nil:
		return *in.Spec.PriceAdjustment
	}
	return ""
}

// OrderByWeight sorts overlays in the order they are applied, as Karpenter
// does: higher weight first and, among equal weights, the name later in the
// alphabet first.
func OrderByWeight(overlays []NodeOverlay) {
	sort.SliceStable(overlays, func(a, b int) bool {
		wa, wb := overlays[a].Weight(), overlays[b].Weight()
		if wa != wb {
			return wa > wb
		}
		return overlays[a].Name > overlays[b].Name
	})
}

// GetConditions and SetConditions let the condition helpers treat the
// overlay as the other kinds.
func (in *NodeOverlay) GetConditions() []metav1.Condition { return in.Status.Conditions }

// SetConditions replaces the overlay's conditions.
func (in *NodeOverlay) SetConditions(conditions []metav1.Condition) {
	in.Status.Conditions = conditions
}
