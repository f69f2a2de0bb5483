package v1

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
)

func TestToNodeClaimCopiesTheTemplate(t *testing.T) {
	np := hashTestNodePool()
	nc := np.Spec.Template.ToNodeClaim()
	tmpl := np.Spec.Template
	if !equality.Semantic.DeepEqual(nc.Labels, tmpl.Labels) || !equality.Semantic.DeepEqual(nc.Annotations, tmpl.Annotations) {
		t.Fatalf("metadata not copied: %v %v", nc.Labels, nc.Annotations)
	}
	s := tmpl.Spec
	if !equality.Semantic.DeepEqual(nc.Spec.Taints, s.Taints) || !equality.Semantic.DeepEqual(nc.Spec.StartupTaints, s.StartupTaints) ||
		!equality.Semantic.DeepEqual(nc.Spec.Requirements, s.Requirements) || *nc.Spec.NodeClassRef != *s.NodeClassRef ||
		nc.Spec.TerminationGracePeriod.Duration != s.TerminationGracePeriod.Duration || nc.Spec.ExpireAfter.String() != s.ExpireAfter.String() {
		t.Fatalf("spec not copied: %+v", nc.Spec)
	}
	// The NodeClaim owns its copy: changing it leaves the NodePool alone.
	nc.Labels["team"] = "changed"
	nc.Spec.Requirements[0].Values[0] = "changed"
	nc.Spec.NodeClassRef.Name = "changed"
	if tmpl.Labels["team"] == "changed" || s.Requirements[0].Values[0] == "changed" || s.NodeClassRef.Name == "changed" {
		t.Fatal("ToNodeClaim shares memory with the template")
	}
}

func TestHashAnnotations(t *testing.T) {
	np := hashTestNodePool()
	got := np.HashAnnotations()
	if got[NodePoolHashAnnotationKey] != np.Hash() || got[NodePoolHashVersionAnnotationKey] != NodePoolHashVersion || len(got) != 2 {
		t.Fatalf("HashAnnotations() = %v", got)
	}
}
