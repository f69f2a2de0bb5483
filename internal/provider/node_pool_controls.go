package provider

import (
	"context"
	"fmt"
	"reflect"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

// joist_node_pool's Joist-only disruption controls: typed attributes the
// provider renders into the NodePool's joist.dev annotations, which the
// controller reads through the same v1.ParseDisruptionControls.

var rolloutType = types.ObjectType{AttrTypes: map[string]attr.Type{"mode": types.StringType, "canary": types.StringType, "bake": types.StringType}}

// controlAttributes are the attributes, by name.
func controlAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"disruption_paused": schema.BoolAttribute{
			Optional: true, Computed: true, Default: booldefault.StaticBool(false),
			MarkdownDescription: "Pause the pool's voluntary disruption (emptiness, drift, consolidation) while `true`; expiry, " +
				"interruption and node repair go on. Takes effect on the controller's next disruption pass, and the pool's " +
				"`DisruptionPaused` condition shows it. A Joist extension (annotation `" + v1.DisruptionPausedAnnotationKey + "`).",
		},
		"disruption_breaker": schema.StringAttribute{
			Optional: true,
			MarkdownDescription: "When the pool's disruption circuit breaker opens, as `<failures>/<window>`: after that many replacements " +
				"(made by drift, consolidation or repair) fail within the window, the pool's voluntary disruption halts, shown as its " +
				"`DisruptionHalted` condition and a `DisruptionHalted` warning event. Unset is `3/1h`. It closes when the pool's or its " +
				"node class's spec changes, or `disruption_breaker_reset` changes. A Joist extension (annotation `" + v1.DisruptionBreakerAnnotationKey + "`).",
		},
		"disruption_breaker_reset": schema.StringAttribute{
			Optional: true,
			MarkdownDescription: "Any new value closes the pool's disruption circuit breaker (e.g. a date or a counter). " +
				"A Joist extension (annotation `" + v1.DisruptionBreakerResetAnnotationKey + "`).",
		},
		"rollout": schema.SingleNestedAttribute{
			Optional:            true,
			MarkdownDescription: "How drift proceeds in this pool. A Joist extension; unset, drifted nodes are replaced as Karpenter replaces them.",
			Attributes: map[string]schema.Attribute{
				"canary": schema.StringAttribute{
					Optional: true,
					MarkdownDescription: "Replace this many drifted nodes first (`\"1\"`), or this share of the pool's nodes (`\"10%\"`, at least one), " +
						"then wait for `bake`; later waves are the size of the pool's drift budget, each baked the same way. A wave's " +
						"replacements must be registered, initialized and Ready with their pods Ready before its bake starts. A failed " +
						"replacement (launch error, registration timeout, not initialized in time) stops the pool's rollout until the pool " +
						"or its node class changes. Unset, drift is not rolled out in waves (annotation `" + v1.DriftRolloutAnnotationKey + "`).",
				},
				"bake": schema.StringAttribute{
					Optional:            true,
					MarkdownDescription: "How long each wave's ready replacements run before the next wave starts, as a Go duration (`15m`). Needs `canary`; unset is no bake.",
				},
				"mode": schema.StringAttribute{
					Optional: true,
					MarkdownDescription: "`replace` (the default) replaces drifted nodes within the budgets; `observe` marks NodeClaims " +
						"`Drifted` and replaces none until the mode changes (annotation `" + v1.DriftModeAnnotationKey + "`).",
				},
			},
		},
	}
}

// controlExtras are the attributes' values for an imported or moved state.
func controlExtras() map[string]attr.Value {
	return map[string]attr.Value{
		"disruption_paused": types.BoolValue(false), "rollout": types.ObjectNull(rolloutType.AttrTypes),
		"disruption_breaker": types.StringNull(), "disruption_breaker_reset": types.StringNull(),
	}
}

// controlFields maps each annotation to the attribute that sets it, so an
// error names the attribute.
var controlFields = map[string]path.Path{
	v1.DisruptionPausedAnnotationKey:  path.Root("disruption_paused"),
	v1.DriftModeAnnotationKey:         path.Root("rollout").AtName("mode"),
	v1.DisruptionBreakerAnnotationKey: path.Root("disruption_breaker"),
	v1.DriftRolloutAnnotationKey:      path.Root("rollout"),
}

// stringAnnotations are the string attributes rendered as annotations.
var stringAnnotations = map[string]string{
	"disruption_breaker":       v1.DisruptionBreakerAnnotationKey,
	"disruption_breaker_reset": v1.DisruptionBreakerResetAnnotationKey,
}

