package nodeclaim

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

func TestSetReady(t *testing.T) {
	claim := &v1.NodeClaim{}
	InitConditions(claim)
	SetReady(claim)
	if c := Get(claim, v1.ConditionTypeReady); c.Status != metav1.ConditionUnknown {
		t.Errorf("fresh claim Ready=%s", c.Status)
	}
	for _, typ := range v1.NodeClaimReadyConditions {
		Set(claim, typ, metav1.ConditionTrue, typ, "")
	}
	SetReady(claim)
	if !IsTrue(claim, v1.ConditionTypeReady) {
		t.Errorf("all dependents True but Ready=%v", Get(claim, v1.ConditionTypeReady))
	}
	Set(claim, v1.ConditionTypeRegistered, metav1.ConditionFalse, "MultipleNodesFound", "two nodes")
	Set(claim, v1.ConditionTypeInitialized, metav1.ConditionUnknown, "NodeNotReady", "")
	SetReady(claim)
	c := Get(claim, v1.ConditionTypeReady)
	if c.Status != metav1.ConditionFalse || c.Message != "Registered=False, Initialized=Unknown" {
		t.Errorf("Ready=%s %q: a False dependent wins and all are named", c.Status, c.Message)
	}
}

func TestSetTruncatesMessages(t *testing.T) {
	claim := &v1.NodeClaim{}
	long := make([]byte, 400)
	for i := range long {
		long[i] = 'x'
	}
	Set(claim, v1.ConditionTypeLaunched, metav1.ConditionUnknown, "", string(long))
	c := Get(claim, v1.ConditionTypeLaunched)
	if len(c.Message) != 300 || c.Reason != v1.ConditionTypeLaunched {
		t.Errorf("message length %d reason %q", len(c.Message), c.Reason)
	}
}
