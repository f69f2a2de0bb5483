package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// ToNodeClaim returns a NodeClaim carrying a copy of the template's labels,
// annotations and spec; the caller adds the name, owner, NodePool label,
// hash annotations, narrowed requirements and resource requests.
func (in *NodeClaimTemplate) ToNodeClaim() *NodeClaim {
	t := in.DeepCopy()
	return &NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Labels: t.Labels, Annotations: t.Annotations},
		Spec: NodeClaimSpec{
			Taints:                 t.Spec.Taints,
			StartupTaints:          t.Spec.StartupTaints,
			Requirements:           t.Spec.Requirements,
			NodeClassRef:           t.Spec.NodeClassRef,
			TerminationGracePeriod: t.Spec.TerminationGracePeriod,
			ExpireAfter:            t.Spec.ExpireAfter,
		},
	}
}
