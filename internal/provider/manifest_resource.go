package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/objectplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/joistdev/terraform-provider-joist/internal/provider/crdschema"
	"github.com/joistdev/terraform-provider-joist/internal/provider/validate"
)

// FieldManager owns the fields the provider writes with server-side apply.
const FieldManager = "terraform-provider-joist"

// manifestResource is what joist_node_pool and joist_ec2_node_class share:
// a cluster-scoped object whose spec is the resource's top-level
// attributes, written with server-side apply and read back whole.
type manifestResource struct {
	kind     *kind
	typeName string
	clients  *clients
	// extras are the values of the resource's own attributes (not the
	// object's) when a state is imported or moved in.
	extras map[string]attr.Value
	// annotations, when set, renders the resource's own attributes that
	// the object carries as metadata.annotations (Joist's extensions).
	annotations func(map[string]attr.Value) map[string]string
	// readAnnotations, when set, is its inverse for refresh and import:
	// those attributes' values from the live object's annotations, given
	// the prior ones.
	readAnnotations func(name string, live map[string]string, prior map[string]attr.Value) (map[string]attr.Value, diag.Diagnostics)
}

// baseAttributes are the attributes beside the spec's.
func (r *manifestResource) baseAttributes(objectDoc string) map[string]schema.Attribute {
	attrs := crdschema.ResourceAttributes(r.kind.spec)
	attrs["id"] = schema.StringAttribute{
		Computed:            true,
		MarkdownDescription: "The object's name.",
		PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
	}
	attrs["name"] = schema.StringAttribute{
		Required:            true,
		MarkdownDescription: "Name of the " + objectDoc + " (a DNS subdomain). Changing it replaces the object.",
		PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
	}
	attrs["status"] = schema.SingleNestedAttribute{
		Computed:            true,
		MarkdownDescription: "What the controller last reported about the " + objectDoc + ".",
		Attributes:          crdschema.ComputedResourceAttributes(r.kind.status),
		PlanModifiers:       []planmodifier.Object{objectplanmodifier.UseStateForUnknown()},
	}
	attrs["ready"] = schema.BoolAttribute{
		Computed:            true,
		MarkdownDescription: "Whether the controller reports the " + objectDoc + " Ready.",
		PlanModifiers:       []planmodifier.Bool{boolplanmodifier.UseStateForUnknown()},
	}
	return attrs
}

func (r *manifestResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	if req.ProviderData == nil {
		return
	}
	c, ok := req.ProviderData.(*clients)
	if !ok {
		resp.Diagnostics.AddError("Unexpected provider data", fmt.Sprintf("got %T", req.ProviderData))
		return
	}
	r.clients = c
}

// attrsOf reads a whole plan, state or config as attribute values.
func attrsOf(ctx context.Context, t attr.Type, raw tftypes.Value) (map[string]attr.Value, diag.Diagnostics) {
	var diags diag.Diagnostics
	if raw.IsNull() {
		return nil, diags
	}
	v, err := t.ValueFromTerraform(ctx, raw)
	if err != nil {
		diags.AddError("Reading the resource's values", err.Error())
		return nil, diags
	}
	obj, ok := v.(basetypes.ObjectValue)
	if !ok {
		diags.AddError("Reading the resource's values", fmt.Sprintf("got %T", v))
		return nil, diags
	}
	return obj.Attributes(), diags
}

// rawOf turns attribute values back into a plan or state.
func rawOf(ctx context.Context, t attr.Type, attrs map[string]attr.Value) (tftypes.Value, diag.Diagnostics) {
	obj, diags := types.ObjectValue(t.(basetypes.ObjectType).AttrTypes, attrs)
	if diags.HasError() {
		return tftypes.Value{}, diags
	}
	raw, err := obj.ToTerraformValue(ctx)
	if err != nil {
		diags.AddError("Writing the resource's values", err.Error())
	}
	return raw, diags
}

