package scheduling

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/requirements"
)

type solver struct {
	in        Input
	opts      Options
	res       *resources
	cat       *catalog
	table     *reqTable
	topo      *topology
	pools     []*poolState
	bins      []*bin
	claims    []*bin
	remaining []int64 // requests of pods not yet placed
	matches   map[[2]int]bool
	inverse   map[*class][]*topoGroup
	topoKeys  []string
	plan      *Plan
	hasPNS    bool
	order     []*class // classes in queue order, for sizing lookahead
	cands     []sizingCand
	buf       []int64
	promise   bool
	byPrice   map[string][]int
	offerings map[offerKey][]Offering
}

// scratch is a reusable resource vector; callers must not keep it.
func (s *solver) scratch() []int64 {
	if s.buf == nil {
		s.buf = make([]int64, len(s.res.names))
	}
	return s.buf
}

// Solve places in.Pods. The returned error is only for unusable input (for
// example an offering universe the solver cannot index); pods that cannot
// be placed are reported in Plan.Errors.
func Solve(in Input) (*Plan, error) {
	s := &solver{in: in, opts: in.Options, res: newResources(), matches: map[[2]int]bool{}, inverse: map[*class][]*topoGroup{}, plan: &Plan{},
		byPrice: map[string][]int{}, offerings: map[offerKey][]Offering{}}
	if s.opts.MaxInstanceTypes <= 0 {
		s.opts.MaxInstanceTypes = DefaultMaxInstanceTypes
	}
	if s.opts.WellKnownLabels == nil {
		s.opts.WellKnownLabels = defaultWellKnown
	}
	s.table = newReqTable(s.opts.WellKnownLabels)
	s.topo = newTopology(in.NamespaceLabels)
	cat, err := newCatalog(in.NodePools, s.res)
	if err != nil {
		return nil, err
	}
	s.cat = cat
	classes, perr := s.buildClasses()
	for _, n := range append(append([]*Node{}, in.Nodes...), in.InFlight...) {
		s.res.addAll(n.Allocatable)
		for _, p := range n.Pods {
			s.res.addAll(PodRequests(p))
		}
	}
	for _, d := range in.DaemonSets {
		s.res.addAll(PodRequests(d))
	}
	for _, p := range in.NodePools {
		s.res.addAll(p.Limits)
	}
	s.cat.finishVectors(s.res)
	for _, c := range classes {
		c.req = s.res.vec(PodRequests(c.pods[0]))
		c.req[resPods] = 1
	}
	s.remaining = make([]int64, len(s.res.names))
	for _, c := range classes {
		for i, q := range c.req {
			s.remaining[i] += q * int64(len(c.pods))
		}
	}
	s.buildPools()
	s.buildBins()
	s.buildTopology(classes)
	s.run(classes)
	s.plan.Errors = append(s.plan.Errors, perr...)
	s.finish()
	return s.plan, nil
}

func (s *solver) buildClasses() ([]*class, []PodError) {
	byKey := map[string]*class{}
	var classes []*class
	var errs []PodError
	pods := append([]*corev1.Pod(nil), s.in.Pods...)
	sort.SliceStable(pods, func(i, j int) bool {
		a, b := pods[i], pods[j]
		if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			return a.CreationTimestamp.Before(&b.CreationTimestamp)
		}
		return a.UID < b.UID
	})
	for _, pod := range pods {
		vols := s.in.VolumeTopology[pod.UID]
		reqs := PodRequests(pod)
		s.res.addAll(reqs)
		key := classKey(pod, reqVecKey(reqs), vols)
		if c, ok := byKey[key]; ok {
			c.pods = append(c.pods, pod)
			continue
		}
		c := &class{pods: []*corev1.Pod{pod}, ns: pod.Namespace, labels: pod.Labels, ports: podHostPorts(pod)}
		if err := c.buildConstraints(pod, vols); err != nil {
			errs = append(errs, PodError{Pod: pod, Err: err})
			continue
		}
		if err := s.topo.attach(c, pod, s.opts.PreferencePolicy == PreferenceIgnore); err != nil {
			errs = append(errs, PodError{Pod: pod, Err: err})
			continue
		}
		if s.opts.PreferencePolicy == PreferenceIgnore {
			c.prefNode = nil
		}
		byKey[key] = c
		classes = append(classes, c)
	}
	// Pods that failed validation may share a key with later pods; those
	// later pods were never added to a class, report them too.
	if len(errs) > 0 {
		bad := map[string]error{}
		for _, e := range errs {
			bad[classKey(e.Pod, reqVecKey(PodRequests(e.Pod)), s.in.VolumeTopology[e.Pod.UID])] = e.Err
		}
		seen := map[types.UID]bool{}
		for _, e := range errs {
			seen[e.Pod.UID] = true
		}
		for _, pod := range pods {
			key := classKey(pod, reqVecKey(PodRequests(pod)), s.in.VolumeTopology[pod.UID])
			if err, ok := bad[key]; ok && !seen[pod.UID] {
				errs = append(errs, PodError{Pod: pod, Err: err})
			}
		}
	}
	return classes, errs
}

