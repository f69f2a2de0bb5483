package simulation

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1alpha1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/state"
	"github.com/joistdev/terraform-provider-joist/internal/testenv"
)

func instanceType(name string, cpu, memGi int64, spot, od float64) *scheduling.InstanceType {
	res := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewQuantity(cpu, resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(memGi<<30, resource.BinarySI),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	alloc := res.DeepCopy()
	alloc[corev1.ResourceCPU] = *resource.NewMilliQuantity(cpu*1000-100, resource.DecimalSI)
	var offs []scheduling.Offering
	for _, z := range []string{"us-west-2a", "us-west-2b"} {
		offs = append(offs,
			scheduling.Offering{Zone: z, CapacityType: v1.CapacityTypeSpot, Price: spot, Available: true},
			scheduling.Offering{Zone: z, CapacityType: v1.CapacityTypeOnDemand, Price: od, Available: true})
	}
	return &scheduling.InstanceType{
		Name: name,
		Labels: map[string]string{
			corev1.LabelInstanceTypeStable: name, corev1.LabelArchStable: "amd64", corev1.LabelOSStable: "linux",
			v1.LabelInstanceCategory: name[:1], v1.LabelInstanceFamily: name[:2],
		},
		Capacity: res, Allocatable: alloc, Offerings: offs,
	}
}

func testPool() *v1.NodePool {
	three := 2
	return &v1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: "general", UID: "pool-uid"},
		Spec: v1.NodePoolSpec{
			Template: v1.NodeClaimTemplate{
				ObjectMeta: v1.ObjectMeta{Labels: map[string]string{"team": "checkout"}, Annotations: map[string]string{"note": "x"}},
				Spec: v1.NodeClaimTemplateSpec{
					NodeClassRef:  &v1.NodeClassReference{Group: v1.AWSGroup, Kind: "EC2NodeClass", Name: "default"},
					Taints:        []corev1.Taint{{Key: "dedicated", Value: "checkout", Effect: corev1.TaintEffectNoSchedule}},
					StartupTaints: []corev1.Taint{{Key: "cni", Effect: corev1.TaintEffectNoSchedule}},
					Requirements: v1.Requirements{
						{Key: v1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{"spot", "on-demand"}},
						{Key: v1.LabelInstanceCategory, Operator: corev1.NodeSelectorOpIn, Values: []string{"c", "m"}, MinValues: &three},
					},
					ExpireAfter:            v1.MustParseNillableDuration("720h"),
					TerminationGracePeriod: &metav1.Duration{Duration: time.Hour},
				},
			},
			Limits: v1.Limits{corev1.ResourceCPU: resource.MustParse("1000")},
		},
	}
}

func solve(t *testing.T, pool *v1.NodePool, pods ...*corev1.Pod) *scheduling.Plan {
	t.Helper()
	types := []*scheduling.InstanceType{
		instanceType("c5.xlarge", 4, 8, 0.06, 0.17), instanceType("m5.xlarge", 4, 16, 0.07, 0.19),
		instanceType("c5.2xlarge", 8, 16, 0.12, 0.34), instanceType("r5.xlarge", 4, 32, 0.08, 0.25),
	}
	plan, err := scheduling.Solve(scheduling.Input{NodePools: []*scheduling.NodePool{SolverPool(pool, types, nil)}, Pods: pods})
	if err != nil {
		t.Fatal(err)
	}
	return plan
}

func tolerantPod(name, cpu string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("1Gi")}}}},
			Tolerations:  []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists}},
			NodeSelector: map[string]string{"example.com/tier": "web"},
		},
		Status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{
			Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
		}}},
	}
}

