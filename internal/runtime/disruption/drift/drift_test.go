package drift

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
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
	// A changed template label is the static hash's to catch.
	p = pool()
	p.Spec.Template.Labels["team"] = "b"
	p.Annotations = p.HashAnnotations()
	if r := Requirements(claim, p); r != "" {
		t.Fatalf("template label change: requirements drift %q, want it left to the hash", r)
	}
	if r := Static(claim, p); r != NodePoolDrifted {
		t.Fatalf("template label change: static drift %q, want %s", r, NodePoolDrifted)
	}
}

// As Karpenter judges it: every key the pool requires must be a label of
// the claim, so a new requirement on a label the claim lacks drifts it; a
// label of the claim the pool says nothing about does not.
func TestRequirementsDriftOnLabelsTheClaimLacks(t *testing.T) {
	add := func(r v1.NodeSelectorRequirementWithMinValues) *v1.NodePool {
		p := pool()
		p.Spec.Template.Spec.Requirements = append(p.Spec.Template.Spec.Requirements, r)
		return p
	}
	claim := claimOf(pool())
	for _, tc := range []struct {
		name string
		pool *v1.NodePool
		want string
	}{
		{"custom label required In", add(v1.NodeSelectorRequirementWithMinValues{Key: "example.com/team", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}), RequirementsDrifted},
		{"custom label required to exist", add(v1.NodeSelectorRequirementWithMinValues{Key: "example.com/team", Operator: corev1.NodeSelectorOpExists}), RequirementsDrifted},
		{"well-known label the claim lacks", add(v1.NodeSelectorRequirementWithMinValues{Key: v1.LabelInstanceCategory, Operator: corev1.NodeSelectorOpIn, Values: []string{"m"}}), RequirementsDrifted},
		{"custom label required absent", add(v1.NodeSelectorRequirementWithMinValues{Key: "example.com/team", Operator: corev1.NodeSelectorOpDoesNotExist}), ""},
		{"custom label excluded", add(v1.NodeSelectorRequirementWithMinValues{Key: "example.com/team", Operator: corev1.NodeSelectorOpNotIn, Values: []string{"b"}}), ""},
	} {
		if got := Requirements(claim, tc.pool); got != tc.want {
			t.Errorf("%s: drift %q, want %q", tc.name, got, tc.want)
		}
	}
	extra := claimOf(pool())
	extra.Labels["example.com/tier"] = "web"
	if got := Requirements(extra, pool()); got != "" {
		t.Errorf("a claim label the pool does not define drifted the claim: %q", got)
	}
}

// NodePool judges an unlaunched claim by its hash only: its labels lack
// what the cloud fills in at launch.
func TestNodePoolDriftOfUnlaunchedClaims(t *testing.T) {
	p := pool()
	p.Spec.Template.Spec.Requirements = append(p.Spec.Template.Spec.Requirements,
		v1.NodeSelectorRequirementWithMinValues{Key: "example.com/team", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}})
	claim := claimOf(pool())
	if got := NodePool(claim, p); got != "" {
		t.Errorf("unlaunched claim: drift %q, want none yet", got)
	}
	claim.Status.Conditions = []metav1.Condition{{Type: v1.ConditionTypeLaunched, Status: metav1.ConditionTrue}}
	if got := NodePool(claim, p); got != RequirementsDrifted {
		t.Errorf("launched claim: drift %q, want %s", got, RequirementsDrifted)
	}
	p.Spec.Template.Spec.Taints = []corev1.Taint{{Key: "dedicated", Effect: corev1.TaintEffectNoSchedule}}
	p.Annotations = p.HashAnnotations()
	claim.Status.Conditions = nil
	if got := NodePool(claim, p); got != NodePoolDrifted {
		t.Errorf("unlaunched claim of a changed template: drift %q, want %s", got, NodePoolDrifted)
	}
}

func resourceQuantity(s string) resource.Quantity { return resource.MustParse(s) }

func TestNodeClassDrift(t *testing.T) {
	want := map[string]string{v1.EC2NodeClassHashAnnotationKey: "new", v1.EC2NodeClassHashVersionAnnotationKey: "v4"}
	claim := &v1.NodeClaim{}
	claim.Annotations = map[string]string{v1.EC2NodeClassHashAnnotationKey: "old", v1.EC2NodeClassHashVersionAnnotationKey: "v4"}
	if got := NodeClassHash(want, claim); got != NodeClassDrift {
		t.Errorf("another hash: %q, want %s", got, NodeClassDrift)
	}
	claim.Annotations[v1.EC2NodeClassHashVersionAnnotationKey] = "v3"
	if got := NodeClassHash(want, claim); got != "" {
		t.Errorf("another hash version is not judged: %q", got)
	}
	amd64 := awsv1.AMI{ID: "ami-amd", Requirements: []corev1.NodeSelectorRequirement{{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"amd64"}}}}
	arm64 := awsv1.AMI{ID: "ami-arm", Requirements: []corev1.NodeSelectorRequirement{{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"arm64"}}}}
	labels := map[string]string{corev1.LabelArchStable: "amd64"}
	for _, tc := range []struct {
		image string
		amis  []awsv1.AMI
		want  string
	}{
		{"ami-amd", []awsv1.AMI{amd64, arm64}, ""},
		{"ami-old", []awsv1.AMI{amd64, arm64}, AMIDrift},
		{"ami-arm", []awsv1.AMI{amd64, arm64}, AMIDrift}, // not the image of its type
		{"", []awsv1.AMI{amd64}, ""},
		{"ami-old", nil, ""},
	} {
		if got := AMI(tc.image, tc.amis, labels); got != tc.want {
			t.Errorf("image %q: %q, want %q", tc.image, got, tc.want)
		}
	}
}
