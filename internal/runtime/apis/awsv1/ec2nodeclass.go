package awsv1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// EC2NodeClassSpec is the EC2 launch configuration shared by the NodePools
// that reference the EC2NodeClass.
type EC2NodeClassSpec struct {
	// SubnetSelectorTerms select the subnets to launch into; terms are ORed,
	// fields within a term ANDed.
	// +kubebuilder:validation:XValidation:message="subnetSelectorTerms cannot be empty, add a term with 'tags' or 'id'",rule="self.size() != 0"
	// +kubebuilder:validation:XValidation:message="expected at least one, got none, ['tags', 'id'] in each subnetSelectorTerms entry",rule="self.all(x, has(x.tags) || has(x.id))"
	// +kubebuilder:validation:XValidation:message="'id' is mutually exclusive, cannot be set with a combination of other fields in a subnet selector term",rule="!self.all(x, has(x.id) && has(x.tags))"
	// +kubebuilder:validation:MaxItems:=30
	// +required
	SubnetSelectorTerms []SubnetSelectorTerm `json:"subnetSelectorTerms" hash:"ignore"`
	// SecurityGroupSelectorTerms select the security groups every instance gets.
	// +kubebuilder:validation:XValidation:message="securityGroupSelectorTerms cannot be empty, add a term with 'tags', 'id' or 'name'",rule="self.size() != 0"
	// +kubebuilder:validation:XValidation:message="expected at least one, got none, ['tags', 'id', 'name'] in each securityGroupSelectorTerms entry",rule="self.all(x, has(x.tags) || has(x.id) || has(x.name))"
	// +kubebuilder:validation:XValidation:message="'id' is mutually exclusive, cannot be set with a combination of other fields in a security group selector term",rule="!self.all(x, has(x.id) && (has(x.tags) || has(x.name)))"
	// +kubebuilder:validation:XValidation:message="'name' is mutually exclusive, cannot be set with a combination of other fields in a security group selector term",rule="!self.all(x, has(x.name) && (has(x.tags) || has(x.id)))"
	// +kubebuilder:validation:MaxItems:=30
	// +required
	SecurityGroupSelectorTerms []SecurityGroupSelectorTerm `json:"securityGroupSelectorTerms" hash:"ignore"`
	// CapacityReservationSelectorTerms select the on-demand capacity
	// reservations, capacity blocks and interruptible reservations offered
	// as reserved capacity (karpenter.sh/capacity-type reserved); open
	// reservations are used only when selected. Nodes in a capacity block
	// are replaced 40 minutes before the block ends.
	// +kubebuilder:validation:XValidation:message="expected at least one, got none, ['tags', 'id', 'instanceMatchCriteria'] in each capacityReservationSelectorTerms entry",rule="self.all(x, has(x.tags) || has(x.id) || has(x.instanceMatchCriteria))"
	// +kubebuilder:validation:XValidation:message="'id' is mutually exclusive, cannot be set along with other fields in a capacity reservation selector term",rule="!self.all(x, has(x.id) && (has(x.tags) || has(x.ownerID) || has(x.instanceMatchCriteria)))"
	// +kubebuilder:validation:MaxItems:=30
	// +optional
	CapacityReservationSelectorTerms []CapacityReservationSelectorTerm `json:"capacityReservationSelectorTerms,omitempty" hash:"ignore"`
	// PlacementGroupSelector names the placement group (by name or ID) every
	// instance of the class launches into. Only instance types that support
	// the group's strategy are launched; a partition group's partition
	// number labels the node (karpenter.k8s.aws/placement-group-partition).
	// The PlacementGroupReady condition is False while the group is not
	// found.
	// +optional
	PlacementGroupSelector *PlacementGroupSelector `json:"placementGroupSelector,omitempty"`
	// AssociatePublicIPAddress sets whether instances get a public IP; unset
	// follows the subnet's MapPublicIpOnLaunch.
	// +optional
	AssociatePublicIPAddress *bool `json:"associatePublicIPAddress,omitempty"`
	// IPPrefixCount is the number of IPv4 prefixes (/28) assigned to the
	// primary network interface at launch (Ipv4PrefixCount in the launch
	// template), for prefix delegation. Pod capacity stays the ENI-limited
	// count, as in Karpenter: set kubelet maxPods to use the prefixes.
	// +kubebuilder:validation:Minimum:=0
	// +optional
	IPPrefixCount *int32 `json:"ipPrefixCount,omitempty" hash:"ignore"`
	// AMISelectorTerms select the AMIs; an alias ("al2023@latest") must be the only term.
	// +kubebuilder:validation:XValidation:message="expected at least one, got none, ['tags', 'id', 'name', 'alias', 'ssmParameter'] in each amiSelectorTerms entry",rule="self.all(x, has(x.tags) || has(x.id) || has(x.name) || has(x.alias) || has(x.ssmParameter))"
	// +kubebuilder:validation:XValidation:message="'id' is mutually exclusive, cannot be set with a combination of other fields in amiSelectorTerms",rule="!self.exists(x, has(x.id) && (has(x.alias) || has(x.tags) || has(x.name) || has(x.owner)))"
	// +kubebuilder:validation:XValidation:message="'alias' is mutually exclusive, cannot be set with a combination of other fields in amiSelectorTerms",rule="!self.exists(x, has(x.alias) && (has(x.id) || has(x.tags) || has(x.name) || has(x.owner)))"
	// +kubebuilder:validation:XValidation:message="'alias' is mutually exclusive, cannot be set with a combination of other amiSelectorTerms: keep the alias term alone",rule="!(self.exists(x, has(x.alias)) && self.size() != 1)"
	// +kubebuilder:validation:MinItems:=1
	// +kubebuilder:validation:MaxItems:=30
	// +required
	AMISelectorTerms []AMISelectorTerm `json:"amiSelectorTerms" hash:"ignore"`
	// AMIFamily decides the user-data format and default block devices. It is
	// inferred from an alias; without one it is required. With an alias it
	// may only be the alias's family or Custom.
	// +kubebuilder:validation:Enum:={AL2,AL2023,Bottlerocket,Custom,Windows2019,Windows2022,Windows2025}
	// +optional
	AMIFamily *string `json:"amiFamily,omitempty" hash:"ignore"`
	// UserData in the AMI family's format; the runtime merges its bootstrap
	// settings into it (except for Custom).
	// +optional
	UserData *string `json:"userData,omitempty"`
	// Role is the IAM role for nodes; the runtime manages an instance profile
	// for it. Exactly one of role and instanceProfile.
	// +kubebuilder:validation:XValidation:rule="self != ''",message="role cannot be empty, set it to the node IAM role name"
	// +optional
	Role string `json:"role,omitempty"`
	// InstanceProfile is an existing instance profile for nodes. Exactly one
	// of role and instanceProfile.
	// +kubebuilder:validation:XValidation:rule="self != ''",message="instanceProfile cannot be empty, set it to an existing instance profile name"
	// +optional
	InstanceProfile *string `json:"instanceProfile,omitempty"`
	// Tags are added to instances, volumes, network interfaces and launch templates.
	// +kubebuilder:validation:XValidation:message="empty tag keys aren't supported",rule="self.all(k, k != '')"
	// +kubebuilder:validation:XValidation:message="tag contains a restricted tag matching eks:eks-cluster-name",rule="self.all(k, k !='eks:eks-cluster-name')"
	// +kubebuilder:validation:XValidation:message="tag contains a restricted tag matching kubernetes.io/cluster/",rule="self.all(k, !k.startsWith('kubernetes.io/cluster') )"
	// +kubebuilder:validation:XValidation:message="tag contains a restricted tag matching karpenter.sh/nodepool",rule="self.all(k, k != 'karpenter.sh/nodepool')"
	// +kubebuilder:validation:XValidation:message="tag contains a restricted tag matching karpenter.sh/nodeclaim",rule="self.all(k, k !='karpenter.sh/nodeclaim')"
	// +kubebuilder:validation:XValidation:message="tag contains a restricted tag matching karpenter.k8s.aws/ec2nodeclass",rule="self.all(k, k !='karpenter.k8s.aws/ec2nodeclass')"
	// +optional
	Tags map[string]string `json:"tags,omitempty"`
	// Kubelet configures the kubelet of the nodes: any field of the kubelet's
	// KubeletConfiguration (kubelet.config.k8s.io/v1beta1), by its JSON name.
	// The AL2023 family passes every field to the node's NodeConfig; the
	// other families take clusterDNS, maxPods, podsPerCore, systemReserved,
	// kubeReserved, evictionHard, evictionSoft, evictionSoftGracePeriod,
	// evictionMaxPodGracePeriod, imageGCHighThresholdPercent,
	// imageGCLowThresholdPercent and cpuCFSQuota. The runtime reports a
	// configuration it cannot apply on the ValidationSucceeded condition
	// (and terraform plan refuses it).
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	// +optional
	Kubelet KubeletConfiguration `json:"kubelet,omitempty" hash:"ignore"`
	// BlockDeviceMappings replace the AMI family's default volumes.
	// +kubebuilder:validation:XValidation:message="must have only one blockDeviceMappings with rootVolume",rule="self.filter(x, has(x.rootVolume)?x.rootVolume==true:false).size() <= 1"
	// +kubebuilder:validation:MaxItems:=50
	// +optional
	BlockDeviceMappings []*BlockDeviceMapping `json:"blockDeviceMappings,omitempty"`
	// InstanceStorePolicy says what to do with local NVMe disks (RAID0: use
	// them for kubelet and container storage).
	// +optional
	InstanceStorePolicy *InstanceStorePolicy `json:"instanceStorePolicy,omitempty"`
	// NetworkInterfaces replace the single primary interface (EFA set-ups):
	// the launch template declares each, and only instance types with the
	// network cards, device slots and EFA interfaces they name are launched.
	// They must include the primary interface (card 0, device 0, type
	// interface). Nodes advertise one vpc.amazonaws.com/efa per efa-only
	// interface, and efa-only interfaces on card 0 lower the ENI-limited pod
	// count.
	// +kubebuilder:validation:XValidation:message="networkInterfaces must include the primary interface {networkCardIndex: 0, deviceIndex: 0, interfaceType: interface}",rule="self.size() == 0 || self.exists(x, x.deviceIndex == 0 && x.networkCardIndex == 0 && x.interfaceType == 'interface')"
	// +kubebuilder:validation:XValidation:message="networkInterfaces must not repeat a networkCardIndex and deviceIndex pair, and may have at most one efa-only interface per network card",rule="self.all(x, self.filter(y, x.networkCardIndex == y.networkCardIndex && x.deviceIndex == y.deviceIndex).size() == 1 && (x.interfaceType != 'efa-only' || self.filter(y, x.networkCardIndex == y.networkCardIndex && y.interfaceType == 'efa-only').size() == 1))"
	// +kubebuilder:validation:MaxItems:=150
	// +optional
	NetworkInterfaces []NetworkInterface `json:"networkInterfaces,omitempty"`
	// DetailedMonitoring turns on 1-minute CloudWatch monitoring.
	// +optional
	DetailedMonitoring *bool `json:"detailedMonitoring,omitempty"`
	// MetadataOptions for the instance metadata service of launched instances.
	// +kubebuilder:default={"httpEndpoint":"enabled","httpProtocolIPv6":"disabled","httpPutResponseHopLimit":1,"httpTokens":"required"}
	// +optional
	MetadataOptions *MetadataOptions `json:"metadataOptions,omitempty"`
	// EnclaveOptions turns on AWS Nitro Enclaves for the instances; it is
	// passed to the launch template, and only instance types with enclave
	// support are launched. Omitted, or enabled false, leaves enclaves off.
	// +optional
	EnclaveOptions *EnclaveOptions `json:"enclaveOptions,omitempty"`
	// ConnectionTracking sets the idle connection tracking timeouts of the
	// network interfaces the launch template declares (EFA-only interfaces
	// excepted). Interfaces the CNI adds later are the CNI's to configure.
	// Only Nitro instance types are launched with it.
	// +optional
	ConnectionTracking *ConnectionTracking `json:"connectionTracking,omitempty"`
	// Context is passed as the CreateFleet Context parameter.
	// +optional
	Context *string `json:"context,omitempty"`
	// CPUOptions are the CPU options of the instances; with nested
	// virtualization enabled, only instance types whose processors support
	// it are launched.
	// +optional
	CPUOptions *CPUOptions `json:"cpuOptions,omitempty"`
}

