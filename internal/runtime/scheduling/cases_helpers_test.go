package scheduling_test

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	. "github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling/oracle"
)

// tcase is one table-driven scenario: an input and assertions on where pods
// went. Every plan is also run through Validate.
type tcase struct {
	name  string
	in    func() Input
	check func(t *testing.T, r *result)
}

type result struct {
	in   Input
	plan *Plan
	at   map[string]Placement
	errs map[string]error
}

func runCases(t *testing.T, cases []tcase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := c.in()
			plan, err := Solve(in)
			if err != nil {
				t.Fatal(err)
			}
			r := &result{in: in, plan: plan, at: map[string]Placement{}, errs: map[string]error{}}
			for _, p := range plan.Placements {
				r.at[p.Pod.Name] = p
			}
			for _, e := range plan.Errors {
				r.errs[e.Pod.Name] = e.Err
			}
			for _, e := range oracle.Validate(in, plan) {
				t.Errorf("validator: %v", e)
			}
			c.check(t, r)
		})
	}
}

// stdTypes is a small catalog with round numbers: prices make arm64 the
// cheapest per core and mem.a the cheapest for memory-heavy pods.
func stdTypes() []*InstanceType {
	return []*InstanceType{
		mkType("small.a", "amd64", 2, 4, 0.10),
		mkType("medium.a", "amd64", 4, 8, 0.20),
		mkType("large.a", "amd64", 8, 16, 0.40),
		mkType("small.g", "arm64", 2, 4, 0.08),
		mkType("large.g", "arm64", 8, 16, 0.32),
		mkType("mem.a", "amd64", 2, 16, 0.15),
		withExtended(mkType("gpu.a", "amd64", 8, 32, 1.00), "nvidia.com/gpu", 1),
	}
}

func stdInput(ps ...*corev1.Pod) Input {
	return Input{NodePools: []*NodePool{mkPool("default", stdTypes())}, Pods: ps}
}

func (r *result) claim(t *testing.T, pod string) *NewClaim {
	t.Helper()
	p, ok := r.at[pod]
	if !ok {
		t.Fatalf("pod %s not placed: %v", pod, r.errs[pod])
	}
	if p.Kind != TargetNewClaim {
		t.Fatalf("pod %s placed on %s %s, want a new claim", pod, p.Kind, p.Node)
	}
	return r.plan.NewClaims[p.Claim]
}

func (r *result) node(t *testing.T, pod string) string {
	t.Helper()
	p, ok := r.at[pod]
	if !ok {
		t.Fatalf("pod %s not placed: %v", pod, r.errs[pod])
	}
	if p.Kind == TargetNewClaim {
		t.Fatalf("pod %s placed on a new claim, want an existing node", pod)
	}
	return p.Node
}

func (r *result) target(pod string) string {
	p, ok := r.at[pod]
	if !ok {
		return "unplaced"
	}
	if p.Kind == TargetNewClaim {
		return r.plan.NewClaims[p.Claim].Hostname
	}
	return p.Node
}

// together asserts the pods share one node or claim.
func (r *result) together(t *testing.T, pods ...string) {
	t.Helper()
	for _, p := range pods[1:] {
		if r.target(p) != r.target(pods[0]) || r.target(p) == "unplaced" {
			t.Errorf("%s on %s, %s on %s: want together", pods[0], r.target(pods[0]), p, r.target(p))
		}
	}
}

// apart asserts the pods are all on different nodes or claims.
func (r *result) apart(t *testing.T, pods ...string) {
	t.Helper()
	seen := map[string]string{}
	for _, p := range pods {
		tg := r.target(p)
		if tg == "unplaced" {
			t.Errorf("%s unplaced: %v", p, r.errs[p])
			continue
		}
		if other, ok := seen[tg]; ok {
			t.Errorf("%s and %s share %s: want apart", other, p, tg)
		}
		seen[tg] = p
	}
}

func (r *result) failed(t *testing.T, pod string, parts ...string) {
	t.Helper()
	err, ok := r.errs[pod]
	if !ok {
		t.Fatalf("pod %s placed on %s, want an error", pod, r.target(pod))
	}
	for _, part := range parts {
		if !strings.Contains(err.Error(), part) {
			t.Errorf("error %q does not mention %q", err, part)
		}
	}
}

func (r *result) claims(t *testing.T, n int) {
	t.Helper()
	if len(r.plan.NewClaims) != n {
		t.Errorf("%d new claims, want %d", len(r.plan.NewClaims), n)
	}
}

func cheapest(c *NewClaim) string { return c.InstanceTypes[0].Type.Name }

func expectType(t *testing.T, c *NewClaim, name string) {
	t.Helper()
	if got := cheapest(c); got != name {
		t.Errorf("cheapest instance type %s, want %s (options %v)", got, name, optionNames(c))
	}
}

func optionNames(c *NewClaim) []string {
	var out []string
	for _, o := range c.InstanceTypes {
		out = append(out, o.Type.Name)
	}
	return out
}

// zones are the zones the claim may launch in.
func zones(c *NewClaim) []string {
	set := map[string]bool{}
	for _, o := range c.InstanceTypes {
		for _, off := range o.Offerings {
			set[off.Zone] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

func expectZone(t *testing.T, c *NewClaim, zone string) {
	t.Helper()
	if z := zones(c); len(z) != 1 || z[0] != zone {
		t.Errorf("claim zones %v, want [%s]", z, zone)
	}
}

func names(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = prefix + "-" + strconv.Itoa(i)
	}
	return out
}
