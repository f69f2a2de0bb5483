package scheduling_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	. "github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling/oracle"
)

// The validator must catch broken plans; each case solves a valid input,
// breaks the plan in one way and expects that violation to be reported.
func TestValidatorCatchesViolations(t *testing.T) {
	merge := func(p *Plan) {
		// Move every pod onto claim 0 and drop the other claims.
		first := p.NewClaims[0]
		for i := range p.Placements {
			if p.Placements[i].Kind == TargetNewClaim && p.Placements[i].Claim != 0 {
				p.Placements[i].Claim = 0
				first.Pods = append(first.Pods, p.Placements[i].Pod)
			}
		}
		p.NewClaims = p.NewClaims[:1]
	}
	cases := []struct {
		name   string
		in     func() Input
		break_ func(p *Plan)
		want   string
	}{
		{"overfilled node", func() Input { return stdInput(pods(3, "p", "1500m", "1Gi")...) }, merge, "exceed allocatable"},
		{"anti-affinity broken", func() Input { return stdInput(web(2, withAntiAffinity(term(labelHostname, "app", "web")))...) }, merge, "anti-affinity"},
		{"spread broken", func() Input { return stdInput(web(3, withSpread(labelZone, 1, corev1.DoNotSchedule, "app", "web"))...) }, merge, "skew"},
		{"host ports clash", func() Input { return stdInput(pods(2, "p", "100m", "100Mi", withHostPort(80))...) }, merge, "host port"},
		{"pod lost", func() Input { return stdInput(pods(2, "p", "1", "1Gi")...) }, func(p *Plan) {
			p.Placements = p.Placements[1:]
			p.NewClaims[0].Pods = p.NewClaims[0].Pods[1:]
		}, "accounted 0 times"},
		{"untolerated taint", func() Input {
			in := stdInput(mkPod("a", "1", "1Gi", withToleration("k", "v", corev1.TaintEffectNoSchedule)), mkPod("b", "1", "1Gi"))
			in.NodePools = append(in.NodePools, mkPool("tainted", stdTypes()))
			in.NodePools[1].Weight = 10
			in.NodePools[1].Taints = []corev1.Taint{{Key: "k", Value: "v", Effect: corev1.TaintEffectNoSchedule}}
			return in
		}, func(p *Plan) {
			for _, pl := range p.Placements {
				if pl.Pod.Name == "b" {
					p.NewClaims[pl.Claim].NodePool = "tainted"
				}
			}
		}, "does not tolerate"},
		{"unsorted options", func() Input { return stdInput(mkPod("a", "1", "1Gi")) }, func(p *Plan) {
			o := p.NewClaims[0].InstanceTypes
			o[0], o[1] = o[1], o[0]
		}, "cheapest first"},
		{"limit exceeded", func() Input {
			in := stdInput(mkPod("a", "1", "1Gi"))
			in.NodePools[0].Limits = corev1.ResourceList{corev1.ResourceCPU: quantity("2")}
			return in
		}, func(p *Plan) {
			p.NewClaims[0].InstanceTypes = append(p.NewClaims[0].InstanceTypes, ClaimOption{Type: mkType("huge.a", "amd64", 64, 128, 9), Price: 9, Offerings: []Offering{{Zone: "z1", CapacityType: CapacityTypeOnDemand, Price: 9, Available: true}}})
		}, "exceeds limit"},
		{"nodeSelector ignored", func() Input { return stdInput(mkPod("a", "1", "1Gi", withNodeSelector(labelArch, "arm64"))) }, func(p *Plan) {
			p.NewClaims[0].InstanceTypes = []ClaimOption{{Type: mkType("small.a", "amd64", 2, 4, 0.1), Price: 0.1, Offerings: []Offering{{Zone: "z1", CapacityType: CapacityTypeOnDemand, Price: 0.1, Available: true}}}}
		}, "nodeSelector"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := c.in()
			plan, err := Solve(in)
			if err != nil {
				t.Fatal(err)
			}
			if errs := oracle.Validate(in, plan); len(errs) > 0 {
				t.Fatalf("valid plan rejected: %v", errs[0])
			}
			c.break_(plan)
			errs := oracle.Validate(in, plan)
			for _, e := range errs {
				if strings.Contains(e.Error(), c.want) {
					return
				}
			}
			t.Fatalf("violation %q not reported; got %v", c.want, errs)
		})
	}
}