// reqVecKey renders requests deterministically for the class key.
func reqVecKey(l corev1.ResourceList) []int64 {
	names := make([]string, 0, len(l))
	for n := range l {
		names = append(names, string(n))
	}
	sort.Strings(names)
	out := make([]int64, 0, 2*len(names))
	for _, n := range names {
		q := l[corev1.ResourceName(n)]
		out = append(out, int64(len(n)), q.MilliValue())
	}
	return out
}

// run is the scheduling queue: classes in first-fit-decreasing order; a
// class that cannot be fully placed is relaxed one step and re-queued, and
// the loop ends when a full cycle makes no progress.
func (s *solver) run(classes []*class) {
	for _, c := range classes {
		s.prepareClass(c)
	}
	sort.SliceStable(classes, func(i, j int) bool {
		a, b := classes[i], classes[j]
		if a.req[resCPU] != b.req[resCPU] {
			return a.req[resCPU] > b.req[resCPU]
		}
		return a.req[resMemory] > b.req[resMemory]
	})
	s.order = classes
	queue := classes
	stalled := 0
	for len(queue) > 0 && stalled < len(queue) {
		c := queue[0]
		queue = queue[1:]
		placed := s.placeClass(c)
		if len(c.pods) == 0 {
			stalled = 0
			continue
		}
		if placed > 0 {
			stalled = 0
		} else {
			stalled++
		}
		if step := s.relax(c); step != "" {
			c.relaxed = append(c.relaxed, step)
			s.prepareClass(c)
			stalled = 0
		}
		queue = append(queue, c)
	}
	for _, c := range queue {
		err := c.lastErr
		if err == nil {
			err = errors.New("no capacity found")
		}
		for _, p := range c.pods {
			s.plan.Errors = append(s.plan.Errors, PodError{Pod: p, Err: err})
		}
	}
}

// prepareClass (re)computes the interned requirement ids after the class's
// constraints changed.
func (s *solver) prepareClass(c *class) {
	strict := c.strict()
	c.strictID = s.table.intern(strict)
	c.reqID = s.table.intern(c.withVolumes(strict))
	c.computeActive()
	c.poolTypes = nil
	c.freshCap = math.MaxInt
	if len(c.ports) > 0 {
		c.freshCap = 1
	}
	if c.selectedBy != nil || len(c.spreads)+len(c.anti)+len(c.prefAnti)+len(c.softSpreads) > 0 {
		c.freshCap = min(c.freshCap, s.hostnameCap(c, &bin{name: "\x00new"}))
	}
}

func (s *solver) relax(c *class) string {
	switch {
	case len(c.volumeAlts) > 1:
		c.volumeAlts = c.volumeAlts[1:]
		return "volume topology alternative"
	case len(c.nodeTerms) > 1:
		c.nodeTerms = c.nodeTerms[1:]
		return "required node affinity term"
	case len(c.prefAffinity) > 0:
		c.prefAffinity = c.prefAffinity[1:]
		return "preferred pod affinity term"
	case len(c.prefAnti) > 0:
		c.prefAnti = c.prefAnti[1:]
		return "preferred pod anti-affinity term"
	case len(c.prefNode) > 0:
		c.prefNode = c.prefNode[1:]
		return "preferred node affinity term"
	case len(c.softSpreads) > 0:
		c.softSpreads = c.softSpreads[1:]
		return "ScheduleAnyway topology spread constraint"
	case s.hasPNS && !c.toleratePNS:
		c.toleratePNS = true
		return "PreferNoSchedule taints"
	}
	return ""
}

// poolState is a NodePool compiled against the catalog.
type poolState struct {
	pool        *NodePool
	reqID       int
	reqs        requirements.Requirements
	reqErr      error
	types       bitset
	allocD      [][]int64 // allocatable minus daemonset overhead, by catalog index
	daemon      [][]int64
	daemonPorts []hostPort
	limited     []int
	remaining   []int64
	nodesLeft   int
	minValues   []*requirements.Requirement
}

