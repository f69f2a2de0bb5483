package scheduling_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	. "github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
)

// zoneOf is the single zone of the pod's new claim or existing node.
func (r *result) zoneOf(t *testing.T, pod string) string {
	t.Helper()
	p, ok := r.at[pod]
	if !ok {
		t.Fatalf("pod %s not placed: %v", pod, r.errs[pod])
	}
	if p.Kind != TargetNewClaim {
		for _, n := range append(append([]*Node{}, r.in.Nodes...), r.in.InFlight...) {
			if n.Name == p.Node {
				return n.Labels[labelZone]
			}
		}
	}
	z := zones(r.plan.NewClaims[p.Claim])
	if len(z) != 1 {
		t.Fatalf("pod %s claim spans zones %v", pod, z)
	}
	return z[0]
}

func (r *result) zoneCounts(t *testing.T, pods ...string) map[string]int {
	out := map[string]int{}
	for _, p := range pods {
		out[r.zoneOf(t, p)]++
	}
	return out
}

func expectCounts(t *testing.T, got map[string]int, want map[string]int) {
	t.Helper()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("per-domain counts %v, want %v", got, want)
			return
		}
	}
	for k, v := range got {
		if want[k] != v {
			t.Errorf("per-domain counts %v, want %v", got, want)
			return
		}
	}
}

func web(n int, opts ...podOpt) []*corev1.Pod {
	return pods(n, "web", "1", "1Gi", append([]podOpt{withLabels("app", "web")}, opts...)...)
}

// together labels a pod app=<app> and gives it required hostname affinity
// to app=<app>: it must share a node with every other such pod.
func together(app string) podOpt {
	return func(p *corev1.Pod) {
		withLabels("app", app)(p)
		withPodAffinity(term(labelHostname, "app", app))(p)
	}
}

// selfAffineInput is a NodePool with CPU limits whose smaller type is the
// cheaper per core, so a claim sized for one pod alone is the small type
// and, under the limits, cannot outgrow it.
func selfAffineInput(ps ...*corev1.Pod) Input {
	pool := mkPool("default", []*InstanceType{mkType("medium.a", "amd64", 4, 8, 0.18), mkType("large.a", "amd64", 8, 16, 0.40)})
	pool.Limits = corev1.ResourceList{corev1.ResourceCPU: quantity("1000")}
	return Input{NodePools: []*NodePool{pool}, Pods: ps}
}

