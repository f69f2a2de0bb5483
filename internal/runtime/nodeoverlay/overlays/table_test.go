package overlays

import (
	"math"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1alpha1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
)

func TestAdjustedPrice(t *testing.T) {
	for _, c := range []struct {
		change string
		want   float64
	}{
		{"", 1.0},
		{"2.5", 2.5},      // absolute price
		{"0", 0},          // free
		{"+0.5", 1.5},     // absolute increase
		{"-0.25", 0.75},   // absolute decrease
		{"-3", 0},         // never below 0
		{"+10%", 1.1},     // percent increase
		{"-15%", 0.85},    // percent decrease
		{"-100%", 0},      // the largest decrease the CRD allows
		{"+.5%", 1.005},   // no leading digit
		{"+200%", 3.0},    // increases are unbounded
		{"-99.5%", 0.005}, // fractional percent
	} {
		if got := AdjustedPrice(1.0, c.change); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("AdjustedPrice(1.0, %q) = %v, want %v", c.change, got, c.want)
		}
	}
}

func catalog() []*scheduling.InstanceType {
	mk := func(name, family string, od, spot float64) *scheduling.InstanceType {
		return &scheduling.InstanceType{
			Name:   name,
			Labels: map[string]string{corev1.LabelInstanceTypeStable: name, v1.LabelInstanceFamily: family},
			Capacity: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("2"), "nvidia.com/gpu": resource.MustParse("1"),
			},
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1930m")},
			Offerings: []scheduling.Offering{
				{Zone: "us-west-2a", CapacityType: v1.CapacityTypeOnDemand, Price: od, Available: true},
				{Zone: "us-west-2b", CapacityType: v1.CapacityTypeOnDemand, Price: od, Available: true},
				{Zone: "us-west-2a", CapacityType: v1.CapacityTypeSpot, Price: spot, Available: true},
			},
		}
	}
	return []*scheduling.InstanceType{mk("m5.large", "m5", 0.096, 0.04), mk("c5.large", "c5", 0.085, 0.035)}
}

type overlayOpt func(*v1alpha1.NodeOverlay)

func overlay(name string, weight int32, reqs []v1alpha1.NodeSelectorRequirement, opts ...overlayOpt) v1alpha1.NodeOverlay {
	o := v1alpha1.NodeOverlay{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1alpha1.NodeOverlaySpec{Requirements: reqs}}
	if weight != 0 {
		o.Spec.Weight = &weight
	}
	for _, f := range opts {
		f(&o)
	}
	return o
}

