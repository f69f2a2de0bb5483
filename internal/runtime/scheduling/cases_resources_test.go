package scheduling_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	. "github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
)

func TestResourceCases(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	runCases(t, []tcase{
		{"one pod gets the cheapest type that fits", func() Input { return stdInput(mkPod("a", "1", "1Gi")) },
			func(t *testing.T, r *result) { r.claims(t, 1); expectType(t, r.claim(t, "a"), "small.g") }},
		{"cpu-heavy pod gets the cheapest 8-core type", func() Input { return stdInput(mkPod("a", "6", "1Gi")) },
			func(t *testing.T, r *result) { expectType(t, r.claim(t, "a"), "large.g") }},
		{"memory-heavy pod gets the memory type", func() Input { return stdInput(mkPod("a", "1", "12Gi")) },
			func(t *testing.T, r *result) { expectType(t, r.claim(t, "a"), "mem.a") }},
		{"init container larger than containers sizes the pod", func() Input {
			p := mkPod("a", "1", "1Gi")
			p.Spec.InitContainers = []corev1.Container{{Name: "init", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: quantity("7")}}}}
			return stdInput(p)
		}, func(t *testing.T, r *result) { expectType(t, r.claim(t, "a"), "large.g") }},
		{"sidecar init containers add to the containers", func() Input {
			p := mkPod("a", "3", "1Gi")
			p.Spec.InitContainers = []corev1.Container{
				{Name: "setup", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: quantity("1")}}},
				{Name: "proxy", RestartPolicy: &always, Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: quantity("2")}}},
			}
			return stdInput(p)
		}, func(t *testing.T, r *result) {
			expectType(t, r.claim(t, "a"), "large.g")
			if got := r.claim(t, "a").Requests[corev1.ResourceCPU]; got.MilliValue() != 5000 {
				t.Errorf("claim cpu requests %s, want 5", got.String())
			}
		}},
		{"pod overhead is added", func() Input {
			p := mkPod("a", "1900m", "1Gi")
			p.Spec.Overhead = corev1.ResourceList{corev1.ResourceCPU: quantity("200m")}
			return stdInput(p)
		}, func(t *testing.T, r *result) { expectType(t, r.claim(t, "a"), "medium.a") }},
		{"pod-level resources replace the container sum", func() Input {
			p := mkPod("a", "1", "1Gi")
			p.Spec.Resources = &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: quantity("5")}}
			return stdInput(p)
		}, func(t *testing.T, r *result) { expectType(t, r.claim(t, "a"), "large.g") }},
		{"pod larger than every type is reported", func() Input { return stdInput(mkPod("a", "100", "1Gi")) },
			func(t *testing.T, r *result) {
				r.failed(t, "a", `nodepool "default"`, "no instance type has room", "cpu=100")
			}},
		{"small pods share one well-sized node", func() Input { return stdInput(pods(8, "p", "1", "1Gi")...) },
			func(t *testing.T, r *result) {
				r.claims(t, 1)
				r.together(t, names("p", 8)...)
				expectType(t, r.claim(t, "p-0"), "large.g")
			}},
		{"GPU pod lands on the GPU type", func() Input { return stdInput(mkPod("a", "1", "1Gi", withRequest("nvidia.com/gpu", "1"))) },
			func(t *testing.T, r *result) { expectType(t, r.claim(t, "a"), "gpu.a") }},
		{"GPU pod without GPU types is reported", func() Input {
			return Input{NodePools: []*NodePool{mkPool("default", stdTypes()[:6])}, Pods: []*corev1.Pod{mkPod("a", "1", "1Gi", withRequest("nvidia.com/gpu", "1"))}}
		}, func(t *testing.T, r *result) { r.failed(t, "a", "no instance type has room", "nvidia.com/gpu=1") }},
		{"pod-eni request needs a trunking type", func() Input {
			types := stdTypes()
			withExtended(types[1], "vpc.amazonaws.com/pod-eni", 9)
			return Input{NodePools: []*NodePool{mkPool("default", types)}, Pods: []*corev1.Pod{mkPod("a", "1", "1Gi", withRequest("vpc.amazonaws.com/pod-eni", "1"))}}
		}, func(t *testing.T, r *result) {
			if got := optionNames(r.claim(t, "a")); len(got) != 1 || got[0] != "medium.a" {
				t.Errorf("options %v, want [medium.a]", got)
			}
		}},
		{"allocatable without a pod count does not limit pods", func() Input {
			types := stdTypes()
			for _, it := range types {
				delete(it.Allocatable, corev1.ResourcePods)
			}
			return Input{NodePools: []*NodePool{mkPool("default", types)}, Pods: []*corev1.Pod{mkPod("a", "1", "1Gi")}}
		}, func(t *testing.T, r *result) { expectType(t, r.claim(t, "a"), "small.g") }},
		{"pod capacity bounds pods per node", func() Input { return stdInput(pods(120, "p", "10m", "10Mi")...) },
			func(t *testing.T, r *result) {
				r.claims(t, 2)
				for _, c := range r.plan.NewClaims {
					if len(c.Pods) > 110 {
						t.Errorf("claim holds %d pods, capacity is 110", len(c.Pods))
					}
				}
			}},
	})
}

