package oracle

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/requirements"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
)

// Karpenter's well-known keys the checks set on realized claims.
const (
	labelCapacityType = "karpenter.sh/capacity-type"
	labelNodePool     = "karpenter.sh/nodepool"
)

// Validate checks a plan against its input, constraint by constraint, and
// returns every violation. It shares no code with the solver's placement
// logic: it expands every new claim into each concrete node it could become
// (instance type × offering) and checks plain Kubernetes semantics on each.
// Preferences (preferred affinity, ScheduleAnyway, PreferNoSchedule) are not
// checked. Topology spread counts every matching pod, so it assumes pods
// selected by a spread constraint carry that constraint themselves.
func Validate(in scheduling.Input, plan *scheduling.Plan) []error {
	v := &validator{in: in, plan: plan, requests: map[*corev1.Pod]corev1.ResourceList{}}
	v.accounting()
	if len(v.errs) > 0 {
		return v.errs
	}
	v.buildHosts()
	v.claimShape()
	v.perPod()
	v.resourcesAndPorts()
	v.interPod()
	v.spread()
	v.limits()
	return v.errs
}

type validator struct {
	in       scheduling.Input
	plan     *scheduling.Plan
	errs     []error
	hosts    []*vhost
	where    map[types.UID]*vhost
	requests map[*corev1.Pod]corev1.ResourceList
}

// vhost is a node or a claim; a claim has one realization per option and
// offering.
type vhost struct {
	name     string
	claim    *scheduling.NewClaim
	pool     *scheduling.NodePool
	node     *scheduling.Node
	realized []map[string]string // label sets; one for nodes
	optOf    []int               // option index of each realization
	taints   []corev1.Taint
	existing []*corev1.Pod
	placed   []*corev1.Pod
}

func (v *validator) fail(format string, args ...any) {
	v.errs = append(v.errs, fmt.Errorf(format, args...))
}

func (v *validator) accounting() {
	seen := map[types.UID]int{}
	for _, p := range v.plan.Placements {
		seen[p.Pod.UID]++
		if p.Kind == scheduling.TargetNewClaim && (p.Claim < 0 || p.Claim >= len(v.plan.NewClaims)) {
			v.fail("pod %s placed on claim %d which does not exist", p.Pod.Name, p.Claim)
		}
	}
	for _, e := range v.plan.Errors {
		seen[e.Pod.UID]++
	}
	for _, p := range v.in.Pods {
		if seen[p.UID] != 1 {
			v.fail("pod %s is accounted %d times (placements + errors), want 1", p.Name, seen[p.UID])
		}
	}
	for i, c := range v.plan.NewClaims {
		if len(c.Pods) == 0 {
			v.fail("claim %d has no pods", i)
		}
		n := 0
		for _, p := range v.plan.Placements {
			if p.Kind == scheduling.TargetNewClaim && p.Claim == i {
				n++
			}
		}
		if n != len(c.Pods) {
			v.fail("claim %d lists %d pods but %d placements point at it", i, len(c.Pods), n)
		}
	}
}

func (v *validator) buildHosts() {
	v.where = map[types.UID]*vhost{}
	byName := map[string]*vhost{}
	for _, list := range [][]*scheduling.Node{v.in.Nodes, v.in.InFlight} {
		for _, n := range list {
			h := &vhost{name: n.Name, node: n, realized: []map[string]string{n.Labels}, optOf: []int{0}, taints: n.Taints, existing: n.Pods}
			v.hosts = append(v.hosts, h)
			byName[n.Name] = h
		}
	}
	pools := map[string]*scheduling.NodePool{}
	for _, p := range v.in.NodePools {
		pools[p.Name] = p
	}
	claimHosts := make([]*vhost, len(v.plan.NewClaims))
	for i, c := range v.plan.NewClaims {
		pool := pools[c.NodePool]
		if pool == nil {
			v.fail("claim %d names unknown NodePool %q", i, c.NodePool)
			continue
		}
		h := &vhost{name: c.Hostname, claim: c, pool: pool, taints: pool.Taints}
		base := c.Requirements.Labels(nil)
		for oi, o := range c.InstanceTypes {
			for _, off := range o.Offerings {
				l := map[string]string{}
				for k, val := range base {
					l[k] = val
				}
				for k, val := range pool.Labels {
					l[k] = val
				}
				for k, val := range o.Type.Labels {
					l[k] = val
				}
				l[corev1.LabelTopologyZone], l[labelCapacityType], l[labelNodePool], l[corev1.LabelHostname] = off.Zone, off.CapacityType, pool.Name, c.Hostname
				for _, l := range withChoices(l, o.Type.LabelChoices) {
					h.realized = append(h.realized, l)
					h.optOf = append(h.optOf, oi)
				}
			}
		}
		v.hosts = append(v.hosts, h)
		claimHosts[i] = h
	}
	for _, p := range v.plan.Placements {
		var h *vhost
		if p.Kind == scheduling.TargetNewClaim {
			h = claimHosts[p.Claim]
		} else {
			h = byName[p.Node]
		}
		if h == nil {
			v.fail("pod %s placed on unknown %s %q", p.Pod.Name, p.Kind, p.Node)
			continue
		}
		h.placed = append(h.placed, p.Pod)
		v.where[p.Pod.UID] = h
	}
}

