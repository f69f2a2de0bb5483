package disruption

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/state"
)

// TestPassForgetsEventsOfDeletedNodes: the memo that spaces a node's
// repeated events goes with the node; the memo of a node still there stays
// (it still holds a repeat back).
func TestPassForgetsEventsOfDeletedNodes(t *testing.T) {
	kube := apiserver(t)
	ctx := context.Background()
	live := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "still-here"}}
	if err := kube.Create(ctx, live); err != nil {
		t.Fatal(err)
	}
	clk := clocktesting.NewFakeClock(now)
	c := NewController(kube, state.NewCluster(kube, clk), nil, nil, clk, Options{})
	c.lastEvents["still-here/blocked"] = eventMemo{message: "m", at: now}
	c.lastEvents["deleted/blocked"] = eventMemo{message: "m", at: now}
	if _, err := c.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.lastEvents["deleted/blocked"]; ok {
		t.Error("the event memo of a node that is gone is still held")
	}
	if _, ok := c.lastEvents["still-here/blocked"]; !ok {
		t.Error("the event memo of a live node was dropped")
	}
}
