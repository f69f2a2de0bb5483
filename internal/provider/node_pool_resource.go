package provider

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
)

var (
	_ resource.ResourceWithConfigure      = (*NodePoolResource)(nil)
	_ resource.ResourceWithValidateConfig = (*NodePoolResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*NodePoolResource)(nil)
	_ resource.ResourceWithImportState    = (*NodePoolResource)(nil)
	_ resource.ResourceWithMoveState      = (*NodePoolResource)(nil)
)

// NodePoolResource is joist_node_pool: a karpenter.sh/v1 NodePool.
type NodePoolResource struct {
	manifestResource
}

// NewNodePoolResource returns the joist_node_pool resource.
func NewNodePoolResource() resource.Resource {
	extras := map[string]attr.Value{
		"force_destroy":      types.BoolValue(false),
		"delete_timeout":     types.StringValue(defaultDeleteTimeout),
		"planned_disruption": types.ObjectNull(plannedDisruptionType.AttrTypes),
		"planned_impact":     types.ObjectNull(plannedImpactType.AttrTypes),
	}
	for k, v := range controlExtras() {
		extras[k] = v
	}
	return &NodePoolResource{manifestResource{kind: nodePoolKind(), typeName: "joist_node_pool", extras: extras,
		annotations:     func(attrs map[string]attr.Value) map[string]string { a, _ := controlAnnotations(attrs); return a },
		readAnnotations: controlsFromAnnotations}}
}

// largeStaticReplicas is the replicas above which a static pool without
// limits.nodes gets a plan warning: a typo there launches that many
// instances, and limits.nodes is the only bound the controller keeps.
const largeStaticReplicas = 100

// unboundedStaticPool warns of a static pool of more than
// largeStaticReplicas nodes with no limits.nodes.
func unboundedStaticPool(obj map[string]any) diag.Diagnostics {
	var diags diag.Diagnostics
	spec, _ := obj["spec"].(map[string]any)
	replicas, ok := spec["replicas"].(int64)
	if !ok || replicas <= largeStaticReplicas {
		return diags
	}
	if limits, _ := spec["limits"].(map[string]any); limits["nodes"] != nil {
		return diags
	}
	diags.AddAttributeWarning(path.Root("replicas"), "Large static node pool without a node limit",
		fmt.Sprintf("replicas = %d launches that many instances and no limit bounds it: set limits = { nodes = \"%d\" } "+
			"(the most this pool may ever have) so a mistyped replicas cannot launch more.", replicas, replicas))
	return diags
}

// defaultDeleteTimeout bounds how long destroying a pool waits for its nodes.
const defaultDeleteTimeout = "15m"

func (r *NodePoolResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_node_pool"
}

func (r *NodePoolResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	attrs := r.baseAttributes("NodePool")
	attrs["planned_disruption"] = plannedDisruptionAttribute()
	attrs["planned_impact"] = plannedImpactAttribute()
	for k, v := range controlAttributes() {
		attrs[k] = v
	}
	attrs["force_destroy"] = schema.BoolAttribute{
		Optional: true, Computed: true, Default: booldefault.StaticBool(false),
		MarkdownDescription: "On destroy, when no controller has held the leader-election Lease for a whole lease " +
			"duration (15s), terminate the pool's EC2 instances directly and remove the finalizers of its NodeClaims. " +
			"Workloads are not drained. Only instances a NodeClaim of the pool names (its provider ID, or the " +
			"instance's `karpenter.sh/nodeclaim` tag) and tagged as the pool's in the cluster " +
			"(`karpenter.sh/nodepool = <name>`, `kubernetes.io/cluster/<cluster_name> = owned`, " +
			"`eks:eks-cluster-name = <cluster_name>`) are terminated; others tagged for the pool are reported in a " +
			"warning. The provider's `cluster_name` must be set (a plan that could force a destroy without it fails) " +
			"and must be the cluster the `kubernetes` block reaches: EKS's `DescribeCluster` must place it at that API " +
			"server, or the controller deployed there must run with that `CLUSTER_NAME`; otherwise the destroy fails " +
			"and terminates nothing. Without `force_destroy`, destroy fails when no controller is running.",
	}
	attrs["delete_timeout"] = schema.StringAttribute{
		Optional: true, Computed: true, Default: stringdefault.StaticString(defaultDeleteTimeout),
		MarkdownDescription: "How long destroy waits for the controller to drain and terminate the pool's nodes, " +
			"as a Go duration (`15m`, `1h`). Defaults to `" + defaultDeleteTimeout + "`.",
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "A Karpenter-compatible `karpenter.sh/v1` NodePool: which nodes the controller may " +
			"launch for unschedulable pods, and how it may disrupt them. Every field of the API is an attribute " +
			"(`template`, `disruption`, `limits`, `weight`); the CRD's validation rules run at plan time. Changes " +
			"apply in place; on update the plan warns how many existing nodes the change drifts and how many " +
			"the disruption budgets replace at once. While the live NodePool's voluntary disruption is halted by a disruption " +
			"circuit breaker (`DisruptionHalted`) or paused (`DisruptionPaused`), every plan warns with the condition's reason " +
			"and message and how to lift it, and the prediction replaces no drifted node.",
		Attributes: attrs,
	}
}