func TestNewNodeClaimMetadataAndSpec(t *testing.T) {
	pool := testPool()
	pool.Spec.Template.Spec.Requirements = append(pool.Spec.Template.Spec.Requirements,
		v1.NodeSelectorRequirementWithMinValues{Key: "example.com/tier", Operator: corev1.NodeSelectorOpIn, Values: []string{"web", "batch"}})
	plan := solve(t, pool, tolerantPod("a", "1"), tolerantPod("b", "1"))
	if len(plan.NewClaims) != 1 || len(plan.Errors) != 0 {
		t.Fatalf("plan: %d claims, errors %v", len(plan.NewClaims), plan.Errors)
	}
	claim := NewNodeClaim(pool, plan.NewClaims[0])
	if claim.GenerateName != "general-" || claim.Name != "" {
		t.Errorf("name %q generateName %q", claim.Name, claim.GenerateName)
	}
	if !slices.Equal(claim.Finalizers, []string{v1.TerminationFinalizer}) {
		t.Errorf("finalizers %v", claim.Finalizers)
	}
	if o := claim.OwnerReferences; len(o) != 1 || o[0].Kind != "NodePool" || o[0].Name != "general" || o[0].UID != "pool-uid" ||
		o[0].APIVersion != "karpenter.sh/v1" || o[0].BlockOwnerDeletion == nil || !*o[0].BlockOwnerDeletion {
		t.Errorf("owner references %+v", o)
	}
	for k, want := range map[string]string{
		"team": "checkout", v1.NodePoolLabelKey: "general", v1.LabelNodeClass: "default",
		// A custom requirement the pod narrowed to one value becomes a label.
		"example.com/tier": "web",
	} {
		if claim.Labels[k] != want {
			t.Errorf("label %s=%q, want %q (labels %v)", k, claim.Labels[k], want, claim.Labels)
		}
	}
	if _, ok := claim.Labels[v1.CapacityTypeLabelKey]; ok {
		t.Error("a well-known multi-valued key became a label before launch")
	}
	for k, want := range map[string]string{
		"note": "x", v1.NodePoolHashAnnotationKey: pool.Hash(), v1.NodePoolHashVersionAnnotationKey: v1.NodePoolHashVersion,
		v1.NodeClaimMinValuesRelaxedAnnotationKey: "false",
	} {
		if claim.Annotations[k] != want {
			t.Errorf("annotation %s=%q, want %q", k, claim.Annotations[k], want)
		}
	}
	byKey := map[string]v1.NodeSelectorRequirementWithMinValues{}
	for _, r := range claim.Spec.Requirements {
		byKey[r.Key] = r
	}
	it := byKey[corev1.LabelInstanceTypeStable]
	var want []string
	for _, o := range plan.NewClaims[0].InstanceTypes {
		want = append(want, o.Type.Name)
	}
	if it.Operator != corev1.NodeSelectorOpIn || !slices.Equal(it.Values, want) || slices.Contains(it.Values, "r5.xlarge") {
		t.Errorf("instance-type requirement %+v, want In %v cheapest first (r5 is outside the pool's categories)", it, want)
	}
	if want[0] != "c5.xlarge" {
		t.Errorf("cheapest option %s, want c5.xlarge", want[0])
	}
	if cat := byKey[v1.LabelInstanceCategory]; cat.MinValues == nil || *cat.MinValues != 2 {
		t.Errorf("category requirement lost minValues: %+v", cat)
	}
	if ct := byKey[v1.CapacityTypeLabelKey]; len(ct.Values) != 2 {
		t.Errorf("capacity-type requirement %+v", ct)
	}
	cpu := claim.Spec.Resources.Requests[corev1.ResourceCPU]
	if cpu.Cmp(resource.MustParse("2")) != 0 {
		t.Errorf("requests cpu %s, want the two pods' 2", cpu.String())
	}
	if len(claim.Spec.Taints) != 1 || len(claim.Spec.StartupTaints) != 1 || claim.Spec.NodeClassRef.Name != "default" ||
		claim.Spec.ExpireAfter.String() != "720h" || claim.Spec.TerminationGracePeriod.Duration != time.Hour {
		t.Errorf("spec %+v", claim.Spec)
	}
}