func (s *solver) buildPools() {
	pools := append([]*NodePool(nil), s.in.NodePools...)
	sort.SliceStable(pools, func(i, j int) bool {
		if pools[i].Weight != pools[j].Weight {
			return pools[i].Weight > pools[j].Weight
		}
		return pools[i].Name > pools[j].Name
	})
	for _, p := range pools {
		ps := &poolState{pool: p, nodesLeft: math.MaxInt}
		reqs := requirements.FromLabels(p.Labels)
		reqs.Add(requirements.New(labelNodePool, corev1.NodeSelectorOpIn, p.Name))
		var errs []error
		for _, r := range p.Requirements {
			req, err := requirements.Parse(r.NodeSelectorRequirement, r.MinValues)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			reqs.Add(req)
		}
		ps.reqErr = errors.Join(errs...)
		ps.reqs = reqs
		ps.reqID = s.table.intern(reqs)
		for _, k := range reqs.Keys() {
			if reqs[k].MinValues != nil {
				ps.minValues = append(ps.minValues, reqs[k])
			}
		}
		for _, t := range p.Taints {
			if t.Effect == corev1.TaintEffectPreferNoSchedule {
				s.hasPNS = true
			}
		}
		n := len(s.cat.types)
		inPool := newBitset(n)
		for _, it := range p.InstanceTypes {
			inPool.set(s.cat.index[it])
		}
		ps.types = s.cat.compile(ps.reqID, reqs).types.and(inPool)
		ps.allocD = make([][]int64, n)
		ps.daemon = make([][]int64, n)
		ps.types.each(func(i int) {
			ps.allocD[i] = append([]int64(nil), s.cat.alloc[i]...)
			ps.daemon[i] = make([]int64, len(s.res.names))
		})
		for _, d := range s.in.DaemonSets {
			dc := &class{tolerations: d.Spec.Tolerations}
			if dc.tolerates(p.Taints) != nil {
				continue
			}
			dreqs, err := requirements.StrictForPod(d)
			if err != nil || !reqs.IsCompatible(dreqs, s.opts.WellKnownLabels) {
				continue
			}
			id := s.table.intern(reqs.Intersect(dreqs))
			dtypes := s.cat.compile(id, s.table.sets[id]).types.and(ps.types)
			dv := s.res.vec(PodRequests(d))
			dv[resPods]++
			dtypes.each(func(i int) {
				for r, q := range dv {
					ps.allocD[i][r] -= q
					ps.daemon[i][r] += q
				}
			})
			ps.daemonPorts = append(ps.daemonPorts, podHostPorts(d)...)
		}
		ps.remaining = make([]int64, len(s.res.names))
		for name, lim := range p.Limits {
			used := p.Usage[name]
			if name == "nodes" {
				ps.nodesLeft = int(lim.Value() - used.Value())
				continue
			}
			i, ok := s.res.index[name]
			if !ok {
				continue
			}
			ps.limited = append(ps.limited, i)
			ps.remaining[i] = quantityValue(i, lim) - quantityValue(i, used)
		}
		s.pools = append(s.pools, ps)
	}
}

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
}

type classCount struct {
	c *class
	n int
}

func (s *solver) buildBins() {
	nodes := append([]*Node(nil), s.in.Nodes...)
	sort.SliceStable(nodes, func(i, j int) bool {
		if nodes[i].Initialized != nodes[j].Initialized {
			return nodes[i].Initialized
		}
		return nodes[i].Name < nodes[j].Name
	})
	add := func(n *Node, kind TargetKind) {
		b := &bin{kind: kind, name: n.Name, node: n, taints: n.Taints, free: s.res.allocatable(n.Allocatable), index: len(s.bins)}
		for _, p := range n.Pods {
			v := s.res.vec(PodRequests(p))
			v[resPods]++
			for i := range v {
				b.free[i] -= v[i]
			}
			b.ports = append(b.ports, podHostPorts(p)...)
		}
		s.bins = append(s.bins, b)
	}
	for _, n := range nodes {
		add(n, TargetNode)
	}
	for _, n := range s.in.InFlight {
		add(n, TargetInFlight)
	}
}