// EnclaveOptions says whether instances run AWS Nitro Enclaves.
type EnclaveOptions struct {
	// Enabled turns Nitro Enclaves on.
	// +required
	Enabled bool `json:"enabled"`
}

// ConnectionTracking holds idle connection tracking timeouts, in seconds;
// EC2 applies its defaults to those left out. They need Nitro instances.
// +kubebuilder:validation:XValidation:message="set at least one of tcpEstablishedTimeout, udpStreamTimeout and udpTimeout, or remove connectionTracking",rule="has(self.tcpEstablishedTimeout) || has(self.udpStreamTimeout) || has(self.udpTimeout)"
type ConnectionTracking struct {
	// TCPEstablishedTimeout is the timeout for idle established TCP
	// connections: 60 to 432000 (5 days).
	// +kubebuilder:validation:Minimum:=60
	// +kubebuilder:validation:Maximum:=432000
	// +optional
	TCPEstablishedTimeout *int32 `json:"tcpEstablishedTimeout,omitempty"`
	// UDPStreamTimeout is the timeout for idle UDP flows that have seen more
	// than one request-response exchange: 60 to 180.
	// +kubebuilder:validation:Minimum:=60
	// +kubebuilder:validation:Maximum:=180
	// +optional
	UDPStreamTimeout *int32 `json:"udpStreamTimeout,omitempty"`
	// UDPTimeout is the timeout for idle UDP flows in one direction or of a
	// single request-response exchange: 30 to 60.
	// +kubebuilder:validation:Minimum:=30
	// +kubebuilder:validation:Maximum:=60
	// +optional
	UDPTimeout *int32 `json:"udpTimeout,omitempty"`
}

