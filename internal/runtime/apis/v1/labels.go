package v1

import corev1 "k8s.io/api/core/v1"

// AWSGroup is the API group of the EC2NodeClass; its labels share the
// restricted-domain rules of karpenter.sh, so they are declared here too.
const AWSGroup = "karpenter.k8s.aws"

// Labels Karpenter writes on NodeClaims and Nodes (spec 2.4).
const (
	NodePoolLabelKey        = Group + "/nodepool"
	CapacityTypeLabelKey    = Group + "/capacity-type"
	NodeRegisteredLabelKey  = Group + "/registered"
	NodeInitializedLabelKey = Group + "/initialized"
	// NodeDoNotSyncTaintsLabelKey set to "true" makes registration leave the
	// Node's taints alone because the kubelet already registered them.
	NodeDoNotSyncTaintsLabelKey = Group + "/do-not-sync-taints"

	// NodeExcludeFromExternalLoadBalancersLabelKey is set to
	// NodeExcludeFromExternalLoadBalancersLabelValue when a node is tainted
	// for disruption, so load balancers stop sending it traffic first.
	NodeExcludeFromExternalLoadBalancersLabelKey   = corev1.LabelNodeExcludeBalancers
	NodeExcludeFromExternalLoadBalancersLabelValue = "karpenter"
)

// Values of the capacity-type label.
const (
	CapacityTypeSpot     = "spot"
	CapacityTypeOnDemand = "on-demand"
	CapacityTypeReserved = "reserved"
)

// Values of the kubernetes.io/arch and kubernetes.io/os labels the runtime offers.
const (
	ArchitectureAmd64 = "amd64"
	ArchitectureArm64 = "arm64"
)

// AWS labels (karpenter.k8s.aws/*, spec 2.5) describing instance types.
const (
	LabelNodeClass                            = AWSGroup + "/ec2nodeclass"
	LabelInstanceCategory                     = AWSGroup + "/instance-category"
	LabelInstanceFamily                       = AWSGroup + "/instance-family"
	LabelInstanceGeneration                   = AWSGroup + "/instance-generation"
	LabelInstanceSize                         = AWSGroup + "/instance-size"
	LabelInstanceCPU                          = AWSGroup + "/instance-cpu"
	LabelInstanceCPUManufacturer              = AWSGroup + "/instance-cpu-manufacturer"
	LabelInstanceCPUSustainedClockSpeedMhz    = AWSGroup + "/instance-cpu-sustained-clock-speed-mhz"
	LabelInstanceMemory                       = AWSGroup + "/instance-memory"
	LabelInstanceEBSBandwidth                 = AWSGroup + "/instance-ebs-bandwidth"
	LabelInstanceNetworkBandwidth             = AWSGroup + "/instance-network-bandwidth"
	LabelInstanceGPUName                      = AWSGroup + "/instance-gpu-name"
	LabelInstanceGPUManufacturer              = AWSGroup + "/instance-gpu-manufacturer"
	LabelInstanceGPUCount                     = AWSGroup + "/instance-gpu-count"
	LabelInstanceGPUMemory                    = AWSGroup + "/instance-gpu-memory"
	LabelInstanceAcceleratorName              = AWSGroup + "/instance-accelerator-name"
	LabelInstanceAcceleratorManufacturer      = AWSGroup + "/instance-accelerator-manufacturer"
	LabelInstanceAcceleratorCount             = AWSGroup + "/instance-accelerator-count"
	LabelInstanceLocalNVME                    = AWSGroup + "/instance-local-nvme"
	LabelInstanceHypervisor                   = AWSGroup + "/instance-hypervisor"
	LabelInstanceEncryptionInTransitSupported = AWSGroup + "/instance-encryption-in-transit-supported"
	LabelInstanceCapabilityFlex               = AWSGroup + "/instance-capability-flex"
	LabelInstanceTenancy                      = AWSGroup + "/instance-tenancy"
	LabelCapacityReservationID                = AWSGroup + "/capacity-reservation-id"
	LabelCapacityReservationType              = AWSGroup + "/capacity-reservation-type"
	LabelCapacityReservationInterruptible     = AWSGroup + "/capacity-reservation-interruptible"
	LabelPlacementGroupID                     = AWSGroup + "/placement-group-id"
	LabelPlacementGroupPartition              = AWSGroup + "/placement-group-partition"
	LabelTopologyZoneID                       = "topology.k8s.aws/zone-id"
)

// WellKnownLabels are the label keys the scheduler understands without a
// NodePool declaring them: every instance type defines a value (or the
// absence of one) for each. Restricted domains still allow these keys.
var WellKnownLabels = []string{
	NodePoolLabelKey,
	corev1.LabelTopologyZone,
	corev1.LabelTopologyRegion,
	corev1.LabelInstanceTypeStable,
	corev1.LabelArchStable,
	corev1.LabelOSStable,
	CapacityTypeLabelKey,
	corev1.LabelWindowsBuild,
	LabelNodeClass,
	LabelInstanceEncryptionInTransitSupported,
	LabelInstanceCategory,
	LabelInstanceHypervisor,
	LabelInstanceFamily,
	LabelInstanceGeneration,
	LabelInstanceLocalNVME,
	LabelInstanceSize,
	LabelInstanceCPU,
	LabelInstanceCPUManufacturer,
	LabelInstanceCPUSustainedClockSpeedMhz,
	LabelInstanceMemory,
	LabelInstanceEBSBandwidth,
	LabelInstanceNetworkBandwidth,
	LabelInstanceGPUName,
	LabelInstanceGPUManufacturer,
	LabelInstanceGPUCount,
	LabelInstanceGPUMemory,
	LabelInstanceAcceleratorName,
	LabelInstanceAcceleratorManufacturer,
	LabelInstanceAcceleratorCount,
	LabelInstanceCapabilityFlex,
	LabelInstanceTenancy,
	LabelCapacityReservationID,
	LabelCapacityReservationType,
	LabelCapacityReservationInterruptible,
	LabelPlacementGroupID,
	LabelPlacementGroupPartition,
	LabelTopologyZoneID,
}

// NormalizedLabels maps deprecated label keys to the stable keys they mean;
// the EBS CSI driver's zone key is treated as the zone as well.
var NormalizedLabels = map[string]string{
	corev1.LabelFailureDomainBetaZone:   corev1.LabelTopologyZone,
	corev1.LabelFailureDomainBetaRegion: corev1.LabelTopologyRegion,
	"beta.kubernetes.io/arch":           corev1.LabelArchStable,
	"beta.kubernetes.io/os":             corev1.LabelOSStable,
	corev1.LabelInstanceType:            corev1.LabelInstanceTypeStable,
	"topology.ebs.csi.aws.com/zone":     corev1.LabelTopologyZone,
}
