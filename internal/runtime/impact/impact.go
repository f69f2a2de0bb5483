// Package impact predicts what a planned NodePool does to the cluster once
// the controller has settled: the pool's cost per hour, the nodes drift
// replaces and in how many budget-sized waves, the nodes added and removed,
// the pods left with no pool that admits them, and the pending pods the
// change would place. It is pure: plain values in, a plain result out, built
// from the rules the controllers use (simulation's input builder and
// budgets, the solver, the drift rules, the NodeOverlay table), so the plan
// shows what the controller will do rather than a second opinion.
package impact

import (
	"math"
	"sort"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1alpha1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/nodeoverlay/overlays"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/pods"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/simulation"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/state"
)

// Cluster is what the prediction reads of the live cluster, as listed.
type Cluster struct {
	Nodes        []corev1.Node
	NodeClaims   []v1.NodeClaim
	Pods         []corev1.Pod
	DaemonSets   []appsv1.DaemonSet
	NodePools    []v1.NodePool
	Namespaces   []corev1.Namespace
	LimitRanges  []corev1.LimitRange
	NodeOverlays []v1alpha1.NodeOverlay
}

// Input is a snapshot and the change to predict.
type Input struct {
	Cluster Cluster
	// Planned is the NodePool as the plan writes it, defaults applied.
	Planned *v1.NodePool
	// BaseTypes are each NodePool's instance types before any NodeOverlay,
	// as the cloud lists them for its node class.
	BaseTypes InstanceTypes
	// PlannedBaseTypes, when not nil, are Planned's (its node class changes).
	PlannedBaseTypes []*scheduling.InstanceType
	// PlannedOverlays, when not nil, are the NodeOverlays after the change.
	PlannedOverlays []v1alpha1.NodeOverlay
	Now             time.Time
	// Overlays says the controller applies NodeOverlays (its NodeOverlay
	// feature gate); without it they change nothing.
	Overlays bool
	// PreferencePolicy and MinValuesPolicy are the controller's settings
	// ("" for the defaults).
	PreferencePolicy, MinValuesPolicy string
	// NodeClass, when not nil, is a change of Planned's EC2NodeClass
	// (Planned itself unchanged).
	NodeClass *NodeClassChange
}

// InstanceTypes are instance types by NodePool name.
type InstanceTypes map[string][]*scheduling.InstanceType

// PodGroup is pods of one owner left without a pool for one reason.
type PodGroup struct {
	Namespace string
	// Owner is the controller's kind/name, or the pod's name without one.
	Owner  string
	Pods   int
	Reason string
}

// Result is the predicted impact.
type Result struct {
	Pool string
	// CostNow and CostAfter are the pool's nodes' price per hour now and
	// once the change has settled, as the controller prices offerings.
	CostNow, CostAfter   float64
	NodesNow, NodesAfter int
	// Drifted are the pool's nodes the change drifts; Replaced those of
	// them whose pods all have somewhere to go (the others stay: the
	// controller does not disrupt a node whose pods cannot move).
	Drifted, Replaced int
	// Added and Removed are the pool's nodes launched and removed.
	Added, Removed int
	// AllowedAtOnce is how many nodes the pool's budgets let drift replace
	// at a time; Waves how many rounds the replacements take (0 when none
	// are allowed at all while some are needed: see BudgetBlocked).
	AllowedAtOnce, Waves int
	BudgetBlocked        bool
	// Holds keep the pool's drifted nodes in place after the change (a
	// pause, an open breaker, the drift mode observe): none is replaced
	// and there are no waves while one holds.
	Holds []Hold
	// Unplaceable are pods the change leaves with no pool that admits
	// them: pods of replaced nodes, and pending pods placeable before it.
	Unplaceable       int
	UnplaceableGroups []PodGroup
	// PendingAfter are the pods Pending once the change has settled: the
	// pending pods no pool places and the pods of replaced nodes that find
	// no place. Pods of a drifted node the controller keeps keep running,
	// so they count in Unplaceable but not here.
	PendingAfter int
	// PendingNow are provisionable pending pods; PendingPlaced those of
	// them no pool admits now that the change would place.
	PendingNow, PendingPlaced int
	// ElsewhereAdded and ElsewhereCost are nodes other pools launch for
	// pods this change moves or places, and their price per hour.
	ElsewhereAdded int
	ElsewhereCost  float64

	// unchanged is what provisioning does for the pending pods without the
	// change (the pool's nodes added and their cost, other pools' nodes):
	// the change does not do it.
	unchanged struct {
		added, elsewhere int
		cost             float64
	}
}

