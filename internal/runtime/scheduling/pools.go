package scheduling

import (
	"errors"
	"math"
	"sort"

	corev1 "k8s.io/api/core/v1"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/requirements"
)

// poolState is a NodePool compiled against the catalog.
type poolState struct {
	pool        *NodePool
	index       int
	reqID       int
	reqs        requirements.Requirements
	reqErr      error
	types       bitset
	allocD      [][]int64 // allocatable minus daemonset overhead, by catalog index
	maxAllocD   []int64   // see maxAlloc
	daemon      [][]int64
	daemonPorts []daemonPorts
	limited     []int
	remaining   []int64
	nodesLeft   int
	nodeLimited bool // limits.nodes is set
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
		ps := &poolState{pool: p, index: len(s.pools), nodesLeft: math.MaxInt}
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
		s.checkPoolMinValues(ps)
		ps.allocD = make([][]int64, n)
		ps.daemon = make([][]int64, n)
		ps.types.each(func(i int) {
			ps.allocD[i] = append([]int64(nil), s.cat.alloc[i]...)
			ps.daemon[i] = make([]int64, len(s.res.names))
			if f := s.cat.types[i].BaselineCPU; f > 0 && !p.BurstableCPU {
				ps.allocD[i][resCPU] = baselineCPU(s.cat.alloc[i][resCPU], s.cat.capv[i][resCPU], f)
			}
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
			if ports := podHostPorts(d); len(ports) > 0 {
				ps.daemonPorts = append(ps.daemonPorts, daemonPorts{ports: ports, types: dtypes})
			}
		}
		ps.remaining = make([]int64, len(s.res.names))
		for name, lim := range p.Limits {
			used := p.Usage[name]
			if name == "nodes" {
				ps.nodesLeft = int(lim.Value() - used.Value())
				ps.nodeLimited = true
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

// daemonPorts are one DaemonSet's host ports and the pool's types its pod
// runs on, the same types that carry its resource overhead.
type daemonPorts struct {
	ports []hostPort
	types bitset
}

// daemonPortTypes are the pool's types on which a DaemonSet already binds
// one of ports; nil when there are none.
func (ps *poolState) daemonPortTypes(ports []hostPort) bitset {
	var out bitset
	for _, d := range ps.daemonPorts {
		if !portsConflict(d.ports, ports) {
			continue
		}
		if out == nil {
			out = d.types.clone()
		} else {
			out.orInPlace(d.types)
		}
	}
	return out
}

// baselineCPU is what a burstable type's allocatable CPU (milli) sustains:
// the share of its capacity above the baseline is taken off, so the
// kubelet's reservation still comes out of what is left.
func baselineCPU(alloc, capacity int64, share float64) int64 {
	return max(0, alloc-int64(float64(capacity)*(1-min(share, 1))))
}

// withinLimits reports whether a node of capacity capv fits the remaining
// limits.
func (ps *poolState) withinLimits(capv []int64) bool {
	for _, r := range ps.limited {
		if capv[r] > ps.remaining[r] {
			return false
		}
	}
	return true
}

// checkPoolMinValues records in the plan a NodePool whose instance types,
// before any pod narrows them, offer too few distinct values for one of its
// minValues requirements: under the Strict policy no pod can use it.
// Karpenter checks the same when it builds its scheduler (NewScheduler,
// through filterInstanceTypesByRequirements) and reports the NodePool.
func (s *solver) checkPoolMinValues(ps *poolState) {
	if len(ps.minValues) == 0 || s.opts.MinValuesPolicy == MinValuesBestEffort {
		return
	}
	var list []int
	ps.types.each(func(t int) { list = append(list, t) })
	if key, have, want := s.minValuesShort(ps, list); key != "" {
		if s.plan.MinValuesUnmet == nil {
			s.plan.MinValuesUnmet = map[string]error{}
		}
		s.plan.MinValuesUnmet[ps.pool.Name] = minValuesError(key, have, want)
	}
}

// maxAlloc is, per resource, the most room any of the pool's types has.
func (ps *poolState) maxAlloc() []int64 {
	if ps.maxAllocD == nil {
		for _, a := range ps.allocD {
			if a == nil {
				continue
			}
			if ps.maxAllocD == nil {
				ps.maxAllocD = append([]int64(nil), a...)
			}
			for r, q := range a {
				ps.maxAllocD[r] = max(ps.maxAllocD[r], q)
			}
		}
	}
	return ps.maxAllocD
}