// A claim whose instance types a NodeOverlay re-priced or gave extended
// resources carries Karpenter's annotations saying so; others carry none.
func TestNewNodeClaimOverlayAnnotations(t *testing.T) {
	pool := testPool()
	pod := tolerantPod("a", "1")
	pod.Spec.NodeSelector = nil
	for _, c := range []struct {
		name            string
		edit            func(its []*scheduling.InstanceType)
		price, capacity bool
	}{
		{"none", func([]*scheduling.InstanceType) {}, false, false},
		{"price", func(its []*scheduling.InstanceType) { its[0].Offerings[1].PriceOverlaid = true }, true, false},
		{"capacity", func(its []*scheduling.InstanceType) { its[1].CapacityOverlaid = true }, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			its := []*scheduling.InstanceType{instanceType("c5.xlarge", 4, 8, 0.06, 0.17), instanceType("m5.xlarge", 4, 16, 0.07, 0.19)}
			c.edit(its)
			plan, err := scheduling.Solve(scheduling.Input{NodePools: []*scheduling.NodePool{SolverPool(pool, its, nil)}, Pods: []*corev1.Pod{pod}})
			if err != nil || len(plan.NewClaims) != 1 || len(plan.NewClaims[0].InstanceTypes) != 2 {
				t.Fatalf("plan %+v, %v: want one claim with both types", plan, err)
			}
			claim := NewNodeClaim(pool, plan.NewClaims[0])
			if got := claim.Annotations[v1alpha1.PriceOverlayAppliedAnnotationKey] == "true"; got != c.price {
				t.Errorf("price-overlay-applied %v, want %v", got, c.price)
			}
			if got := claim.Annotations[v1alpha1.CapacityOverlayAppliedAnnotationKey] == "true"; got != c.capacity {
				t.Errorf("capacity-overlay-applied %v, want %v", got, c.capacity)
			}
		})
	}
}

// Under the BestEffort policy a claim whose options cannot meet the
// NodePool's minValues carries the counts they do meet and is annotated as
// relaxed, as Karpenter writes it; with the NodePool's minValues kept, the
// CRD would reject it (In with fewer values than minValues).
func TestNewNodeClaimRelaxedMinValues(t *testing.T) {
	pool := testPool()
	three := 3
	pool.Spec.Template.Spec.Requirements = append(pool.Spec.Template.Spec.Requirements, v1.NodeSelectorRequirementWithMinValues{
		Key: corev1.LabelInstanceTypeStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"c5.xlarge", "m5.xlarge", "c5.2xlarge"}, MinValues: &three})
	pod := tolerantPod("big", "6")
	pod.Spec.NodeSelector = nil
	types := []*scheduling.InstanceType{
		instanceType("c5.xlarge", 4, 8, 0.06, 0.17), instanceType("m5.xlarge", 4, 16, 0.07, 0.19), instanceType("c5.2xlarge", 8, 16, 0.12, 0.34),
	}
	plan, err := scheduling.Solve(scheduling.Input{NodePools: []*scheduling.NodePool{SolverPool(pool, types, nil)}, Pods: []*corev1.Pod{pod},
		Options: scheduling.Options{MinValuesPolicy: scheduling.MinValuesBestEffort}})
	if err != nil || len(plan.NewClaims) != 1 {
		t.Fatalf("plan %+v, %v: want one claim", plan, err)
	}
	claim := NewNodeClaim(pool, plan.NewClaims[0])
	if got := claim.Annotations[v1.NodeClaimMinValuesRelaxedAnnotationKey]; got != "true" {
		t.Errorf("annotation %s=%q, want true", v1.NodeClaimMinValuesRelaxedAnnotationKey, got)
	}
	// Only c5.2xlarge holds the pod: one instance type, one category.
	want := map[string][]string{corev1.LabelInstanceTypeStable: {"c5.2xlarge"}, v1.LabelInstanceCategory: {"c", "m"}}
	for _, r := range claim.Spec.Requirements {
		vals, ok := want[r.Key]
		if !ok {
			continue
		}
		delete(want, r.Key)
		if !slices.Equal(r.Values, vals) || r.MinValues == nil || *r.MinValues != 1 {
			t.Errorf("requirement %s, want In %v with minValues relaxed to 1", describe(r), vals)
		}
	}
	if len(want) != 0 {
		t.Errorf("claim lacks requirements %v: %+v", want, claim.Spec.Requirements)
	}
}