// Changed reports whether the change does anything the result shows: a
// cost (to the ten-thousandth of a dollar), a node, or a pod. The nodes
// provisioning launches for pending pods either way are not the change's.
func (res *Result) Changed() bool {
	u := res.unchanged
	return math.Round((res.CostNow+u.cost)*1e4) != math.Round(res.CostAfter*1e4) || res.Drifted > 0 || res.Added != u.added ||
		res.Removed > 0 || res.Unplaceable > 0 || res.PendingPlaced > 0 || res.ElsewhereAdded != u.elsewhere
}

// Predict runs the prediction.
func Predict(in Input) *Result {
	name := in.Planned.Name
	res := &Result{Pool: name}
	before := snapshot(in.Cluster, nil)
	after := snapshot(in.Cluster, ready(in.Planned))
	var current *v1.NodePool
	for _, p := range before.NodePools {
		if p.Name == name {
			current = p
		}
	}
	overlaysBefore, plannedOverlays := in.Cluster.NodeOverlays, in.Cluster.NodeOverlays
	if in.PlannedOverlays != nil {
		plannedOverlays = in.PlannedOverlays
	}
	if !in.Overlays {
		overlaysBefore, plannedOverlays = nil, nil
	}
	opts := scheduling.Options{PreferencePolicy: in.PreferencePolicy, MinValuesPolicy: in.MinValuesPolicy}
	typesBefore := overlaid(overlaysBefore, before.NodePools, in.BaseTypes, nil, "")
	typesAfter := overlaid(plannedOverlays, after.NodePools, in.BaseTypes, in.PlannedBaseTypes, name)

	var ours []*state.StateNode
	drifted := map[string]bool{}
	for _, n := range before.Nodes {
		if n.NodePool() != name || n.NodeClaim == nil || n.Deleting() {
			continue
		}
		ours = append(ours, n)
		res.CostNow += nodePrice(n, typesBefore[name])
		if current != nil && PlannedDrift(n.NodeClaim, in.Planned, current) != "" ||
			in.NodeClass.Drift(n.NodeClaim, typeLabels(n.NodeClaim, typesBefore[name])) != "" {
			drifted[n.Name()] = true
		}
	}
	res.NodesNow, res.Drifted = len(ours), len(drifted)

	pending := provisionable(before.Pending)
	res.PendingNow = len(pending)
	stuckBefore := map[types.UID]bool{}
	if len(pending) > 0 {
		plan := solve(before, pending, typesBefore, opts, nil)
		for _, pe := range plan.Errors {
			stuckBefore[pe.Pod.UID] = true
		}
		res.provisionedUnchanged(plan)
	}

	// Solve with every drifted node gone; a node with a pod that finds no
	// place is kept, as the controller keeps it, and the rest solved again.
	// A held pool replaces none.
	replaced := drifted
	classBefore, classAfter := in.NodeClass.specs()
	res.Holds = DriftHolds(in.Planned, current, classBefore, classAfter)
	if len(res.Holds) > 0 {
		replaced = map[string]bool{}
	}
	var plan *scheduling.Plan
	for pass := range 2 {
		plan = solve(after, append(moving(after.Nodes, replaced), pending...), typesAfter, opts, replaced)
		if pass == 0 {
			res.unplaceable(plan, stuckBefore)
		}
		blocked := blockedNodes(after.Nodes, replaced, plan)
		if len(blocked) == 0 {
			break
		}
		kept := map[string]bool{}
		for n := range replaced {
			if !blocked[n] {
				kept[n] = true
			}
		}
		replaced = kept
	}
	res.Replaced = len(replaced)
	res.Removed = len(replaced)
	res.PendingAfter = pendingAfter(plan, replaced)
	res.placed(plan, stuckBefore, pending)

	for _, n := range ours {
		if !replaced[n.Name()] {
			res.CostAfter += nodePrice(n, typesAfter[name])
		}
	}
	for _, nc := range plan.NewClaims {
		if nc.NodePool == name {
			res.Added++
			res.CostAfter += nc.Price()
		} else {
			res.ElsewhereAdded++
			res.ElsewhereCost += nc.Price()
		}
	}
	res.NodesAfter = res.NodesNow - res.Removed + res.Added
	res.waves(after, in.Planned, in.Now)
	return res
}

