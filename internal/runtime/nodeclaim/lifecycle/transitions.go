package lifecycle

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/events"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/nodeclaim"
)

// announced are the conditions whose transitions become events: the
// lifecycle steps and the root Ready.
var announced = append([]string{}, append(v1.NodeClaimReadyConditions, v1.ConditionTypeReady)...)

// Transition is a lifecycle condition that changed status.
type Transition struct {
	Type, From, To, Reason, Message string
}

// Transitions lists the announced conditions whose status differs between
// before and after; a condition not yet set counts as Unknown, so the first
// Launched=True is an Unknown -> True transition, as Karpenter reports it.
func Transitions(before, after *v1.NodeClaim) []Transition {
	var out []Transition
	for _, t := range announced {
		now := nodeclaim.Get(after, t)
		if now == nil {
			continue
		}
		was := string(metav1.ConditionUnknown)
		if c := nodeclaim.Get(before, t); c != nil {
			was = string(c.Status)
		}
		if was != string(now.Status) {
			out = append(out, Transition{Type: t, From: was, To: string(now.Status), Reason: now.Reason, Message: now.Message})
		}
	}
	return out
}

// Note is the event's message, in Karpenter's words.
func (t Transition) Note() string {
	msg := fmt.Sprintf("Status condition transitioned, Type: %s, Status: %s -> %s, Reason: %s", t.Type, t.From, t.To, t.Reason)
	if t.Message != "" {
		msg += ", Message: " + t.Message
	}
	return msg
}

// announce emits one Normal event per transition, its reason the
// condition's type (Launched, Registered, Initialized, Ready).
func announce(rec *events.Recorder, claim *v1.NodeClaim, ts []Transition) {
	for _, t := range ts {
		rec.Normal(claim, t.Type, events.ActionLifecycle, "%s", t.Note())
	}
}
