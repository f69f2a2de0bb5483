package scheduling_test

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	. "github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
)

func TestHostPortCases(t *testing.T) {
	runCases(t, []tcase{
		{"pods with the same host port go to different nodes", func() Input { return stdInput(pods(2, "p", "100m", "100Mi", withHostPort(8080))...) },
			func(t *testing.T, r *result) { r.apart(t, "p-0", "p-1") }},
		{"host port taken on an existing node", func() Input {
			in := stdInput(mkPod("a", "100m", "100Mi", withHostPort(8080)), mkPod("b", "100m", "100Mi"))
			in.Nodes = []*Node{mkNode("node-1", 8, 16, map[string]string{labelZone: "z1"}, mkPod("old", "100m", "100Mi", withHostPort(8080)))}
			return in
		}, func(t *testing.T, r *result) {
			r.claim(t, "a")
			if n := r.node(t, "b"); n != "node-1" {
				t.Errorf("b on %s", n)
			}
		}},
		{"daemonset host port blocks the pool", func() Input {
			in := stdInput(mkPod("a", "100m", "100Mi", withHostPort(9100)))
			in.DaemonSets = []*corev1.Pod{mkPod("exporter", "100m", "100Mi", withHostPort(9100))}
			return in
		}, func(t *testing.T, r *result) { r.failed(t, "a", "host port") }},
		// A DaemonSet's port counts only on the types its pod runs on.
		{"amd64 daemonset host port leaves an arm64 pod its port", func() Input {
			in := stdInput(mkPod("a", "100m", "100Mi", withHostPort(8080), withNodeSelector(labelArch, "arm64")))
			in.DaemonSets = []*corev1.Pod{amd64Exporter(8080)}
			return in
		}, func(t *testing.T, r *result) { expectArch(t, r.claim(t, "a"), "arm64") }},
		{"amd64 daemonset host port still blocks an amd64 pod", func() Input {
			in := stdInput(mkPod("a", "100m", "100Mi", withHostPort(8080), withNodeSelector(labelArch, "amd64")))
			in.DaemonSets = []*corev1.Pod{amd64Exporter(8080)}
			return in
		}, func(t *testing.T, r *result) { r.failed(t, "a", "host port") }},
		{"pod with the daemonset's port launches only where the daemonset does not run", func() Input {
			in := stdInput(mkPod("big", "6", "1Gi", withNodeSelector(labelArch, "amd64")), mkPod("web", "100m", "100Mi", withHostPort(8080)))
			in.DaemonSets = []*corev1.Pod{amd64Exporter(8080)}
			return in
		}, func(t *testing.T, r *result) {
			expectArch(t, r.claim(t, "web"), "arm64")
			r.apart(t, "big", "web")
		}},
		{"same port on different protocols shares a node", func() Input {
			udp := mkPod("udp", "100m", "100Mi", withHostPort(53))
			udp.Spec.Containers[0].Ports[0].Protocol = corev1.ProtocolUDP
			return stdInput(mkPod("tcp", "100m", "100Mi", withHostPort(53)), udp)
		}, func(t *testing.T, r *result) { r.together(t, "tcp", "udp") }},
	})
}

// amd64Exporter is a DaemonSet pod pinned to amd64 nodes that binds port.
func amd64Exporter(port int32) *corev1.Pod {
	return mkPod("exporter", "100m", "100Mi", withHostPort(port), withNodeSelector(labelArch, "amd64"))
}

// expectArch checks every instance type option of c has arch.
func expectArch(t *testing.T, c *NewClaim, arch string) {
	t.Helper()
	for _, o := range c.InstanceTypes {
		if got := o.Type.Labels[labelArch]; got != arch {
			t.Errorf("option %s is %s, want only %s (options %v)", o.Type.Name, got, arch, optionNames(c))
		}
	}
}

