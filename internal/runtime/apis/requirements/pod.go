package requirements

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
)

// ForPod returns what a node must satisfy for pod as Karpenter first tries
// it: the nodeSelector, the first required node-affinity term and the
// heaviest preferred node-affinity term (treated as required until relaxed).
func ForPod(pod *corev1.Pod) (Requirements, error) {
	out, err := StrictForPod(pod)
	if err != nil {
		return out, err
	}
	if a := pod.Spec.Affinity; a != nil && a.NodeAffinity != nil && len(a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution) > 0 {
		pref := HeaviestPreferred(a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution)
		reqs, err := FromNodeSelectorTerm(pref.Preference)
		if err != nil {
			return out, err
		}
		out.Add(valuesOf(reqs)...)
	}
	return out, nil
}

// StrictForPod returns the nodeSelector plus the first required node-affinity
// term. Later terms are alternatives tried only after the first fails.
func StrictForPod(pod *corev1.Pod) (Requirements, error) {
	out := FromLabels(pod.Spec.NodeSelector)
	if a := pod.Spec.Affinity; a != nil && a.NodeAffinity != nil {
		if req := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution; req != nil && len(req.NodeSelectorTerms) > 0 {
			reqs, err := FromNodeSelectorTerm(req.NodeSelectorTerms[0])
			if err != nil {
				return out, err
			}
			out.Add(valuesOf(reqs)...)
		}
	}
	return out, nil
}

// HeaviestPreferred returns the preferred term with the largest weight; the
// first one wins ties, matching a stable sort by weight descending.
func HeaviestPreferred(terms []corev1.PreferredSchedulingTerm) corev1.PreferredSchedulingTerm {
	sorted := append([]corev1.PreferredSchedulingTerm(nil), terms...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Weight > sorted[j].Weight })
	return sorted[0]
}

func valuesOf(r Requirements) []*Requirement {
	out := make([]*Requirement, 0, len(r))
	for _, k := range r.Keys() {
		out = append(out, r[k])
	}
	return out
}