// buildTopology counts already-running pods into every group and registers
// their required anti-affinity terms.
func (s *solver) buildTopology(classes []*class) {
	type podRef struct {
		pod *corev1.Pod
		b   *bin
	}
	var running []podRef
	for _, b := range s.bins {
		for _, p := range b.node.Pods {
			running = append(running, podRef{p, b})
			for _, g := range s.topo.existingAnti(p) {
				s.countOwner(g, b, 1)
			}
		}
	}
	keys := map[string]bool{}
	for _, g := range s.topo.list {
		if g.kind == kindSpread && !g.hostname {
			g.eligible = s.eligibleDomains(g)
		}
		if !g.hostname && g.kind != kindAnti {
			keys[g.key] = true
		}
		for _, r := range running {
			if g.selects(r.pod.Namespace, r.pod.Labels) && s.passesFilter(g, r.b) {
				s.countSelected(g, r.b, 1)
			}
		}
	}
	s.topoKeys = sortedKeys(keys)
	for _, c := range classes {
		for _, g := range s.topo.list {
			if !g.selects(c.ns, c.labels) {
				continue
			}
			c.selectedBy = append(c.selectedBy, g)
			if g.kind == kindAnti {
				s.inverse[c] = append(s.inverse[c], g)
				c.hostInverse = c.hostInverse || g.hostname
			}
		}
	}
}

// passesFilter applies a spread group's nodeAffinityPolicy and
// nodeTaintsPolicy to an existing node.
func (s *solver) passesFilter(g *topoGroup, b *bin) bool {
	if g.kind != kindSpread || b.node == nil {
		return true
	}
	if g.filterReqs != nil && !g.filterReqs.MatchesLabels(b.node.Labels) {
		return false
	}
	if g.filterTaint != nil && g.filterTaint.tolerates(onlyHard(b.taints)) != nil {
		return false
	}
	return true
}

func onlyHard(taints []corev1.Taint) []corev1.Taint {
	var out []corev1.Taint
	for _, t := range taints {
		if t.Effect != corev1.TaintEffectPreferNoSchedule {
			out = append(out, t)
		}
	}
	return out
}

// eligibleDomains are the values of a spread group's key that a pod could
// land in: what NodePools (and their instance offerings) can provide plus
// what existing nodes carry, filtered by the group's node policies.
func (s *solver) eligibleDomains(g *topoGroup) []string {
	set := map[string]bool{}
	for _, ps := range s.pools {
		if g.filterTaint != nil && g.filterTaint.tolerates(onlyHard(ps.pool.Taints)) != nil {
			continue
		}
		reqs := ps.reqs
		if g.filterReqs != nil {
			if !reqs.IsCompatible(g.filterReqs, s.opts.WellKnownLabels) {
				continue
			}
			reqs = reqs.Intersect(g.filterReqs)
		}
		for _, v := range s.poolDomains(ps, reqs, g.key) {
			set[v] = true
		}
	}
	for _, b := range s.bins {
		if b.node == nil {
			continue
		}
		if v, ok := b.node.Labels[g.key]; ok && s.passesFilter(g, b) {
			set[v] = true
		}
	}
	return sortedKeys(set)
}

func (s *solver) poolDomains(ps *poolState, reqs requirements.Requirements, key string) []string {
	r := reqs.Get(key)
	var out []string
	switch key {
	case labelZone, labelCapacityType:
		id := s.table.intern(reqs)
		cr := s.cat.compile(id, reqs)
		types := cr.types.and(ps.types)
		var slots uint64
		types.each(func(i int) { slots |= s.cat.offer[i] & cr.slots })
		for zi, z := range s.cat.zones {
			for ci, ct := range s.cat.cts {
				if slots&(1<<(zi*len(s.cat.cts)+ci)) == 0 {
					continue
				}
				if key == labelZone {
					out = append(out, z)
				} else {
					out = append(out, ct)
				}
			}
		}
	default:
		if r.Operator() == corev1.NodeSelectorOpIn {
			out = r.Values()
		} else if li := s.cat.labels[key]; li != nil {
			for v := range li.values {
				if r.Has(v) {
					out = append(out, v)
				}
			}
		}
	}
	return out
}

// finish turns new claims into the plan's NewClaims.
func (s *solver) finish() {
	for _, b := range s.claims {
		s.plan.NewClaims = append(s.plan.NewClaims, s.finalizeClaim(b))
	}
}

func describePod(p *corev1.Pod) string {
	return p.Namespace + "/" + p.Name
}

func joinReasons(rs []string) string {
	sort.Strings(rs)
	return strings.Join(rs, "; ")
}

var _ = metav1.Now
var _ = fmt.Sprint
