package scheduling

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
)

// bin is somewhere pods can go: an existing node, an in-flight claim or a
// new claim opened by this pass.
type bin struct {
	kind   TargetKind
	name   string
	index  int
	node   *Node
	taints []corev1.Taint
	free   []int64 // existing nodes
	ports  []hostPort
	pods   []*corev1.Pod
	placed []classCount

	// new claims
	claimIdx  int
	pool      *poolState
	reqID     int
	types     bitset
	target    int
	used      []int64
	relaxedMV bool
	ceil      []int64 // see claimCeiling
	// zoneBlocked: zones whose room index leaves this claim out.
	zoneBlocked []bool
	// reservation is the capacity reservation the claim launches into
	// (one instance of it taken this pass), in reservedSlot; "" for none.
	reservation  string
	reservedSlot int
}

type classCount struct {
	c *class
	n int
}

func (s *solver) buildBins() {
	s.room = newRoomIndex(len(s.res.names))
	s.buildZoneRooms()
	nodes := append([]*Node(nil), s.in.Nodes...)
	sort.SliceStable(nodes, func(i, j int) bool {
		if nodes[i].Initialized != nodes[j].Initialized {
			return nodes[i].Initialized
		}
		return nodes[i].Name < nodes[j].Name
	})
	add := func(n *Node, kind TargetKind) {
		b := &bin{kind: kind, name: n.Name, node: n, taints: n.Taints, free: s.res.allocatable(n.Allocatable), index: len(s.bins)}
		requests := n.Requests
		if requests == nil {
			requests = SumRequests(n.Pods)
		}
		used := s.res.vec(requests)
		used[resPods] += int64(len(n.Pods))
		for i := range used {
			b.free[i] -= used[i]
		}
		for _, p := range n.Pods {
			b.ports = append(b.ports, podHostPorts(p)...)
		}
		s.bins = append(s.bins, b)
		s.indexRoom(b)
	}
	for _, n := range nodes {
		add(n, TargetNode)
	}
	for _, n := range s.in.InFlight {
		add(n, TargetInFlight)
	}
}
