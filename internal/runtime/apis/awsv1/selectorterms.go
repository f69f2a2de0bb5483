package awsv1

// SubnetSelectorTerm selects subnets by tags or by ID.
type SubnetSelectorTerm struct {
	// Tags to match; the value "*" matches any value of the key.
	// +kubebuilder:validation:XValidation:message="empty tag keys or values aren't supported",rule="self.all(k, k != '' && self[k] != '')"
	// +kubebuilder:validation:MaxProperties:=20
	// +optional
	Tags map[string]string `json:"tags,omitempty"`
	// ID of the subnet.
	// +kubebuilder:validation:Pattern="^subnet-[0-9a-z]+$"
	// +optional
	ID string `json:"id,omitempty"`
}

// SecurityGroupSelectorTerm selects security groups by tags, ID or group name.
type SecurityGroupSelectorTerm struct {
	// Tags to match; the value "*" matches any value of the key.
	// +kubebuilder:validation:XValidation:message="empty tag keys or values aren't supported",rule="self.all(k, k != '' && self[k] != '')"
	// +kubebuilder:validation:MaxProperties:=20
	// +optional
	Tags map[string]string `json:"tags,omitempty"`
	// ID of the security group.
	// +kubebuilder:validation:Pattern:="^sg-[0-9a-z]+$"
	// +optional
	ID string `json:"id,omitempty"`
	// Name is the security group's name (not its Name tag).
	// +optional
	Name string `json:"name,omitempty"`
}

// CapacityReservationSelectorTerm selects on-demand capacity reservations and capacity blocks.
type CapacityReservationSelectorTerm struct {
	// Tags to match; the value "*" matches any value of the key.
	// +kubebuilder:validation:XValidation:message="empty tag keys or values aren't supported",rule="self.all(k, k != '' && self[k] != '')"
	// +kubebuilder:validation:MaxProperties:=20
	// +optional
	Tags map[string]string `json:"tags,omitempty"`
	// ID of the capacity reservation.
	// +kubebuilder:validation:Pattern:="^cr-[0-9a-z]+$"
	// +optional
	ID string `json:"id,omitempty"`
	// OwnerID is the 12-digit account that owns the reservation.
	// +kubebuilder:validation:Pattern:="^[0-9]{12}$"
	// +optional
	OwnerID string `json:"ownerID,omitempty"`
	// InstanceMatchCriteria selects open or targeted reservations.
	// +kubebuilder:validation:Enum:={open,targeted}
	// +optional
	InstanceMatchCriteria string `json:"instanceMatchCriteria,omitempty"`
}

// AMISelectorTerm selects AMIs by alias, ID, name and owner, tags or an SSM parameter.
type AMISelectorTerm struct {
	// Alias selects an EKS-optimised AMI as "family@version": family one of
	// al2, al2023, bottlerocket, windows2019, windows2022, windows2025;
	// version "latest" or a release ("v20240807"). Windows families take only
	// "latest". "latest" drifts every node on each AMI release.
	// +kubebuilder:validation:XValidation:message="'alias' is improperly formatted, must match the format 'family@version'",rule="self.matches('^[a-zA-Z0-9]+@.+$')"
	// +kubebuilder:validation:XValidation:message="family is not supported, must be one of the following: 'al2', 'al2023', 'bottlerocket', 'windows2019', 'windows2022', 'windows2025'",rule="self.split('@')[0] in ['al2','al2023','bottlerocket','windows2019','windows2022','windows2025']"
	// +kubebuilder:validation:XValidation:message="windows families may only specify version 'latest'",rule="self.split('@')[0] in ['windows2019','windows2022','windows2025'] ? self.split('@')[1] == 'latest' : true"
	// +kubebuilder:validation:MaxLength=30
	// +optional
	Alias string `json:"alias,omitempty"`
	// Tags to match; the value "*" matches any value of the key.
	// +kubebuilder:validation:XValidation:message="empty tag keys or values aren't supported",rule="self.all(k, k != '' && self[k] != '')"
	// +kubebuilder:validation:MaxProperties:=20
	// +optional
	Tags map[string]string `json:"tags,omitempty"`
	// ID of the AMI.
	// +kubebuilder:validation:Pattern:="^ami-[0-9a-z]+$"
	// +optional
	ID string `json:"id,omitempty"`
	// Name of the AMI (wildcards allowed).
	// +optional
	Name string `json:"name,omitempty"`
	// Owner: account IDs, "self", "amazon" or "aws-marketplace"; defaults to
	// "self,amazon" when only a name is given.
	// +optional
	Owner string `json:"owner,omitempty"`
	// SSMParameter is the name or ARN of an SSM parameter holding an AMI ID.
	// +optional
	SSMParameter string `json:"ssmParameter,omitempty"`
}
