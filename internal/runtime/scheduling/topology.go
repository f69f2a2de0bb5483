package scheduling

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/requirements"
)

type topoKind int

const (
	kindSpread topoKind = iota
	kindAffinity
	kindAnti
)

func (k topoKind) String() string {
	return [...]string{"topology spread", "pod affinity", "pod anti-affinity"}[k]
}

// topoGroup counts pods matching one term (spread constraint or
// (anti-)affinity term) per domain of its topology key.
type topoGroup struct {
	kind     topoKind
	key      string
	hostname bool
	nsAll    bool
	ns       map[string]bool
	selector labels.Selector
	desc     string

	maxSkew, minDomains int
	// Spread node filters (nodeAffinityPolicy / nodeTaintsPolicy Honor).
	filterReqs  requirements.Requirements
	filterTaint *class
	eligible    []string // candidate domains (non-hostname spread)

	counts map[string]int // pods selected by the term, per domain
	total  int
	// everywhere counts selected pods whose domain is unknown; anti-affinity
	// treats them as present in every domain.
	everywhere int
	owners     map[string]int // anti-affinity: pods carrying the term, per domain
	// hard: some class carries this spread as DoNotSchedule; anchored
	// counts the pods placed in this pass that carry it, per domain.
	hard     bool
	anchored map[string]int
	keyID    int // small id of key, for caches
	// waiting: claims kept out of a zone's room index until min rises.
	waiting []zoneWait
	// min caches spreadMin until counts change.
	min      int
	minKnown bool
}

func (g *topoGroup) selects(ns string, lbls map[string]string) bool {
	if !g.nsAll && !g.ns[ns] {
		return false
	}
	return g.selector.Matches(labels.Set(lbls))
}

// topology builds and indexes the groups of every class.
type topology struct {
	keyIDs map[string]int
	groups map[string]*topoGroup
	list   []*topoGroup
	nsLbls map[string]map[string]string
}

func newTopology(nsLabels map[string]map[string]string) *topology {
	return &topology{keyIDs: map[string]int{}, groups: map[string]*topoGroup{}, nsLbls: nsLabels}
}

func (t *topology) intern(g *topoGroup, sig string) *topoGroup {
	if cur, ok := t.groups[sig]; ok {
		return cur
	}
	g.counts, g.owners, g.anchored, g.desc = map[string]int{}, map[string]int{}, map[string]int{}, sig
	g.hostname = g.key == labelHostname
	if _, ok := t.keyIDs[g.key]; !ok {
		t.keyIDs[g.key] = len(t.keyIDs)
	}
	g.keyID = t.keyIDs[g.key]
	t.groups[sig] = g
	t.list = append(t.list, g)
	return g
}

func (t *topology) namespaces(pod *corev1.Pod, term *corev1.PodAffinityTerm) (bool, map[string]bool, error) {
	ns := map[string]bool{}
	for _, n := range term.Namespaces {
		ns[n] = true
	}
	if term.NamespaceSelector != nil {
		sel, err := metav1.LabelSelectorAsSelector(term.NamespaceSelector)
		if err != nil {
			return false, nil, fmt.Errorf("namespaceSelector: %w", err)
		}
		if sel.Empty() {
			return true, nil, nil
		}
		for name, lbls := range t.nsLbls {
			if sel.Matches(labels.Set(lbls)) {
				ns[name] = true
			}
		}
	} else if len(term.Namespaces) == 0 {
		ns[pod.Namespace] = true
	}
	return false, ns, nil
}

