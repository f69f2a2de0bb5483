package provider

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/joistdev/terraform-provider-joist/internal/provider/crdschema"
	"github.com/joistdev/terraform-provider-joist/internal/provider/validate"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/impact"
)

// holdFixes say how to lift each hold, by the condition's reason, in the
// configuration's terms.
var holdFixes = map[string]string{
	v1.DisruptionHaltedReasonNodePool: "Once the cause of the failed replacements is fixed, set disruption_breaker_reset to a new value " +
		"(any string, e.g. today's date) and apply; a change of the pool's template or of its node class closes the breaker too.",
	v1.DisruptionHaltedReasonCluster: "The cluster's breaker closes as the failures age out of its window (joist_controller's " +
		"disruption_breaker), or once the pools whose replacements failed are reset (their disruption_breaker_reset).",
	v1.DisruptionPausedReasonNodePool: "Set disruption_paused = false and apply to resume it.",
	v1.DisruptionPausedReasonCluster:  "Set joist_controller's disruption_paused = false and apply to resume it.",
	v1.DisruptionPausedReasonInvalid:  "Apply valid disruption controls (disruption_paused, disruption_breaker, rollout).",
}

// stateStatus is the pool's status as the state holds it (refreshed from
// the live NodePool by Read).
func (r *NodePoolResource) stateStatus(state map[string]attr.Value) (v1.NodePoolStatus, error) {
	var out v1.NodePoolStatus
	st, ok := state["status"].(basetypes.ObjectValue)
	if !ok || st.IsNull() || st.IsUnknown() {
		return out, nil
	}
	raw, err := json.Marshal((&crdschema.Encoder{}).Object(r.kind.status, st.Attributes(), validate.Path{}.Child("status")))
	if err != nil {
		return out, err
	}
	return out, json.Unmarshal(raw, &out)
}

// warnHolds warns of each of the live pool's DisruptionHalted and
// DisruptionPaused conditions that is True: what it says, whether the plan
// lifts it, and how to. It returns what holds the pool's drift once the
// plan is applied (impact.DriftHolds).
func (r *NodePoolResource) warnHolds(plan, state map[string]attr.Value, diags *diag.Diagnostics) []impact.Hold {
	planned, err := r.typedNodePool(plan)
	if err != nil {
		return nil
	}
	current, err := r.typedNodePool(state)
	if err != nil {
		return nil
	}
	if current.Status, err = r.stateStatus(state); err != nil {
		return nil
	}
	holds := impact.DriftHolds(planned, current, impact.ClassSpec{}, impact.ClassSpec{})
	summaries := map[string]string{v1.ConditionTypeDisruptionHalted: "Node pool disruption halted", v1.ConditionTypeDisruptionPaused: "Node pool disruption paused"}
	for _, typ := range []string{v1.ConditionTypeDisruptionHalted, v1.ConditionTypeDisruptionPaused} {
		c := meta.FindStatusCondition(current.Status.Conditions, typ)
		if c == nil || c.Status != metav1.ConditionTrue {
			continue
		}
		detail := fmt.Sprintf("Node pool %s: %s (%s): %s. ", planned.Name, typ, c.Reason, c.Message)
		if slices.ContainsFunc(holds, func(h impact.Hold) bool { return h.Condition == typ && h.Reason == c.Reason }) {
			detail += "While it holds, the controller replaces none of the pool's drifted nodes and removes no empty or " +
				"underutilized node (expiry, interruption and node repair go on). " + holdFixes[c.Reason]
		} else {
			detail += "This plan lifts it."
		}
		diags.AddWarning(summaries[typ], detail)
	}
	return holds
}