func (v *validator) claimShape() {
	max := v.in.Options.MaxInstanceTypes
	if max <= 0 {
		max = scheduling.DefaultMaxInstanceTypes
	}
	for _, h := range v.hosts {
		c := h.claim
		if c == nil {
			continue
		}
		if len(c.InstanceTypes) == 0 || len(c.InstanceTypes) > max {
			v.fail("claim %s lists %d instance types, want 1..%d", h.name, len(c.InstanceTypes), max)
		}
		for i, o := range c.InstanceTypes {
			if i > 0 && o.Price < c.InstanceTypes[i-1].Price {
				v.fail("claim %s instance types are not cheapest first at %s", h.name, o.Type.Name)
			}
			if len(o.Offerings) == 0 {
				v.fail("claim %s option %s has no offering", h.name, o.Type.Name)
			}
			cheapest := -1.0
			for _, off := range o.Offerings {
				if !off.Available {
					v.fail("claim %s option %s lists an unavailable offering", h.name, o.Type.Name)
				}
				if cheapest < 0 || off.Price < cheapest {
					cheapest = off.Price
				}
			}
			if cheapest != o.Price {
				v.fail("claim %s option %s price %v is not its cheapest offering %v", h.name, o.Type.Name, o.Price, cheapest)
			}
		}
		for i, l := range h.realized {
			if err := c.Requirements.Matches(l); err != nil {
				v.fail("claim %s realization %d violates its own requirements: %v", h.name, i, err)
			}
			for _, r := range h.pool.Requirements {
				if !matchExpr(r.NodeSelectorRequirement, l) {
					v.fail("claim %s option %s violates NodePool %s requirement %s %s %v", h.name, l[corev1.LabelInstanceTypeStable], h.pool.Name, r.Key, r.Operator, r.Values)
				}
			}
		}
		if !c.MinValuesRelaxed {
			for _, r := range h.pool.Requirements {
				if r.MinValues == nil {
					continue
				}
				if n := distinctValues(h.realized, r.Key); n < *r.MinValues {
					v.fail("claim %s has %d distinct %s values, minValues is %d", h.name, n, r.Key, *r.MinValues)
				}
			}
		}
		// The claim is launched with its own minValues (relaxed ones
		// included), so its options must meet them.
		for _, key := range c.Requirements.Keys() {
			r := c.Requirements[key]
			if r.MinValues == nil {
				continue
			}
			if n := distinctValues(h.realized, key); n < *r.MinValues {
				v.fail("claim %s has %d distinct %s values, its requirement's minValues is %d", h.name, n, key, *r.MinValues)
			}
		}
	}
}

// distinctValues counts the values of key over a claim's realizations.
func distinctValues(realized []map[string]string, key string) int {
	vals := map[string]bool{}
	for _, l := range realized {
		if x, ok := l[key]; ok {
			vals[x] = true
		}
	}
	return len(vals)
}