func TestAffinityCases(t *testing.T) {
	fullNode := func(name, zone string, bound ...*corev1.Pod) *Node {
		n := mkNode(name, 1, 1, map[string]string{labelZone: zone}, bound...)
		return n
	}
	runCases(t, []tcase{
		{"hostname self anti-affinity puts each pod on its own node", func() Input { return stdInput(web(3, withAntiAffinity(term(labelHostname, "app", "web")))...) },
			func(t *testing.T, r *result) { r.claims(t, 3); r.apart(t, names("web", 3)...) }},
		{"zonal self anti-affinity uses one zone per pod", func() Input { return stdInput(web(3, withAntiAffinity(term(labelZone, "app", "web")))...) },
			func(t *testing.T, r *result) {
				expectCounts(t, r.zoneCounts(t, names("web", 3)...), map[string]int{"z1": 1, "z2": 1, "z3": 1})
			}},
		{"zonal self anti-affinity beyond the zone count fails", func() Input { return stdInput(web(4, withAntiAffinity(term(labelZone, "app", "web")))...) },
			func(t *testing.T, r *result) {
				if len(r.plan.Errors) != 1 {
					t.Fatalf("%d errors, want 1", len(r.plan.Errors))
				}
				r.failed(t, r.plan.Errors[0].Pod.Name, "anti-affinity", labelZone)
			}},
		{"zonal affinity follows an existing pod", func() Input {
			in := stdInput(mkPod("a", "1", "1Gi", withPodAffinity(term(labelZone, "app", "db"))))
			in.Nodes = []*Node{fullNode("node-1", "z2", mkPod("db-0", "500m", "512Mi", withLabels("app", "db")))}
			return in
		}, func(t *testing.T, r *result) { expectZone(t, r.claim(t, "a"), "z2") }},
		{"hostname affinity joins the node of the matching pod", func() Input {
			in := stdInput(mkPod("a", "1", "1Gi", withPodAffinity(term(labelHostname, "app", "db"))))
			in.Nodes = []*Node{mkNode("node-0", 8, 16, map[string]string{labelZone: "z1"}), mkNode("node-1", 8, 16, map[string]string{labelZone: "z1"}, mkPod("db-0", "1", "1Gi", withLabels("app", "db")))}
			return in
		}, func(t *testing.T, r *result) {
			if n := r.node(t, "a"); n != "node-1" {
				t.Errorf("on %s, want node-1", n)
			}
		}},
		{"hostname affinity to a full node fails", func() Input {
			in := stdInput(mkPod("a", "1", "1Gi", withPodAffinity(term(labelHostname, "app", "db"))))
			in.Nodes = []*Node{fullNode("node-1", "z1", mkPod("db-0", "1", "1Gi", withLabels("app", "db")))}
			return in
		}, func(t *testing.T, r *result) { r.failed(t, "a", "pod affinity") }},
		{"running pod's anti-affinity keeps matching pods away", func() Input {
			in := stdInput(mkPod("web-0", "1", "1Gi", withLabels("app", "web")), mkPod("other", "1", "1Gi"))
			in.Nodes = []*Node{mkNode("node-1", 8, 16, map[string]string{labelZone: "z1"}, mkPod("guard", "1", "1Gi", withAntiAffinity(term(labelHostname, "app", "web"))))}
			return in
		}, func(t *testing.T, r *result) {
			r.claim(t, "web-0")
			if n := r.node(t, "other"); n != "node-1" {
				t.Errorf("other on %s", n)
			}
		}},
		{"zonal self affinity keeps the group in one zone", func() Input {
			return stdInput(pods(5, "web", "2", "1Gi", withLabels("app", "web"), withPodAffinity(term(labelZone, "app", "web")))...)
		},
			func(t *testing.T, r *result) {
				c := r.zoneCounts(t, names("web", 5)...)
				if len(c) != 1 {
					t.Errorf("zones %v, want one", c)
				}
			}},
		{"unsatisfiable preferred anti-affinity is relaxed", func() Input {
			in := stdInput(mkPod("a", "1", "1Gi", withPreferredAntiAffinity(10, term(labelZone, "app", "db"))))
			for i, z := range []string{"z1", "z2", "z3"} {
				in.Nodes = append(in.Nodes, fullNode("node-"+z, z, mkPod("db-"+z, "500m", "512Mi", withLabels("app", "db"))))
				_ = i
			}
			return in
		}, func(t *testing.T, r *result) {
			r.claim(t, "a")
			if rl := r.at["a"].Relaxed; len(rl) != 1 || rl[0] != "preferred pod anti-affinity term" {
				t.Errorf("relaxed %v", rl)
			}
		}},
		{"anti-affinity only looks at its namespace", func() Input {
			p := mkPod("a", "1", "1Gi", withAntiAffinity(term(labelHostname, "app", "web")))
			p.Namespace = "team-a"
			other := mkPod("web-b", "1", "1Gi", withLabels("app", "web"))
			other.Namespace = "team-b"
			in := stdInput(p)
			in.Nodes = []*Node{mkNode("node-1", 8, 16, map[string]string{labelZone: "z1"}, other)}
			return in
		}, func(t *testing.T, r *result) {
			if n := r.node(t, "a"); n != "node-1" {
				t.Errorf("on %s", n)
			}
		}},
		{"affinity to pods pending in the same batch", func() Input {
			return stdInput(append(pods(2, "a", "1", "1Gi", withLabels("app", "a"), withAntiAffinity(term(labelHostname, "app", "a"))),
				mkPod("b", "100m", "100Mi", withPodAffinity(term(labelHostname, "app", "a"))))...)
		}, func(t *testing.T, r *result) {
			r.apart(t, "a-0", "a-1")
			if r.target("b") != r.target("a-0") && r.target("b") != r.target("a-1") {
				t.Errorf("b on %s, want with an a pod", r.target("b"))
			}
		}},
		{"a mutually hostname-affine pair opens one claim holding both", func() Input {
			in := selfAffineInput(mkPod("buffer", "3", "1Gi", together("x")), mkPod("app", "1500m", "1Gi", together("x")))
			return in
		}, func(t *testing.T, r *result) {
			r.claims(t, 1)
			r.together(t, "buffer", "app")
		}},
		{"identical self-affine pods too large for the thriftiest type share one claim", func() Input {
			return selfAffineInput(pods(2, "x", "3", "1Gi", together("x"))...)
		}, func(t *testing.T, r *result) {
			r.claims(t, 1)
			r.together(t, "x-0", "x-1")
		}},
		{"three self-affine pods open one claim holding all three", func() Input {
			return selfAffineInput(mkPod("a", "2", "1Gi", together("x")), mkPod("b", "1500m", "1Gi", together("x")), mkPod("c", "1500m", "2Gi", together("x")))
		}, func(t *testing.T, r *result) {
			r.claims(t, 1)
			r.together(t, "a", "b", "c")
		}},
		{"a pod that only follows a self-affine pod joins its claim", func() Input {
			follower := mkPod("follower", "1500m", "1Gi", withPodAffinity(term(labelHostname, "app", "x")))
			return selfAffineInput(mkPod("a", "3", "1Gi", together("x")), follower)
		}, func(t *testing.T, r *result) {
			r.claims(t, 1)
			r.together(t, "a", "follower")
		}},
		{"a self-affine group's claim keeps its room for the group", func() Input {
			// b-0 fits beside a-0 alone, but a-1 must follow a-0.
			return selfAffineInput(mkPod("a-0", "2", "1Gi", together("a")), mkPod("b-0", "1800m", "1Gi", together("b")),
				mkPod("a-1", "1500m", "1Gi", together("a")), mkPod("b-1", "1800m", "1Gi", together("b")))
		}, func(t *testing.T, r *result) {
			r.together(t, "a-0", "a-1")
			r.together(t, "b-0", "b-1")
		}},
		{"a self-affine pair skips a node with room for one of them", func() Input {
			in := selfAffineInput(mkPod("a-0", "2", "1Gi", together("a")), mkPod("a-1", "1500m", "1Gi", together("a")))
			in.Nodes = []*Node{mkNode("node-1", 3, 8, map[string]string{labelZone: "z1"})}
			return in
		}, func(t *testing.T, r *result) {
			r.together(t, "a-0", "a-1")
		}},
		{"a self-affine pod's partner follows it before other pods fill its claim", func() Input {
			// x, placed between a-0 and a-1 in size order, fits beside a-0
			// alone (its anti-affinity, selecting no pod, keeps it in the
			// queue rather than the pattern LP).
			x := mkPod("x", "1800m", "1Gi", withAntiAffinity(term(labelHostname, "app", "nobody")))
			return selfAffineInput(mkPod("a-0", "2", "1Gi", together("a")), x, mkPod("a-1", "1500m", "1Gi", together("a")))
		}, func(t *testing.T, r *result) {
			r.together(t, "a-0", "a-1")
			if r.target("x") == "unplaced" {
				t.Errorf("x unplaced: %v", r.errs["x"])
			}
		}},
		{"hostname affinity to a label no pod has stays unschedulable", func() Input {
			return selfAffineInput(mkPod("a", "1", "1Gi", together("x")), mkPod("b", "1", "1Gi", together("x")),
				mkPod("lonely", "1", "1Gi", withLabels("app", "x"), withPodAffinity(term(labelHostname, "app", "nobody"))))
		}, func(t *testing.T, r *result) {
			r.together(t, "a", "b")
			r.failed(t, "lonely", "pod affinity", labelHostname)
		}},
		{"zonal anti-affinity avoids the zone of a running pod", func() Input {
			in := stdInput(mkPod("a", "1", "1Gi", withAntiAffinity(term(labelZone, "app", "db"))))
			in.Nodes = []*Node{mkNode("node-1", 8, 16, map[string]string{labelZone: "z1"}, mkPod("db-0", "1", "1Gi", withLabels("app", "db")))}
			return in
		}, func(t *testing.T, r *result) {
			for _, z := range zones(r.claim(t, "a")) {
				if z == "z1" {
					t.Errorf("claim may launch in z1")
				}
			}
		}},
	})
}

