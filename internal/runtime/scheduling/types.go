package scheduling

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/requirements"
)

// Capacity types of an offering.
const (
	CapacityTypeOnDemand = "on-demand"
	CapacityTypeSpot     = "spot"
	CapacityTypeReserved = "reserved"
)

// Offering is one way to buy an instance type.
type Offering struct {
	Zone         string
	CapacityType string
	Price        float64
	Available    bool
	// ReservationID names the capacity reservation a reserved offering
	// launches into; ReservationCapacity is how many more instances it
	// holds (0: full, though healthy). Both are empty for other offerings.
	ReservationID       string
	ReservationCapacity int
	// ReservationType ("default" or "capacity-block") and
	// ReservationInterruptible describe the reservation; NodePools and pods
	// may require them, as they may the ID.
	ReservationType          string
	ReservationInterruptible bool
	// PriceOverlaid says a NodeOverlay set Price: the launch then ranks
	// offerings by Price instead of leaving the choice to EC2's prices.
	PriceOverlaid bool
}

// Reserved reports whether the offering launches into a capacity
// reservation.
func (o Offering) Reserved() bool { return o.CapacityType == CapacityTypeReserved }

// ReservationLabels are the reservation's labels of a reserved offering
// with a reservation ID; no other offering has them.
func (o Offering) ReservationLabels() map[string]string {
	if !o.Reserved() || o.ReservationID == "" {
		return nil
	}
	out := map[string]string{labelReservationID: o.ReservationID, labelReservationInterruptible: strconv.FormatBool(o.ReservationInterruptible)}
	if o.ReservationType != "" {
		out[labelReservationType] = o.ReservationType
	}
	return out
}

// InstanceType is one entry of the catalog.
type InstanceType struct {
	Name string
	// Labels are the type's own well-known labels (arch, os, instance-type,
	// family, cpu, memory, ...). Zone and capacity type come from Offerings.
	Labels map[string]string
	// Capacity is used for NodePool limits, Allocatable for bin-packing.
	Capacity    corev1.ResourceList
	Allocatable corev1.ResourceList
	Offerings   []Offering
	// CapacityOverlaid says a NodeOverlay added or set extended resources
	// in Capacity and Allocatable.
	CapacityOverlaid bool
	// BaselineCPU is, for a burstable type, the share of each vCPU it
	// sustains without spending CPU credits (t3.medium: 0.2); 0 for other
	// types. Unless the NodePool sets BurstableCPU, the solver counts only
	// the baseline as the type's CPU: its price buys the baseline, and CPU
	// above it is paid in credits or surplus charges the price does not show.
	BaselineCPU float64
	// LabelChoices are labels whose value is picked at launch among several:
	// a partition placement group's partitions. Requirements (a pod's, a
	// spread's domain) narrow the choice; a type meets a requirement when
	// one of its choices does.
	LabelChoices map[string][]string
}

// Values are the values the type may have for key: its label, or its
// label choices.
func (it *InstanceType) Values(key string) []string {
	if v, ok := it.Labels[key]; ok {
		return []string{v}
	}
	return it.LabelChoices[key]
}

// Requirement is a NodePool requirement with its optional minValues.
type Requirement struct {
	corev1.NodeSelectorRequirement
	MinValues *int
}

// NodePool is a NodePool template with the instance types it resolves to.
type NodePool struct {
	Name   string
	Weight int32
	// Labels and Taints come from spec.template; startupTaints are not
	// included because pods need not tolerate them.
	Labels       map[string]string
	Taints       []corev1.Taint
	Requirements []Requirement
	// Limits may include "nodes"; Usage is what the pool already runs.
	Limits        corev1.ResourceList
	Usage         corev1.ResourceList
	InstanceTypes []*InstanceType
	// BurstableCPU counts a burstable type's full CPU rather than its
	// baseline (see InstanceType.BaselineCPU).
	BurstableCPU bool
}

// Node is an existing node or an in-flight NodeClaim with the pods bound or
// nominated to it (daemonset pods included).
type Node struct {
	Name        string
	NodePool    string
	Labels      map[string]string
	Taints      []corev1.Taint
	Allocatable corev1.ResourceList
	Pods        []*corev1.Pod
	// Requests, when set, is the sum of PodRequests over Pods, for callers
	// that solve over the same nodes many times; Solve sums them otherwise.
	Requests corev1.ResourceList
	// Initialized nodes are tried before uninitialized ones.
	Initialized bool
}