// provisionedUnchanged records what plan, the pending pods placed without
// the change, launches.
func (res *Result) provisionedUnchanged(plan *scheduling.Plan) {
	for _, nc := range plan.NewClaims {
		if nc.NodePool == res.Pool {
			res.unchanged.added++
			res.unchanged.cost += nc.Price()
		} else {
			res.unchanged.elsewhere++
		}
	}
}

// placed counts the pending pods no pool admits now that plan places.
func (res *Result) placed(plan *scheduling.Plan, stuckBefore map[types.UID]bool, pending []*corev1.Pod) {
	failed := map[types.UID]bool{}
	for _, pe := range plan.Errors {
		failed[pe.Pod.UID] = true
	}
	for _, p := range pending {
		if stuckBefore[p.UID] && !failed[p.UID] {
			res.PendingPlaced++
		}
	}
}

// pendingAfter counts the pods plan leaves without a place that will be
// Pending: pending pods and pods of replaced nodes, not the pods of a node
// the controller keeps.
func pendingAfter(plan *scheduling.Plan, replaced map[string]bool) int {
	n := 0
	for _, pe := range plan.Errors {
		if node := pe.Pod.Spec.NodeName; node == "" || replaced[node] {
			n++
		}
	}
	return n
}

// unplaceable groups the pods plan leaves without a place, except those no
// pool admitted before the change either.
func (res *Result) unplaceable(plan *scheduling.Plan, stuckBefore map[types.UID]bool) {
	groups := map[PodGroup]int{}
	for _, pe := range plan.Errors {
		if stuckBefore[pe.Pod.UID] {
			continue // no pool admitted it before either
		}
		groups[PodGroup{Namespace: pe.Pod.Namespace, Owner: owner(pe.Pod), Reason: simulation.ConciseReason(pe.Err)}]++
		res.Unplaceable++
	}
	for g, n := range groups {
		g.Pods = n
		res.UnplaceableGroups = append(res.UnplaceableGroups, g)
	}
	sort.Slice(res.UnplaceableGroups, func(i, j int) bool {
		a, b := res.UnplaceableGroups[i], res.UnplaceableGroups[j]
		if a.Pods != b.Pods {
			return a.Pods > b.Pods
		}
		return a.Namespace+"/"+a.Owner < b.Namespace+"/"+b.Owner
	})
}

// waves is how many budget-sized rounds the replacements take, with the
// pool's drift budget counted as the disruption controller counts it.
func (res *Result) waves(snap *state.Snapshot, planned *v1.NodePool, now time.Time) {
	budgets, _ := simulation.DisruptionBudgets(snap.Nodes, []*v1.NodePool{planned}, v1.DisruptionReasonDrifted, now)
	res.AllowedAtOnce = min(budgets[planned.Name], res.NodesNow)
	switch {
	case res.Replaced == 0:
	case res.AllowedAtOnce == 0:
		res.BudgetBlocked = true
	default:
		res.Waves = int(math.Ceil(float64(res.Replaced) / float64(res.AllowedAtOnce)))
	}
}

// snapshot joins the listed objects as the controller's state does; with
// planned, it stands in for the pool of its name (or joins the pools).
func snapshot(c Cluster, planned *v1.NodePool) *state.Snapshot {
	claims := make([]*v1.NodeClaim, len(c.NodeClaims))
	for i := range c.NodeClaims {
		claims[i] = &c.NodeClaims[i]
	}
	snap := &state.Snapshot{
		Nodes:           state.Join(c.Nodes, claims),
		LimitRanges:     state.LimitRangesByNamespace(c.LimitRanges),
		NamespaceLabels: map[string]map[string]string{},
	}
	snap.Pending = state.BindPods(snap.Nodes, c.Pods)
	for i := range c.DaemonSets {
		snap.DaemonSets = append(snap.DaemonSets, &c.DaemonSets[i])
	}
	for i := range c.Namespaces {
		snap.NamespaceLabels[c.Namespaces[i].Name] = c.Namespaces[i].Labels
	}
	for i := range c.NodePools {
		if planned == nil || c.NodePools[i].Name != planned.Name {
			snap.NodePools = append(snap.NodePools, &c.NodePools[i])
		}
	}
	if planned != nil {
		snap.NodePools = append(snap.NodePools, planned)
	}
	return snap
}