func price(p string) overlayOpt { return func(o *v1alpha1.NodeOverlay) { o.Spec.Price = &p } }
func adjust(p string) overlayOpt {
	return func(o *v1alpha1.NodeOverlay) { o.Spec.PriceAdjustment = &p }
}
func capacity(kv ...string) overlayOpt {
	return func(o *v1alpha1.NodeOverlay) {
		o.Spec.Capacity = corev1.ResourceList{}
		for i := 0; i+1 < len(kv); i += 2 {
			o.Spec.Capacity[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
		}
	}
}

func req(key string, op corev1.NodeSelectorOperator, values ...string) v1alpha1.NodeSelectorRequirement {
	return v1alpha1.NodeSelectorRequirement{Key: key, Operator: op, Values: values}
}

func byName(its []*scheduling.InstanceType) map[string]*scheduling.InstanceType {
	out := map[string]*scheduling.InstanceType{}
	for _, it := range its {
		out[it.Name] = it
	}
	return out
}

func offering(it *scheduling.InstanceType, zone, ct string) scheduling.Offering {
	for _, o := range it.Offerings {
		if o.Zone == zone && o.CapacityType == ct {
			return o
		}
	}
	panic("no offering " + zone + "/" + ct)
}

// evaluate runs Evaluate on one pool "default" (template label team=a) and
// returns the adjusted types and the conflicting overlays.
func evaluate(t *testing.T, overlays ...v1alpha1.NodeOverlay) (map[string]*scheduling.InstanceType, map[string]bool, []*scheduling.InstanceType) {
	t.Helper()
	base := catalog()
	table, conflicts, err := Evaluate(overlays, []Pool{{Name: "default", Labels: map[string]string{"example.com/team": "a"}, InstanceTypes: base}})
	if err != nil {
		t.Fatal(err)
	}
	its, err := table.Apply("default", base)
	if err != nil {
		t.Fatal(err)
	}
	return byName(its), conflicts, base
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestPriceOnlyOnMatchingOfferings(t *testing.T) {
	its, conflicts, base := evaluate(t,
		overlay("spot-m5", 0, []v1alpha1.NodeSelectorRequirement{
			req(corev1.LabelInstanceTypeStable, corev1.NodeSelectorOpIn, "m5.large"),
			req(v1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, v1.CapacityTypeSpot),
		}, price("0.01")))
	if len(conflicts) != 0 {
		t.Fatalf("conflicts %v", conflicts)
	}
	m5 := its["m5.large"]
	if o := offering(m5, "us-west-2a", v1.CapacityTypeSpot); !near(o.Price, 0.01) || !o.PriceOverlaid {
		t.Errorf("m5.large spot = %+v, want price 0.01 overlaid", o)
	}
	if o := offering(m5, "us-west-2a", v1.CapacityTypeOnDemand); !near(o.Price, 0.096) || o.PriceOverlaid {
		t.Errorf("m5.large on-demand = %+v, want 0.096 untouched", o)
	}
	if its["c5.large"] != base[1] {
		t.Error("c5.large was copied although no overlay selects it")
	}
	if base[0].Offerings[2].Price != 0.04 || base[0].Offerings[2].PriceOverlaid {
		t.Errorf("the input was modified: %+v", base[0].Offerings[2])
	}
}

func TestPercentAndAbsoluteAdjustments(t *testing.T) {
	its, _, _ := evaluate(t,
		overlay("m5-pct", 0, []v1alpha1.NodeSelectorRequirement{req(v1.LabelInstanceFamily, corev1.NodeSelectorOpIn, "m5")}, adjust("-50%")),
		overlay("c5-abs", 0, []v1alpha1.NodeSelectorRequirement{req(v1.LabelInstanceFamily, corev1.NodeSelectorOpIn, "c5")}, adjust("+0.015")))
	if got := offering(its["m5.large"], "us-west-2b", v1.CapacityTypeOnDemand).Price; !near(got, 0.048) {
		t.Errorf("m5.large on-demand after -50%% = %v, want 0.048", got)
	}
	if got := offering(its["m5.large"], "us-west-2a", v1.CapacityTypeSpot).Price; !near(got, 0.02) {
		t.Errorf("m5.large spot after -50%% = %v, want 0.02", got)
	}
	if got := offering(its["c5.large"], "us-west-2a", v1.CapacityTypeOnDemand).Price; !near(got, 0.1) {
		t.Errorf("c5.large on-demand after +0.015 = %v, want 0.1", got)
	}
}

// Karpenter's documented conflict example: overlay-b (weight 10) sets the
// price, overlay-a (weight 5) only adds the resource overlay-b does not set.
func TestWeightOrderHigherWins(t *testing.T) {
	m5 := []v1alpha1.NodeSelectorRequirement{req(corev1.LabelInstanceTypeStable, corev1.NodeSelectorOpIn, "m5.large")}
	its, conflicts, _ := evaluate(t,
		overlay("overlay-a", 5, m5, adjust("-10%"), capacity("hugepages-2Mi", "50Mi", "example.com/device", "1")),
		overlay("overlay-b", 10, m5, adjust("-20%"), capacity("example.com/device", "4")))
	if len(conflicts) != 0 {
		t.Fatalf("overlays of different weights conflict: %v", conflicts)
	}
	it := its["m5.large"]
	if got := offering(it, "us-west-2a", v1.CapacityTypeOnDemand).Price; !near(got, 0.096*0.8) {
		t.Errorf("price %v, want overlay-b's -20%% (%v), not both", got, 0.096*0.8)
	}
	for name, want := range map[corev1.ResourceName]string{"example.com/device": "4", "hugepages-2Mi": "50Mi"} {
		if q := it.Capacity[name]; q.Cmp(resource.MustParse(want)) != 0 {
			t.Errorf("capacity %s = %s, want %s", name, q.String(), want)
		}
		if q := it.Allocatable[name]; q.Cmp(resource.MustParse(want)) != 0 {
			t.Errorf("allocatable %s = %s, want %s", name, q.String(), want)
		}
	}
	if q := it.Capacity[corev1.ResourceCPU]; q.Cmp(resource.MustParse("2")) != 0 {
		t.Errorf("cpu capacity changed to %s", q.String())
	}
	if !it.CapacityOverlaid || its["c5.large"].CapacityOverlaid {
		t.Errorf("CapacityOverlaid m5.large %v c5.large %v, want true and false", it.CapacityOverlaid, its["c5.large"].CapacityOverlaid)
	}
}

func TestCapacityReplacesAnExistingExtendedResource(t *testing.T) {
	its, _, base := evaluate(t, overlay("gpus", 0, nil, capacity("nvidia.com/gpu", "4")))
	for _, it := range its {
		if q := it.Capacity["nvidia.com/gpu"]; q.Cmp(resource.MustParse("4")) != 0 {
			t.Errorf("%s gpu capacity %s, want 4", it.Name, q.String())
		}
	}
	if q := base[0].Capacity["nvidia.com/gpu"]; q.Cmp(resource.MustParse("1")) != 0 {
		t.Errorf("the input was modified: %s", q.String())
	}
}

func TestEqualWeightConflicts(t *testing.T) {
	m5 := []v1alpha1.NodeSelectorRequirement{req(v1.LabelInstanceFamily, corev1.NodeSelectorOpIn, "m5")}
	its, conflicts, _ := evaluate(t,
		overlay("alpha", 3, m5, price("1")),
		overlay("beta", 3, m5, price("2")),
		// Same weight, different resource: no conflict.
		overlay("cap-a", 3, m5, capacity("example.com/a", "1")),
		overlay("cap-b", 3, m5, capacity("example.com/b", "1")),
		// Same weight, same resource: the earlier name conflicts.
		overlay("cap-c", 3, m5, capacity("example.com/b", "7")))
	if !conflicts["alpha"] || conflicts["beta"] {
		t.Errorf("conflicts %v: want alpha (beta comes later in the alphabet and is applied first)", conflicts)
	}
	if !conflicts["cap-b"] || conflicts["cap-a"] || conflicts["cap-c"] {
		t.Errorf("conflicts %v: want cap-b only", conflicts)
	}
	it := its["m5.large"]
	if got := offering(it, "us-west-2a", v1.CapacityTypeOnDemand).Price; !near(got, 2) {
		t.Errorf("price %v, want beta's 2", got)
	}
	if q := it.Capacity["example.com/b"]; q.Cmp(resource.MustParse("7")) != 0 {
		t.Errorf("example.com/b = %s, want cap-c's 7", q.String())
	}
	if q := it.Capacity["example.com/a"]; q.Cmp(resource.MustParse("1")) != 0 {
		t.Errorf("example.com/a = %s, want 1", q.String())
	}
}

// A conflict on one instance type keeps the overlay off every type: no pool
// sees half an overlay.
func TestConflictAppliesNothing(t *testing.T) {
	its, conflicts, _ := evaluate(t,
		overlay("z-m5", 2, []v1alpha1.NodeSelectorRequirement{req(v1.LabelInstanceFamily, corev1.NodeSelectorOpIn, "m5")}, price("1")),
		overlay("a-all", 2, nil, price("3")))
	if !conflicts["a-all"] {
		t.Fatalf("conflicts %v, want a-all", conflicts)
	}
	if got := offering(its["c5.large"], "us-west-2a", v1.CapacityTypeOnDemand).Price; !near(got, 0.085) {
		t.Errorf("c5.large price %v: the conflicting overlay was applied to it", got)
	}
}

func TestPoolLabelsAndNameSelect(t *testing.T) {
	base := catalog()
	pools := []Pool{
		{Name: "team-a", Labels: map[string]string{"example.com/team": "a"}, InstanceTypes: base},
		{Name: "team-b", Labels: map[string]string{"example.com/team": "b"}, InstanceTypes: base},
		{Name: "other", InstanceTypes: base},
	}
	table, _, err := Evaluate([]v1alpha1.NodeOverlay{
		overlay("by-label", 0, []v1alpha1.NodeSelectorRequirement{req("example.com/team", corev1.NodeSelectorOpIn, "a")}, price("9")),
		overlay("by-pool", 0, []v1alpha1.NodeSelectorRequirement{req(v1.NodePoolLabelKey, corev1.NodeSelectorOpIn, "team-b")}, capacity("example.com/x", "2")),
	}, pools)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		pool      string
		price     float64
		extension bool
	}{{"team-a", 9, false}, {"team-b", 0.096, true}, {"other", 0.096, false}} {
		its, err := table.Apply(c.pool, base)
		if err != nil {
			t.Fatal(err)
		}
		it := byName(its)["m5.large"]
		if got := offering(it, "us-west-2a", v1.CapacityTypeOnDemand).Price; !near(got, c.price) {
			t.Errorf("%s: price %v, want %v", c.pool, got, c.price)
		}
		if _, ok := it.Capacity["example.com/x"]; ok != c.extension {
			t.Errorf("%s: example.com/x present %v, want %v", c.pool, ok, c.extension)
		}
	}
	if _, err := table.Apply("new-pool", base); err == nil {
		t.Error("a pool that was not evaluated got instance types")
	}
}

func TestZoneSelectsOfferings(t *testing.T) {
	its, _, _ := evaluate(t, overlay("zone-b", 0, []v1alpha1.NodeSelectorRequirement{req(corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, "us-west-2b")}, adjust("+1")))
	it := its["c5.large"]
	if got := offering(it, "us-west-2b", v1.CapacityTypeOnDemand).Price; !near(got, 1.085) {
		t.Errorf("zone b price %v, want 1.085", got)
	}
	if got := offering(it, "us-west-2a", v1.CapacityTypeOnDemand).Price; !near(got, 0.085) {
		t.Errorf("zone a price %v, want unchanged 0.085", got)
	}
}

func TestUndefinedCustomLabelSelectsNothing(t *testing.T) {
	its, _, base := evaluate(t, overlay("gpu-team", 0, []v1alpha1.NodeSelectorRequirement{req("example.com/gpu-team", corev1.NodeSelectorOpExists)}, price("0")))
	if its["m5.large"] != base[0] || its["c5.large"] != base[1] {
		t.Error("an overlay on a label no pool or type defines changed instance types")
	}
}

func TestValidateRejectsWhatTheCRDCannot(t *testing.T) {
	ok := overlay("ok", 0, []v1alpha1.NodeSelectorRequirement{req(v1.NodePoolLabelKey, corev1.NodeSelectorOpIn, "default")}, capacity("example.com/x", "1"))
	if err := ok.Validate(); err != nil {
		t.Errorf("selecting by karpenter.sh/nodepool: %v", err)
	}
	bad := overlay("bad", 0, []v1alpha1.NodeSelectorRequirement{req("karpenter.sh/custom", corev1.NodeSelectorOpExists)}, capacity("memory", "1Gi"))
	err := bad.Validate()
	if err == nil {
		t.Fatal("restricted key and memory capacity accepted")
	}
	for _, want := range []string{"spec.requirements[0].key", "spec.capacity.memory"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
}

// An overlay may select reserved offerings by the reservation's type: only
// the capacity block's offering is repriced, not the ODCR's beside it nor
// any offering outside a reservation.
func TestReservationTypeSelectsOfferings(t *testing.T) {
	base := catalog()
	m5 := *base[0]
	m5.Offerings = append(append([]scheduling.Offering(nil), m5.Offerings...),
		scheduling.Offering{Zone: "us-west-2a", CapacityType: v1.CapacityTypeReserved, Price: 1e-8, Available: true, ReservationID: "cr-odcr", ReservationCapacity: 1, ReservationType: "default"},
		scheduling.Offering{Zone: "us-west-2a", CapacityType: v1.CapacityTypeReserved, Price: 1e-8, Available: true, ReservationID: "cr-block", ReservationCapacity: 1, ReservationType: "capacity-block"},
	)
	base[0] = &m5
	table, _, err := Evaluate([]v1alpha1.NodeOverlay{overlay("blocks", 0, []v1alpha1.NodeSelectorRequirement{
		req(v1.LabelCapacityReservationType, corev1.NodeSelectorOpIn, "capacity-block"),
	}, price("0.5"))}, []Pool{{Name: "default", InstanceTypes: base}})
	if err != nil {
		t.Fatal(err)
	}
	its, err := table.Apply("default", base)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range byName(its)["m5.large"].Offerings {
		if want := o.ReservationID == "cr-block"; o.PriceOverlaid != want {
			t.Errorf("offering %s/%s %q overlaid %v, want %v", o.Zone, o.CapacityType, o.ReservationID, o.PriceOverlaid, want)
		}
	}
}
