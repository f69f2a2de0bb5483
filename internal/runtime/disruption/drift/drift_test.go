package drift

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

func pool() *v1.NodePool {
	p := &v1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: "default"},
		Spec: v1.NodePoolSpec{Template: v1.NodeClaimTemplate{
			ObjectMeta: v1.ObjectMeta{Labels: map[string]string{"team": "a"}},
			Spec: v1.NodeClaimTemplateSpec{
				Requirements: v1.Requirements{
					{Key: corev1.LabelInstanceTypeStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"m5.large", "m5.xlarge"}},
					{Key: v1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{"on-demand"}},
				},
				NodeClassRef: &v1.NodeClassReference{Group: v1.AWSGroup, Kind: "EC2NodeClass", Name: "default"},
			},
		}},
	}
	p.Annotations = p.HashAnnotations()
	return p
}

// claimOf is a claim launched from p as it is now.
func claimOf(p *v1.NodePool) *v1.NodeClaim {
	return &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{
		Name:        "c",
		Annotations: p.HashAnnotations(),
		Labels: map[string]string{
			"team": "a", v1.NodePoolLabelKey: p.Name, corev1.LabelInstanceTypeStable: "m5.large",
			v1.CapacityTypeLabelKey: "on-demand", corev1.LabelTopologyZone: "us-west-2a", v1.LabelNodeClass: "default",
		},
	}}
}

func TestStaticDrift(t *testing.T) {
	p := pool()
	claim := claimOf(p)
	if r := Static(claim, p); r != "" {
		t.Fatalf("fresh claim drifted: %s", r)
	}
	// Behavioural fields are outside the hash.
	w := int32(50)
	p.Spec.Weight = &w
	p.Spec.Limits = v1.Limits{corev1.ResourceCPU: resourceQuantity("10")}
	p.Spec.Disruption.Budgets = []v1.Budget{{Nodes: "0"}}
	p.Annotations = p.HashAnnotations()
	if r := Static(claim, p); r != "" {
		t.Fatalf("weight, limits or budgets drifted the claim: %s", r)
	}
	// A template change does.
	p.Spec.Template.Spec.Taints = []corev1.Taint{{Key: "dedicated", Effect: corev1.TaintEffectNoSchedule}}
	p.Annotations = p.HashAnnotations()
	if r := Static(claim, p); r != NodePoolDrifted {
		t.Fatalf("taint change: drift %q, want %s", r, NodePoolDrifted)
	}
	// A hash version mismatch never drifts (the claim is re-stamped).
	claim.Annotations[v1.NodePoolHashVersionAnnotationKey] = "older"
	if r := Static(claim, p); r != "" {
		t.Fatalf("version mismatch drifted: %s", r)
	}
	// Nor does a claim or pool without a hash.
	delete(claim.Annotations, v1.NodePoolHashAnnotationKey)
	claim.Annotations[v1.NodePoolHashVersionAnnotationKey] = v1.NodePoolHashVersion
	if r := Static(claim, p); r != "" {
		t.Fatalf("claim without hash drifted: %s", r)
	}
}

func TestRequirementsDrift(t *testing.T) {
	p := pool()
	claim := claimOf(p)
	if r := Requirements(claim, p); r != "" {
		t.Fatalf("matching claim drifted: %s", r)
	}
	// Widening never drifts.
	p.Spec.Template.Spec.Requirements[0].Values = append(p.Spec.Template.Spec.Requirements[0].Values, "c5.large")
	p.Spec.Template.Spec.Requirements[1].Values = []string{"on-demand", "spot"}
	if r := Requirements(claim, p); r != "" {
		t.Fatalf("widened requirements drifted: %s", r)
	}
	// Removing the claim's instance type does.
	p.Spec.Template.Spec.Requirements[0].Values = []string{"m5.xlarge"}
	if r := Requirements(claim, p); r != RequirementsDrifted {
		t.Fatalf("narrowed instance types: drift %q", r)
	}
	// So does a new requirement the claim's zone does not meet.
	p = pool()
	p.Spec.Template.Spec.Requirements = append(p.Spec.Template.Spec.Requirements,
		v1.NodeSelectorRequirementWithMinValues{Key: corev1.LabelTopologyZone, Operator: corev1.NodeSelectorOpIn, Values: []string{"us-west-2b"}})
	if r := Requirements(claim, p); r != RequirementsDrifted {
		t.Fatalf("zone requirement: drift %q", r)
	}
	// And a changed template label.
	p = pool()
	p.Spec.Template.Labels["team"] = "b"
	if r := Requirements(claim, p); r != RequirementsDrifted {
		t.Fatalf("template label change: drift %q", r)
	}
}

func resourceQuantity(s string) resource.Quantity { return resource.MustParse(s) }