// ready is the planned pool as the controller will see it once its node
// class resolves: Ready, so the solver may open claims in it.
func ready(planned *v1.NodePool) *v1.NodePool {
	p := planned.DeepCopy()
	meta.SetStatusCondition(&p.Status.Conditions, metav1.Condition{Type: v1.ConditionTypeReady, Status: metav1.ConditionTrue, Reason: "Planned"})
	return p
}

// overlaid are each pool's instance types with the NodeOverlays applied,
// evaluated over all pools at once as the nodeoverlay controller does.
// plannedBase, when not nil, are pool planned's base types.
func overlaid(list []v1alpha1.NodeOverlay, pools []*v1.NodePool, base map[string][]*scheduling.InstanceType,
	plannedBase []*scheduling.InstanceType, planned string) map[string][]*scheduling.InstanceType {
	var in []overlays.Pool
	for _, p := range pools {
		its := base[p.Name]
		if p.Name == planned && plannedBase != nil {
			its = plannedBase
		}
		in = append(in, overlays.Pool{Name: p.Name, Labels: p.Spec.Template.Labels, InstanceTypes: its})
	}
	valid, _ := overlays.Valid(list)
	table, _, err := overlays.Evaluate(valid, in)
	out := map[string][]*scheduling.InstanceType{}
	for _, p := range in {
		out[p.Name] = p.InstanceTypes
		if err != nil {
			continue // an overlay whose requirements do not parse changes nothing
		}
		if its, err := table.Apply(p.Name, p.InstanceTypes); err == nil {
			out[p.Name] = its
		}
	}
	return out
}

// solve places toPlace on the snapshot without the nodes in without, as a
// provisioning pass would.
func solve(snap *state.Snapshot, toPlace []*corev1.Pod, its map[string][]*scheduling.InstanceType, opts scheduling.Options, without map[string]bool) *scheduling.Plan {
	toPlace = append(toPlace, simulation.Displaced(snap.Nodes, without)...)
	in := simulation.Build(snap, nil, toPlace, nil, its, opts, without)
	plan, err := scheduling.Solve(*in)
	if err != nil {
		plan = &scheduling.Plan{}
		for _, p := range toPlace {
			plan.Errors = append(plan.Errors, scheduling.PodError{Pod: p, Err: err})
		}
	}
	return plan
}

// provisionable are the pending pods a provisioning pass would place.
func provisionable(pending []*corev1.Pod) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range pending {
		if pods.IsProvisionable(p) && !pods.ExcludesManagedNodes(p) {
			out = append(out, p)
		}
	}
	return out
}

// moving are the pods of the named nodes that need a new home.
func moving(nodes []*state.StateNode, names map[string]bool) []*corev1.Pod {
	var out []*corev1.Pod
	for _, n := range nodes {
		if !names[n.Name()] {
			continue
		}
		for _, p := range n.Pods {
			if pods.IsReschedulable(p) {
				out = append(out, p)
			}
		}
	}
	return out
}

// blockedNodes are the named nodes with a pod the plan could not place.
func blockedNodes(nodes []*state.StateNode, names map[string]bool, plan *scheduling.Plan) map[string]bool {
	failed := map[types.UID]bool{}
	for _, pe := range plan.Errors {
		failed[pe.Pod.UID] = true
	}
	out := map[string]bool{}
	for _, n := range nodes {
		if !names[n.Name()] {
			continue
		}
		for _, p := range n.Pods {
			if failed[p.UID] {
				out[n.Name()] = true
				break
			}
		}
	}
	return out
}

func owner(p *corev1.Pod) string {
	if ref := metav1.GetControllerOf(p); ref != nil {
		return ref.Kind + "/" + ref.Name
	}
	return "Pod/" + p.Name
}
