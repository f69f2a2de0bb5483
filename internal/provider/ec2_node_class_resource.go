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
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8stypes "k8s.io/apimachinery/pkg/types"
)

var (
	_ resource.ResourceWithConfigure      = (*EC2NodeClassResource)(nil)
	_ resource.ResourceWithValidateConfig = (*EC2NodeClassResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*EC2NodeClassResource)(nil)
	_ resource.ResourceWithImportState    = (*EC2NodeClassResource)(nil)
	_ resource.ResourceWithMoveState      = (*EC2NodeClassResource)(nil)
)

// EC2NodeClassResource is joist_ec2_node_class: a karpenter.k8s.aws/v1
// EC2NodeClass.
type EC2NodeClassResource struct {
	manifestResource
}

// NewEC2NodeClassResource returns the joist_ec2_node_class resource.
func NewEC2NodeClassResource() resource.Resource {
	return &EC2NodeClassResource{manifestResource{kind: ec2NodeClassKind(), typeName: "joist_ec2_node_class", extras: map[string]attr.Value{
		"force_destroy": types.BoolValue(false), "wait_for_ready": types.BoolValue(true), "wait_timeout": types.StringValue(defaultResolveTimeout),
		"planned_impact": types.MapNull(plannedImpactType),
	}}}
}

// ec2NodeClassDeleteTimeout bounds the wait for the controller to release
// the node class once its NodeClaims are gone.
const ec2NodeClassDeleteTimeout = 10 * time.Minute

func (r *EC2NodeClassResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_ec2_node_class"
}

func (r *EC2NodeClassResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	attrs := r.baseAttributes("EC2NodeClass")
	// What the selectors resolve to changes with the world (every AMI
	// release): it is read with the data source, not kept in state.
	delete(attrs, "status")
	attrs["ready"] = schema.BoolAttribute{
		Computed: true,
		MarkdownDescription: "Whether the controller reports the EC2NodeClass Ready: its subnets, security groups, AMIs and instance profile " +
			"resolved. Known after apply (create and update wait for the controller's answer, see `wait_for_ready`).",
	}
	attrs["wait_for_ready"] = schema.BoolAttribute{
		Optional: true, Computed: true, Default: booldefault.StaticBool(true),
		MarkdownDescription: "After create and update, wait until the controller has resolved this version of the EC2NodeClass " +
			"(its `Ready` condition observed the new generation), so `ready` is the controller's answer and the next plan is empty. " +
			"A class the controller finds not Ready is reported as a warning naming the failing conditions. With no Joist controller " +
			"in the cluster (no leader-election Lease held and no `joist` Deployment) the wait is skipped with a warning. Defaults to true.",
	}
	attrs["wait_timeout"] = schema.StringAttribute{
		Optional: true, Computed: true, Default: stringdefault.StaticString(defaultResolveTimeout), Validators: []validator.String{durationValidator{}},
		MarkdownDescription: "How long create and update wait for the controller to resolve the EC2NodeClass (Go duration). Defaults to `" + defaultResolveTimeout + "`.",
	}
	attrs["planned_impact"] = nodeClassImpactAttribute()
	attrs["force_destroy"] = schema.BoolAttribute{
		Optional: true, Computed: true, Default: booldefault.StaticBool(false),
		MarkdownDescription: "On destroy, when no controller is running to release the node class (it removes " +
			"its launch templates and instance profile first), remove the `karpenter.k8s.aws/termination` " +
			"finalizer directly. Without it, destroy fails in that case.",
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "A Karpenter-compatible `karpenter.k8s.aws/v1` EC2NodeClass: how the controller " +
			"launches EC2 instances for the NodePools that reference it (subnets, security groups, AMIs, IAM " +
			"role or instance profile, user data, kubelet, volumes, instance metadata). Every field of the API is " +
			"an attribute; the CRD's validation rules run at plan time. Create and update wait until the controller has " +
			"resolved the class (`wait_for_ready`), and `ready` holds its answer. What the selectors resolved to (AMIs, subnets, " +
			"security groups, instance profile, conditions) changes with every AMI release, so it is not kept here: read it with " +
			"the `joist_ec2_node_class` data source.",
		Attributes: attrs,
	}
}

// ModifyPlan refuses at plan time the changes the CRD's transition rules
// refuse (instanceProfile back to role), and predicts what a changed class
// does to the pools that use it (planned_impact).
func (r *EC2NodeClassResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if r.clients != nil && !req.Plan.Raw.IsNull() && req.State.Raw.IsNull() {
		r.createImpact(ctx, req, resp)
		return
	}
	plan, state, ok := planAndState(ctx, req, &resp.Diagnostics)
	if !ok {
		return
	}
	resp.Diagnostics.Append(r.validationDiagnostics(plan, state)...)
	// An update waits for the controller's answer about the new class,
	// which may differ from the one in state.
	for k, v := range plan {
		if k != "ready" && k != "id" && k != "planned_impact" && !v.Equal(state[k]) {
			plan["ready"] = types.BoolUnknown()
			if a, unknown := r.manifest(plan); !resp.Diagnostics.HasError() && len(unknown) == 0 && r.clients != nil {
				if b, _ := r.manifest(state); fmt.Sprint(a) != fmt.Sprint(b) {
					plan["planned_impact"] = r.impact(ctx, plan, &resp.Diagnostics)
				}
			}
			raw, d := rawOf(ctx, req.Plan.Schema.Type(), plan)
			resp.Diagnostics.Append(d...)
			resp.Plan.Raw = raw
			return
		}
	}
}