// manifest is the object the attributes describe; unknown lists the paths
// of values not known yet.
func (r *manifestResource) manifest(attrs map[string]attr.Value) (obj map[string]any, unknown []validate.Path) {
	enc := &crdschema.Encoder{}
	spec := enc.Object(r.kind.spec, attrs, validate.Path{}.Child("spec"))
	meta := map[string]any{}
	if n, ok := attrs["name"].(basetypes.StringValue); ok {
		if n.IsUnknown() {
			enc.Unknown = append(enc.Unknown, validate.Path{}.Child("metadata").Child("name"))
		} else {
			meta["name"] = n.ValueString()
		}
	}
	if r.annotations != nil {
		if a := r.annotations(attrs); len(a) > 0 {
			m := make(map[string]any, len(a))
			for k, v := range a {
				m[k] = v
			}
			meta["annotations"] = m
		}
	}
	return map[string]any{
		"apiVersion": r.kind.gvk.GroupVersion().String(),
		"kind":       r.kind.gvk.Kind,
		"metadata":   meta,
		"spec":       spec,
	}, enc.Unknown
}

// validationDiagnostics runs the CRD's rules on the attributes (and the
// transition rules from old, when given), skipping values not known yet.
func (r *manifestResource) validationDiagnostics(attrs, old map[string]attr.Value) diag.Diagnostics {
	var diags diag.Diagnostics
	v, err := apiValidator()
	if err != nil {
		diags.AddError("Loading the CRD rules", err.Error())
		return diags
	}
	obj, unknown := r.manifest(attrs)
	if _, named := obj["metadata"].(map[string]any)["name"]; !named {
		obj["metadata"].(map[string]any)["name"] = "unknown-until-apply"
	}
	var errs validate.ErrorList
	if old == nil {
		errs = v.Validate(obj, nil)
	} else {
		oldObj, _ := r.manifest(old)
		seen := map[string]bool{}
		for _, e := range v.Validate(obj, nil) {
			seen[e.Error()] = true
		}
		// Only what the transition from old adds: the rest was reported
		// when the configuration was validated.
		for _, e := range v.Validate(obj, oldObj) {
			if !seen[e.Error()] {
				errs = append(errs, e)
			}
		}
	}
	for _, e := range v.Unsupported(obj) {
		if overlapsAny(e.Path, unknown) {
			continue
		}
		summary := fmt.Sprintf("Invalid %s", r.typeName)
		detail := e.Message + ". Karpenter's CRD accepts this, Joist's controller does not act on it."
		if p, ok := attributePath(e.Path); ok {
			diags.AddAttributeError(p, summary, fmt.Sprintf("%s: %s", formatAttributePath(p), detail))
		} else {
			diags.AddError(summary, detail)
		}
	}
	for _, e := range errs {
		if overlapsAny(e.Path, unknown) {
			continue
		}
		summary := fmt.Sprintf("Invalid %s", r.typeName)
		detail := fmt.Sprintf("%s. The apiserver would refuse %s %s at %s.", e.Message, r.kind.gvk.Kind, e.Type, e.Path)
		if p, ok := attributePath(e.Path); ok {
			diags.AddAttributeError(p, summary, fmt.Sprintf("%s: %s", formatAttributePath(p), detail))
		} else {
			diags.AddError(summary, detail)
		}
	}
	return diags
}

func overlapsAny(p validate.Path, unknown []validate.Path) bool {
	for _, u := range unknown {
		if p.Overlaps(u) {
			return true
		}
	}
	return false
}

// formatAttributePath spells an attribute path as users write it in HCL:
// template.spec.requirements[0].key, labels["team"].
func formatAttributePath(p path.Path) string { return p.String() }

// ValidateConfig runs the CRD's rules on the configuration.
func (r *manifestResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	attrs, diags := attrsOf(ctx, req.Config.Schema.Type(), req.Config.Raw)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(r.validationDiagnostics(attrs, nil)...)
}

