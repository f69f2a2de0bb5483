package disruption

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/state"
)

// TestNewLeaderResumesACommandUnderWay: a leader tainted a node and
// created its replacement, then died while waiting for it. The next leader
// finds the node tainted by nobody it knows: it must not untaint it (and
// later disrupt it again, with a second replacement) but finish the
// command: wait for the replacement, then delete the node. A node tainted
// by a command that created no replacement is untainted, as before.
func TestNewLeaderResumesACommandUnderWay(t *testing.T) {
	kube, pool, it := queueWorld(t)
	ctx := context.Background()
	// The first leader's clock never moves again: it died waiting.
	dead := NewQueue(kube, kube, state.NewCluster(kube, clocktesting.NewFakeClock(now)), nil, clocktesting.NewFakeClock(now))
	cand := candidateIn(t, kube, pool, it, "resumed")
	execute(t, dead, kube, pool, cand, it)
	replacement := replacementOf(t, kube, cand)
	t.Cleanup(func() { removeFinalizers(kube, replacement) })
	if got := replacement.Annotations[v1.ReplacementForAnnotationKey]; got != cand.NodeClaim.Name {
		t.Fatalf("replacement %s is annotated %s=%q, want %q", replacement.Name, v1.ReplacementForAnnotationKey, got, cand.NodeClaim.Name)
	}
	orphan := candidateIn(t, kube, pool, it, "rolled-back")
	taint(t, kube, orphan.Node.Name)

	clk := clocktesting.NewFakeClock(now)
	next := NewController(kube, state.NewCluster(kube, clk), nil, nil, clk, Options{})
	next.removeStaleTaints(ctx, &Env{
		Now: now, Queued: next.queue.Held(),
		Snapshot: &state.Snapshot{NodePools: []*v1.NodePool{pool}, Nodes: []*state.StateNode{
			{Node: get(t, kube, &corev1.Node{}, cand.Node.Name), NodeClaim: get(t, kube, &v1.NodeClaim{}, cand.NodeClaim.Name)},
			{NodeClaim: replacement},
			{Node: get(t, kube, &corev1.Node{}, orphan.Node.Name), NodeClaim: get(t, kube, &v1.NodeClaim{}, orphan.NodeClaim.Name)},
		}},
	})
	if !hasDisruptedTaint(get(t, kube, &corev1.Node{}, cand.Node.Name)) || !next.queue.Held()[cand.Node.Name] {
		t.Fatalf("node %s was not resumed: untainted, or not held by the new leader's queue", cand.Node.Name)
	}
	if hasDisruptedTaint(get(t, kube, &corev1.Node{}, orphan.Node.Name)) {
		t.Errorf("node %s, tainted by a command that created no replacement, is still tainted", orphan.Node.Name)
	}

	// The replacement initializes: the resumed command deletes the node.
	replacement = get(t, kube, &v1.NodeClaim{}, replacement.Name)
	replacement.Status.Conditions = append(replacement.Status.Conditions, metav1.Condition{
		Type: v1.ConditionTypeInitialized, Status: metav1.ConditionTrue, Reason: v1.ConditionTypeInitialized, LastTransitionTime: metav1.NewTime(now),
	})
	if err := kube.Status().Update(ctx, replacement); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		claim := &v1.NodeClaim{}
		err := kube.Get(ctx, client.ObjectKeyFromObject(cand.NodeClaim), claim)
		if apierrors.IsNotFound(err) || (err == nil && claim.DeletionTimestamp != nil) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the resumed command did not delete nodeclaim %s once its replacement initialized", cand.NodeClaim.Name)
		}
		if clk.HasWaiters() {
			clk.Step(replacementPoll)
		}
		time.Sleep(10 * time.Millisecond)
	}
	claims := &v1.NodeClaimList{}
	if err := kube.List(ctx, claims, client.MatchingLabels{v1.NodePoolLabelKey: pool.Name}); err != nil {
		t.Fatal(err)
	}
	for _, c := range claims.Items {
		if c.Name != replacement.Name && c.Annotations[v1.ReplacementForAnnotationKey] != "" {
			t.Errorf("the new leader created a second replacement %s", c.Name)
		}
	}
}

func get[T client.Object](t *testing.T, kube client.Client, obj T, name string) T {
	t.Helper()
	if err := kube.Get(context.Background(), client.ObjectKey{Name: name}, obj); err != nil {
		t.Fatal(err)
	}
	return obj
}

func taint(t *testing.T, kube client.Client, name string) {
	t.Helper()
	node := get(t, kube, &corev1.Node{}, name)
	patch := client.MergeFrom(node.DeepCopy())
	v1.ApplyDisruptedTaint(node)
	if err := kube.Patch(context.Background(), node, patch); err != nil {
		t.Fatal(err)
	}
}
