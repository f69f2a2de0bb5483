package scheduling_test

import (
	"fmt"
	"math/rand"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"

	. "github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling/oracle"
)

// randomInput builds a bounded random cluster from the fixture catalog:
// 1-3 NodePools (weights, taints, arch/capacity-type/zone requirements,
// limits, minValues), a few existing nodes with running pods (some with
// anti-affinity), daemonsets, and pods from apps of random kinds. Every
// spread selector matches only its own app, whose pods all carry it.
func randomInput(r *rand.Rand, catalog []*InstanceType) Input {
	pick := func(n int) []*InstanceType {
		out := make([]*InstanceType, 0, n)
		for _, i := range r.Perm(len(catalog))[:n] {
			out = append(out, catalog[i])
		}
		return out
	}
	var in Input
	npools := 1 + r.Intn(3)
	for i := 0; i < npools; i++ {
		p := mkPool(fmt.Sprintf("pool-%d", i), pick(20+r.Intn(60)))
		p.Weight = int32(r.Intn(3) * 10)
		switch r.Intn(4) {
		case 0:
			p.Requirements = append(p.Requirements, Requirement{NodeSelectorRequirement: expr(labelArch, corev1.NodeSelectorOpIn, "amd64")})
		case 1:
			p.Requirements = append(p.Requirements, Requirement{NodeSelectorRequirement: expr(labelZone, corev1.NodeSelectorOpIn, "us-west-2a", "us-west-2b")})
		case 2:
			two := 2
			p.Requirements = append(p.Requirements, Requirement{NodeSelectorRequirement: expr("karpenter.k8s.aws/instance-family", corev1.NodeSelectorOpExists), MinValues: &two})
		}
		ct := []string{CapacityTypeOnDemand, CapacityTypeSpot}[r.Intn(2)]
		p.Requirements = append(p.Requirements, Requirement{NodeSelectorRequirement: expr(labelCapacityType, corev1.NodeSelectorOpIn, ct)})
		if i > 0 && r.Intn(2) == 0 {
			p.Taints = []corev1.Taint{{Key: "dedicated", Value: "batch", Effect: corev1.TaintEffectNoSchedule}}
		}
		if r.Intn(3) == 0 {
			p.Labels = map[string]string{"team": "a"}
		}
		if r.Intn(4) == 0 {
			p.Limits = corev1.ResourceList{corev1.ResourceCPU: *resource.NewQuantity(int64(16+r.Intn(200)), resource.DecimalSI), "nodes": *resource.NewQuantity(int64(2+r.Intn(20)), resource.DecimalSI)}
		}
		in.NodePools = append(in.NodePools, p)
	}
	zones := []string{"us-west-2a", "us-west-2b", "us-west-2c"}
	for i := 0; i < r.Intn(4); i++ {
		lbl := map[string]string{labelZone: zones[r.Intn(3)], labelArch: "amd64", labelCapacityType: CapacityTypeOnDemand}
		var bound []*corev1.Pod
		for j := 0; j < r.Intn(4); j++ {
			opts := []podOpt{withLabels("app", fmt.Sprintf("running-%d", r.Intn(2)))}
			if r.Intn(3) == 0 {
				opts = append(opts, withAntiAffinity(term(labelHostname, "app", "app-0")))
			}
			bound = append(bound, mkPod(fmt.Sprintf("running-%d-%d", i, j), "500m", "512Mi", opts...))
		}
		in.Nodes = append(in.Nodes, mkNode(fmt.Sprintf("node-%d", i), int64(2+r.Intn(8)), int64(4+r.Intn(16)), lbl, bound...))
	}
	if r.Intn(2) == 0 {
		in.DaemonSets = []*corev1.Pod{mkPod("ds", "100m", "100Mi", withToleration("", "", ""))}
	}
	napps := 1 + r.Intn(6)
	for a := 0; a < napps; a++ {
		app := fmt.Sprintf("app-%d", a)
		opts := []podOpt{withLabels("app", app), withOwner(app)}
		var vols [][]corev1.NodeSelectorRequirement
		switch r.Intn(17) {
		case 11:
			opts = append(opts, withSpread(labelZone, 1, corev1.DoNotSchedule, "app", app), withSpread(labelHostname, 2, corev1.DoNotSchedule, "app", app))
		case 12:
			opts = append(opts, withSpread(labelZone, 1, corev1.ScheduleAnyway, "app", app))
		case 13:
			opts = append(opts, withPreferredAntiAffinity(50, term(labelHostname, "app", app)))
		case 14:
			for _, z := range r.Perm(3)[:1+r.Intn(2)] {
				vols = append(vols, []corev1.NodeSelectorRequirement{expr(labelZone, corev1.NodeSelectorOpIn, zones[z])})
			}
		case 15:
			opts = append(opts, withRequest("nvidia.com/gpu", "1"))
		case 16:
			opts = append(opts, withSpreadC(corev1.TopologySpreadConstraint{TopologyKey: labelZone, MaxSkew: 1, WhenUnsatisfiable: corev1.DoNotSchedule, MatchLabelKeys: []string{"rev"}}, "app", app), withLabels("rev", fmt.Sprint(r.Intn(2))))
		case 1:
			opts = append(opts, withSpread(labelZone, int32(1+r.Intn(2)), corev1.DoNotSchedule, "app", app))
		case 2:
			opts = append(opts, withSpread(labelHostname, 1, corev1.DoNotSchedule, "app", app))
		case 3:
			opts = append(opts, withPodAffinity(term(labelZone, "app", app)))
		case 4:
			opts = append(opts, withAntiAffinity(term(labelHostname, "app", app)))
		case 5:
			opts = append(opts, withHostPort(8080))
		case 6:
			opts = append(opts, withNodeSelector(labelArch, "arm64"))
		case 7:
			opts = append(opts, withToleration("dedicated", "batch", corev1.TaintEffectNoSchedule))
		case 8:
			opts = append(opts, withPreferredTerm(10, expr(labelZone, corev1.NodeSelectorOpIn, "us-west-2c")))
		case 9:
			opts = append(opts, withAntiAffinity(term(labelZone, "app", app)))
			in.Pods = append(in.Pods, pods(1+r.Intn(3), app, "250m", "256Mi", opts...)...)
			continue
		case 10:
			opts = append(opts, withNodeSelector("team", "a"))
		}
		cpu := []string{"100m", "250m", "500m", "1", "1.5", "3"}[r.Intn(6)]
		mem := []string{"100Mi", "512Mi", "1Gi", "2Gi", "6Gi"}[r.Intn(5)]
		batch := pods(1+r.Intn(40), app, cpu, mem, opts...)
		if vols != nil {
			if in.VolumeTopology == nil {
				in.VolumeTopology = map[types.UID][][]corev1.NodeSelectorRequirement{}
			}
			for _, p := range batch {
				in.VolumeTopology[p.UID] = vols
			}
		}
		in.Pods = append(in.Pods, batch...)
	}
	if r.Intn(3) == 0 {
		in.InFlight = []*Node{mkNode("inflight-0", 4, 8, map[string]string{labelZone: zones[r.Intn(3)], labelArch: "arm64", labelCapacityType: CapacityTypeSpot})}
	}
	return in
}

