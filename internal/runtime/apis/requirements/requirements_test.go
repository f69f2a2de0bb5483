package requirements

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

var wellKnown = NewKeySet("topology.kubernetes.io/zone", "kubernetes.io/arch", "karpenter.sh/capacity-type", "node.kubernetes.io/instance-type")

func reqs(rs ...*Requirement) Requirements { return NewRequirements(rs...) }

func TestCompatible(t *testing.T) {
	pool := reqs(
		New("kubernetes.io/arch", in, "amd64"),
		New("team", in, "a", "b"),
		New("topology.kubernetes.io/zone", in, "z1", "z2"),
		New("gpu", dne),
	)
	cases := []struct {
		name    string
		pod     Requirements
		ok      bool
		errPart string
	}{
		{"empty pod", reqs(), true, ""},
		{"matching custom label", reqs(New("team", in, "b")), true, ""},
		{"conflicting custom label", reqs(New("team", in, "c")), false, "team"},
		{"undefined custom label In", reqs(New("owner", in, "x")), false, `"owner" does not have known values`},
		{"undefined custom label Exists", reqs(New("owner", exist)), false, "owner"},
		{"undefined custom label NotIn is fine", reqs(New("owner", notIn, "x")), true, ""},
		{"undefined custom label DoesNotExist is fine", reqs(New("owner", dne)), true, ""},
		{"undefined well-known label is fine", reqs(New("karpenter.sh/capacity-type", in, "spot")), true, ""},
		{"defined well-known label must intersect", reqs(New("topology.kubernetes.io/zone", in, "z3")), false, "zone"},
		{"alias key normalised", reqs(New("failure-domain.beta.kubernetes.io/zone", in, "z2")), true, ""},
		{"DoesNotExist vs DoesNotExist", reqs(New("gpu", dne)), true, ""},
		{"NotIn vs DoesNotExist", reqs(New("gpu", notIn, "x")), true, ""},
		{"Exists vs DoesNotExist", reqs(New("gpu", exist)), false, "gpu"},
		{"arch mismatch", reqs(New("kubernetes.io/arch", in, "arm64")), false, "arch"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := pool.Compatible(c.pod, wellKnown)
			if (err == nil) != c.ok {
				t.Fatalf("Compatible = %v, want ok=%v", err, c.ok)
			}
			if err != nil && !strings.Contains(err.Error(), c.errPart) {
				t.Errorf("error %q does not mention %q", err, c.errPart)
			}
			if pool.IsCompatible(c.pod, wellKnown) != c.ok {
				t.Errorf("IsCompatible disagrees with Compatible")
			}
		})
	}
}

func TestAddIntersectsAndIntersectDoesNotMutate(t *testing.T) {
	a := reqs(New("k", in, "a", "b"))
	b := reqs(New("k", in, "b", "c"), New("j", exist))
	c := a.Intersect(b)
	if got := c.Get("k").Values(); !slices.Equal(got, []string{"b"}) {
		t.Fatalf("intersect k = %v", got)
	}
	if !c.Has("j") || a.Has("j") {
		t.Fatal("Intersect must add j to the result only")
	}
	if got := a.Get("k").Values(); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("input mutated: %v", got)
	}
	a.Add(New("k", notIn, "a"))
	if got := a.Get("k").Values(); !slices.Equal(got, []string{"b"}) {
		t.Fatalf("Add k = %v", got)
	}
	if op := a.Get("missing").Operator(); op != exist {
		t.Fatalf("Get of unconstrained key = %s, want Exists", op)
	}
}

func TestMatchesLabels(t *testing.T) {
	r := reqs(New("a", in, "1"), New("b", notIn, "x"), New("c", dne), New("cpu", gt, "3"))
	cases := []struct {
		labels map[string]string
		ok     bool
	}{
		{map[string]string{"a": "1", "cpu": "4"}, true},
		{map[string]string{"a": "1", "b": "y", "cpu": "8"}, true},
		{map[string]string{"a": "1", "b": "x", "cpu": "8"}, false},
		{map[string]string{"a": "1", "c": "", "cpu": "8"}, false},
		{map[string]string{"a": "2", "cpu": "8"}, false},
		{map[string]string{"a": "1", "cpu": "3"}, false},
		{map[string]string{"a": "1"}, false},
	}
	for _, c := range cases {
		if got := r.MatchesLabels(c.labels); got != c.ok {
			t.Errorf("MatchesLabels(%v) = %v, want %v", c.labels, got, c.ok)
		}
		if (r.Matches(c.labels) == nil) != c.ok {
			t.Errorf("Matches(%v) disagrees", c.labels)
		}
	}
	// A node labelled with the deprecated key satisfies the stable key.
	if !reqs(New("topology.kubernetes.io/zone", in, "z1")).MatchesLabels(map[string]string{"failure-domain.beta.kubernetes.io/zone": "z1"}) {
		t.Error("alias label should match")
	}
}

func TestLabels(t *testing.T) {
	r := reqs(New("a", in, "2", "1"), New("b", exist), New("c", dne), New("kubernetes.io/hostname", in, "h"))
	got := r.Labels(NewKeySet("kubernetes.io/hostname"))
	want := map[string]string{"a": "1", "b": "0"}
	if len(got) != len(want) || got["a"] != "1" || got["b"] != "0" {
		t.Fatalf("Labels = %v, want %v", got, want)
	}
	if !r.MatchesLabels(map[string]string{"a": got["a"], "b": got["b"], "kubernetes.io/hostname": "h"}) {
		t.Fatal("labels produced from requirements must satisfy them")
	}
}

func TestFromNodeSelectorTermRejectsMatchFields(t *testing.T) {
	_, err := FromNodeSelectorTerm(corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: in, Values: []string{"n"}}}})
	if err == nil || !strings.Contains(err.Error(), "matchFields") {
		t.Fatalf("err = %v", err)
	}
}

func TestForPod(t *testing.T) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		NodeSelector: map[string]string{"team": "a"},
		Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{
				{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "topology.kubernetes.io/zone", Operator: in, Values: []string{"z1", "z2"}}}},
				{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "topology.kubernetes.io/zone", Operator: in, Values: []string{"z3"}}}},
			}},
			PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{
				{Weight: 1, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "topology.kubernetes.io/zone", Operator: in, Values: []string{"z1"}}}}},
				{Weight: 50, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "topology.kubernetes.io/zone", Operator: in, Values: []string{"z2"}}}}},
			},
		}},
	}}
	strict, err := StrictForPod(pod)
	if err != nil {
		t.Fatal(err)
	}
	if got := strict.Get("topology.kubernetes.io/zone").Values(); !slices.Equal(got, []string{"z1", "z2"}) {
		t.Errorf("strict zone = %v (only the first required term applies)", got)
	}
	if got := strict.Get("team").Values(); !slices.Equal(got, []string{"a"}) {
		t.Errorf("strict team = %v", got)
	}
	full, err := ForPod(pod)
	if err != nil {
		t.Fatal(err)
	}
	if got := full.Get("topology.kubernetes.io/zone").Values(); !slices.Equal(got, []string{"z2"}) {
		t.Errorf("zone with heaviest preference = %v, want [z2]", got)
	}
}

func TestStringCanonical(t *testing.T) {
	a := reqs(New("b", in, "2", "1"), New("a", exist))
	b := reqs(New("a", exist), New("b", in, "1", "2"))
	if a.String() != b.String() {
		t.Fatalf("%q != %q", a, b)
	}
	if a.String() == reqs(New("b", in, "1")).String() {
		t.Fatal("different sets must render differently")
	}
}