func nsSig(all bool, ns map[string]bool) string {
	if all {
		return "*"
	}
	keys := make([]string, 0, len(ns))
	for k := range ns {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return strings.Join(keys, ",")
}

func (t *topology) affinityGroup(kind topoKind, pod *corev1.Pod, term *corev1.PodAffinityTerm) (*topoGroup, error) {
	all, ns, err := t.namespaces(pod, term)
	if err != nil {
		return nil, err
	}
	ls := term.LabelSelector
	if ls == nil {
		ls = &metav1.LabelSelector{}
	}
	ls = ls.DeepCopy()
	// matchLabelKeys / mismatchLabelKeys narrow the selector with the pod's
	// own label values.
	for _, k := range term.MatchLabelKeys {
		if v, ok := pod.Labels[k]; ok {
			ls.MatchExpressions = append(ls.MatchExpressions, metav1.LabelSelectorRequirement{Key: k, Operator: metav1.LabelSelectorOpIn, Values: []string{v}})
		}
	}
	for _, k := range term.MismatchLabelKeys {
		if v, ok := pod.Labels[k]; ok {
			ls.MatchExpressions = append(ls.MatchExpressions, metav1.LabelSelectorRequirement{Key: k, Operator: metav1.LabelSelectorOpNotIn, Values: []string{v}})
		}
	}
	sel, err := metav1.LabelSelectorAsSelector(ls)
	if err != nil {
		return nil, fmt.Errorf("labelSelector: %w", err)
	}
	if term.TopologyKey == "" {
		return nil, fmt.Errorf("topologyKey must be set")
	}
	key := requirements.NormalizeKey(term.TopologyKey)
	sig := fmt.Sprintf("%s key=%s ns=%s sel=%s", kind, key, nsSig(all, ns), sel)
	return t.intern(&topoGroup{kind: kind, key: key, nsAll: all, ns: ns, selector: sel}, sig), nil
}

func (t *topology) spreadGroup(pod *corev1.Pod, c *class, tsc *corev1.TopologySpreadConstraint) (*topoGroup, error) {
	ls := tsc.LabelSelector
	if ls == nil {
		ls = &metav1.LabelSelector{}
	}
	ls = ls.DeepCopy()
	for _, k := range tsc.MatchLabelKeys {
		if v, ok := pod.Labels[k]; ok {
			ls.MatchExpressions = append(ls.MatchExpressions, metav1.LabelSelectorRequirement{Key: k, Operator: metav1.LabelSelectorOpIn, Values: []string{v}})
		}
	}
	sel, err := metav1.LabelSelectorAsSelector(ls)
	if err != nil {
		return nil, fmt.Errorf("topologySpreadConstraints labelSelector: %w", err)
	}
	g := &topoGroup{kind: kindSpread, key: requirements.NormalizeKey(tsc.TopologyKey), ns: map[string]bool{pod.Namespace: true}, selector: sel, maxSkew: int(tsc.MaxSkew), minDomains: 1}
	if g.maxSkew < 1 {
		return nil, fmt.Errorf("topologySpreadConstraints: maxSkew must be at least 1")
	}
	if tsc.MinDomains != nil {
		g.minDomains = int(*tsc.MinDomains)
	}
	filter := "none"
	if tsc.NodeAffinityPolicy == nil || *tsc.NodeAffinityPolicy == corev1.NodeInclusionPolicyHonor {
		g.filterReqs = c.nodeTerms[0]
		filter = "reqs=" + g.filterReqs.String()
	}
	if tsc.NodeTaintsPolicy != nil && *tsc.NodeTaintsPolicy == corev1.NodeInclusionPolicyHonor {
		g.filterTaint = c
		filter += fmt.Sprintf(" taints=%v", c.tolerations)
	}
	sig := fmt.Sprintf("spread key=%s ns=%s sel=%s skew=%d min=%d filter=%s", g.key, pod.Namespace, sel, g.maxSkew, g.minDomains, filter)
	return t.intern(g, sig), nil
}

// attach creates the groups for a class from its representative pod.
func (t *topology) attach(c *class, pod *corev1.Pod, ignorePreferences bool) error {
	if a := pod.Spec.Affinity; a != nil {
		if pa := a.PodAffinity; pa != nil {
			for i := range pa.RequiredDuringSchedulingIgnoredDuringExecution {
				g, err := t.affinityGroup(kindAffinity, pod, &pa.RequiredDuringSchedulingIgnoredDuringExecution[i])
				if err != nil {
					return fmt.Errorf("podAffinity: %w", err)
				}
				c.affinity = append(c.affinity, g)
			}
			if !ignorePreferences {
				for _, w := range byWeight(pa.PreferredDuringSchedulingIgnoredDuringExecution) {
					g, err := t.affinityGroup(kindAffinity, pod, &w.PodAffinityTerm)
					if err != nil {
						return fmt.Errorf("podAffinity: %w", err)
					}
					c.prefAffinity = append(c.prefAffinity, g)
				}
			}
		}
		if pa := a.PodAntiAffinity; pa != nil {
			for i := range pa.RequiredDuringSchedulingIgnoredDuringExecution {
				g, err := t.affinityGroup(kindAnti, pod, &pa.RequiredDuringSchedulingIgnoredDuringExecution[i])
				if err != nil {
					return fmt.Errorf("podAntiAffinity: %w", err)
				}
				c.anti = append(c.anti, g)
				c.requiredAntis = append(c.requiredAntis, g)
			}
			if !ignorePreferences {
				for _, w := range byWeight(pa.PreferredDuringSchedulingIgnoredDuringExecution) {
					g, err := t.affinityGroup(kindAnti, pod, &w.PodAffinityTerm)
					if err != nil {
						return fmt.Errorf("podAntiAffinity: %w", err)
					}
					c.prefAnti = append(c.prefAnti, g)
				}
			}
		}
	}
	for i := range pod.Spec.TopologySpreadConstraints {
		tsc := &pod.Spec.TopologySpreadConstraints[i]
		if tsc.WhenUnsatisfiable == corev1.ScheduleAnyway && ignorePreferences {
			continue
		}
		g, err := t.spreadGroup(pod, c, tsc)
		if err != nil {
			return err
		}
		if tsc.WhenUnsatisfiable == corev1.ScheduleAnyway {
			c.softSpreads = append(c.softSpreads, g)
		} else {
			g.hard = true
			c.spreads = append(c.spreads, g)
		}
	}
	return nil
}

func byWeight(terms []corev1.WeightedPodAffinityTerm) []corev1.WeightedPodAffinityTerm {
	out := append([]corev1.WeightedPodAffinityTerm(nil), terms...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Weight > out[j].Weight })
	return out
}