func (v *validator) perPod() {
	for _, p := range v.in.Pods {
		h := v.where[p.UID]
		if h == nil {
			continue
		}
		for _, l := range h.realized {
			for k, val := range p.Spec.NodeSelector {
				if l[k] != val && l[requirements.NormalizeKey(k)] != val {
					v.fail("pod %s on %s: nodeSelector %s=%s not met (%q)", p.Name, h.name, k, val, l[k])
				}
			}
			if a := p.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
				if !matchTerms(a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms, l) {
					v.fail("pod %s on %s (%s): no required node affinity term matches", p.Name, h.name, l[corev1.LabelInstanceTypeStable])
				}
			}
			if alts := v.in.VolumeTopology[p.UID]; len(alts) > 0 {
				ok := false
				for _, alt := range alts {
					ok = ok || matchTerms([]corev1.NodeSelectorTerm{{MatchExpressions: alt}}, l)
				}
				if !ok {
					v.fail("pod %s on %s: volume topology not satisfied in zone %s", p.Name, h.name, l[corev1.LabelTopologyZone])
				}
			}
		}
		for _, t := range h.taints {
			if t.Effect == corev1.TaintEffectPreferNoSchedule {
				continue
			}
			ok := false
			for i := range p.Spec.Tolerations {
				ok = ok || tolerationMatches(p.Spec.Tolerations[i], t)
			}
			if !ok {
				v.fail("pod %s on %s does not tolerate taint %s", p.Name, h.name, t.ToString())
			}
		}
	}
}

func (v *validator) resourcesAndPorts() {
	for _, h := range v.hosts {
		pods := append(append([]*corev1.Pod{}, h.existing...), h.placed...)
		if h.claim == nil {
			checkFit(v, h.name, pods, h.node.Allocatable)
			checkPorts(v, h.name, pods)
			continue
		}
		seen := map[int]bool{}
		for ri, l := range h.realized {
			oi := h.optOf[ri]
			if seen[oi] {
				continue
			}
			seen[oi] = true
			all := append([]*corev1.Pod{}, pods...)
			for _, d := range v.in.DaemonSets {
				if daemonRuns(d, h.pool.Taints, l) {
					all = append(all, d)
				}
			}
			checkFit(v, h.name+"/"+h.claim.InstanceTypes[oi].Type.Name, all, h.claim.InstanceTypes[oi].Type.Allocatable)
			checkPorts(v, h.name, all)
		}
	}
}

func daemonRuns(d *corev1.Pod, taints []corev1.Taint, l map[string]string) bool {
	for _, t := range taints {
		ok := false
		for i := range d.Spec.Tolerations {
			ok = ok || tolerationMatches(d.Spec.Tolerations[i], t)
		}
		if !ok {
			return false
		}
	}
	for k, val := range d.Spec.NodeSelector {
		if l[k] != val {
			return false
		}
	}
	if a := d.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		return matchTerms(a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms, l)
	}
	return true
}

func checkFit(v *validator, where string, pods []*corev1.Pod, alloc corev1.ResourceList) {
	sum := corev1.ResourceList{}
	for _, p := range pods {
		r, ok := v.requests[p]
		if !ok {
			r = scheduling.PodRequests(p)
			v.requests[p] = r
		}
		scheduling.AddResources(sum, r)
	}
	if n := int64(len(pods)); n > 0 {
		podsAlloc := alloc[corev1.ResourcePods]
		if _, set := alloc[corev1.ResourcePods]; set && n > podsAlloc.Value() {
			v.fail("%s: %d pods exceed the pod capacity %d", where, n, podsAlloc.Value())
		}
	}
	for name, q := range sum {
		if q.IsZero() {
			continue
		}
		a, ok := alloc[name]
		if !ok || q.Cmp(a) > 0 {
			v.fail("%s: %s requests %s exceed allocatable %s", where, name, q.String(), a.String())
		}
	}
}

func checkPorts(v *validator, where string, pods []*corev1.Pod) {
	var seen []corev1.ContainerPort
	for _, p := range pods {
		for _, hp := range scheduling.PodHostPorts(p) {
			for _, s := range seen {
				if s.HostPort == hp.HostPort && s.Protocol == hp.Protocol && (s.HostIP == hp.HostIP || s.HostIP == "" || hp.HostIP == "" || s.HostIP == "0.0.0.0" || hp.HostIP == "0.0.0.0") {
					v.fail("%s: host port %d/%s used twice (pod %s)", where, hp.HostPort, hp.Protocol, p.Name)
				}
			}
			seen = append(seen, hp)
		}
	}
}