func TestVolumeCases(t *testing.T) {
	vol := func(p *corev1.Pod, alts ...string) Input {
		in := stdInput(p)
		var terms [][]corev1.NodeSelectorRequirement
		for _, z := range alts {
			terms = append(terms, []corev1.NodeSelectorRequirement{expr(labelZone, corev1.NodeSelectorOpIn, z)})
		}
		in.VolumeTopology = map[types.UID][][]corev1.NodeSelectorRequirement{p.UID: terms}
		return in
	}
	runCases(t, []tcase{
		{"volume zone pins the claim", func() Input { return vol(mkPod("a", "1", "1Gi"), "z3") },
			func(t *testing.T, r *result) { expectZone(t, r.claim(t, "a"), "z3") }},
		{"second volume topology alternative is tried", func() Input { return vol(mkPod("a", "1", "1Gi"), "z9", "z2") },
			func(t *testing.T, r *result) {
				expectZone(t, r.claim(t, "a"), "z2")
				if rl := r.at["a"].Relaxed; len(rl) != 1 || rl[0] != "volume topology alternative" {
					t.Errorf("relaxed %v", rl)
				}
			}},
		{"existing node in another zone is not used", func() Input {
			in := vol(mkPod("a", "1", "1Gi"), "z1")
			in.Nodes = []*Node{mkNode("node-1", 8, 16, map[string]string{labelZone: "z2"})}
			return in
		}, func(t *testing.T, r *result) { expectZone(t, r.claim(t, "a"), "z1") }},
	})
}

func TestDaemonSetCases(t *testing.T) {
	runCases(t, []tcase{
		{"daemonset overhead sizes the node", func() Input {
			in := stdInput(mkPod("a", "1500m", "1Gi"))
			in.DaemonSets = []*corev1.Pod{mkPod("ds", "1", "100Mi")}
			return in
		}, func(t *testing.T, r *result) {
			c := r.claim(t, "a")
			expectType(t, c, "medium.a")
			if got := c.Requests[corev1.ResourceCPU]; got.MilliValue() != 2500 {
				t.Errorf("claim requests cpu %s, want 2500m", got.String())
			}
		}},
		{"daemonset not tolerating the pool adds nothing", func() Input {
			in := stdInput(mkPod("a", "1500m", "1Gi", withToleration("dedicated", "", corev1.TaintEffectNoSchedule)))
			in.NodePools[0].Taints = []corev1.Taint{{Key: "dedicated", Value: "x", Effect: corev1.TaintEffectNoSchedule}}
			in.DaemonSets = []*corev1.Pod{mkPod("ds", "1", "100Mi")}
			return in
		}, func(t *testing.T, r *result) { expectType(t, r.claim(t, "a"), "small.g") }},
		{"arm64-only daemonset adds overhead to arm64 types only", func() Input {
			in := stdInput(mkPod("a", "1500m", "1Gi"))
			in.DaemonSets = []*corev1.Pod{mkPod("ds", "1", "100Mi", withNodeSelector(labelArch, "arm64"))}
			return in
		}, func(t *testing.T, r *result) { expectType(t, r.claim(t, "a"), "small.a") }},
	})
}