// Preference policies.
const (
	PreferenceRespect = "Respect"
	PreferenceIgnore  = "Ignore"
)

// MinValues policies.
const (
	MinValuesStrict     = "Strict"
	MinValuesBestEffort = "BestEffort"
)

// DefaultMaxInstanceTypes bounds the instance-type list of a new claim.
const DefaultMaxInstanceTypes = 60

// Options tune the solver.
type Options struct {
	PreferencePolicy string // Respect (default) or Ignore
	MinValuesPolicy  string // Strict (default) or BestEffort
	MaxInstanceTypes int    // default 60
	// NodeCost is what sizing adds to each new node's price ($/h), for
	// what a node costs beyond it (the controller's NODE_COST); nil means
	// DefaultNodeCost, 0 sizes by price alone.
	NodeCost *float64
	// Replacing says the pods are a disrupted node's (drift, repair): they
	// go on one node whenever one node of the pool holds them all, even
	// where a split over smaller nodes prices a little lower. The node
	// drains while kube-scheduler binds its pods in its own order, onto
	// whichever node has room first, so a planned split rarely lands as
	// planned: each small node is left part-filled and the pool ends with
	// more nodes and a higher price than one node per node replaced.
	Replacing bool
	// WellKnownLabels may be requested by pods without a NodePool defining
	// them; nil means the built-in list.
	WellKnownLabels requirements.KeySet
}

// Input is everything the solver looks at.
type Input struct {
	NodePools  []*NodePool
	Nodes      []*Node
	InFlight   []*Node
	DaemonSets []*corev1.Pod
	Pods       []*corev1.Pod
	// VolumeTopology maps a pod to the alternative requirement sets its
	// volumes impose (PV node affinity, StorageClass allowedTopologies);
	// they constrain the node, not the pod's own spread counting. The
	// first alternative is tried first.
	VolumeTopology map[types.UID][][]corev1.NodeSelectorRequirement
	// NamespaceLabels resolves affinity namespaceSelectors.
	NamespaceLabels map[string]map[string]string
	Options         Options
	// Catalog, when it indexes exactly the NodePools' instance types, saves
	// Solve building one (see NewCatalog); otherwise Solve builds its own.
	Catalog *Catalog
}

// TargetKind says where a pod goes.
type TargetKind int

const (
	TargetNode TargetKind = iota
	TargetInFlight
	TargetNewClaim
)

func (k TargetKind) String() string {
	return [...]string{"node", "in-flight", "new-claim"}[k]
}

// Placement puts one pod somewhere.
type Placement struct {
	Pod  *corev1.Pod
	Kind TargetKind
	// Node names the existing node or in-flight claim; Claim indexes
	// Plan.NewClaims.
	Node  string
	Claim int
	// Relaxed lists the preferences dropped to place the pod.
	Relaxed []string
}

// ClaimOption is one instance type a new claim may launch, with the
// offerings compatible with the claim.
type ClaimOption struct {
	Type      *InstanceType
	Price     float64 // cheapest compatible available offering
	Offerings []Offering
}

// NewClaim is a NodeClaim to create.
type NewClaim struct {
	NodePool string
	// Hostname is a placeholder used for hostname topology; the real name is
	// known after launch.
	Hostname     string
	Requirements requirements.Requirements
	// InstanceTypes are cheapest first, at most Options.MaxInstanceTypes,
	// and still satisfy minValues unless MinValuesRelaxed.
	InstanceTypes    []ClaimOption
	Pods             []*corev1.Pod
	Requests         corev1.ResourceList // pods plus daemonset overhead of the cheapest type
	MinValuesRelaxed bool
}

// Price is the price of the cheapest option.
func (c *NewClaim) Price() float64 {
	if len(c.InstanceTypes) == 0 {
		return 0
	}
	return c.InstanceTypes[0].Price
}

// PodError explains why a pod was not placed.
type PodError struct {
	Pod *corev1.Pod
	Err error
}

// Plan is the solver's result.
type Plan struct {
	Placements []Placement
	NewClaims  []*NewClaim
	Errors     []PodError
	// MinValuesUnmet are the NodePools, by name, whose instance types offer
	// too few distinct values for a minValues requirement before any pod
	// narrows them (Strict policy only): no pod can use them.
	MinValuesUnmet map[string]error
}

// Cost is the summed price of the cheapest option of every new claim.
func (p *Plan) Cost() float64 {
	var sum float64
	for _, c := range p.NewClaims {
		sum += c.Price()
	}
	return sum
}
