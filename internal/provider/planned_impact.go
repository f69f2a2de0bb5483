package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/impact"
)

var podGroupType = types.ObjectType{AttrTypes: map[string]attr.Type{
	"namespace": types.StringType,
	"owner":     types.StringType,
	"pods":      types.Int64Type,
	"reason":    types.StringType,
}}

var plannedImpactType = types.ObjectType{AttrTypes: map[string]attr.Type{
	"cost_per_hour_now":             types.Float64Type,
	"cost_per_hour_after":           types.Float64Type,
	"nodes_now":                     types.Int64Type,
	"nodes_after":                   types.Int64Type,
	"drifted_nodes":                 types.Int64Type,
	"replaced_nodes":                types.Int64Type,
	"nodes_added":                   types.Int64Type,
	"nodes_removed":                 types.Int64Type,
	"allowed_at_once":               types.Int64Type,
	"disruption_waves":              types.Int64Type,
	"drift_held_by":                 types.StringType,
	"pods_without_pool":             types.Int64Type,
	"pods_without_pool_groups":      types.ListType{ElemType: podGroupType},
	"pods_pending_after":            types.Int64Type,
	"pending_pods":                  types.Int64Type,
	"pending_pods_placed":           types.Int64Type,
	"nodes_added_elsewhere":         types.Int64Type,
	"cost_per_hour_added_elsewhere": types.Float64Type,
}}

func plannedImpactAttribute() schema.SingleNestedAttribute {
	i := func(d string) schema.Int64Attribute {
		return schema.Int64Attribute{Computed: true, MarkdownDescription: d}
	}
	f := func(d string) schema.Float64Attribute {
		return schema.Float64Attribute{Computed: true, MarkdownDescription: d}
	}
	return schema.SingleNestedAttribute{
		Computed: true,
		MarkdownDescription: "What the planned change does once the controller has settled, predicted at plan time by the " +
			"controller's own solver from a snapshot of the cluster (nodes, NodeClaims, pods, DaemonSets, the other " +
			"NodePools, EC2NodeClasses and NodeOverlays) and the planned pool. Unknown when the cluster or AWS cannot " +
			"be reached (a first apply, CI without credentials); null after apply.",
		Attributes: map[string]schema.Attribute{
			"cost_per_hour_now": f("The pool's nodes' price per hour now, each at its offering's price " +
				"(spot or on-demand, NodeOverlays applied) as the controller prices it."),
			"cost_per_hour_after": f("The pool's price per hour once the change has settled: the nodes it keeps " +
				"plus the nodes the solver launches for the pods that would run there."),
			"nodes_now":      i("The pool's nodes now."),
			"nodes_after":    i("The pool's nodes once the change has settled."),
			"drifted_nodes":  i("The pool's nodes the change drifts."),
			"replaced_nodes": i("Drifted nodes the controller replaces: those whose pods all have somewhere to go."),
			"nodes_added":    i("Nodes the pool launches."),
			"nodes_removed":  i("Nodes the pool removes."),
			"allowed_at_once": i("How many nodes the pool's disruption budgets let drift replace at a time, " +
				"counted as the disruption controller counts them."),
			"disruption_waves": i("How many budget-sized rounds the replacements take (0 when the budgets allow " +
				"none now, or while `drift_held_by` holds them)."),
			"drift_held_by": schema.StringAttribute{Computed: true, MarkdownDescription: "What keeps the drifted nodes in " +
				"place after the change, as the reasons of the pool's conditions: `NodePoolBreakerOpen` or `ClusterBreakerOpen` " +
				"(`DisruptionHalted`: a disruption circuit breaker is open and the change does not close it), `NodePoolPaused`, " +
				"`ClusterPaused` or `InvalidDisruptionControls` (`DisruptionPaused`), `DriftModeObserve` (`rollout.mode = \"observe\"`), " +
				"comma-separated. Nothing is replaced while one holds (`replaced_nodes` and `disruption_waves` are 0). Null when none does."},
			"pods_without_pool": i("Pods the change leaves with no node pool that admits them: pods of the nodes it " +
				"replaces, and pending pods a pool admits now."),
			"pods_without_pool_groups": schema.ListNestedAttribute{
				Computed:            true,
				MarkdownDescription: "Those pods by namespace, owner and reason, largest group first.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"namespace": schema.StringAttribute{Computed: true, MarkdownDescription: "The pods' namespace."},
					"owner":     schema.StringAttribute{Computed: true, MarkdownDescription: "Their controller, as kind/name (or Pod/name)."},
					"pods":      schema.Int64Attribute{Computed: true, MarkdownDescription: "How many."},
					"reason":    schema.StringAttribute{Computed: true, MarkdownDescription: "Why no pool admits them, as the controller reports it."},
				}},
			},
			"pods_pending_after": i("Pods Pending once the change has settled: pending pods no pool places and pods of " +
				"replaced nodes that find no place. Pods of a drifted node the controller keeps keep running: they count " +
				"in pods_without_pool, not here."),
			"pending_pods":                  i("Pods pending now that a provisioning pass would try to place."),
			"pending_pods_placed":           i("Of those, the pods no pool admits now that the change would place."),
			"nodes_added_elsewhere":         i("Nodes other pools launch for pods this change moves or places."),
			"cost_per_hour_added_elsewhere": f("Their price per hour."),
		},
	}
}