// apply writes the object with server-side apply, forcing conflicts: the
// configuration is the source of truth for the fields it sets.
func (r *manifestResource) apply(ctx context.Context, attrs map[string]attr.Value) (*unstructured.Unstructured, error) {
	kube, err := r.clients.Kubernetes(ctx)
	if err != nil {
		return nil, err
	}
	obj, _ := r.manifest(attrs)
	u := &unstructured.Unstructured{Object: obj}
	tflog.Debug(ctx, "server-side apply", map[string]any{"kind": r.kind.gvk.Kind, "name": u.GetName()})
	res := kube.Resource(r.kind.gvr())
	live, err := res.Apply(ctx, u.GetName(), u, metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
	if err != nil {
		return nil, err
	}
	liveSpec, _ := live.Object["spec"].(map[string]any)
	stray := strayFields(liveSpec, obj["spec"].(map[string]any))
	if len(stray) == 0 {
		return live, nil
	}
	tflog.Info(ctx, "removing spec fields set outside Terraform", map[string]any{"kind": r.kind.gvk.Kind, "name": u.GetName(), "fields": stray})
	patch, err := json.Marshal(map[string]any{"spec": stray})
	if err != nil {
		return nil, err
	}
	return res.Patch(ctx, u.GetName(), k8stypes.MergePatchType, patch, metav1.PatchOptions{FieldManager: FieldManager})
}

func (r *manifestResource) get(ctx context.Context, name string) (*unstructured.Unstructured, error) {
	kube, err := r.clients.Kubernetes(ctx)
	if err != nil {
		return nil, err
	}
	return kube.Resource(r.kind.gvr()).Get(ctx, name, metav1.GetOptions{})
}

// withLive sets id, status and ready from the live object, and the spec
// attributes too when readSpec (on refresh: the live spec is the truth,
// drift included).
func (r *manifestResource) withLive(attrs map[string]attr.Value, live *unstructured.Unstructured, readSpec bool) map[string]attr.Value {
	out := make(map[string]attr.Value, len(attrs))
	for k, v := range attrs {
		out[k] = v
	}
	out["id"] = types.StringValue(live.GetName())
	out["name"] = types.StringValue(live.GetName())
	if readSpec {
		spec, _ := live.Object["spec"].(map[string]any)
		for k, v := range crdschema.DecodeObject(r.kind.spec, spec, attrs) {
			out[k] = v
		}
	}
	status, _ := live.Object["status"].(map[string]any)
	if _, ok := attrs["status"]; ok {
		out["status"] = types.ObjectValueMust(crdschema.ObjectType(r.kind.status).AttrTypes, crdschema.DecodeObject(r.kind.status, status, nil))
	}
	out["ready"] = types.BoolValue(conditionTrue(status, "Ready"))
	return out
}

func conditionTrue(status map[string]any, condition string) bool {
	conds, _ := status["conditions"].([]any)
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == condition {
			return m["status"] == "True"
		}
	}
	return false
}

// write applies the planned object and returns the new state: the plan's
// values with id, status and ready from the apiserver's answer.
func (r *manifestResource) write(ctx context.Context, t attr.Type, plan tftypes.Value) (tftypes.Value, diag.Diagnostics) {
	attrs, diags := attrsOf(ctx, t, plan)
	if diags.HasError() {
		return tftypes.Value{}, diags
	}
	live, err := r.apply(ctx, attrs)
	if err != nil {
		diags.AddError(fmt.Sprintf("Writing %s %s", r.kind.gvk.Kind, attrs["name"]), applyErrorDetail(err))
		return tftypes.Value{}, diags
	}
	out := r.withLive(attrs, live, false)
	if pd, ok := out["planned_disruption"]; ok && pd.IsUnknown() {
		out["planned_disruption"] = types.ObjectNull(plannedDisruptionType.AttrTypes)
	}
	if pi, ok := out["planned_impact"]; ok && pi.IsUnknown() {
		out["planned_impact"] = nullOf(ctx, pi)
	}
	raw, d := rawOf(ctx, t, out)
	diags.Append(d...)
	return raw, diags
}

