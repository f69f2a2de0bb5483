package requirements

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

const (
	in    = corev1.NodeSelectorOpIn
	notIn = corev1.NodeSelectorOpNotIn
	exist = corev1.NodeSelectorOpExists
	dne   = corev1.NodeSelectorOpDoesNotExist
	gt    = corev1.NodeSelectorOpGt
	lt    = corev1.NodeSelectorOpLt
)

func TestRequirementHas(t *testing.T) {
	cases := []struct {
		name string
		req  *Requirement
		yes  []string
		no   []string
	}{
		{"in", New("k", in, "a", "b"), []string{"a", "b"}, []string{"c", ""}},
		{"notIn", New("k", notIn, "a"), []string{"b", "zz"}, []string{"a"}},
		{"exists", New("k", exist), []string{"a", "1"}, nil},
		{"doesNotExist", New("k", dne), nil, []string{"a", ""}},
		{"gt", New("k", gt, "4"), []string{"5", "100"}, []string{"4", "3", "x"}},
		{"lt", New("k", lt, "4"), []string{"3", "-1"}, []string{"4", "9", "x"}},
		{"gte", New("k", OpGte, "4"), []string{"4", "5"}, []string{"3"}},
		{"lte", New("k", OpLte, "4"), []string{"4", "0"}, []string{"5"}},
		{"bad gt value is unsatisfiable", New("k", gt, "four"), nil, []string{"5", "four"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, v := range c.yes {
				if !c.req.Has(v) {
					t.Errorf("%s should allow %q", c.req, v)
				}
			}
			for _, v := range c.no {
				if c.req.Has(v) {
					t.Errorf("%s should not allow %q", c.req, v)
				}
			}
		})
	}
}

func TestParseRejectsMalformed(t *testing.T) {
	bad := []corev1.NodeSelectorRequirement{
		{Key: "k", Operator: "Near", Values: []string{"a"}},
		{Key: "k", Operator: gt, Values: []string{"a"}},
		{Key: "k", Operator: lt, Values: []string{"1", "2"}},
		{Key: "k", Operator: exist, Values: []string{"a"}},
	}
	for _, b := range bad {
		if _, err := Parse(b, nil); err == nil {
			t.Errorf("Parse(%v) should fail", b)
		}
	}
	zero := 0
	if _, err := Parse(corev1.NodeSelectorRequirement{Key: "k", Operator: in, Values: []string{"a"}}, &zero); err == nil {
		t.Error("minValues 0 should be rejected")
	}
	two := 2
	r, err := Parse(corev1.NodeSelectorRequirement{Key: "beta.kubernetes.io/arch", Operator: in, Values: []string{"amd64", "arm64"}}, &two)
	if err != nil || r.Key != "kubernetes.io/arch" || *r.MinValues != 2 {
		t.Fatalf("Parse normalised = %v, %v", r, err)
	}
}

