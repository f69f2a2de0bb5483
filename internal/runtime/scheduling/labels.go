package scheduling

import "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/requirements"

// Label keys the solver treats specially. They are the Kubernetes and
// Karpenter well-known keys; kept private here so the solver does not depend
// on the API packages.
const (
	labelZone         = "topology.kubernetes.io/zone"
	labelRegion       = "topology.kubernetes.io/region"
	labelHostname     = "kubernetes.io/hostname"
	labelCapacityType = "karpenter.sh/capacity-type"
	labelNodePool     = "karpenter.sh/nodepool"
	labelInstanceType = "node.kubernetes.io/instance-type"
	labelArch         = "kubernetes.io/arch"
	labelOS           = "kubernetes.io/os"
	labelWindowsBuild = "node.kubernetes.io/windows-build"
	// labelReservationID names the capacity reservation of a reserved node;
	// the type (default or capacity-block) and whether it is interruptible
	// go with it. Only reserved offerings carry the three.
	labelReservationID            = "karpenter.k8s.aws/capacity-reservation-id"
	labelReservationType          = "karpenter.k8s.aws/capacity-reservation-type"
	labelReservationInterruptible = "karpenter.k8s.aws/capacity-reservation-interruptible"
)

// ReservationKeys are the labels that vary per reserved offering; no other
// offering carries them (Offering.ReservationLabels).
var ReservationKeys = []string{labelReservationID, labelReservationType, labelReservationInterruptible}

// defaultWellKnown are the labels a pod may require without a NodePool
// defining them (the cloud provider resolves them per instance type).
var defaultWellKnown = requirements.NewKeySet(
	labelNodePool, labelZone, labelRegion, labelInstanceType, labelArch, labelOS,
	labelCapacityType, labelWindowsBuild,
	"karpenter.k8s.aws/instance-category", "karpenter.k8s.aws/instance-family",
	"karpenter.k8s.aws/instance-generation", "karpenter.k8s.aws/instance-size",
	"karpenter.k8s.aws/instance-cpu", "karpenter.k8s.aws/instance-cpu-manufacturer",
	"karpenter.k8s.aws/instance-cpu-sustained-clock-speed-mhz",
	"karpenter.k8s.aws/instance-memory", "karpenter.k8s.aws/instance-ebs-bandwidth",
	"karpenter.k8s.aws/instance-network-bandwidth", "karpenter.k8s.aws/instance-gpu-name",
	"karpenter.k8s.aws/instance-gpu-manufacturer", "karpenter.k8s.aws/instance-gpu-count",
	"karpenter.k8s.aws/instance-gpu-memory", "karpenter.k8s.aws/instance-accelerator-name",
	"karpenter.k8s.aws/instance-accelerator-manufacturer", "karpenter.k8s.aws/instance-accelerator-count",
	"karpenter.k8s.aws/instance-local-nvme", "karpenter.k8s.aws/instance-hypervisor",
	"karpenter.k8s.aws/instance-encryption-in-transit-supported",
	"karpenter.k8s.aws/instance-capability-flex", "karpenter.k8s.aws/instance-tenancy",
	"karpenter.k8s.aws/ec2nodeclass", "topology.k8s.aws/zone-id",
	// Set on every type of a node class with a placement group; a
	// partition group's types may take any of its partitions.
	"karpenter.k8s.aws/placement-group-id", "karpenter.k8s.aws/placement-group-partition",
	labelReservationID, labelReservationType, labelReservationInterruptible,
)
