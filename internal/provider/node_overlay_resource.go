package provider

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
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
	return &NodeOverlayResource{manifestResource{kind: nodeOverlayKind(), typeName: "joist_node_overlay", extras: map[string]attr.Value{}}}
}

// nodeOverlayDeleteTimeout bounds the wait for the NodeOverlay to go (it
// has no finalizer).
const nodeOverlayDeleteTimeout = time.Minute

func (r *NodeOverlayResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_node_overlay"
}

func (r *NodeOverlayResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	attrs := r.baseAttributes("NodeOverlay")
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

// ModifyPlan runs the CRD's validation against the planned object.
func (r *NodeOverlayResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	plan, state, ok := planAndState(ctx, req, &resp.Diagnostics)
	if !ok {
		return
	}
	resp.Diagnostics.Append(r.validationDiagnostics(plan, state)...)
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