func describe(r v1.NodeSelectorRequirementWithMinValues) string {
	mv := "unset"
	if r.MinValues != nil {
		mv = strconv.Itoa(*r.MinValues)
	}
	return fmt.Sprintf("%s %s %v minValues %s", r.Key, r.Operator, r.Values, mv)
}

func TestNewNodeClaimPassesAPIValidation(t *testing.T) {
	kube := testenv.KubeFor(t).Client
	pool := testPool()
	// Pods with hostname anti-affinity make the solver use hostname
	// placeholders, which must not reach the claim.
	var pods []*corev1.Pod
	for _, n := range []string{"a", "b"} {
		p := tolerantPod(n, "3")
		p.Spec.NodeSelector = nil
		p.Labels = map[string]string{"app": "x"}
		p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
			TopologyKey: corev1.LabelHostname, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}},
		}}}}
		pods = append(pods, p)
	}
	plan := solve(t, pool, pods...)
	if len(plan.NewClaims) != 2 {
		t.Fatalf("plan: %d claims, errors %v", len(plan.NewClaims), plan.Errors)
	}
	for _, nc := range plan.NewClaims {
		claim := NewNodeClaim(pool, nc)
		if err := kube.Create(context.Background(), claim); err != nil {
			t.Fatalf("the apiserver rejected the nodeclaim: %v\n%+v", err, claim.Spec.Requirements)
		}
		if claim.Name == "" || claim.Name[:len("general-")] != "general-" {
			t.Errorf("created name %q", claim.Name)
		}
	}
}

// TestStaticClaim: a static replica is launched from the template alone,
// for no pod, cheapest allowed instance type first, minValues kept.
func TestStaticClaim(t *testing.T) {
	pool := testPool()
	pool.Spec.Replicas = new(int64(3))
	types := []*scheduling.InstanceType{
		instanceType("c5.xlarge", 4, 8, 0.06, 0.17), instanceType("m5.xlarge", 4, 16, 0.07, 0.19),
		instanceType("r5.xlarge", 4, 32, 0.05, 0.25),
	}
	nc, err := StaticClaim(&state.Snapshot{}, pool, types, scheduling.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(nc.Pods) != 0 || nc.NodePool != pool.Name {
		t.Fatalf("claim %+v, want one for pool %s with no pods", nc, pool.Name)
	}
	var names []string
	for _, o := range nc.InstanceTypes {
		names = append(names, o.Type.Name)
	}
	if len(names) != 2 || names[0] != "c5.xlarge" || names[1] != "m5.xlarge" {
		t.Errorf("instance types %v, want c5.xlarge then m5.xlarge (r, though cheapest, is not an allowed category)", names)
	}
	claim := NewNodeClaim(pool, nc)
	if claim.Labels[v1.NodePoolLabelKey] != pool.Name || claim.Labels["team"] != "checkout" || len(claim.Spec.Taints) != 1 {
		t.Errorf("claim metadata/spec %+v does not come from the template", claim)
	}
	pool.Spec.Template.Spec.Requirements = append(pool.Spec.Template.Spec.Requirements,
		v1.NodeSelectorRequirementWithMinValues{Key: corev1.LabelInstanceTypeStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"x9.huge"}})
	if _, err := StaticClaim(&state.Snapshot{}, pool, types, scheduling.Options{}); err == nil {
		t.Error("a template no instance type satisfies gave a claim")
	}
}