// CPUOptions are CPU settings of the instances.
type CPUOptions struct {
	// NestedVirtualization, enabled, lets the instances run virtual machines;
	// it is passed to the launch template, and EC2 refuses a launch on an
	// instance type that does not support it.
	// +kubebuilder:validation:Enum:={enabled,disabled}
	// +optional
	NestedVirtualization *string `json:"nestedVirtualization,omitempty"`
}

// EC2NodeClass configures how EC2 instances are launched for NodePools.
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:path=ec2nodeclasses,scope=Cluster,categories=karpenter,shortName={ec2nc,ec2ncs}
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status",description=""
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description=""
// +kubebuilder:printcolumn:name="Role",type="string",JSONPath=".spec.role",priority=1,description=""
type EC2NodeClass struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +kubebuilder:validation:XValidation:message="must specify exactly one of ['role', 'instanceProfile']",rule="(has(self.role) && !has(self.instanceProfile)) || (!has(self.role) && has(self.instanceProfile))"
	// +kubebuilder:validation:XValidation:message="if set, amiFamily must be 'AL2' or 'Custom' when using an AL2 alias",rule="!has(self.amiFamily) || (self.amiSelectorTerms.exists(x, has(x.alias) && x.alias.find('^[^@]+') == 'al2') ? (self.amiFamily == 'Custom' || self.amiFamily == 'AL2') : true)"
	// +kubebuilder:validation:XValidation:message="if set, amiFamily must be 'AL2023' or 'Custom' when using an AL2023 alias",rule="!has(self.amiFamily) || (self.amiSelectorTerms.exists(x, has(x.alias) && x.alias.find('^[^@]+') == 'al2023') ? (self.amiFamily == 'Custom' || self.amiFamily == 'AL2023') : true)"
	// +kubebuilder:validation:XValidation:message="if set, amiFamily must be 'Bottlerocket' or 'Custom' when using a Bottlerocket alias",rule="!has(self.amiFamily) || (self.amiSelectorTerms.exists(x, has(x.alias) && x.alias.find('^[^@]+') == 'bottlerocket') ? (self.amiFamily == 'Custom' || self.amiFamily == 'Bottlerocket') : true)"
	// +kubebuilder:validation:XValidation:message="if set, amiFamily must be 'Windows2019' or 'Custom' when using a Windows2019 alias",rule="!has(self.amiFamily) || (self.amiSelectorTerms.exists(x, has(x.alias) && x.alias.find('^[^@]+') == 'windows2019') ? (self.amiFamily == 'Custom' || self.amiFamily == 'Windows2019') : true)"
	// +kubebuilder:validation:XValidation:message="if set, amiFamily must be 'Windows2022' or 'Custom' when using a Windows2022 alias",rule="!has(self.amiFamily) || (self.amiSelectorTerms.exists(x, has(x.alias) && x.alias.find('^[^@]+') == 'windows2022') ? (self.amiFamily == 'Custom' || self.amiFamily == 'Windows2022') : true)"
	// +kubebuilder:validation:XValidation:message="if set, amiFamily must be 'Windows2025' or 'Custom' when using a Windows2025 alias",rule="!has(self.amiFamily) || (self.amiSelectorTerms.exists(x, has(x.alias) && x.alias.find('^[^@]+') == 'windows2025') ? (self.amiFamily == 'Custom' || self.amiFamily == 'Windows2025') : true)"
	// +kubebuilder:validation:XValidation:message="must specify amiFamily if amiSelectorTerms does not contain an alias",rule="self.amiSelectorTerms.exists(x, has(x.alias)) ? true : has(self.amiFamily)"
	// +required
	Spec   EC2NodeClassSpec   `json:"spec"`
	Status EC2NodeClassStatus `json:"status,omitempty"`
}

// EC2NodeClassList is a list of EC2NodeClasses.
// +kubebuilder:object:root=true
type EC2NodeClassList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []EC2NodeClass `json:"items"`
}