// createImpact sets planned_impact on create: empty when the cluster says
// the class is not there yet (no node runs on it), unknown when the cluster
// cannot say, and predicted when a class of that name is already there.
func (r *EC2NodeClassResource) createImpact(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	plan, diags := attrsOf(ctx, req.Plan.Schema.Type(), req.Plan.Raw)
	if diags.HasError() {
		return
	}
	if _, unknown := r.manifest(plan); len(unknown) > 0 {
		return
	}
	name := plan["name"].(basetypes.StringValue).ValueString()
	value := types.MapValueMust(plannedImpactType, map[string]attr.Value{})
	_, err := r.get(ctx, name)
	switch {
	case err == nil:
		value = r.impact(ctx, plan, &resp.Diagnostics)
	case !apierrors.IsNotFound(err):
		resp.Diagnostics.AddWarning("Planned impact unknown",
			fmt.Sprintf("The impact of EC2NodeClass %s could not be predicted: %v. planned_impact is unknown; the plan is otherwise unaffected.", name, err))
		value = types.MapUnknown(plannedImpactType)
	}
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("planned_impact"), value)...)
}

// Create writes the EC2NodeClass and waits for the controller to resolve it.
func (r *EC2NodeClassResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	r.writeResolved(ctx, req.Plan, &resp.State, &resp.Diagnostics)
}

// Update writes the EC2NodeClass and waits for the controller to resolve it.
func (r *EC2NodeClassResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	r.writeResolved(ctx, req.Plan, &resp.State, &resp.Diagnostics)
}

func (r *EC2NodeClassResource) writeResolved(ctx context.Context, plan tfsdk.Plan, state *tfsdk.State, diags *diag.Diagnostics) {
	raw, d := r.write(ctx, plan.Schema.Type(), plan.Raw)
	diags.Append(d...)
	if d.HasError() {
		return
	}
	state.Raw = r.waitResolved(ctx, plan.Schema.Type(), raw, diags)
}

// Delete deletes the node class and waits for the controller to release
// it. With no controller running it fails at once, or with force_destroy
// removes the finalizers itself.
func (r *EC2NodeClassResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	state, diags := attrsOf(ctx, req.State.Schema.Type(), req.State.Raw)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	name := state["name"].(basetypes.StringValue).ValueString()
	force := state["force_destroy"].(basetypes.BoolValue).ValueBool()
	if err := r.destroy(ctx, name, force); err != nil {
		resp.Diagnostics.AddError(fmt.Sprintf("Deleting EC2NodeClass %s", name), err.Error())
	}
}

// destroy checks before deleting that someone can release the node class:
// a finalizer with no controller to remove it would leave the object stuck
// terminating, so that fails at once (or, with force, the finalizers go first).
func (r *EC2NodeClassResource) destroy(ctx context.Context, name string, force bool) error {
	kube, err := r.clients.Kubernetes(ctx)
	if err != nil {
		return err
	}
	// release removes the finalizers when no controller is running; it
	// reports whether the deletion may go on.
	release := func(ctx context.Context, live *unstructured.Unstructured) error {
		if len(live.GetFinalizers()) == 0 {
			return nil
		}
		running, why, err := controllerRunning(ctx, kube, time.Now())
		if err != nil || running {
			return err
		}
		if !force {
			return fmt.Errorf("EC2NodeClass %s is held by finalizers %v and no controller is running to release it: %s. "+
				"Start the controller (joist_controller), or set force_destroy = true to remove the finalizers "+
				"(its launch templates and instance profile are then left in AWS)", name, live.GetFinalizers(), why)
		}
		tflog.Warn(ctx, "no controller running; removing the EC2NodeClass's finalizers", map[string]any{"name": name, "reason": why})
		patch := []byte(`{"metadata":{"finalizers":null}}`)
		_, err = kube.Resource(r.kind.gvr()).Patch(ctx, name, k8stypes.MergePatchType, patch, metav1.PatchOptions{FieldManager: FieldManager})
		return err
	}
	live, err := r.get(ctx, name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := release(ctx, live); err != nil {
		return err
	}
	return r.deleteObject(ctx, name, ec2NodeClassDeleteTimeout, func(ctx context.Context, live *unstructured.Unstructured, waited time.Duration) error {
		tflog.Info(ctx, "waiting for the EC2NodeClass to be released", map[string]any{
			"name": name, "waited": waited.Round(time.Second).String(), "finalizers": live.GetFinalizers(),
		})
		return release(ctx, live)
	})
}