// nullOf is the null value of v's type.
func nullOf(ctx context.Context, v attr.Value) attr.Value {
	t := v.Type(ctx)
	null, err := t.ValueFromTerraform(ctx, tftypes.NewValue(t.TerraformType(ctx), nil))
	if err != nil {
		return v
	}
	return null
}

// Create writes the object.
func (r *manifestResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	raw, diags := r.write(ctx, req.Plan.Schema.Type(), req.Plan.Raw)
	resp.Diagnostics.Append(diags...)
	if !diags.HasError() {
		resp.State.Raw = raw
	}
}

// Update writes the object in place.
func (r *manifestResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	raw, diags := r.write(ctx, req.Plan.Schema.Type(), req.Plan.Raw)
	resp.Diagnostics.Append(diags...)
	if !diags.HasError() {
		resp.State.Raw = raw
	}
}

// planAndState reads a ModifyPlan request's plan and state; ok is false on
// create and destroy, where there is no transition to check.
func planAndState(ctx context.Context, req resource.ModifyPlanRequest, diags *diag.Diagnostics) (plan, state map[string]attr.Value, ok bool) {
	if req.Plan.Raw.IsNull() || req.State.Raw.IsNull() {
		return nil, nil, false
	}
	t := req.Plan.Schema.Type()
	plan, d := attrsOf(ctx, t, req.Plan.Raw)
	diags.Append(d...)
	state, d = attrsOf(ctx, t, req.State.Raw)
	diags.Append(d...)
	return plan, state, !diags.HasError()
}

func applyErrorDetail(err error) string {
	if errors.Is(err, errNotKnownYet) {
		return err.Error()
	}
	if apierrors.IsNotFound(err) {
		return err.Error() + ". Are the Joist CRDs installed? The joist_controller resource installs them."
	}
	return err.Error()
}

// Read refreshes the state from the live object: drift shows in the plan.
func (r *manifestResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	attrs, diags := attrsOf(ctx, req.State.Schema.Type(), req.State.Raw)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	name := attrs["name"].(basetypes.StringValue).ValueString()
	live, err := r.get(ctx, name)
	if apierrors.IsNotFound(err) {
		tflog.Info(ctx, "object is gone, removing it from the state", map[string]any{"kind": r.kind.gvk.Kind, "name": name})
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		resp.Diagnostics.AddError(fmt.Sprintf("Reading %s %s", r.kind.gvk.Kind, name), err.Error())
		return
	}
	out := r.withLive(attrs, live, true)
	if r.readAnnotations != nil {
		read, d := r.readAnnotations(name, live.GetAnnotations(), attrs)
		resp.Diagnostics.Append(d...)
		maps.Copy(out, read)
	}
	raw, d := rawOf(ctx, req.State.Schema.Type(), out)
	resp.Diagnostics.Append(d...)
	resp.State.Raw = raw
}

// deleteObject deletes the object and waits until it is gone, calling
// progress every few seconds while finalizers hold it; progress may end the
// wait with an error.
func (r *manifestResource) deleteObject(ctx context.Context, name string, timeout time.Duration, progress func(ctx context.Context, live *unstructured.Unstructured, waited time.Duration) error) error {
	kube, err := r.clients.Kubernetes(ctx)
	if err != nil {
		return err
	}
	res := kube.Resource(r.kind.gvr())
	if err := res.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	}
	start := time.Now()
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	for {
		live, err := res.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		waited := time.Since(start)
		if progress != nil {
			if err := progress(ctx, live, waited); err != nil {
				return err
			}
		}
		if waited > timeout {
			return fmt.Errorf("%s %s still exists after %s (finalizers %v)", r.kind.gvk.Kind, name, timeout, live.GetFinalizers())
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// ImportState imports an object by name; Read fills in the rest.
func (r *manifestResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("name"), req.ID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
	for name, v := range r.extras {
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root(name), v)...)
	}
}

// MoveState accepts kubernetes_manifest and kubectl_manifest of the kind.
func (r *manifestResource) MoveState(context.Context) []resource.StateMover {
	return r.stateMovers(r.extras)
}