func TestRandomClustersValidate(t *testing.T) {
	catalog := catalogFixture(t)
	r := rand.New(rand.NewSource(7))
	placed, failed := 0, 0
	for i := 0; i < 150; i++ {
		in := randomInput(r, catalog)
		if i%2 == 1 {
			in.Options.MinValuesPolicy = MinValuesBestEffort
		}
		plan, err := Solve(in)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if errs := oracle.Validate(in, plan); len(errs) > 0 {
			for _, e := range errs[:min(5, len(errs))] {
				t.Errorf("case %d: %v", i, e)
			}
			t.FailNow()
		}
		placed += len(plan.Placements)
		failed += len(plan.Errors)
	}
	t.Logf("placed %d pods, %d unplaced", placed, failed)
	if placed == 0 || placed < 3*failed {
		t.Fatalf("random clusters placed %d pods and left %d: the generator or solver is degenerate", placed, failed)
	}
}

// Generic pods in an unconstrained, unlimited NodePool must always be
// placed.
func TestRandomGenericAlwaysPlaced(t *testing.T) {
	catalog := catalogFixture(t)
	r := rand.New(rand.NewSource(11))
	for i := 0; i < 25; i++ {
		n := 1 + r.Intn(300)
		in := Input{NodePools: []*NodePool{mkPool("default", catalog)}, Pods: genericPods(n, r)}
		plan, err := Solve(in)
		if err != nil {
			t.Fatal(err)
		}
		if len(plan.Errors) > 0 || len(plan.Placements) != n {
			t.Fatalf("case %d: %d placed, errors %v", i, len(plan.Placements), plan.Errors[0].Err)
		}
		if errs := oracle.Validate(in, plan); len(errs) > 0 {
			t.Fatalf("case %d: %v", i, errs[0])
		}
	}
}

func FuzzSolve(f *testing.F) {
	for _, seed := range []int64{1, 2, 3, 42, 1000, 1724} {
		f.Add(seed)
	}
	catalog := catalogFixture(f)
	f.Fuzz(func(t *testing.T, seed int64) {
		in := randomInput(rand.New(rand.NewSource(seed)), catalog)
		plan, err := Solve(in)
		if err != nil {
			t.Fatal(err)
		}
		if errs := oracle.Validate(in, plan); len(errs) > 0 {
			t.Fatal(errs[0])
		}
	})
}

// The benchmark mixes must produce valid plans too.
func TestBenchmarkMixesValidate(t *testing.T) {
	its := catalogFixture(t)
	mixes := map[string]Input{
		"diverse":     {NodePools: []*NodePool{benchPool(its)}, Pods: diversePods(500, rand.New(rand.NewSource(42)))},
		"generic":     {NodePools: []*NodePool{benchPool(its)}, Pods: genericPods(500, rand.New(rand.NewSource(42)))},
		"deployments": deploymentsInput(500, rand.New(rand.NewSource(42)), its),
	}
	for name, in := range mixes {
		plan, err := Solve(in)
		if err != nil {
			t.Fatal(err)
		}
		if len(plan.Errors) > 0 {
			t.Errorf("%s: %d pods unplaced, first: %v", name, len(plan.Errors), plan.Errors[0].Err)
		}
		for _, e := range oracle.Validate(in, plan) {
			t.Errorf("%s: %v", name, e)
		}
	}
}
