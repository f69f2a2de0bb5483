package provider

import (
	"reflect"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

func rolloutMode(mode string) attr.Value {
	return rolloutOf(types.StringValue(mode), types.StringNull(), types.StringNull())
}

func rolloutOf(mode, canary, bake types.String) attr.Value {
	return types.ObjectValueMust(rolloutType.AttrTypes, map[string]attr.Value{"mode": mode, "canary": canary, "bake": bake})
}

// TestNodePoolControlsRenderAnnotations: the typed attributes become the
// joist.dev annotations the controller reads, and a pool that sets none
// gets none (so its NodePool is what Karpenter would see).
func TestNodePoolControlsRenderAnnotations(t *testing.T) {
	got, known := controlAnnotations(controlExtras())
	if !known || len(got) != 0 {
		t.Errorf("defaults render %v (known %v), want no annotation", got, known)
	}
	attrs := controlExtras()
	attrs["disruption_paused"] = types.BoolValue(true)
	attrs["rollout"] = rolloutOf(types.StringValue("observe"), types.StringValue("10%"), types.StringValue("15m"))
	attrs["disruption_breaker"] = types.StringValue("2/30m")
	attrs["disruption_breaker_reset"] = types.StringValue("r1")
	got, _ = controlAnnotations(attrs)
	want := map[string]string{
		v1.DisruptionPausedAnnotationKey: "true", v1.DriftModeAnnotationKey: "observe", v1.DriftRolloutAnnotationKey: "canary=10%,bake=15m",
		v1.DisruptionBreakerAnnotationKey: "2/30m", v1.DisruptionBreakerResetAnnotationKey: "r1",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("rendered %v, want %v", got, want)
	}
	if diags := controlDiagnostics(attrs); diags.HasError() {
		t.Errorf("valid controls rejected: %v", diags)
	}
	attrs["disruption_paused"] = types.BoolUnknown()
	if _, known := controlAnnotations(attrs); known {
		t.Error("an unknown disruption_paused renders as known")
	}
}

// TestNodePoolControlsRejectedAtPlan: an invalid value fails the plan with
// an error naming the attribute and what to write.
func TestNodePoolControlsRejectedAtPlan(t *testing.T) {
	for _, tc := range []struct {
		attr  string
		value attr.Value
		want  []string
	}{
		{"rollout", rolloutMode("watch"), []string{"rollout.mode", `"replace" or "observe"`}},
		{"disruption_breaker", types.StringValue("3"), []string{"disruption_breaker", `"3/1h"`}},
		{"rollout", rolloutOf(types.StringNull(), types.StringValue("0"), types.StringNull()), []string{"rollout", "canary", `"10%"`}},
		{"rollout", rolloutOf(types.StringNull(), types.StringNull(), types.StringValue("15m")), []string{"rollout", "canary"}},
		{"rollout", rolloutOf(types.StringNull(), types.StringValue("1"), types.StringValue("soon")), []string{"rollout", "bake", `"15m"`}},
		{"disruption_breaker", types.StringValue("3/5s"), []string{"disruption_breaker", "at least 1m"}},
	} {
		attrs := controlExtras()
		attrs[tc.attr] = tc.value
		diags := controlDiagnostics(attrs)
		if !diags.HasError() {
			t.Errorf("%s = %v accepted", tc.attr, tc.value)
			continue
		}
		msg := diags.Errors()[0].Detail()
		for _, w := range tc.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s = %v: error %q does not say %q", tc.attr, tc.value, msg, w)
			}
		}
	}
}