func TestIntersection(t *testing.T) {
	cases := []struct {
		name   string
		a, b   *Requirement
		want   corev1.NodeSelectorOperator
		values []string
		allows []string
		denies []string
	}{
		{"in∩in", New("k", in, "a", "b"), New("k", in, "b", "c"), in, []string{"b"}, []string{"b"}, []string{"a", "c"}},
		{"in∩in disjoint", New("k", in, "a"), New("k", in, "c"), dne, nil, nil, []string{"a", "c"}},
		{"in∩notIn", New("k", in, "a", "b"), New("k", notIn, "a"), in, []string{"b"}, []string{"b"}, []string{"a"}},
		{"notIn∩in", New("k", notIn, "a"), New("k", in, "a", "b"), in, []string{"b"}, []string{"b"}, []string{"a"}},
		{"notIn∩notIn unions exclusions", New("k", notIn, "a"), New("k", notIn, "b"), notIn, []string{"a", "b"}, []string{"c"}, []string{"a", "b"}},
		{"exists∩in", New("k", exist), New("k", in, "a"), in, []string{"a"}, []string{"a"}, []string{"b"}},
		{"exists∩dne", New("k", exist), New("k", dne), dne, nil, nil, []string{"a"}},
		{"gt∩lt window", New("k", gt, "2"), New("k", lt, "5"), exist, nil, []string{"3", "4"}, []string{"2", "5"}},
		{"gt∩lt empty window", New("k", gt, "3"), New("k", lt, "4"), dne, nil, nil, []string{"3", "4"}},
		{"gt∩in filters values", New("k", gt, "2"), New("k", in, "1", "3", "x"), in, []string{"3"}, []string{"3"}, []string{"1", "x"}},
		{"gte∩lte single", New("k", OpGte, "4"), New("k", OpLte, "4"), exist, nil, []string{"4"}, []string{"3", "5"}},
		{"gt∩notIn", New("k", gt, "2"), New("k", notIn, "3"), notIn, []string{"3"}, []string{"4"}, []string{"3", "1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := c.a.Intersection(c.b)
			if got.Operator() != c.want {
				t.Errorf("operator = %s, want %s (%s)", got.Operator(), c.want, got)
			}
			if c.values != nil && !slices.Equal(got.Values(), c.values) {
				t.Errorf("values = %v, want %v", got.Values(), c.values)
			}
			for _, v := range c.allows {
				if !got.Has(v) {
					t.Errorf("%s should allow %q", got, v)
				}
			}
			for _, v := range c.denies {
				if got.Has(v) {
					t.Errorf("%s should deny %q", got, v)
				}
			}
			// Intersection is commutative in what it allows.
			rev := c.b.Intersection(c.a)
			for _, v := range append(append([]string{}, c.allows...), c.denies...) {
				if rev.Has(v) != got.Has(v) {
					t.Errorf("not commutative for %q", v)
				}
			}
		})
	}
}

func TestIntersectionMinValuesKeepsLarger(t *testing.T) {
	two, five := 2, 5
	a, _ := Parse(corev1.NodeSelectorRequirement{Key: "k", Operator: exist}, &two)
	b, _ := Parse(corev1.NodeSelectorRequirement{Key: "k", Operator: notIn, Values: []string{"x"}}, &five)
	if got := a.Intersection(b); got.MinValues == nil || *got.MinValues != 5 {
		t.Fatalf("minValues = %v, want 5", got.MinValues)
	}
	if got := New("k", in, "a").Intersection(a); got.MinValues == nil || *got.MinValues != 2 {
		t.Fatalf("minValues = %v, want 2", got.MinValues)
	}
}

func TestAny(t *testing.T) {
	cases := []struct {
		req  *Requirement
		want string
	}{
		{New("k", in, "b", "a"), "a"},
		{New("k", dne), ""},
		{New("k", exist), "0"},
		{New("k", gt, "7"), "8"},
		{New("k", notIn, "0", "1"), "2"},
		{New("k", gt, "2").Intersection(New("k", lt, "3")), ""},
	}
	for _, c := range cases {
		if got := c.req.Any(); got != c.want {
			t.Errorf("%s.Any() = %q, want %q", c.req, got, c.want)
		}
		if c.want != "" && !c.req.Has(c.want) {
			t.Errorf("%s.Any() returned a disallowed value", c.req)
		}
	}
}

func TestNodeSelectorRoundTrip(t *testing.T) {
	reqs := []*Requirement{
		New("k", in, "a", "b"), New("k", notIn, "a"), New("k", exist), New("k", dne),
		New("k", gt, "3"), New("k", lt, "9"), New("k", gt, "3").Intersection(New("k", lt, "9")),
	}
	for _, r := range reqs {
		back, err := FromNodeSelectorRequirements(r.NodeSelectorRequirements(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if back.String() != NewRequirements(r).String() {
			t.Errorf("round trip of %s gave %s", r, back)
		}
	}
}
