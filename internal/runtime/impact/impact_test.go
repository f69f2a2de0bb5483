package impact

import (
	"fmt"
	"math"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1alpha1"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-6 }

// tenSpotNodes is pool "general" with ten spot f1.4x nodes, each running
// three 1-vCPU pods of one ReplicaSet.
func tenSpotNodes(opts ...poolOpt) (*world, *v1.NodePool) {
	w := &world{}
	pool := mkPool("general", opts...)
	w.pool(pool)
	for i := range 10 {
		name := fmt.Sprintf("n%d", i)
		w.node(name, pool, 1, 4, v1.CapacityTypeSpot)
		for range 3 {
			w.pod("web", name, "1")
		}
	}
	return w, pool
}

func TestNarrowedRequirementReplacesNodesAtTheNewPrice(t *testing.T) {
	w, _ := tenSpotNodes()
	res := w.predict(mkPool("general", capacityTypes(v1.CapacityTypeOnDemand)))
	if res.Drifted != 10 || res.Replaced != 10 || res.Removed != 10 {
		t.Fatalf("drifted %d, replaced %d, removed %d of 10 spot nodes; want all", res.Drifted, res.Replaced, res.Removed)
	}
	if want := 10 * 0.3 * odPrice(1, 4); !near(res.CostNow, want) {
		t.Errorf("cost now $%.4f/h, want $%.4f/h", res.CostNow, want)
	}
	// 30 vCPU of pods on on-demand f1 capacity costs at least 30 × $0.04.
	if res.CostAfter < 30*0.04 || res.Added == 0 {
		t.Errorf("cost after $%.4f/h with %d nodes added; want on-demand prices (≥ $1.20/h)", res.CostAfter, res.Added)
	}
	// 20 % of 10 nodes at a time: 2 per wave, 5 waves.
	if res.AllowedAtOnce != 2 || res.Waves != 5 {
		t.Errorf("%d at once in %d waves, want 2 in 5", res.AllowedAtOnce, res.Waves)
	}
	if res.Unplaceable != 0 {
		t.Errorf("%d pods left without a pool: %+v", res.Unplaceable, res.UnplaceableGroups)
	}
}

func TestRemovedFamilyReplacesOnlyItsNodes(t *testing.T) {
	w := &world{}
	pool := mkPool("general", capacityTypes(v1.CapacityTypeOnDemand), budget("2"))
	w.pool(pool)
	for i := range 5 {
		name := fmt.Sprintf("n%d", i)
		family := 0
		if i < 3 {
			family = 1
		}
		w.node(name, pool, family, 4, v1.CapacityTypeOnDemand)
		w.pod("web", name, "3")
	}
	res := w.predict(mkPool("general", capacityTypes(v1.CapacityTypeOnDemand), budget("2"), families("f0")))
	if res.Drifted != 3 || res.Replaced != 3 {
		t.Fatalf("drifted %d, replaced %d; want the 3 f1 nodes", res.Drifted, res.Replaced)
	}
	// Two at a time: a wave of 2, then one of 1.
	if res.AllowedAtOnce != 2 || res.Waves != 2 {
		t.Errorf("%d at once in %d waves, want 2 in 2", res.AllowedAtOnce, res.Waves)
	}
	if want := 3*odPrice(1, 4) + 2*odPrice(0, 4); !near(res.CostNow, want) {
		t.Errorf("cost now $%.4f/h, want $%.4f/h", res.CostNow, want)
	}
	// The f1 pods move to f0, dearer per vCPU.
	if res.CostAfter <= res.CostNow {
		t.Errorf("cost after $%.4f/h not above $%.4f/h: f0 costs more than f1", res.CostAfter, res.CostNow)
	}
	if res.NodesAfter != res.NodesNow-3+res.Added {
		t.Errorf("nodes after %d, now %d, added %d", res.NodesAfter, res.NodesNow, res.Added)
	}
}

func TestLimitBelowUsageLeavesPendingPodsWithoutAPool(t *testing.T) {
	w, _ := tenSpotNodes(cpuLimit("1000"))
	for range 4 {
		w.pod("batch", "", "2")
	}
	res := w.predict(mkPool("general", cpuLimit("40")))
	if res.PendingNow != 4 {
		t.Fatalf("%d pods pending now, want 4", res.PendingNow)
	}
	if res.Unplaceable != 4 || len(res.UnplaceableGroups) != 1 || res.PendingAfter != 4 {
		t.Fatalf("%d pods left without a pool in %+v, %d Pending after; want the 4 pending batch pods both",
			res.Unplaceable, res.UnplaceableGroups, res.PendingAfter)
	}
	g := res.UnplaceableGroups[0]
	if g.Owner != "ReplicaSet/batch" || g.Pods != 4 || !strings.Contains(g.Reason, "limit") {
		t.Errorf("group %+v, want ReplicaSet/batch, 4 pods, a reason naming the limit", g)
	}
	if res.Drifted != 0 || !near(res.CostAfter, res.CostNow) {
		t.Errorf("a lower limit drifted %d nodes, cost $%.4f → $%.4f", res.Drifted, res.CostNow, res.CostAfter)
	}
}

func TestRaisedLimitPlacesPendingPods(t *testing.T) {
	w, _ := tenSpotNodes(cpuLimit("40"))
	for range 4 {
		w.pod("batch", "", "2")
	}
	res := w.predict(mkPool("general", cpuLimit("1000")))
	if res.PendingNow != 4 || res.PendingPlaced != 4 || res.Unplaceable != 0 {
		t.Errorf("pending %d, placed %d, unplaceable %d; want 4, 4, 0", res.PendingNow, res.PendingPlaced, res.Unplaceable)
	}
}

func TestAddedTaintLeavesPodsWithoutAPool(t *testing.T) {
	w, _ := tenSpotNodes()
	res := w.predict(mkPool("general", taint("dedicated", "gpu")))
	if res.Drifted != 10 {
		t.Fatalf("drifted %d of 10, want all: the taint is in the static hash", res.Drifted)
	}
	if res.Unplaceable != 30 || len(res.UnplaceableGroups) != 1 {
		t.Fatalf("%d pods left without a pool in %+v, want the 30 web pods", res.Unplaceable, res.UnplaceableGroups)
	}
	if g := res.UnplaceableGroups[0]; g.Owner != "ReplicaSet/web" || !strings.Contains(g.Reason, "dedicated") {
		t.Errorf("group %+v, want ReplicaSet/web with a reason naming the taint", g)
	}
	// The controller keeps a node whose pods have nowhere to go, so they
	// keep running: none is left Pending.
	if res.Replaced != 0 || !near(res.CostAfter, res.CostNow) || res.PendingAfter != 0 {
		t.Errorf("replaced %d, cost $%.4f → $%.4f, %d pods Pending after; want nodes kept and none Pending",
			res.Replaced, res.CostNow, res.CostAfter, res.PendingAfter)
	}
}

func spotF1Overlay(change string) v1alpha1.NodeOverlay {
	return v1alpha1.NodeOverlay{
		ObjectMeta: metav1.ObjectMeta{Name: "spot-f1"},
		Spec: v1alpha1.NodeOverlaySpec{
			Requirements: []v1alpha1.NodeSelectorRequirement{
				{Key: v1.LabelInstanceFamily, Operator: corev1.NodeSelectorOpIn, Values: []string{"f1"}},
				{Key: v1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{v1.CapacityTypeSpot}},
			},
			PriceAdjustment: &change,
		},
	}
}

// A joist_node_overlay change: the pool stays, the overlays change.
func TestRaisedOverlayPriceRaisesCost(t *testing.T) {
	w, pool := tenSpotNodes()
	w.c.NodeOverlays = []v1alpha1.NodeOverlay{spotF1Overlay("+10%")}
	in := Input{Cluster: w.c, Planned: pool, Now: now, BaseTypes: InstanceTypes{"general": catalog()},
		PlannedOverlays: []v1alpha1.NodeOverlay{spotF1Overlay("+50%")}, Overlays: true}
	res := Predict(in)
	base := 10 * 0.3 * odPrice(1, 4)
	if !near(res.CostNow, 1.1*base) || !near(res.CostAfter, 1.5*base) {
		t.Errorf("cost $%.4f/h → $%.4f/h, want $%.4f/h → $%.4f/h", res.CostNow, res.CostAfter, 1.1*base, 1.5*base)
	}
	if res.Drifted != 0 || res.Added != 0 {
		t.Errorf("an overlay drifted %d nodes and added %d", res.Drifted, res.Added)
	}
	// With the NodeOverlay gate off the controller applies none.
	in.Overlays = false
	if res := Predict(in); !near(res.CostNow, base) || !near(res.CostAfter, base) {
		t.Errorf("gate off: cost $%.4f/h → $%.4f/h, want $%.4f/h both", res.CostNow, res.CostAfter, base)
	}
}

// Pending pods a pool launches nodes for with or without a change are not
// the change's doing: the same pool planned again changes nothing.
func TestPendingPodsAloneAreNoChange(t *testing.T) {
	w, pool := tenSpotNodes()
	for range 4 {
		w.pod("batch", "", "2")
	}
	res := w.predict(pool)
	if res.Added == 0 {
		t.Fatalf("no node added for 4 pending pods: %+v", res)
	}
	if res.Changed() {
		t.Errorf("the pool unchanged reads as a change: $%.4f/h → $%.4f/h, %d added", res.CostNow, res.CostAfter, res.Added)
	}
}