func TestSpreadCases(t *testing.T) {
	ignore, honor := corev1.NodeInclusionPolicyIgnore, corev1.NodeInclusionPolicyHonor
	four := int32(4)
	zonal := withSpread(labelZone, 1, corev1.DoNotSchedule, "app", "web")
	runCases(t, []tcase{
		{"zonal spread balances across zones", func() Input { return stdInput(web(6, zonal)...) },
			func(t *testing.T, r *result) {
				expectCounts(t, r.zoneCounts(t, names("web", 6)...), map[string]int{"z1": 2, "z2": 2, "z3": 2})
			}},
		{"zonal spread sizes each zone's claim for the zone's share", func() Input {
			// A node of 8 holds 8 web pods for the price of 3 nodes of 2 (1
			// pod each): one claim per zone, not one per pod.
			its := []*InstanceType{mkType("c.large", "amd64", 2, 4, 0.1), mkType("c.2xlarge", "amd64", 8, 16, 0.3)}
			return Input{NodePools: []*NodePool{mkPool("default", its)}, Pods: web(24, zonal)}
		}, func(t *testing.T, r *result) {
			expectCounts(t, r.zoneCounts(t, names("web", 24)...), map[string]int{"z1": 8, "z2": 8, "z3": 8})
			r.claims(t, 3)
			for _, c := range r.plan.NewClaims {
				if len(c.Pods) != 8 || c.InstanceTypes[0].Type.Name != "c.2xlarge" {
					t.Errorf("claim with %d pods on %s, want 8 on c.2xlarge", len(c.Pods), c.InstanceTypes[0].Type.Name)
				}
			}
		}},
		{"zonal spread counts running pods", func() Input {
			in := stdInput(web(4, zonal)...)
			in.Nodes = []*Node{mkNode("node-1", 1, 1, map[string]string{labelZone: "z1"}, pods(2, "old", "100m", "100Mi", withLabels("app", "web"))...)}
			return in
		}, func(t *testing.T, r *result) {
			expectCounts(t, r.zoneCounts(t, names("web", 4)...), map[string]int{"z2": 2, "z3": 2})
		}},
		{"hostname spread maxSkew 1 puts one per node", func() Input {
			return stdInput(web(4, withSpread(labelHostname, 1, corev1.DoNotSchedule, "app", "web"))...)
		},
			func(t *testing.T, r *result) { r.apart(t, names("web", 4)...) }},
		{"hostname spread maxSkew 2 puts two per node", func() Input {
			return stdInput(web(4, withSpread(labelHostname, 2, corev1.DoNotSchedule, "app", "web"))...)
		},
			func(t *testing.T, r *result) {
				r.claims(t, 2)
				for _, c := range r.plan.NewClaims {
					if len(c.Pods) != 2 {
						t.Errorf("claim with %d pods", len(c.Pods))
					}
				}
			}},
		{"minDomains above the zone count caps each zone at maxSkew", func() Input {
			return stdInput(web(4, withSpreadC(corev1.TopologySpreadConstraint{TopologyKey: labelZone, MaxSkew: 1, WhenUnsatisfiable: corev1.DoNotSchedule, MinDomains: &four}, "app", "web"))...)
		}, func(t *testing.T, r *result) {
			if len(r.plan.Placements) != 3 || len(r.plan.Errors) != 1 {
				t.Fatalf("%d placed, %d errors; want 3 and 1", len(r.plan.Placements), len(r.plan.Errors))
			}
			r.failed(t, r.plan.Errors[0].Pod.Name, "topology spread")
		}},
		{"ScheduleAnyway is relaxed when it cannot be met", func() Input {
			in := stdInput(web(3, withSpread(labelHostname, 1, corev1.ScheduleAnyway, "app", "web"))...)
			in.NodePools[0].Limits = corev1.ResourceList{"nodes": quantity("1")}
			return in
		}, func(t *testing.T, r *result) {
			r.claims(t, 1)
			r.together(t, names("web", 3)...)
			found := false
			for _, p := range r.plan.Placements {
				for _, s := range p.Relaxed {
					found = found || s == "ScheduleAnyway topology spread constraint"
				}
			}
			if !found {
				t.Error("no pod records the relaxed ScheduleAnyway constraint")
			}
		}},
		{"nodeAffinityPolicy Honor spreads over the pod's zones only", func() Input {
			return stdInput(web(4, zonal, withRequiredTerms([]corev1.NodeSelectorRequirement{expr(labelZone, corev1.NodeSelectorOpIn, "z1", "z2")}))...)
		}, func(t *testing.T, r *result) {
			expectCounts(t, r.zoneCounts(t, names("web", 4)...), map[string]int{"z1": 2, "z2": 2})
		}},
		{"nodeAffinityPolicy Ignore counts the empty zone", func() Input {
			return stdInput(web(4, withSpreadC(corev1.TopologySpreadConstraint{TopologyKey: labelZone, MaxSkew: 1, WhenUnsatisfiable: corev1.DoNotSchedule, NodeAffinityPolicy: &ignore}, "app", "web"),
				withRequiredTerms([]corev1.NodeSelectorRequirement{expr(labelZone, corev1.NodeSelectorOpIn, "z1", "z2")}))...)
		}, func(t *testing.T, r *result) {
			if len(r.plan.Placements) != 2 || len(r.plan.Errors) != 2 {
				t.Fatalf("%d placed, %d errors; want 2 and 2", len(r.plan.Placements), len(r.plan.Errors))
			}
		}},
		{"nodeTaintsPolicy Honor ignores pods on untolerated nodes", func() Input {
			in := stdInput(web(3, withSpreadC(corev1.TopologySpreadConstraint{TopologyKey: labelZone, MaxSkew: 1, WhenUnsatisfiable: corev1.DoNotSchedule, NodeTaintsPolicy: &honor}, "app", "web"))...)
			n := mkNode("node-1", 1, 1, map[string]string{labelZone: "z1"}, pods(3, "old", "100m", "100Mi", withLabels("app", "web"))...)
			n.Taints = []corev1.Taint{{Key: "dedicated", Value: "x", Effect: corev1.TaintEffectNoSchedule}}
			in.Nodes = []*Node{n}
			return in
		}, func(t *testing.T, r *result) {
			expectCounts(t, r.zoneCounts(t, names("web", 3)...), map[string]int{"z1": 1, "z2": 1, "z3": 1})
		}},
		{"nodeTaintsPolicy Ignore counts pods on untolerated nodes", func() Input {
			in := stdInput(web(3, zonal)...)
			n := mkNode("node-1", 1, 1, map[string]string{labelZone: "z1"}, pods(3, "old", "100m", "100Mi", withLabels("app", "web"))...)
			n.Taints = []corev1.Taint{{Key: "dedicated", Value: "x", Effect: corev1.TaintEffectNoSchedule}}
			in.Nodes = []*Node{n}
			return in
		}, func(t *testing.T, r *result) {
			expectCounts(t, r.zoneCounts(t, names("web", 3)...), map[string]int{"z2": 2, "z3": 1})
		}},
		{"matchLabelKeys spreads each revision on its own", func() Input {
			c := corev1.TopologySpreadConstraint{TopologyKey: labelZone, MaxSkew: 1, WhenUnsatisfiable: corev1.DoNotSchedule, MatchLabelKeys: []string{"hash"}}
			in := stdInput(append(pods(3, "a", "1", "1Gi", withLabels("app", "web", "hash", "a"), withSpreadC(c, "app", "web")),
				pods(3, "b", "1", "1Gi", withLabels("app", "web", "hash", "b"), withSpreadC(c, "app", "web"))...)...)
			return in
		}, func(t *testing.T, r *result) {
			expectCounts(t, r.zoneCounts(t, names("a", 3)...), map[string]int{"z1": 1, "z2": 1, "z3": 1})
			expectCounts(t, r.zoneCounts(t, names("b", 3)...), map[string]int{"z1": 1, "z2": 1, "z3": 1})
		}},
		{"spread over a label the types may take several values of (partitions)", func() Input {
			in := stdInput(web(6, withSpread(labelPartition, 1, corev1.DoNotSchedule, "app", "web"))...)
			for _, it := range in.NodePools[0].InstanceTypes {
				it.LabelChoices = map[string][]string{labelPartition: {"1", "2", "3"}}
			}
			return in
		}, func(t *testing.T, r *result) {
			got := map[string]int{}
			for _, p := range names("web", 6) {
				v, ok := r.claim(t, p).Requirements.Get(labelPartition).SingleValue()
				if !ok {
					t.Fatalf("claim of %s does not pin a partition: %v", p, r.claim(t, p).Requirements.Get(labelPartition))
				}
				got[v]++
			}
			expectCounts(t, got, map[string]int{"1": 2, "2": 2, "3": 2})
		}},
		{"a pod selecting one of a type's label choices gets a claim pinned to it", func() Input {
			in := stdInput(mkPod("p", "1", "1Gi", withNodeSelector(labelPartition, "2")))
			for _, it := range in.NodePools[0].InstanceTypes[:2] {
				it.LabelChoices = map[string][]string{labelPartition: {"1", "2"}}
			}
			return in
		}, func(t *testing.T, r *result) {
			c := r.claim(t, "p")
			if v, _ := c.Requirements.Get(labelPartition).SingleValue(); v != "2" {
				t.Errorf("claim requires %s %v, want 2", labelPartition, c.Requirements.Get(labelPartition))
			}
			for _, o := range c.InstanceTypes {
				if o.Type.LabelChoices == nil {
					t.Errorf("claim lists %s, which has no partitions", o.Type.Name)
				}
			}
		}},
		{"spread over capacity types splits spot and on-demand", func() Input {
			in := stdInput(web(4, withSpread(labelCapacityType, 1, corev1.DoNotSchedule, "app", "web"))...)
			for _, it := range in.NodePools[0].InstanceTypes {
				withSpot(it, 0.01)
			}
			return in
		}, func(t *testing.T, r *result) {
			got := map[string]int{}
			for _, p := range names("web", 4) {
				c := r.claim(t, p)
				cts := map[string]bool{}
				for _, o := range c.InstanceTypes {
					for _, off := range o.Offerings {
						cts[off.CapacityType] = true
					}
				}
				if len(cts) != 1 {
					t.Fatalf("claim of %s spans capacity types %v", p, cts)
				}
				for ct := range cts {
					got[ct]++
				}
			}
			expectCounts(t, got, map[string]int{CapacityTypeSpot: 2, CapacityTypeOnDemand: 2})
		}},
		{"zonal spread uses existing nodes first", func() Input {
			in := stdInput(web(3, zonal)...)
			for _, z := range []string{"z1", "z2", "z3"} {
				in.Nodes = append(in.Nodes, mkNode("node-"+z, 4, 8, map[string]string{labelZone: z}))
			}
			return in
		}, func(t *testing.T, r *result) {
			r.claims(t, 0)
			expectCounts(t, r.zoneCounts(t, names("web", 3)...), map[string]int{"z1": 1, "z2": 1, "z3": 1})
		}},
		{"pods a placed hostname spread selects stay off its node beyond maxSkew", func() Input {
			// The guard is placed first (larger); had the web pods joined
			// its node, kube-scheduler binding the guard last would refuse it.
			guard := mkPod("guard", "2", "2Gi", withSpread(labelHostname, 1, corev1.DoNotSchedule, "app", "web"))
			in := stdInput(append([]*corev1.Pod{guard}, web(4)...)...)
			in.Nodes = []*Node{mkNode("node-1", 8, 16, map[string]string{labelZone: "z1"})}
			return in
		}, func(t *testing.T, r *result) {
			on := 0
			for _, p := range names("web", 4) {
				if r.target(p) == r.target("guard") {
					on++
				}
			}
			if on > 1 {
				t.Errorf("%d web pods share the guard's node, want at most 1 (maxSkew)", on)
			}
		}},
		{"pods a placed zonal spread selects keep its zone within maxSkew", func() Input {
			// Existing nodes with room in every zone; first-fit alone would
			// put all web pods in z1, next to the guard spreading over them.
			guard := mkPod("guard", "2", "2Gi", withSpread(labelZone, 1, corev1.DoNotSchedule, "app", "web"))
			in := stdInput(append([]*corev1.Pod{guard}, web(6)...)...)
			for _, z := range []string{"z1", "z2", "z3"} {
				in.Nodes = append(in.Nodes, mkNode("node-"+z, 16, 32, map[string]string{labelZone: z}))
			}
			return in
		}, func(t *testing.T, r *result) {
			c := r.zoneCounts(t, names("web", 6)...)
			g := r.zoneOf(t, "guard")
			lo := 6
			for _, z := range []string{"z1", "z2", "z3"} {
				lo = min(lo, c[z])
			}
			if c[g]-lo > 1 {
				t.Errorf("web pods per zone %v with the guard in %s: skew %d exceeds 1", c, g, c[g]-lo)
			}
		}},
	})
}
