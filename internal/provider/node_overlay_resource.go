package provider

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1alpha1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/impact"
)

var (
	_ resource.ResourceWithConfigure      = (*NodeOverlayResource)(nil)
	_ resource.ResourceWithValidateConfig = (*NodeOverlayResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*NodeOverlayResource)(nil)
	_ resource.ResourceWithImportState    = (*NodeOverlayResource)(nil)
	_ resource.ResourceWithMoveState      = (*NodeOverlayResource)(nil)
)

// NodeOverlayResource is joist_node_overlay: a karpenter.sh/v1alpha1
// NodeOverlay.
type NodeOverlayResource struct {
	manifestResource
}

// NewNodeOverlayResource returns the joist_node_overlay resource.
func NewNodeOverlayResource() resource.Resource {
	return &NodeOverlayResource{manifestResource{kind: nodeOverlayKind(), typeName: "joist_node_overlay", extras: map[string]attr.Value{
		"planned_impact": types.MapNull(plannedImpactType),
	}}}
}

// nodeOverlayDeleteTimeout bounds the wait for the NodeOverlay to go (it
// has no finalizer).
const nodeOverlayDeleteTimeout = time.Minute

func (r *NodeOverlayResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_node_overlay"
}

func (r *NodeOverlayResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	attrs := r.baseAttributes("NodeOverlay")
	attrs["planned_impact"] = schema.MapNestedAttribute{
		Computed: true,
		MarkdownDescription: "What the planned overlay does to each node pool whose cost or pods it changes, by pool name, " +
			"predicted at plan time as `joist_node_pool`'s `planned_impact` is (the same attributes): the pools' nodes " +
			"repriced, and pending pods an added extended resource lets the solver place. Empty when the controller's " +
			"`NodeOverlay` feature gate is off (no overlay applies) or no pool changes; unknown when the cluster or AWS " +
			"cannot be reached; null after apply.",
		NestedObject: schema.NestedAttributeObject{Attributes: plannedImpactAttribute().Attributes},
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "A Karpenter-compatible `karpenter.sh/v1alpha1` NodeOverlay: a price, a price adjustment or extended " +
			"resources the controller applies to the instance types (and offerings) its `requirements` select, in every NodePool, " +
			"when it provisions, consolidates and checks drift. Every field of the API is an attribute; the CRD's validation rules " +
			"run at plan time. The controller acts on overlays only with the `NodeOverlay` feature gate on (`feature_gates` of " +
			"`joist_controller`, off by default as in Karpenter); it then reports each overlay's `ValidationSucceeded` and `Ready` " +
			"conditions in `status`, `False` with reason `Conflict` for the one of two overlays of equal weight that change the same " +
			"price or resource and is not applied. Without the gate no overlay is ever Ready: `ready` stays false.",
		Attributes: attrs,
	}
}

// ModifyPlan runs the CRD's validation against the planned object and
// predicts what the overlay does to the pools.
func (r *NodeOverlayResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	var plan, state map[string]attr.Value
	switch {
	case r.clients == nil || req.Plan.Raw.IsNull():
		return
	case req.State.Raw.IsNull():
		var diags diag.Diagnostics
		if plan, diags = attrsOf(ctx, req.Plan.Schema.Type(), req.Plan.Raw); diags.HasError() {
			return
		}
	default:
		var ok bool
		if plan, state, ok = planAndState(ctx, req, &resp.Diagnostics); !ok {
			return
		}
		resp.Diagnostics.Append(r.validationDiagnostics(plan, state)...)
		a, unknownA := r.manifest(plan)
		b, _ := r.manifest(state)
		if resp.Diagnostics.HasError() || (len(unknownA) == 0 && fmt.Sprint(a) == fmt.Sprint(b)) {
			return
		}
	}
	if _, unknown := r.manifest(plan); len(unknown) > 0 {
		return
	}
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("planned_impact"), r.impact(ctx, plan, &resp.Diagnostics))...)
}