func impactValue(res *impact.Result) types.Object {
	groups := make([]attr.Value, 0, len(res.UnplaceableGroups))
	for _, g := range res.UnplaceableGroups {
		groups = append(groups, types.ObjectValueMust(podGroupType.AttrTypes, map[string]attr.Value{
			"namespace": types.StringValue(g.Namespace), "owner": types.StringValue(g.Owner),
			"pods": types.Int64Value(int64(g.Pods)), "reason": types.StringValue(g.Reason),
		}))
	}
	n := func(v int) attr.Value { return types.Int64Value(int64(v)) }
	heldBy := types.StringNull()
	if len(res.Holds) > 0 {
		reasons := make([]string, len(res.Holds))
		for i, h := range res.Holds {
			reasons[i] = h.Reason
		}
		heldBy = types.StringValue(strings.Join(reasons, ","))
	}
	return types.ObjectValueMust(plannedImpactType.AttrTypes, map[string]attr.Value{
		"cost_per_hour_now":             types.Float64Value(round(res.CostNow)),
		"cost_per_hour_after":           types.Float64Value(round(res.CostAfter)),
		"nodes_now":                     n(res.NodesNow),
		"nodes_after":                   n(res.NodesAfter),
		"drifted_nodes":                 n(res.Drifted),
		"replaced_nodes":                n(res.Replaced),
		"nodes_added":                   n(res.Added),
		"nodes_removed":                 n(res.Removed),
		"allowed_at_once":               n(res.AllowedAtOnce),
		"disruption_waves":              n(res.Waves),
		"drift_held_by":                 heldBy,
		"pods_without_pool":             n(res.Unplaceable),
		"pods_without_pool_groups":      types.ListValueMust(podGroupType, groups),
		"pods_pending_after":            n(res.PendingAfter),
		"pending_pods":                  n(res.PendingNow),
		"pending_pods_placed":           n(res.PendingPlaced),
		"nodes_added_elsewhere":         n(res.ElsewhereAdded),
		"cost_per_hour_added_elsewhere": types.Float64Value(round(res.ElsewhereCost)),
	})
}

// round keeps prices to a ten-thousandth of a dollar: the plan shows the
// prediction, not float noise.
func round(f float64) float64 { return float64(int64(f*10000+0.5)) / 10000 }

