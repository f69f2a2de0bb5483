package scheduling_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	. "github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
)

// planSummary is what a plan decides, in a comparable form: each claim's
// pool, price, options and pods, and where every pod went.
func planSummary(p *Plan) string {
	var b strings.Builder
	for i, c := range p.NewClaims {
		var names []string
		for _, pod := range c.Pods {
			names = append(names, pod.Name)
		}
		slices.Sort(names)
		fmt.Fprintf(&b, "claim %d %s $%.6f %v %v %v\n", i, c.NodePool, c.Price(), optionNames(c), names, c.Requirements)
	}
	for _, pl := range p.Placements {
		fmt.Fprintf(&b, "%s -> %s %s %d\n", pl.Pod.Name, pl.Kind, pl.Node, pl.Claim)
	}
	for _, e := range p.Errors {
		fmt.Fprintf(&b, "%s: %v\n", e.Pod.Name, e.Err)
	}
	return b.String()
}

// TestSharedCatalogPlansAsItsOwn solves the same input with the catalog
// Solve builds and with one built beforehand and shared by several
// Solves: the plans are the same, also after a Solve used a reservation up
// (it withdraws the reservation's offerings from its own view only).
func TestSharedCatalogPlansAsItsOwn(t *testing.T) {
	allCTs := expr(labelCapacityType, corev1.NodeSelectorOpIn, CapacityTypeReserved, CapacityTypeSpot, CapacityTypeOnDemand)
	large := withReservation(withSpot(mkType("large.a", "amd64", 8, 16, 0.40), 0.12), "z1", "cr-1", 2)
	small := withSpot(mkType("small.a", "amd64", 2, 4, 0.10), 0.03)
	mem := mkType("mem.a", "amd64", 2, 16, 0.15)
	in := Input{
		NodePools: []*NodePool{
			mkPool("default", []*InstanceType{large, small, mem}, allCTs),
			mkPool("mem", []*InstanceType{mem}),
		},
		Pods: slices.Concat(pods(5, "big", "7", "8Gi"), pods(7, "web", "500m", "1Gi"), pods(3, "cache", "1", "12Gi")),
	}
	own, err := Solve(in)
	if err != nil {
		t.Fatal(err)
	}
	want := planSummary(own)
	if reserved, _ := reservedClaims(own); len(reserved) != 2 {
		t.Fatalf("the input should use the reservation up: %d reserved claims, want 2", len(reserved))
	}
	cat, err := NewCatalog(in.NodePools)
	if err != nil {
		t.Fatal(err)
	}
	in.Catalog = cat
	for i := range 3 {
		shared, err := Solve(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := planSummary(shared); got != want {
			t.Fatalf("Solve %d with the shared catalog planned\n%s\nwithout it\n%s", i+1, got, want)
		}
	}
}

// TestCatalogOfOtherTypesIsNotUsed passes catalogs that do not index
// exactly the pools' types; Solve builds its own and plans as without.
func TestCatalogOfOtherTypesIsNotUsed(t *testing.T) {
	a := withSpot(mkType("a.large", "amd64", 2, 4, 0.10), 0.03)
	b := mkType("b.large", "amd64", 4, 8, 0.15)
	// The spread's domains are the families the pool's types have: a type
	// of another family in the catalog would add a domain.
	spread := withSpread("karpenter.k8s.aws/instance-family", 1, corev1.DoNotSchedule, "app", "s")
	in := Input{NodePools: []*NodePool{mkPool("default", []*InstanceType{a, b})},
		Pods: slices.Concat(pods(6, "p", "1500m", "1Gi"), pods(4, "s", "100m", "100Mi", withLabels("app", "s"), spread))}
	own, err := Solve(in)
	if err != nil {
		t.Fatal(err)
	}
	want := planSummary(own)
	for name, pools := range map[string][]*NodePool{
		"fewer types": {mkPool("default", []*InstanceType{b})},
		"more types":  {mkPool("default", []*InstanceType{a, b, mkType("c.large", "amd64", 2, 4, 0.01)})},
		"equal types": {mkPool("default", []*InstanceType{withSpot(mkType("a.large", "amd64", 2, 4, 0.10), 0.03), b})},
	} {
		cat, err := NewCatalog(pools)
		if err != nil {
			t.Fatal(err)
		}
		in.Catalog = cat
		got, err := Solve(in)
		if err != nil {
			t.Fatal(err)
		}
		if s := planSummary(got); s != want {
			t.Errorf("%s: planned\n%s\nwant\n%s", name, s, want)
		}
	}
}

// TestCatalogCacheKeepsCatalogWhileTypesAreTheSame: the cache hands out the
// catalog it built while the pools list the same type objects in the same
// order, and builds a new one when a type is replaced, added or reordered.
func TestCatalogCacheKeepsCatalogWhileTypesAreTheSame(t *testing.T) {
	a, b := mkType("a.large", "amd64", 2, 4, 0.10), mkType("b.large", "amd64", 4, 8, 0.15)
	var cc CatalogCache
	first := cc.For([]*NodePool{mkPool("default", []*InstanceType{a, b})})
	if first == nil {
		t.Fatal("no catalog")
	}
	// Another pass: new NodePool values over the same types.
	if got := cc.For([]*NodePool{mkPool("default", []*InstanceType{a, b})}); got != first {
		t.Fatal("the same types got a new catalog")
	}
	relisted := *a // the cloud provider lists a new generation of a type
	for name, types := range map[string][]*InstanceType{
		"replaced":  {&relisted, b},
		"added":     {a, b, mkType("c.large", "amd64", 2, 4, 0.01)},
		"reordered": {b, a},
	} {
		prev := cc.For([]*NodePool{mkPool("default", []*InstanceType{a, b})})
		if got := cc.For([]*NodePool{mkPool("default", types)}); got == prev || got == nil {
			t.Errorf("%s: kept the catalog of other types", name)
		}
	}
}
