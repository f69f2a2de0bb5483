package lifecycle

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kevents "k8s.io/client-go/tools/events"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/events"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/nodeclaim"
)

// A claim going through its lifecycle announces each step once, with the
// condition's type as the event reason and Karpenter's message.
func TestLifecycleTransitionsAreAnnounced(t *testing.T) {
	fake := kevents.NewFakeRecorder(10)
	rec := events.NewRecorder(fake)
	claim := &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "default-abc", UID: "uid-1"}}

	step := func(set func(*v1.NodeClaim)) {
		before := claim.DeepCopy()
		set(claim)
		nodeclaim.SetReady(claim)
		announce(rec, claim, Transitions(before, claim))
	}
	step(func(c *v1.NodeClaim) {
		nodeclaim.InitConditions(c)
		nodeclaim.Set(c, v1.ConditionTypeLaunched, metav1.ConditionTrue, "", "")
	})
	step(func(c *v1.NodeClaim) {}) // nothing changed: no event
	step(func(c *v1.NodeClaim) { nodeclaim.Set(c, v1.ConditionTypeRegistered, metav1.ConditionTrue, "", "") })
	step(func(c *v1.NodeClaim) { nodeclaim.Set(c, v1.ConditionTypeInitialized, metav1.ConditionTrue, "", "") })

	var got []string
	for len(fake.Events) > 0 {
		got = append(got, <-fake.Events)
	}
	want := []string{
		"Normal " + events.Launched + " Status condition transitioned, Type: Launched, Status: Unknown -> True, Reason: Launched",
		"Normal " + events.Registered + " Status condition transitioned, Type: Registered, Status: Unknown -> True, Reason: Registered",
		"Normal " + events.Initialized + " Status condition transitioned, Type: Initialized, Status: Unknown -> True, Reason: Initialized",
		"Normal Ready Status condition transitioned, Type: Ready, Status: Unknown -> True, Reason: Ready",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestTransitionNoteCarriesTheMessage(t *testing.T) {
	tr := Transition{Type: v1.ConditionTypeLaunched, From: "Unknown", To: "False", Reason: "LaunchFailed", Message: "no subnet"}
	if got, want := tr.Note(), "Status condition transitioned, Type: Launched, Status: Unknown -> False, Reason: LaunchFailed, Message: no subnet"; got != want {
		t.Errorf("note %q, want %q", got, want)
	}
}
