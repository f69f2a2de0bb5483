package scheduling

import (
	"errors"
	"math"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
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
	// promisedReq sums the requests of promised pods (class.promised).
	promisedReq []int64
	matches     map[[2]int]bool
	inverse     map[*class][]*topoGroup
	topoKeys    []string
	plan        *Plan
	hasPNS      bool
	order       []*class // classes in queue order, for sizing lookahead
	runs        []classRun
	room        *roomIndex
	zoneRooms   []*roomIndex // by catalog zone index; see buildZoneRooms
	zoneMasks   map[int]uint64
	noRoom      []int64
	singles     map[singleKey]singleVal
	pendBuf     []groupCount
	cands       []sizingCand
	pendBufV    []int64 // see pending
	altCands    []sizingCand
	pendBufR    []int64 // see finishInOne
	pendBufU    []int64 // see holdPromises
	buf         []int64
	promise     bool
	carriers    map[*topoGroup][]*class // see hostCarriers
	byPrice     map[string][]int
	offerings   map[offerKey][]Offering
	minReq      []int64 // smallest request per resource over all classes
	// reservations counts the capacity reservations' instances this pass.
	reservations *reservations
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
		byPrice: map[string][]int{}, offerings: map[offerKey][]Offering{}, singles: map[singleKey]singleVal{}, reservations: newReservations()}
	if s.opts.MaxInstanceTypes <= 0 {
		s.opts.MaxInstanceTypes = DefaultMaxInstanceTypes
	}
	if s.opts.WellKnownLabels == nil {
		s.opts.WellKnownLabels = defaultWellKnown
	}
	s.table = newReqTable(s.opts.WellKnownLabels)
	s.topo = newTopology(in.NamespaceLabels)
	shared := in.Catalog
	if shared == nil || !shared.covers(in.NodePools) {
		var err error
		if shared, err = NewCatalog(in.NodePools); err != nil {
			return nil, err
		}
	}
	s.cat = shared.view(s.res, s.reservations)
	classes, perr := s.buildClasses()
	for _, n := range append(append([]*Node{}, in.Nodes...), in.InFlight...) {
		s.res.addAll(n.Allocatable)
		// Only resources pending pods or instance types know matter; a
		// running pod's other requests cannot block anything.
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
	s.promisedReq = make([]int64, len(s.res.names))
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
	s.carriers = hostCarriers(classes)
	s.runs = buildRuns(classes)
	s.minReq = make([]int64, len(s.res.names))
	for i := range s.minReq {
		s.minReq[i] = math.MaxInt64
		for _, c := range classes {
			s.minReq[i] = min(s.minReq[i], c.req[i])
		}
	}
	s.packPatterns(classes)
	queue := classes
	stalled := 0
	for len(queue) > 0 {
		if stalled >= len(queue) {
			if !s.loosenHeld(queue) {
				break
			}
			stalled = 0
		}
		c := queue[0]
		queue = queue[1:]
		cohort := s.hostCohort(c)
		placed := s.placeClass(c)
		if placed > 0 {
			s.placeCohort(c, cohort)
		}
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

// placeCohort places, right after c's pods seeded a hostname affinity term,
// the other classes bound to their node (hostCohort), before other classes
// take the room it has for them. Their pods stay queued if they do not fit.
func (s *solver) placeCohort(c *class, cohort []*class) {
	for _, o := range cohort {
		if o != c && len(o.pods) > 0 {
			s.placeClass(o)
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
	c.poolTypes, c.poolKnown = nil, nil
	c.freshCap = math.MaxInt
	if len(c.ports) > 0 {
		c.freshCap = 1
	}
	if c.selectedBy != nil || len(c.spreads)+len(c.anti)+len(c.prefAnti)+len(c.softSpreads) > 0 {
		c.freshCap = min(c.freshCap, s.hostnameCap(c, &bin{name: "\x00new"}))
	}
}

// finish turns new claims into the plan's NewClaims.
func (s *solver) finish() {
	for _, b := range s.claims {
		claim := s.finalizeClaim(b)
		if claim.MinValuesRelaxed {
			relaxMinValues(claim)
		}
		s.plan.NewClaims = append(s.plan.NewClaims, claim)
	}
}

func joinReasons(rs []string) string {
	sort.Strings(rs)
	return strings.Join(rs, "; ")
}