// impact is the overlay's planned_impact, with the warning (or, with
// fail_on_unplaceable_pods, the error) a reviewer reads.
func (r *NodeOverlayResource) impact(ctx context.Context, plan map[string]attr.Value, diags *diag.Diagnostics) types.Map {
	name := plan["name"].(basetypes.StringValue).ValueString()
	planned := v1alpha1.NodeOverlay{}
	err := r.typed(plan, &planned)
	var pred *overlayPrediction
	if err == nil {
		pred, err = r.predict(ctx, planned)
	}
	if err != nil {
		diags.AddWarning("Planned impact unknown",
			fmt.Sprintf("The impact of this change of node overlay %s could not be predicted: %v. planned_impact is unknown; the plan is otherwise unaffected.", name, err))
		return types.MapUnknown(plannedImpactType)
	}
	values := map[string]attr.Value{}
	if pred.GateOff {
		diags.AddWarning("Planned impact", fmt.Sprintf("%s changes nothing: the controller's NodeOverlay feature gate is off "+
			"(feature_gates of joist_controller), so it applies no NodeOverlay.", name))
		return types.MapValueMust(plannedImpactType, values)
	}
	var lines []string
	unplaceable := 0
	for _, res := range pred.Changed {
		values[res.Pool] = impactValue(res)
		lines = append(lines, impactSentence(res))
		unplaceable += res.Unplaceable
	}
	if len(lines) == 0 {
		lines = []string{"no node pool's cost or pods change."}
	}
	detail := name + ": " + strings.Join(lines, "\n")
	if unplaceable > 0 && r.clients.failOnUnplaceablePods {
		diags.AddError("Pods left without a node pool", detail+
			"\nThe provider's fail_on_unplaceable_pods is set: change the overlay (or a pool) so these pods have one.")
	} else {
		diags.AddWarning("Planned impact", detail)
	}
	return types.MapValueMust(plannedImpactType, values)
}

// overlayPrediction is what an overlay's change does: nothing when the
// controller applies no overlay, else the pools it changes.
type overlayPrediction struct {
	GateOff bool
	Changed []*impact.Result
}

// predict predicts each pool with the cluster's NodeOverlays, the planned
// one in place of its namesake, and keeps the pools that change.
func (r *NodeOverlayResource) predict(ctx context.Context, planned v1alpha1.NodeOverlay) (*overlayPrediction, error) {
	host, _, err := r.clients.kubeServer(ctx)
	if err != nil {
		return nil, err
	}
	return cachedPrediction([]any{"joist_node_overlay", r.clients.clusterName, host, planned}, func() (*overlayPrediction, error) {
		env, err := snapshotForImpact(ctx, r.clients, nil, nil)
		if err != nil {
			return nil, err
		}
		if !env.st.FeatureGates["NodeOverlay"] {
			return &overlayPrediction{GateOff: true}, nil
		}
		overlays := []v1alpha1.NodeOverlay{planned}
		for _, o := range env.cluster.NodeOverlays {
			if o.Name != planned.Name {
				overlays = append(overlays, o)
			}
		}
		out := &overlayPrediction{}
		for i := range env.cluster.NodePools {
			in := env.input(&env.cluster.NodePools[i])
			in.PlannedOverlays = overlays
			if res := impact.Predict(in); res.Changed() {
				out.Changed = append(out.Changed, res)
			}
		}
		return out, nil
	})
}

// Delete deletes the overlay; the controller evaluates the others again.
func (r *NodeOverlayResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	state, diags := attrsOf(ctx, req.State.Schema.Type(), req.State.Raw)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	name := state["name"].(basetypes.StringValue).ValueString()
	if err := r.deleteObject(ctx, name, nodeOverlayDeleteTimeout, nil); err != nil {
		resp.Diagnostics.AddError(fmt.Sprintf("Deleting NodeOverlay %s", name), err.Error())
	}
}