func TestNodeSelectionCases(t *testing.T) {
	runCases(t, []tcase{
		{"nodeSelector arch picks amd64", func() Input { return stdInput(mkPod("a", "1", "1Gi", withNodeSelector(labelArch, "amd64"))) },
			func(t *testing.T, r *result) { expectType(t, r.claim(t, "a"), "small.a") }},
		{"nodeSelector zone pins the claim", func() Input { return stdInput(mkPod("a", "1", "1Gi", withNodeSelector(labelZone, "z2"))) },
			func(t *testing.T, r *result) {
				expectZone(t, r.claim(t, "a"), "z2")
				expectType(t, r.claim(t, "a"), "small.g")
			}},
		{"nodeSelector instance type allows only that type", func() Input {
			return stdInput(mkPod("a", "1", "1Gi", withNodeSelector(labelInstanceType, "large.a")))
		}, func(t *testing.T, r *result) {
			if got := optionNames(r.claim(t, "a")); len(got) != 1 || got[0] != "large.a" {
				t.Errorf("options %v, want [large.a]", got)
			}
		}},
		{"custom label no NodePool defines is refused", func() Input { return stdInput(mkPod("a", "1", "1Gi", withNodeSelector("team", "a"))) },
			func(t *testing.T, r *result) { r.failed(t, "a", `"team" does not have known values`) }},
		{"custom label defined by a NodePool routes there and later pods join that claim", func() Input {
			plain := mkPool("plain", stdTypes())
			plain.Weight = 10
			team := mkPool("team", stdTypes())
			team.Labels = map[string]string{"team": "a"}
			return Input{NodePools: []*NodePool{plain, team}, Pods: []*corev1.Pod{mkPod("a", "1", "1Gi", withNodeSelector("team", "a")), mkPod("b", "1", "1Gi")}}
		}, func(t *testing.T, r *result) {
			if c := r.claim(t, "a"); c.NodePool != "team" {
				t.Errorf("pod a in %s, want team", c.NodePool)
			}
			// Claims opened in this pass come before new ones, so b fills
			// the team claim instead of opening one in the heavier pool.
			r.together(t, "a", "b")
			r.claims(t, 1)
		}},
		{"required NotIn arm64 excludes arm types", func() Input {
			return stdInput(mkPod("a", "1", "1Gi", withRequiredTerms([]corev1.NodeSelectorRequirement{expr(labelArch, corev1.NodeSelectorOpNotIn, "arm64")})))
		}, func(t *testing.T, r *result) { expectType(t, r.claim(t, "a"), "small.a") }},
		{"second required term is tried when the first cannot be met", func() Input {
			return stdInput(mkPod("a", "1", "1Gi", withRequiredTerms(
				[]corev1.NodeSelectorRequirement{expr(labelArch, corev1.NodeSelectorOpIn, "s390x")},
				[]corev1.NodeSelectorRequirement{expr(labelArch, corev1.NodeSelectorOpIn, "arm64"), expr(labelZone, corev1.NodeSelectorOpIn, "z3")})))
		}, func(t *testing.T, r *result) {
			expectType(t, r.claim(t, "a"), "small.g")
			expectZone(t, r.claim(t, "a"), "z3")
			if rl := r.at["a"].Relaxed; len(rl) != 1 || rl[0] != "required node affinity term" {
				t.Errorf("relaxed %v", rl)
			}
		}},
		{"Gt on instance cpu keeps bigger types", func() Input {
			return stdInput(mkPod("a", "1", "1Gi", withRequiredTerms([]corev1.NodeSelectorRequirement{expr("karpenter.k8s.aws/instance-cpu", corev1.NodeSelectorOpGt, "4")})))
		}, func(t *testing.T, r *result) {
			expectType(t, r.claim(t, "a"), "large.g")
			for _, n := range optionNames(r.claim(t, "a")) {
				if n != "large.g" && n != "large.a" && n != "gpu.a" {
					t.Errorf("option %s has at most 4 cpus", n)
				}
			}
		}},
		{"Gte on instance cpu is inclusive", func() Input {
			return stdInput(mkPod("a", "1", "1Gi", withRequiredTerms([]corev1.NodeSelectorRequirement{expr("karpenter.k8s.aws/instance-cpu", "Gte", "4")})))
		}, func(t *testing.T, r *result) { expectType(t, r.claim(t, "a"), "medium.a") }},
		{"capacity type spot selects spot offerings", func() Input {
			in := stdInput(mkPod("a", "1", "1Gi", withNodeSelector(labelCapacityType, CapacityTypeSpot)))
			withSpot(in.NodePools[0].InstanceTypes[0], 0.03)
			return in
		}, func(t *testing.T, r *result) {
			c := r.claim(t, "a")
			expectType(t, c, "small.a")
			for _, off := range c.InstanceTypes[0].Offerings {
				if off.CapacityType != CapacityTypeSpot || off.Price != 0.03 {
					t.Errorf("offering %+v, want spot at 0.03", off)
				}
			}
		}},
		{"zone In narrows the claim's zones", func() Input {
			return stdInput(mkPod("a", "1", "1Gi", withRequiredTerms([]corev1.NodeSelectorRequirement{expr(labelZone, corev1.NodeSelectorOpIn, "z1", "z2")})))
		}, func(t *testing.T, r *result) {
			if z := zones(r.claim(t, "a")); len(z) != 2 || z[0] != "z1" || z[1] != "z2" {
				t.Errorf("zones %v, want [z1 z2]", z)
			}
		}},
		{"deprecated zone label is an alias", func() Input {
			return stdInput(mkPod("a", "1", "1Gi", withNodeSelector("failure-domain.beta.kubernetes.io/zone", "z3")))
		}, func(t *testing.T, r *result) { expectZone(t, r.claim(t, "a"), "z3") }},
	})
}

