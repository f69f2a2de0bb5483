package requirements

import (
	"math/rand"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func randomRequirement(r *rand.Rand) *Requirement {
	vals := func() []string {
		n := 1 + r.Intn(3)
		out := make([]string, n)
		for i := range out {
			out[i] = strconv.Itoa(r.Intn(10))
		}
		return out
	}
	switch r.Intn(8) {
	case 0:
		return New("k", in, vals()...)
	case 1:
		return New("k", notIn, vals()...)
	case 2:
		return New("k", exist)
	case 3:
		return New("k", dne)
	case 4:
		return New("k", gt, strconv.Itoa(r.Intn(10)))
	case 5:
		return New("k", lt, strconv.Itoa(r.Intn(10)))
	case 6:
		return New("k", OpGte, strconv.Itoa(r.Intn(10)))
	default:
		return New("k", OpLte, strconv.Itoa(r.Intn(10)))
	}
}

// Intersection must allow exactly the values both sides allow, for every
// operator combination, and Len/Operator must agree with Has.
func TestIntersectionProperty(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	probe := []string{"-1", "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "x"}
	for i := 0; i < 5000; i++ {
		a, b := randomRequirement(r), randomRequirement(r)
		c := a.Intersection(b)
		any := false
		for _, v := range probe {
			if got, want := c.Has(v), a.Has(v) && b.Has(v); got != want {
				t.Fatalf("(%s) ∩ (%s) = %s: Has(%q) = %v, want %v", a, b, c, v, got, want)
			}
			any = any || c.Has(v)
		}
		if any && c.Len() == 0 {
			t.Fatalf("%s allows values but has Len 0", c)
		}
		if c.Operator() == corev1.NodeSelectorOpDoesNotExist && any {
			t.Fatalf("%s is DoesNotExist but allows values", c)
		}
		if v := c.Any(); v != "" && !c.Has(v) {
			t.Fatalf("%s.Any() = %q is not allowed", c, v)
		}
	}
}

func FuzzIntersection(f *testing.F) {
	f.Add(int64(1), "3")
	f.Add(int64(99), "x")
	f.Fuzz(func(t *testing.T, seed int64, v string) {
		r := rand.New(rand.NewSource(seed))
		a, b := randomRequirement(r), randomRequirement(r)
		if got, want := a.Intersection(b).Has(v), a.Has(v) && b.Has(v); got != want {
			t.Fatalf("(%s) ∩ (%s): Has(%q) = %v, want %v", a, b, v, got, want)
		}
	})
}
