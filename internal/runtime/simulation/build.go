package simulation

import (
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/pods"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/state"
)

// Build is the solver's input for placing toPlace (whose volumes resolved
// to volumes, see VolumeTopology) on what the snapshot holds: its nodes and
// in-flight claims except those being deleted or named in without, its
// DaemonSets, and its schedulable NodePools that have instance types, each
// with the usage its claims count against its limits. nodes, when not nil,
// holds the snapshot's nodes converted by earlier Builds.
func Build(snap *state.Snapshot, nodes *Nodes, toPlace []*corev1.Pod, volumes map[types.UID][][]corev1.NodeSelectorRequirement,
	instanceTypes map[string][]*scheduling.InstanceType, opts scheduling.Options, without map[string]bool) *scheduling.Input {
	in := &scheduling.Input{
		Pods:            toPlace,
		DaemonSets:      DaemonSetPods(snap.DaemonSets, snap.LimitRanges),
		VolumeTopology:  volumes,
		NamespaceLabels: snap.NamespaceLabels,
		Options:         opts,
	}
	usage := nodes.usage(snap.Nodes, instanceTypes)
	for _, pool := range SchedulablePools(snap.NodePools) {
		if its := instanceTypes[pool.Name]; len(its) > 0 {
			in.NodePools = append(in.NodePools, SolverPool(pool, its, usage[pool.Name]))
		}
	}
	for _, n := range snap.Nodes {
		switch {
		case without[n.Name()] || n.Deleting():
		case n.InFlight():
			in.InFlight = append(in.InFlight, nodes.node(n))
		default:
			in.Nodes = append(in.Nodes, nodes.node(n))
		}
	}
	return in
}

// Nodes converts the nodes of one snapshot for the solver once, with their
// pods' summed requests and the NodePools' usage, for a caller that builds
// many inputs from it (a disruption decision simulates every candidate).
// Safe for concurrent use.
type Nodes struct {
	mu        sync.Mutex
	converted map[*state.StateNode]*scheduling.Node
	used      map[string]corev1.ResourceList
}

// usage is Usage of the snapshot's nodes, computed once.
func (c *Nodes) usage(nodes []*state.StateNode, types map[string][]*scheduling.InstanceType) map[string]corev1.ResourceList {
	if c == nil {
		return Usage(nodes, types)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.used == nil {
		c.used = Usage(nodes, types)
	}
	return c.used
}

// node is n for the solver; a nil Nodes converts afresh.
func (c *Nodes) node(n *state.StateNode) *scheduling.Node {
	if c == nil {
		return SolverNode(n)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if sn, ok := c.converted[n]; ok {
		return sn
	}
	if c.converted == nil {
		c.converted = map[*state.StateNode]*scheduling.Node{}
	}
	sn := SolverNode(n)
	sn.Requests = scheduling.SumRequests(sn.Pods)
	c.converted[n] = sn
	return sn
}

// Displaced are the pods of nodes being deleted, except those named in
// without, that need a new home.
func Displaced(nodes []*state.StateNode, without map[string]bool) []*corev1.Pod {
	var out []*corev1.Pod
	for _, n := range nodes {
		if without[n.Name()] || !n.Deleting() {
			continue
		}
		for _, pod := range n.Pods {
			if pods.IsReschedulable(pod) {
				out = append(out, pod)
			}
		}
	}
	return out
}