// domains returns the possible values of key for pods on h (one for nodes,
// possibly several for claims; none when the label is absent).
func (h *vhost) domains(key string) map[string]bool {
	out := map[string]bool{}
	for _, l := range h.realized {
		if x, ok := l[key]; ok {
			out[x] = true
		}
	}
	return out
}

func single(m map[string]bool) (string, bool) {
	if len(m) != 1 {
		return "", false
	}
	for k := range m {
		return k, true
	}
	return "", false
}

type vpod struct {
	pod *corev1.Pod
	h   *vhost
}

func (v *validator) allPods() []vpod {
	var out []vpod
	for _, h := range v.hosts {
		for _, p := range h.existing {
			out = append(out, vpod{p, h})
		}
		for _, p := range h.placed {
			out = append(out, vpod{p, h})
		}
	}
	return out
}

func (v *validator) termMatches(owner *corev1.Pod, t corev1.PodAffinityTerm, p *corev1.Pod) bool {
	nsOK := false
	if t.NamespaceSelector != nil {
		sel, err := metav1.LabelSelectorAsSelector(t.NamespaceSelector)
		nsOK = err == nil && sel.Matches(labels.Set(v.in.NamespaceLabels[p.Namespace]))
	}
	for _, n := range t.Namespaces {
		nsOK = nsOK || n == p.Namespace
	}
	if t.NamespaceSelector == nil && len(t.Namespaces) == 0 {
		nsOK = owner.Namespace == p.Namespace
	}
	if !nsOK {
		return false
	}
	sel, err := metav1.LabelSelectorAsSelector(t.LabelSelector)
	if err != nil {
		return false
	}
	return sel.Matches(labels.Set(p.Labels))
}

func overlaps(a, b map[string]bool) bool {
	for k := range a {
		if b[k] {
			return true
		}
	}
	return false
}

func (v *validator) interPod() {
	all := v.allPods()
	placed := map[types.UID]bool{}
	for _, p := range v.plan.Placements {
		placed[p.Pod.UID] = true
	}
	for _, a := range all {
		aff := a.pod.Spec.Affinity
		if aff == nil {
			continue
		}
		if aff.PodAntiAffinity != nil {
			for _, t := range aff.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
				da := a.h.domains(t.TopologyKey)
				for _, b := range all {
					if b.pod.UID == a.pod.UID || (!placed[a.pod.UID] && !placed[b.pod.UID]) {
						continue
					}
					if v.termMatches(a.pod, t, b.pod) && overlaps(da, b.h.domains(t.TopologyKey)) {
						v.fail("anti-affinity of %s (%s) violated by %s on %s", a.pod.Name, t.TopologyKey, b.pod.Name, b.h.name)
					}
				}
			}
		}
		if aff.PodAffinity != nil && placed[a.pod.UID] {
			for _, t := range aff.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
				d, ok := single(a.h.domains(t.TopologyKey))
				if !ok {
					v.fail("pod %s has pod affinity on %s but its node's domain is undecided", a.pod.Name, t.TopologyKey)
					continue
				}
				found, others := false, false
				for _, b := range all {
					if b.pod.UID == a.pod.UID || !v.termMatches(a.pod, t, b.pod) {
						continue
					}
					others = true
					if bd, ok := single(b.h.domains(t.TopologyKey)); ok && bd == d {
						found = true
					}
				}
				if !found && (others || !v.termMatches(a.pod, t, a.pod)) {
					v.fail("pod affinity of %s (%s) not satisfied in %s", a.pod.Name, t.TopologyKey, d)
				}
			}
		}
	}
}