func TestNodePoolCases(t *testing.T) {
	runCases(t, []tcase{
		{"higher weight NodePool wins over a cheaper one", func() Input {
			pricey := mkPool("pricey", []*InstanceType{mkType("large.a", "amd64", 8, 16, 0.40)})
			pricey.Weight = 10
			return Input{NodePools: []*NodePool{mkPool("cheap", stdTypes()), pricey}, Pods: []*corev1.Pod{mkPod("a", "1", "1Gi")}}
		}, func(t *testing.T, r *result) {
			c := r.claim(t, "a")
			if c.NodePool != "pricey" {
				t.Errorf("pool %s, want pricey", c.NodePool)
			}
		}},
		{"cpu limit stops new claims", func() Input {
			in := stdInput(pods(3, "p", "2", "1Gi")...)
			in.NodePools[0].Limits = corev1.ResourceList{corev1.ResourceCPU: quantity("4")}
			return in
		}, func(t *testing.T, r *result) {
			if len(r.plan.Placements) != 2 {
				t.Fatalf("%d placed, want 2", len(r.plan.Placements))
			}
			r.failed(t, r.plan.Errors[0].Pod.Name, "limits exceeded")
		}},
		{"nodes limit stops new claims", func() Input {
			in := stdInput(web(3, withAntiAffinity(term(labelHostname, "app", "web")))...)
			in.NodePools[0].Limits = corev1.ResourceList{"nodes": quantity("1")}
			return in
		}, func(t *testing.T, r *result) {
			r.claims(t, 1)
			if len(r.plan.Errors) != 2 {
				t.Fatalf("%d errors, want 2", len(r.plan.Errors))
			}
			r.failed(t, r.plan.Errors[0].Pod.Name, "limits.nodes reached")
		}},
		{"exhausted heavy pool falls back to the next", func() Input {
			hi := mkPool("hi", stdTypes())
			hi.Weight, hi.Limits = 10, corev1.ResourceList{"nodes": quantity("1")}
			return Input{NodePools: []*NodePool{hi, mkPool("lo", stdTypes())}, Pods: web(2, withAntiAffinity(term(labelHostname, "app", "web")))}
		}, func(t *testing.T, r *result) {
			pools := map[string]int{}
			for _, c := range r.plan.NewClaims {
				pools[c.NodePool]++
			}
			if pools["hi"] != 1 || pools["lo"] != 1 {
				t.Errorf("claims per pool %v, want one each", pools)
			}
		}},
		{"current usage counts against limits", func() Input {
			in := stdInput(mkPod("a", "1", "1Gi"))
			in.NodePools[0].Limits = corev1.ResourceList{corev1.ResourceCPU: quantity("10")}
			in.NodePools[0].Usage = corev1.ResourceList{corev1.ResourceCPU: quantity("8")}
			return in
		}, func(t *testing.T, r *result) {
			for _, o := range r.claim(t, "a").InstanceTypes {
				if c := o.Type.Capacity[corev1.ResourceCPU]; c.Value() > 2 {
					t.Errorf("option %s has %d cpus, only 2 remain under the limit", o.Type.Name, c.Value())
				}
			}
		}},
		{"malformed NodePool requirement is reported", func() Input {
			return Input{NodePools: []*NodePool{mkPool("bad", stdTypes(), expr("karpenter.k8s.aws/instance-cpu", corev1.NodeSelectorOpGt, "many"))}, Pods: []*corev1.Pod{mkPod("a", "1", "1Gi")}}
		}, func(t *testing.T, r *result) { r.failed(t, "a", `nodepool "bad"`, "invalid requirements") }},
	})
}