// impactSentence is the prediction as a reviewer reads it.
func impactSentence(res *impact.Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: $%.2f/h → $%.2f/h, %d of %d nodes replaced", res.Pool, res.CostNow, res.CostAfter, res.Replaced, res.NodesNow)
	switch {
	case len(res.Holds) > 0 && res.Drifted > 0:
		fmt.Fprintf(&b, " (%d drifted %s kept while %s)", res.Drifted, plural(res.Drifted, "node", "nodes"), impact.HoldsText(res.Holds))
	case res.BudgetBlocked:
		b.WriteString(" once the disruption budgets allow (they allow none now)")
	case res.Waves > 0:
		fmt.Fprintf(&b, " in %d %s of ≤ %d", res.Waves, plural(res.Waves, "wave", "waves"), res.AllowedAtOnce)
	}
	if held := res.Drifted - res.Replaced; held > 0 && len(res.Holds) == 0 {
		fmt.Fprintf(&b, " (%d drifted %s kept: %s pods would have nowhere to go)", held, plural(held, "node", "nodes"), plural(held, "its", "their"))
	}
	if res.Added > 0 || res.Removed > 0 {
		fmt.Fprintf(&b, ", %d added and %d removed", res.Added, res.Removed)
	}
	fmt.Fprintf(&b, ", %d %s left without a pool", res.Unplaceable, plural(res.Unplaceable, "pod", "pods"))
	if res.PendingPlaced > 0 {
		fmt.Fprintf(&b, ", %d pending %s placed", res.PendingPlaced, plural(res.PendingPlaced, "pod", "pods"))
	}
	if res.ElsewhereAdded > 0 {
		fmt.Fprintf(&b, "; other pools add %d %s ($%.2f/h)", res.ElsewhereAdded, plural(res.ElsewhereAdded, "node", "nodes"), res.ElsewhereCost)
	}
	b.WriteString(".")
	for _, g := range res.UnplaceableGroups {
		fmt.Fprintf(&b, "\n  %s/%s: %d %s: %s", g.Namespace, g.Owner, g.Pods, plural(g.Pods, "pod", "pods"), g.Reason)
	}
	return b.String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// predictImpact snapshots the cluster and predicts what the planned pool
// (current is the pool as the state has it; nil on create) does.
func (r *NodePoolResource) predictImpact(ctx context.Context, planned, current *v1.NodePool) (*impact.Result, error) {
	host, _, err := r.clients.kubeServer(ctx)
	if err != nil {
		return nil, err
	}
	return cachedPrediction([]any{"joist_node_pool", r.clients.clusterName, host, planned, current}, func() (*impact.Result, error) {
		env, err := snapshotForImpact(ctx, r.clients, planned, current)
		if err != nil {
			return nil, err
		}
		in := env.input(planned)
		in.PlannedBaseTypes = env.base[planned.Name]
		return impact.Predict(in), nil
	})
}

// addImpact sets planned_impact and adds the warning (or, with
// fail_on_unplaceable_pods, the error) a reviewer reads.
func (r *NodePoolResource) addImpact(ctx context.Context, plan, state map[string]attr.Value, diags *diag.Diagnostics) types.Object {
	name := plan["name"].(basetypes.StringValue).ValueString()
	planned, err := r.typedNodePool(plan)
	var current *v1.NodePool
	if err == nil && state != nil {
		current, err = r.typedNodePool(state)
	}
	var res *impact.Result
	if err == nil {
		res, err = r.predictImpact(ctx, planned, current)
	}
	if err != nil {
		diags.AddWarning("Planned impact unknown",
			fmt.Sprintf("The impact of this change of node pool %s could not be predicted: %v. planned_impact is unknown; the plan is otherwise unaffected.", name, err))
		return types.ObjectUnknown(plannedImpactType.AttrTypes)
	}
	if res.Unplaceable > 0 && r.clients.failOnUnplaceablePods {
		diags.AddError("Pods left without a node pool", impactSentence(res)+
			"\nThe provider's fail_on_unplaceable_pods is set: change the pool (or another pool) so these pods have one.")
	} else {
		diags.AddWarning("Planned impact", impactSentence(res))
	}
	return impactValue(res)
}