func (v *validator) spread() {
	all := v.allPods()
	eligibleCache := map[string][]string{}
	for _, pl := range v.plan.Placements {
		p := pl.Pod
		h := v.where[p.UID]
		for _, c := range p.Spec.TopologySpreadConstraints {
			if c.WhenUnsatisfiable != corev1.DoNotSchedule {
				continue
			}
			d, ok := single(h.domains(c.TopologyKey))
			if !ok {
				v.fail("pod %s has a %s spread constraint but its node's domain is undecided", p.Name, c.TopologyKey)
				continue
			}
			sel, _ := metav1.LabelSelectorAsSelector(c.LabelSelector)
			honorAffinity := c.NodeAffinityPolicy == nil || *c.NodeAffinityPolicy == corev1.NodeInclusionPolicyHonor
			honorTaints := c.NodeTaintsPolicy != nil && *c.NodeTaintsPolicy == corev1.NodeInclusionPolicyHonor
			counts := map[string]int{}
			for _, q := range all {
				if q.pod.Namespace != p.Namespace || !sel.Matches(labels.Set(q.pod.Labels)) {
					continue
				}
				if q.h.claim == nil && !v.nodeCounts(p, q.h.node.Labels, q.h.taints, honorAffinity, honorTaints) {
					continue
				}
				if qd, ok := single(q.h.domains(c.TopologyKey)); ok {
					counts[qd]++
				}
			}
			if c.TopologyKey == corev1.LabelHostname {
				if counts[d] > int(c.MaxSkew) {
					v.fail("pod %s: %d matching pods on %s exceed maxSkew %d", p.Name, counts[d], d, c.MaxSkew)
				}
				continue
			}
			ekey := fmt.Sprintf("%s|%s|%v|%v|%v|%v", p.Namespace, c.TopologyKey, honorAffinity, honorTaints, p.Spec.NodeSelector, p.Spec.Tolerations)
			if a := p.Spec.Affinity; a != nil && a.NodeAffinity != nil {
				data, _ := a.NodeAffinity.Marshal()
				ekey += string(data)
			}
			eligible, cached := eligibleCache[ekey]
			if !cached {
				eligible = v.eligible(p, c.TopologyKey, honorAffinity, honorTaints)
				eligibleCache[ekey] = eligible
			}
			minDomains := 1
			if c.MinDomains != nil {
				minDomains = int(*c.MinDomains)
			}
			lo := 0
			if len(eligible) >= minDomains {
				lo = -1
				for _, e := range eligible {
					if lo < 0 || counts[e] < lo {
						lo = counts[e]
					}
				}
			}
			if counts[d]-lo > int(c.MaxSkew) {
				v.fail("pod %s: %s skew %d-%d exceeds maxSkew %d (domains %v, counts %v)", p.Name, c.TopologyKey, counts[d], lo, c.MaxSkew, eligible, counts)
			}
		}
	}
}

func (v *validator) nodeCounts(p *corev1.Pod, l map[string]string, taints []corev1.Taint, honorAffinity, honorTaints bool) bool {
	if honorAffinity {
		for k, val := range p.Spec.NodeSelector {
			if l[k] != val {
				return false
			}
		}
		if a := p.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
			if !matchTerms(a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[:1], l) {
				return false
			}
		}
	}
	if honorTaints {
		for _, t := range taints {
			if t.Effect == corev1.TaintEffectPreferNoSchedule {
				continue
			}
			ok := false
			for i := range p.Spec.Tolerations {
				ok = ok || tolerationMatches(p.Spec.Tolerations[i], t)
			}
			if !ok {
				return false
			}
		}
	}
	return true
}

