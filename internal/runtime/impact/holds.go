package impact

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/disruption/rollout"
)

// ReasonDriftObserved is a Hold's reason when the pool's drift mode is
// observe (no condition shows it: it is the pool's own setting).
const ReasonDriftObserved = "DriftModeObserve"

// Hold is what keeps the controller from replacing a pool's drifted nodes
// once the planned change is applied.
type Hold struct {
	// Condition is the NodePool condition that shows it (DisruptionPaused
	// or DisruptionHalted); "" for the drift mode observe.
	Condition       string
	Reason, Message string
}

// DriftHolds are the holds on the planned pool's drift once applied: its
// planned controls (a pause, the drift mode observe), and those of the
// live DisruptionPaused and DisruptionHalted conditions of current (the
// pool as applied, with its live status; nil on create) the change does
// not lift. A pool's own breaker closes when the change gives the pool a
// new spec identity or reset token (rollout.Record.For); classBefore and
// classAfter are its node class's part of that identity before and after
// the change (equal, or both zero, when the plan leaves the class alone).
func DriftHolds(planned, current *v1.NodePool, classBefore, classAfter ClassSpec) []Hold {
	controls, errs := v1.ParseDisruptionControls(planned.Annotations)
	var out []Hold
	paused := condition(current, v1.ConditionTypeDisruptionPaused)
	switch {
	case len(errs) > 0:
		msgs := make([]string, len(errs))
		for i, e := range errs {
			msgs[i] = e.Error()
		}
		out = append(out, Hold{v1.ConditionTypeDisruptionPaused, v1.DisruptionPausedReasonInvalid,
			"nodepool disruption controls are invalid: " + strings.Join(msgs, "; ")})
	case controls.Paused:
		out = append(out, Hold{v1.ConditionTypeDisruptionPaused, v1.DisruptionPausedReasonNodePool,
			fmt.Sprintf("nodepool voluntary disruption is paused (%s)", v1.DisruptionPausedAnnotationKey)})
	case paused != nil && paused.Reason == v1.DisruptionPausedReasonCluster:
		out = append(out, Hold{paused.Type, paused.Reason, paused.Message})
	}
	if halted := condition(current, v1.ConditionTypeDisruptionHalted); halted != nil &&
		(halted.Reason != v1.DisruptionHaltedReasonNodePool || breakerStaysOpen(planned, current, classBefore, classAfter)) {
		out = append(out, Hold{halted.Type, halted.Reason, halted.Message})
	}
	if controls.DriftMode == v1.DriftModeObserve {
		out = append(out, Hold{"", ReasonDriftObserved, fmt.Sprintf("nodepool drift mode is observe (%s)", v1.DriftModeAnnotationKey)})
	}
	return out
}

// condition is pool's condition typ when True; nil otherwise.
func condition(pool *v1.NodePool, typ string) *metav1.Condition {
	if pool == nil {
		return nil
	}
	if c := meta.FindStatusCondition(pool.Status.Conditions, typ); c != nil && c.Status == metav1.ConditionTrue {
		return c
	}
	return nil
}

// breakerStaysOpen reports whether current's open breaker is still open
// for planned: the same spec identity and reset token.
func breakerStaysOpen(planned, current *v1.NodePool, classBefore, classAfter ClassSpec) bool {
	now, _ := v1.ParseDisruptionControls(current.Annotations)
	after, _ := v1.ParseDisruptionControls(planned.Annotations)
	open := rollout.Record{Spec: rollout.SpecIdentity(current.Hash(), classBefore.Hashes, classBefore.Release), Reset: now.BreakerReset, Opened: &time.Time{}}
	return open.For(rollout.SpecIdentity(planned.Hash(), classAfter.Hashes, classAfter.Release), after.BreakerReset).Open()
}

// HoldsText joins the holds' messages for a sentence.
func HoldsText(holds []Hold) string {
	msgs := make([]string, len(holds))
	for i, h := range holds {
		msgs[i] = h.Message
	}
	return strings.Join(msgs, "; ")
}
