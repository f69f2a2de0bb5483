package awsv1

// NetworkInterface is one network interface of launched instances, for EFA
// configurations; without any, instances get a single primary interface.
type NetworkInterface struct {
	// NetworkCardIndex is the network card the interface is attached to.
	// +kubebuilder:validation:Minimum:=0
	// +required
	NetworkCardIndex int32 `json:"networkCardIndex"`
	// DeviceIndex is the interface's position on its card.
	// +kubebuilder:validation:Minimum:=0
	// +required
	DeviceIndex int32 `json:"deviceIndex"`
	// InterfaceType: "interface" (ENA, with IP addresses) or "efa-only"
	// (EFA device without IP networking, which does not use pod IPs).
	// +kubebuilder:validation:Enum:={interface,efa-only}
	// +required
	InterfaceType NetworkInterfaceType `json:"interfaceType"`
}

// NetworkInterfaceType is the EC2 interface type of a NetworkInterface.
type NetworkInterfaceType string

const (
	NetworkInterfaceTypeInterface NetworkInterfaceType = "interface"
	NetworkInterfaceTypeEFAOnly   NetworkInterfaceType = "efa-only"
)

// PlacementGroupSelector selects the one placement group instances launch
// into, by name or by ID.
// +kubebuilder:validation:XValidation:message="expected at least one, got none, ['name', 'id'] in placementGroupSelector",rule="has(self.name) || has(self.id)"
// +kubebuilder:validation:XValidation:message="'name' and 'id' are mutually exclusive in placementGroupSelector, keep one",rule="!(has(self.name) && has(self.id))"
type PlacementGroupSelector struct {
	// Name of the placement group.
	// +kubebuilder:validation:MinLength:=1
	// +optional
	Name string `json:"name,omitempty"`
	// ID of the placement group.
	// +kubebuilder:validation:Pattern:="^pg-[0-9a-z]+$"
	// +optional
	ID string `json:"id,omitempty"`
}