// existingAnti registers the required anti-affinity terms of a running pod
// so pending pods they select avoid its domain.
func (t *topology) existingAnti(pod *corev1.Pod) []*topoGroup {
	var out []*topoGroup
	if a := pod.Spec.Affinity; a != nil && a.PodAntiAffinity != nil {
		for i := range a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
			if g, err := t.affinityGroup(kindAnti, pod, &a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[i]); err == nil {
				out = append(out, g)
			}
		}
	}
	return out
}

// self reports whether the class's own pods match g.
func (g *topoGroup) self(c *class) bool { return g.selects(c.ns, c.labels) }

// seededBy reports whether c's pods may open the first domain of affinity
// group g: no pod matching g is placed anywhere yet and c's own pods match
// it, so they satisfy each other (Karpenter's self-selecting bootstrap).
func (g *topoGroup) seededBy(c *class) bool { return g.total == 0 && g.self(c) }

// spreadMin is the global minimum used for skew: 0 while fewer domains than
// minDomains are eligible.
func (g *topoGroup) spreadMin() int {
	if g.minKnown {
		return g.min
	}
	g.min, g.minKnown = g.computeMin(), true
	return g.min
}

// add counts k more selected pods in domain d.
func (g *topoGroup) add(d string, k int) {
	g.counts[d] += k
	g.minKnown = false
}

func (g *topoGroup) computeMin() int {
	if len(g.eligible) < g.minDomains {
		return 0
	}
	m := -1
	for _, d := range g.eligible {
		if c := g.counts[d]; m < 0 || c < m {
			m = c
		}
	}
	if m < 0 {
		return 0
	}
	return m
}
