package disruption

import (
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/disruption/repair"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/pods"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/simulation"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/state"
)

// Candidate is a node that may be disrupted.
type Candidate struct {
	*state.StateNode
	Pool *v1.NodePool
	// InstanceType is nil, and Price 0, for a drift candidate whose type
	// the catalog no longer lists.
	InstanceType *scheduling.InstanceType
	Zone         string
	CapacityType string
	// Price is the hourly price of the node's offering.
	Price float64
	// Reschedulable are the pods that need a new home if the node goes.
	Reschedulable  []*corev1.Pod
	DisruptionCost float64
	// podBlockers is set on a repair candidate whose pods (do-not-disrupt,
	// PDBs) would block voluntary disruption: repair takes it only with a
	// drain bound.
	podBlockers bool
	// Repair and DrainBound are set by the Repair method: the policy
	// decision, and how long the node may drain (nil: the NodeClaim's own
	// terminationGracePeriod).
	Repair     repair.Result
	DrainBound *time.Duration
}

// Blocked is a node that is not a candidate, and why, for users to see.
type Blocked struct {
	*state.StateNode
	Reason string
}

// Candidates are the nodes that reason may disrupt, sorted by disruption
// cost (cheapest first), plus the managed nodes blocked from it and why.
// Nodes that are not managed, not initialized, or already being disrupted
// are neither; repair (Unhealthy) also takes nodes that never initialized,
// since nothing else replaces them.
func Candidates(env *Env, reason v1.DisruptionReason) ([]*Candidate, []Blocked) {
	var out []*Candidate
	var blocked []Blocked
	for _, n := range env.Snapshot.Nodes {
		if n.NodeClaim == nil || n.Node == nil || n.Deleting() || env.Queued[n.Node.Name] {
			continue
		}
		if !n.Initialized() && reason != v1.DisruptionReasonUnhealthy {
			continue
		}
		c, why := newCandidate(env, n, reason)
		if why != "" {
			blocked = append(blocked, Blocked{StateNode: n, Reason: why})
			continue
		}
		out = append(out, c)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].DisruptionCost < out[j].DisruptionCost })
	return out, blocked
}

func newCandidate(env *Env, n *state.StateNode, reason v1.DisruptionReason) (*Candidate, string) {
	if len(n.Nominated) > 0 {
		return nil, "node is nominated for pending pods"
	}
	// Repair is not discretionary: do-not-disrupt does not strand a broken
	// node (do-not-repair does, see Repair).
	repairing := reason == v1.DisruptionReasonUnhealthy
	if n.Node.Annotations[v1.DoNotDisruptAnnotationKey] == "true" && !repairing {
		return nil, fmt.Sprintf("node has the %s annotation", v1.DoNotDisruptAnnotationKey)
	}
	poolName := n.NodePool()
	pool := env.pool(poolName)
	if pool == nil {
		return nil, fmt.Sprintf("nodepool %q not found", poolName)
	}
	if why := env.Holds[poolName].blocks(reason); why != "" {
		return nil, why
	}
	labels := n.Labels()
	typeName := labels[corev1.LabelInstanceTypeStable]
	zone := labels[corev1.LabelTopologyZone]
	capacityType := labels[v1.CapacityTypeLabelKey]
	catalog, known := env.InstanceTypes[poolName]
	if !known {
		return nil, fmt.Sprintf("instance types of nodepool %q are unavailable", poolName)
	}
	it := simulation.FindType(catalog, typeName)
	var price float64
	var why string
	if it == nil {
		why = fmt.Sprintf("instance type %q is not offered by nodepool %q", typeName, poolName)
	} else if p, ok := simulation.OfferingPrice(it, zone, capacityType); ok {
		price = p
	} else {
		why = fmt.Sprintf("no %s offering of %s in zone %q", capacityType, typeName, zone)
	}
	// Consolidation compares prices; drift and emptiness need none. Drift
	// must still replace a node whose type or offering left the catalog
	// (InstanceTypeNotFound), and an empty one is deleted whatever it cost.
	if why != "" && reason != v1.DisruptionReasonDrifted && reason != v1.DisruptionReasonEmpty && !repairing {
		return nil, why
	}
	// Drift of a claim with a terminationGracePeriod may go ahead despite
	// blocking pods: the grace period bounds how long they can hold it.
	// Repair notes blocking pods and decides once it knows its drain bound.
	forceable := reason == v1.DisruptionReasonDrifted && n.NodeClaim.Spec.TerminationGracePeriod != nil
	var resched []*corev1.Pod
	podBlockers := false
	for _, pod := range n.Pods {
		if pods.IsTerminal(pod) {
			continue
		}
		if !forceable {
			why := ""
			if pods.DoNotDisrupt(pod, env.Now) {
				why = fmt.Sprintf("pod %s/%s has the %s annotation", pod.Namespace, pod.Name, v1.DoNotDisruptAnnotationKey)
			} else if pod.DeletionTimestamp == nil && pods.IsDrainable(pod, env.Now) {
				why = env.PDBs.Blocking(pod)
			}
			if why != "" && !repairing {
				return nil, why
			}
			podBlockers = podBlockers || why != ""
		}
		if pods.IsReschedulable(pod) {
			resched = append(resched, pod)
		}
	}
	return &Candidate{
		StateNode: n, Pool: pool, InstanceType: it, Zone: zone, CapacityType: capacityType, Price: price,
		Reschedulable: resched, DisruptionCost: simulation.DisruptionCost(n.NodeClaim, resched, env.Now), podBlockers: podBlockers,
	}, ""
}

// Empty is true when moving the node's pods costs nothing: its reschedule
// cost is the base 1, so every reschedulable pod (if any) has a
// non-positive eviction cost.
func (c *Candidate) Empty() bool {
	return simulation.RescheduleCost(c.Reschedulable) == simulation.BaseRescheduleCost
}

// Consolidatable is true when the claim has been quiet for consolidateAfter.
func (c *Candidate) Consolidatable() bool {
	return meta.IsStatusConditionTrue(c.NodeClaim.Status.Conditions, v1.ConditionTypeConsolidatable)
}

// Drifted is true when the claim's Drifted condition is True.
func (c *Candidate) Drifted() bool {
	return meta.IsStatusConditionTrue(c.NodeClaim.Status.Conditions, v1.ConditionTypeDrifted)
}