// eligible lists the domains of key a pod could be placed in: existing
// nodes and every offering of every NodePool instance type that satisfies
// the NodePool's requirements (filtered by the pod's node policies).
func (v *validator) eligible(p *corev1.Pod, key string, honorAffinity, honorTaints bool) []string {
	set := map[string]bool{}
	for _, h := range v.hosts {
		if h.claim == nil {
			if x, ok := h.node.Labels[key]; ok && v.nodeCounts(p, h.node.Labels, h.taints, honorAffinity, honorTaints) {
				set[x] = true
			}
		}
	}
	for _, pool := range v.in.NodePools {
		for _, it := range pool.InstanceTypes {
			for _, off := range it.Offerings {
				if !off.Available {
					continue
				}
				l := map[string]string{}
				for k, val := range it.Labels {
					l[k] = val
				}
				for k, val := range pool.Labels {
					l[k] = val
				}
				l[corev1.LabelTopologyZone], l[labelCapacityType], l[labelNodePool] = off.Zone, off.CapacityType, pool.Name
				for _, l := range withChoices(l, it.LabelChoices) {
					ok := true
					for _, r := range pool.Requirements {
						// Keys instance types do not carry are NodePool labels.
						custom := !hasKey(l, r.Key) && r.Key != corev1.LabelTopologyZone && r.Key != labelCapacityType
						ok = ok && (custom || matchExpr(r.NodeSelectorRequirement, l))
					}
					if !ok || !v.nodeCounts(p, l, pool.Taints, honorAffinity, honorTaints) {
						continue
					}
					if x, has := l[key]; has {
						set[x] = true
					}
				}
			}
		}
	}
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func hasKey(m map[string]string, k string) bool { _, ok := m[k]; return ok }

func (v *validator) limits() {
	for _, pool := range v.in.NodePools {
		used := corev1.ResourceList{}
		scheduling.AddResources(used, pool.Usage)
		nodes := int64(0)
		for _, c := range v.plan.NewClaims {
			if c.NodePool != pool.Name {
				continue
			}
			nodes++
			worst := corev1.ResourceList{}
			for _, o := range c.InstanceTypes {
				capacity := o.Type.Capacity
				if capacity == nil {
					capacity = o.Type.Allocatable
				}
				worst = scheduling.MaxResources(worst, capacity)
			}
			scheduling.AddResources(used, worst)
		}
		for name, lim := range pool.Limits {
			if name == "nodes" {
				u := pool.Usage["nodes"]
				if nodes+u.Value() > lim.Value() {
					v.fail("NodePool %s: %d nodes exceed limits.nodes %d", pool.Name, nodes+u.Value(), lim.Value())
				}
				continue
			}
			if u := used[name]; u.Cmp(lim) > 0 {
				v.fail("NodePool %s: %s %s exceeds limit %s", pool.Name, name, u.String(), lim.String())
			}
		}
	}
}

func matchTerms(terms []corev1.NodeSelectorTerm, l map[string]string) bool {
	for _, t := range terms {
		ok := true
		for _, e := range t.MatchExpressions {
			ok = ok && matchExpr(e, l)
		}
		if ok {
			return true
		}
	}
	return false
}

// matchExpr is Kubernetes' node selector semantics plus Karpenter's Gte/Lte.
func matchExpr(e corev1.NodeSelectorRequirement, l map[string]string) bool {
	val, has := l[e.Key]
	in := func() bool {
		for _, x := range e.Values {
			if x == val {
				return true
			}
		}
		return false
	}
	num := func() (int64, int64, bool) {
		if !has || len(e.Values) != 1 {
			return 0, 0, false
		}
		a, err1 := strconv.ParseInt(val, 10, 64)
		b, err2 := strconv.ParseInt(e.Values[0], 10, 64)
		return a, b, err1 == nil && err2 == nil
	}
	switch e.Operator {
	case corev1.NodeSelectorOpIn:
		return has && in()
	case corev1.NodeSelectorOpNotIn:
		return !has || !in()
	case corev1.NodeSelectorOpExists:
		return has
	case corev1.NodeSelectorOpDoesNotExist:
		return !has
	case corev1.NodeSelectorOpGt:
		a, b, ok := num()
		return ok && a > b
	case corev1.NodeSelectorOpLt:
		a, b, ok := num()
		return ok && a < b
	case "Gte":
		a, b, ok := num()
		return ok && a >= b
	case "Lte":
		a, b, ok := num()
		return ok && a <= b
	}
	return false
}

func tolerationMatches(t corev1.Toleration, taint corev1.Taint) bool {
	if t.Effect != "" && t.Effect != taint.Effect {
		return false
	}
	if t.Operator == corev1.TolerationOpExists {
		return t.Key == "" || t.Key == taint.Key
	}
	return t.Key == taint.Key && t.Value == taint.Value
}

// withChoices is l realized with each value of each label choice l does
// not already pin: one label set per combination.
func withChoices(l map[string]string, choices map[string][]string) []map[string]string {
	out := []map[string]string{l}
	for _, k := range slices.Sorted(maps.Keys(choices)) {
		if _, pinned := l[k]; pinned {
			continue
		}
		var next []map[string]string
		for _, base := range out {
			for _, v := range choices[k] {
				m := maps.Clone(base)
				m[k] = v
				next = append(next, m)
			}
		}
		out = next
	}
	return out
}