func TestPreferenceCases(t *testing.T) {
	runCases(t, []tcase{
		{"satisfiable preferred zone is honoured", func() Input {
			return stdInput(mkPod("a", "1", "1Gi", withPreferredTerm(10, expr(labelZone, corev1.NodeSelectorOpIn, "z3"))))
		}, func(t *testing.T, r *result) {
			expectZone(t, r.claim(t, "a"), "z3")
			if len(r.at["a"].Relaxed) != 0 {
				t.Errorf("relaxed %v", r.at["a"].Relaxed)
			}
		}},
		{"unsatisfiable preference is relaxed", func() Input {
			return stdInput(mkPod("a", "1", "1Gi", withPreferredTerm(10, expr(labelArch, corev1.NodeSelectorOpIn, "s390x"))))
		}, func(t *testing.T, r *result) {
			expectType(t, r.claim(t, "a"), "small.g")
			if rl := r.at["a"].Relaxed; len(rl) != 1 || rl[0] != "preferred node affinity term" {
				t.Errorf("relaxed %v", rl)
			}
		}},
		{"heaviest preference wins", func() Input {
			return stdInput(mkPod("a", "1", "1Gi", withPreferredTerm(10, expr(labelZone, corev1.NodeSelectorOpIn, "z1")), withPreferredTerm(50, expr(labelZone, corev1.NodeSelectorOpIn, "z2"))))
		}, func(t *testing.T, r *result) { expectZone(t, r.claim(t, "a"), "z2") }},
		{"Ignore policy drops preferences", func() Input {
			in := stdInput(mkPod("a", "1", "1Gi", withPreferredTerm(10, expr(labelZone, corev1.NodeSelectorOpIn, "z3"))))
			in.Options.PreferencePolicy = PreferenceIgnore
			return in
		}, func(t *testing.T, r *result) {
			if z := zones(r.claim(t, "a")); len(z) != 3 {
				t.Errorf("zones %v, want all three", z)
			}
		}},
		{"unsatisfiable preferred pod affinity is relaxed", func() Input {
			return stdInput(mkPod("a", "1", "1Gi", withPreferredPodAffinity(10, term(labelHostname, "app", "missing"))))
		}, func(t *testing.T, r *result) {
			r.claim(t, "a")
			if rl := r.at["a"].Relaxed; len(rl) != 1 || rl[0] != "preferred pod affinity term" {
				t.Errorf("relaxed %v", rl)
			}
		}},
	})
}

