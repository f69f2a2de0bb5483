package disruption

import (
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// PDBLimits answers whether evicting a pod would be refused by its
// PodDisruptionBudgets right now.
type PDBLimits struct {
	byNamespace map[string][]pdbEntry
}

type pdbEntry struct {
	name     string
	selector labels.Selector
	allowed  int32
	always   bool // unhealthyPodEvictionPolicy: AlwaysAllow
}

// NewPDBLimits indexes the PDBs; ones with invalid selectors are ignored,
// as the Eviction API ignores them.
func NewPDBLimits(pdbs []policyv1.PodDisruptionBudget) *PDBLimits {
	out := &PDBLimits{byNamespace: map[string][]pdbEntry{}}
	for i := range pdbs {
		p := &pdbs[i]
		sel, err := metav1.LabelSelectorAsSelector(p.Spec.Selector)
		if err != nil || p.Spec.Selector == nil {
			continue
		}
		always := p.Spec.UnhealthyPodEvictionPolicy != nil && *p.Spec.UnhealthyPodEvictionPolicy == policyv1.AlwaysAllow
		out.byNamespace[p.Namespace] = append(out.byNamespace[p.Namespace], pdbEntry{
			name: p.Name, selector: sel, allowed: p.Status.DisruptionsAllowed, always: always,
		})
	}
	return out
}

// write feeds the budgets, in a fixed order, to a fingerprint.
func (l *PDBLimits) write(str func(string), num func(uint64)) {
	if l == nil {
		return
	}
	for _, ns := range slices.Sorted(maps.Keys(l.byNamespace)) {
		str(ns)
		for _, e := range l.byNamespace[ns] {
			str(e.name)
			str(e.selector.String())
			num(uint64(e.allowed))
			if e.always {
				str("always")
			}
		}
	}
}

// Blocking explains why evicting pod would fail now, or returns "": the pod
// is covered by more than one PDB (the Eviction API refuses those), or by
// one allowing no disruption, unless the pod is not ready and that PDB
// lets unhealthy pods go (AlwaysAllow).
func (l *PDBLimits) Blocking(pod *corev1.Pod) string {
	if l == nil {
		return ""
	}
	var matched []pdbEntry
	for _, e := range l.byNamespace[pod.Namespace] {
		if e.selector.Matches(labels.Set(pod.Labels)) {
			matched = append(matched, e)
		}
	}
	switch {
	case len(matched) > 1:
		return fmt.Sprintf("pod %s/%s is covered by %d PDBs", pod.Namespace, pod.Name, len(matched))
	case len(matched) == 1 && matched[0].allowed <= 0 && !(matched[0].always && !podReady(pod)):
		return fmt.Sprintf("pdb %s/%s prevents pod evictions", pod.Namespace, matched[0].name)
	}
	return ""
}

func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