func TestMinValuesCases(t *testing.T) {
	withMin := func(n int, policy string) Input {
		in := stdInput(mkPod("a", "1", "1Gi"))
		in.NodePools[0].Requirements = []Requirement{{NodeSelectorRequirement: expr("karpenter.k8s.aws/instance-family", corev1.NodeSelectorOpExists), MinValues: &n}}
		in.Options.MinValuesPolicy = policy
		return in
	}
	families := func(c *NewClaim) map[string]bool {
		out := map[string]bool{}
		for _, o := range c.InstanceTypes {
			out[o.Type.Labels["karpenter.k8s.aws/instance-family"]] = true
		}
		return out
	}
	runCases(t, []tcase{
		{"strict minValues keeps enough families", func() Input { return withMin(3, MinValuesStrict) },
			func(t *testing.T, r *result) {
				if f := families(r.claim(t, "a")); len(f) < 3 {
					t.Errorf("families %v", f)
				}
			}},
		{"strict minValues that cannot be met is reported", func() Input { return withMin(10, MinValuesStrict) },
			func(t *testing.T, r *result) { r.failed(t, "a", "minValues", "instance-family") }},
		{"best-effort minValues relaxes", func() Input { return withMin(10, MinValuesBestEffort) },
			func(t *testing.T, r *result) {
				c := r.claim(t, "a")
				if !c.MinValuesRelaxed {
					t.Error("claim should be marked relaxed")
				}
				// The claim carries the minValues its options meet, as
				// Karpenter writes the relaxed count into the NodeClaim.
				f := len(families(c))
				if r := c.Requirements.Get("karpenter.k8s.aws/instance-family"); r.MinValues == nil || *r.MinValues != f {
					t.Errorf("requirement %s, want minValues relaxed to the %d families the options offer", r, f)
				}
				if len(r.plan.MinValuesUnmet) != 0 {
					t.Errorf("pools reported under BestEffort: %v", r.plan.MinValuesUnmet)
				}
			}},
		{"best-effort instance-type minValues relaxes to the options left", func() Input {
			three := 3
			in := stdInput(mkPod("a", "1", "1Gi", withRequest("nvidia.com/gpu", "1")))
			in.NodePools[0].Requirements = []Requirement{{NodeSelectorRequirement: expr(labelInstanceType, corev1.NodeSelectorOpIn, "small.a", "medium.a", "gpu.a"), MinValues: &three}}
			in.Options.MinValuesPolicy = MinValuesBestEffort
			return in
		}, func(t *testing.T, r *result) {
			c := r.claim(t, "a")
			it := c.Requirements.Get(labelInstanceType)
			if !c.MinValuesRelaxed || !slices.Equal(it.Values(), []string{"gpu.a"}) || it.MinValues == nil || *it.MinValues != 1 {
				t.Errorf("relaxed %v, instance-type requirement %s: want In [gpu.a] with minValues relaxed to 1", c.MinValuesRelaxed, it)
			}
		}},
		{"strict minValues the NodePool's types cannot meet reports the NodePool", func() Input { return withMin(10, MinValuesStrict) },
			func(t *testing.T, r *result) {
				if err := r.plan.MinValuesUnmet["default"]; err == nil || !strings.Contains(err.Error(), "instance-family") {
					t.Errorf("MinValuesUnmet %v, want the default pool's instance-family", r.plan.MinValuesUnmet)
				}
			}},
		{"strict minValues only a pod's constraints break does not report the NodePool", func() Input {
			in := withMin(3, MinValuesStrict)
			in.Pods = []*corev1.Pod{mkPod("a", "1", "1Gi", withRequest("nvidia.com/gpu", "1"))}
			return in
		}, func(t *testing.T, r *result) {
			r.failed(t, "a", "minValues")
			if len(r.plan.MinValuesUnmet) != 0 {
				t.Errorf("MinValuesUnmet %v, want none: the pool's own types offer enough families", r.plan.MinValuesUnmet)
			}
		}},
		{"truncation keeps minValues", func() Input {
			in := withMin(4, MinValuesStrict)
			in.Options.MaxInstanceTypes = 4
			return in
		}, func(t *testing.T, r *result) {
			c := r.claim(t, "a")
			if len(c.InstanceTypes) != 4 || len(families(c)) < 4 {
				t.Errorf("options %v", optionNames(c))
			}
		}},
	})
}