func TestTaintCases(t *testing.T) {
	gpuTaint := corev1.Taint{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}
	tainted := func(ps ...*corev1.Pod) Input {
		in := stdInput(ps...)
		in.NodePools[0].Taints = []corev1.Taint{gpuTaint}
		return in
	}
	runCases(t, []tcase{
		{"untolerated NodePool taint is reported", func() Input { return tainted(mkPod("a", "1", "1Gi")) },
			func(t *testing.T, r *result) {
				r.failed(t, "a", `nodepool "default"`, "does not tolerate taint dedicated=gpu:NoSchedule")
			}},
		{"tolerating pod is placed", func() Input {
			return tainted(mkPod("a", "1", "1Gi", withToleration("dedicated", "gpu", corev1.TaintEffectNoSchedule)))
		}, func(t *testing.T, r *result) { expectType(t, r.claim(t, "a"), "small.g") }},
		{"taints route pods between pools", func() Input {
			hi := mkPool("tainted", stdTypes())
			hi.Weight, hi.Taints = 100, []corev1.Taint{gpuTaint}
			return Input{NodePools: []*NodePool{hi, mkPool("open", stdTypes())}, Pods: []*corev1.Pod{
				mkPod("plain", "1", "1Gi"), mkPod("tol", "2", "1Gi", withToleration("dedicated", "gpu", corev1.TaintEffectNoSchedule))}}
		}, func(t *testing.T, r *result) {
			if c := r.claim(t, "plain"); c.NodePool != "open" {
				t.Errorf("plain in %s", c.NodePool)
			}
			if c := r.claim(t, "tol"); c.NodePool != "tainted" {
				t.Errorf("tol in %s, want the higher-weight pool", c.NodePool)
			}
		}},
		{"PreferNoSchedule is tolerated after relaxation", func() Input {
			in := stdInput(mkPod("a", "1", "1Gi"))
			in.NodePools[0].Taints = []corev1.Taint{{Key: "soft", Effect: corev1.TaintEffectPreferNoSchedule}}
			return in
		}, func(t *testing.T, r *result) {
			r.claim(t, "a")
			if rl := r.at["a"].Relaxed; len(rl) != 1 || rl[0] != "PreferNoSchedule taints" {
				t.Errorf("relaxed %v", rl)
			}
		}},
		{"tainted existing node is skipped", func() Input {
			in := stdInput(mkPod("a", "1", "1Gi"))
			n := mkNode("node-1", 8, 16, map[string]string{labelZone: "z1"})
			n.Taints = []corev1.Taint{gpuTaint}
			in.Nodes = []*Node{n}
			return in
		}, func(t *testing.T, r *result) { r.claims(t, 1); r.claim(t, "a") }},
		{"wildcard toleration tolerates every taint", func() Input { return tainted(mkPod("a", "1", "1Gi", withToleration("", "", ""))) },
			func(t *testing.T, r *result) { r.claim(t, "a") }},
	})
}