// controlAnnotations renders the attributes as annotations; unknown values
// are left out (known is false then).
func controlAnnotations(attrs map[string]attr.Value) (ann map[string]string, known bool) {
	ann, known = map[string]string{}, true
	if p, ok := attrs["disruption_paused"].(basetypes.BoolValue); ok {
		if p.IsUnknown() {
			known = false
		} else if p.ValueBool() {
			ann[v1.DisruptionPausedAnnotationKey] = "true"
		}
	}
	for name, key := range stringAnnotations {
		if v, ok := attrs[name].(basetypes.StringValue); ok && !v.IsNull() {
			if v.IsUnknown() {
				known = false
			} else {
				ann[key] = v.ValueString()
			}
		}
	}
	r, ok := attrs["rollout"].(basetypes.ObjectValue)
	if !ok || r.IsNull() {
		return ann, known && (!ok || !r.IsUnknown())
	}
	if r.IsUnknown() {
		return ann, false
	}
	var parts []string
	for _, name := range []string{"canary", "bake"} {
		v, ok := r.Attributes()[name].(basetypes.StringValue)
		switch {
		case !ok || v.IsNull():
		case v.IsUnknown():
			known = false
		default:
			parts = append(parts, name+"="+v.ValueString())
		}
	}
	if len(parts) > 0 {
		ann[v1.DriftRolloutAnnotationKey] = strings.Join(parts, ",")
	}
	if m, ok := r.Attributes()["mode"].(basetypes.StringValue); ok && !m.IsNull() {
		if m.IsUnknown() {
			known = false
		} else {
			ann[v1.DriftModeAnnotationKey] = m.ValueString()
		}
	}
	return ann, known
}

// controlsFromAnnotations reads the attributes back from a live NodePool's
// annotations with the controller's parser, so an import, or a refresh after
// a change made outside Terraform, puts the controls the controller obeys in
// the state. A prior value that means the same as the live one is kept, so
// the configuration's spelling ("90m") survives a refresh.
func controlsFromAnnotations(name string, live map[string]string, prior map[string]attr.Value) (map[string]attr.Value, diag.Diagnostics) {
	c, errs := v1.ParseDisruptionControls(live)
	out := controlExtras()
	out["disruption_paused"] = types.BoolValue(c.Paused)
	if c.Breaker != nil {
		out["disruption_breaker"] = types.StringValue(c.Breaker.String())
	}
	if c.BreakerReset != "" {
		out["disruption_breaker_reset"] = types.StringValue(c.BreakerReset)
	}
	_, moded := live[v1.DriftModeAnnotationKey]
	if c.Rollout != nil || moded {
		r := map[string]attr.Value{"canary": types.StringNull(), "bake": types.StringNull(), "mode": types.StringNull()}
		if moded {
			r["mode"] = types.StringValue(string(c.DriftMode))
		}
		if c.Rollout != nil {
			r["canary"] = types.StringValue(c.Rollout.Canary())
			if c.Rollout.Bake > 0 {
				r["bake"] = types.StringValue(v1.ShortDuration(c.Rollout.Bake))
			}
		}
		out["rollout"] = types.ObjectValueMust(rolloutType.AttrTypes, r)
	}
	for k, v := range out {
		if p, ok := prior[k]; ok && sameControl(k, p, v) {
			out[k] = p
		}
	}
	var diags diag.Diagnostics
	for _, e := range errs {
		diags.AddAttributeWarning(controlFields[e.Key], "Unreadable disruption control",
			fmt.Sprintf("NodePool %s: %s. The controller holds the pool's voluntary disruption while it cannot read it "+
				"(condition DisruptionPaused, reason %s); set the attribute in the configuration and apply.", name, e.Error(), v1.DisruptionPausedReasonInvalid))
	}
	return out, diags
}

// sameControl reports whether two values of the attribute name render
// annotations the controller reads the same way.
func sameControl(name string, a, b attr.Value) bool {
	x, _ := controlAnnotations(map[string]attr.Value{name: a})
	y, _ := controlAnnotations(map[string]attr.Value{name: b})
	cx, ex := v1.ParseDisruptionControls(x)
	cy, ey := v1.ParseDisruptionControls(y)
	if len(ex) > 0 || len(ey) > 0 || len(x) != len(y) {
		return false
	}
	for k := range x {
		if _, ok := y[k]; !ok {
			return false
		}
	}
	return reflect.DeepEqual(cx, cy)
}

// controlDiagnostics checks the attributes with the controller's own
// parser: each error names the attribute and the value to write.
func controlDiagnostics(attrs map[string]attr.Value) diag.Diagnostics {
	var diags diag.Diagnostics
	ann, _ := controlAnnotations(attrs)
	_, errs := v1.ParseDisruptionControls(ann)
	for _, e := range errs {
		p := controlFields[e.Key]
		fix := e.Fix
		if e.Key == v1.DriftRolloutAnnotationKey {
			fix = "is not a rollout: set canary to a node count (\"1\") or a percentage (\"10%\") and bake to a Go duration (\"15m\")"
		}
		diags.AddAttributeError(p, "Invalid joist_node_pool", p.String()+": "+quoted(e.Value)+" "+fix)
	}
	return diags
}

func quoted(s string) string { return `"` + s + `"` }

// breakerPolicyValidator checks a "<failures>/<window>" breaker policy with
// the controller's parser.
type breakerPolicyValidator struct{}

func (breakerPolicyValidator) Description(context.Context) string {
	return `"<failures>/<window>", e.g. "3/1h"`
}
func (v breakerPolicyValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}
func (breakerPolicyValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if _, err := v1.ParseBreakerPolicy(req.ConfigValue.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid disruption breaker",
			fmt.Sprintf("%s: %q %s", req.Path, req.ConfigValue.ValueString(), err))
	}
}