func TestExistingCapacityCases(t *testing.T) {
	runCases(t, []tcase{
		{"existing node with room is used", func() Input {
			in := stdInput(mkPod("a", "1", "1Gi"))
			in.Nodes = []*Node{mkNode("node-1", 4, 8, map[string]string{labelZone: "z1"})}
			return in
		}, func(t *testing.T, r *result) {
			r.claims(t, 0)
			if n := r.node(t, "a"); n != "node-1" {
				t.Errorf("on %s", n)
			}
		}},
		{"full existing node is skipped", func() Input {
			in := stdInput(mkPod("a", "1", "1Gi"))
			in.Nodes = []*Node{mkNode("node-1", 4, 8, map[string]string{labelZone: "z1"}, mkPod("old", "3500m", "1Gi"))}
			return in
		}, func(t *testing.T, r *result) { r.claims(t, 1); r.claim(t, "a") }},
		{"in-flight claim is used before a new one", func() Input {
			in := stdInput(mkPod("a", "1", "1Gi"))
			in.InFlight = []*Node{mkNode("claim-1", 4, 8, map[string]string{labelZone: "z1"})}
			return in
		}, func(t *testing.T, r *result) {
			if p := r.at["a"]; p.Kind != TargetInFlight || p.Node != "claim-1" {
				t.Errorf("placed %+v", p)
			}
		}},
		{"without NodePools only existing capacity is used", func() Input {
			return Input{Nodes: []*Node{mkNode("node-1", 2, 4, map[string]string{labelZone: "z1"})}, Pods: []*corev1.Pod{mkPod("a", "1500m", "1Gi"), mkPod("b", "1500m", "1Gi")}}
		}, func(t *testing.T, r *result) {
			if n := r.node(t, "a"); n != "node-1" {
				t.Errorf("a on %s", n)
			}
			r.failed(t, "b", "no NodePool is configured")
		}},
		{"no pods, empty plan", func() Input { return stdInput() },
			func(t *testing.T, r *result) {
				if len(r.plan.Placements)+len(r.plan.Errors)+len(r.plan.NewClaims) != 0 {
					t.Errorf("plan %+v", r.plan)
				}
			}},
		{"initialized nodes come first", func() Input {
			in := stdInput(mkPod("a", "1", "1Gi"))
			early := mkNode("a-node", 4, 8, map[string]string{labelZone: "z1"})
			early.Initialized = false
			in.Nodes = []*Node{early, mkNode("b-node", 4, 8, map[string]string{labelZone: "z1"})}
			return in
		}, func(t *testing.T, r *result) {
			if n := r.node(t, "a"); n != "b-node" {
				t.Errorf("on %s", n)
			}
		}},
		{"existing node with other labels is not used", func() Input {
			in := stdInput(mkPod("a", "1", "1Gi", withNodeSelector(labelArch, "arm64")))
			in.Nodes = []*Node{mkNode("node-1", 4, 8, map[string]string{labelZone: "z1", labelArch: "amd64"})}
			return in
		}, func(t *testing.T, r *result) { expectType(t, r.claim(t, "a"), "small.g") }},
	})
}

func TestClaimShapeCases(t *testing.T) {
	runCases(t, []tcase{
		{"instance type list is bounded and cheapest first", func() Input {
			in := stdInput(mkPod("a", "1", "1Gi"))
			in.Options.MaxInstanceTypes = 2
			return in
		}, func(t *testing.T, r *result) {
			if got := optionNames(r.claim(t, "a")); len(got) != 2 || got[0] != "small.g" || got[1] != "small.a" {
				t.Errorf("options %v, want [small.g small.a]", got)
			}
		}},
		{"free offering is chosen first", func() Input {
			types := append(stdTypes(), mkType("prepaid.a", "amd64", 4, 8, 0))
			return Input{NodePools: []*NodePool{mkPool("default", types)}, Pods: []*corev1.Pod{mkPod("a", "1", "1Gi")}}
		}, func(t *testing.T, r *result) { expectType(t, r.claim(t, "a"), "prepaid.a") }},
		{"claim requirements name the NodePool and the options", func() Input { return stdInput(mkPod("a", "1", "1Gi", withNodeSelector(labelArch, "arm64"))) },
			func(t *testing.T, r *result) {
				c := r.claim(t, "a")
				if !c.Requirements.Get(labelNodePool).Has("default") {
					t.Errorf("requirements %s miss the NodePool", c.Requirements)
				}
				it := c.Requirements.Get(labelInstanceType)
				if !it.Has("small.g") || !it.Has("large.g") || it.Has("small.a") {
					t.Errorf("instance-type requirement %s", it)
				}
			}},
	})
}