func (r *NodePoolResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	r.manifestResource.ValidateConfig(ctx, req, resp)
	if attrs, diags := attrsOf(ctx, req.Config.Schema.Type(), req.Config.Raw); !diags.HasError() {
		obj, _ := r.manifest(attrs)
		resp.Diagnostics.Append(unboundedStaticPool(obj)...)
		resp.Diagnostics.Append(controlDiagnostics(attrs)...)
	}
	var timeout types.String
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("delete_timeout"), &timeout)...)
	if !timeout.IsNull() && !timeout.IsUnknown() {
		if _, err := time.ParseDuration(timeout.ValueString()); err != nil {
			resp.Diagnostics.AddAttributeError(path.Root("delete_timeout"), "Invalid joist_node_pool",
				fmt.Sprintf("delete_timeout: %q is not a duration; write it as 15m or 1h30m", timeout.ValueString()))
		}
	}
}

func (r *NodePoolResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	r.checkForceDestroy(ctx, req, resp)
	if r.isCreate(req) {
		r.createImpact(ctx, req, resp)
		return
	}
	plan, state, ok := planAndState(ctx, req, &resp.Diagnostics)
	if !ok {
		return
	}
	resp.Diagnostics.Append(r.validationDiagnostics(plan, state)...)
	if !resp.Diagnostics.HasError() {
		r.warnRename(ctx, plan, state, &resp.Diagnostics)
	}
	if resp.Diagnostics.HasError() {
		return
	}
	holds := r.warnHolds(plan, state, &resp.Diagnostics)
	if !r.specChanged(plan, state) {
		return
	}
	preview, err := r.previewDisruption(ctx, plan, state)
	value := types.ObjectNull(plannedDisruptionType.AttrTypes)
	if err != nil {
		resp.Diagnostics.AddWarning("No disruption preview",
			fmt.Sprintf("The cluster could not be asked which nodes this change of node pool %s drifts: %v. The plan is otherwise unaffected.",
				plan["name"].(basetypes.StringValue).ValueString(), err))
	} else if preview != nil {
		preview.Holds = holds
		value = preview.value()
		if preview.Drifted > 0 || preview.Total > 0 {
			resp.Diagnostics.AddWarning("Disruption preview", preview.String())
		}
	}
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("planned_disruption"), value)...)
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("planned_impact"), r.addImpact(ctx, plan, state, &resp.Diagnostics))...)
}

// isCreate is a plan that creates the pool, in a provider configured.
func (r *NodePoolResource) isCreate(req resource.ModifyPlanRequest) bool {
	return r.clients != nil && !req.Plan.Raw.IsNull() && req.State.Raw.IsNull()
}

// createImpact predicts what a new pool does, once its name and spec are
// known (they may wait on other resources until apply).
func (r *NodePoolResource) createImpact(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	plan, diags := attrsOf(ctx, req.Plan.Schema.Type(), req.Plan.Raw)
	if diags.HasError() {
		return
	}
	if _, unknown := r.manifest(plan); len(unknown) > 0 {
		return
	}
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("planned_impact"), r.addImpact(ctx, plan, nil, &resp.Diagnostics))...)
}

// checkForceDestroy fails a plan that could end in a forced destroy (a
// destroy of a pool whose state has force_destroy, or a plan that sets it)
// while the provider does not know the cluster: the instances to terminate
// are found by the cluster's tag, never by the pool's name alone.
func (r *NodePoolResource) checkForceDestroy(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if r.clients == nil || !r.clients.clusterKnown || r.clients.clusterName != "" {
		return
	}
	var src interface {
		GetAttribute(context.Context, path.Path, any) diag.Diagnostics
	} = req.Plan
	if req.Plan.Raw.IsNull() {
		src = req.State
	}
	var force types.Bool
	var name types.String
	resp.Diagnostics.Append(src.GetAttribute(ctx, path.Root("force_destroy"), &force)...)
	resp.Diagnostics.Append(src.GetAttribute(ctx, path.Root("name"), &name)...)
	if force.ValueBool() {
		resp.Diagnostics.AddAttributeError(path.Root("force_destroy"), "force_destroy needs the cluster's name",
			errNoClusterForForce(name.ValueString()).Error())
	}
}

// specChanged reports whether plan writes a different object than state.
func (r *NodePoolResource) specChanged(plan, state map[string]attr.Value) bool {
	a, unknownA := r.manifest(plan)
	b, _ := r.manifest(state)
	return len(unknownA) > 0 || fmt.Sprint(a) != fmt.Sprint(b)
}

func (r *NodePoolResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	state, diags := attrsOf(ctx, req.State.Schema.Type(), req.State.Raw)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	name := state["name"].(basetypes.StringValue).ValueString()
	force := state["force_destroy"].(basetypes.BoolValue).ValueBool()
	timeout, err := time.ParseDuration(state["delete_timeout"].(basetypes.StringValue).ValueString())
	if err != nil {
		timeout, _ = time.ParseDuration(defaultDeleteTimeout)
	}
	if err := r.destroy(ctx, name, force, timeout, &resp.Diagnostics); err != nil {
		resp.Diagnostics.AddError(fmt.Sprintf("Deleting node pool %s", name), err.Error())
	}
}
