package disruption

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/state"
)

// TestDriftKeepsNodesAfterAnAbandonedReplacement: two drifted nodes each
// run a pod that may not share a host with the other. The first pass
// replaces one of them; its replacement never registers, and after the
// command timeout the command is abandoned, the replacement left in
// flight. The next pass must not delete either node: the only room for
// either pod is that replacement, which has not initialized and may never
// do so.
func TestDriftKeepsNodesAfterAnAbandonedReplacement(t *testing.T) {
	kube, _, it := queueWorld(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	pool := &v1.NodePool{}
	if err := kube.Get(ctx, client.ObjectKey{Name: "default"}, pool); err != nil {
		t.Fatal(err)
	}
	pool.Status.Conditions = []metav1.Condition{{Type: v1.ConditionTypeReady, Status: metav1.ConditionTrue, Reason: v1.ConditionTypeReady, LastTransitionTime: metav1.NewTime(now)}}
	if err := kube.Status().Update(ctx, pool); err != nil {
		t.Fatal(err)
	}
	a := driftedNodeIn(t, kube, pool, it, "drifted-a", now.Add(-2*time.Hour))
	b := driftedNodeIn(t, kube, pool, it, "drifted-b", now.Add(-time.Hour))
	podA, podB := inflatePodOn(t, kube, a), inflatePodOn(t, kube, b)

	clk := clocktesting.NewFakeClock(now)
	c := NewController(kube, state.NewCluster(kube, clk), nil, nil, clk, Options{})

	// The first pass replaces the node drifted longest.
	first := pass(t, c, it)
	if first == nil || first.Method != MethodDrift || first.Candidates[0].Name() != a || len(first.Replacements) != 1 {
		t.Fatalf("first pass started %v, want %s replaced by one new node", first, a)
	}
	replacement := replacementOf(t, kube, first.Candidates[0])
	t.Cleanup(func() { removeFinalizers(kube, replacement) })
	waitReleased(t, c.queue, clk, first.Candidates[0], time.Minute, nil)
	assertRolledBack(t, kube, first.Candidates[0])
	if err := kube.Get(ctx, client.ObjectKeyFromObject(replacement), &v1.NodeClaim{}); err != nil {
		t.Fatalf("the abandoned replacement is gone (%v); the test needs it in flight", err)
	}

	// The next pass: whatever it starts runs to its end.
	if next := pass(t, c, it); next != nil {
		awaitIdle(t, c.queue, clk)
		t.Errorf("the pass after the abandoned command started %v, want nothing: neither pod has anywhere to go", next)
	}
	for _, name := range []string{a, b} {
		claim := &v1.NodeClaim{}
		if err := kube.Get(ctx, client.ObjectKey{Name: name}, claim); apierrors.IsNotFound(err) || (err == nil && claim.DeletionTimestamp != nil) {
			t.Errorf("nodeclaim %s was deleted", name)
		} else if err != nil {
			t.Fatal(err)
		}
	}
	for _, pod := range []*corev1.Pod{podA, podB} {
		got := &corev1.Pod{}
		if err := kube.Get(ctx, client.ObjectKeyFromObject(pod), got); err != nil || got.DeletionTimestamp != nil || got.Spec.NodeName != pod.Spec.NodeName {
			t.Errorf("pod %s is no longer running on %s (%v)", pod.Name, pod.Spec.NodeName, err)
		}
	}
}

// pass is one disruption pass over the cluster as the apiserver holds it,
// with it the only instance type: it starts what it decides at once and
// returns it (nil when it decides nothing to start now).
func pass(t *testing.T, c *Controller, it *scheduling.InstanceType) *Command {
	t.Helper()
	ctx := context.Background()
	snap, err := c.cluster.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	env := &Env{Now: c.clock.Now(), Snapshot: snap, PDBs: NewPDBLimits(nil), Queued: c.queue.Held(), InstanceTypes: map[string][]*scheduling.InstanceType{}}
	for _, p := range snap.NodePools {
		env.InstanceTypes[p.Name] = []*scheduling.InstanceType{it}
	}
	c.removeStaleTaints(ctx, env)
	batch, started, _ := c.decide(ctx, env)
	if len(batch) > 0 {
		t.Fatalf("decided %v for validation, want drift only", batch)
	}
	if started == nil {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	if err := c.queue.Execute(ctx, started, snap.NodePools); err != nil {
		t.Fatal(err)
	}
	return started
}

// driftedNodeIn creates an initialized, drifted NodeClaim and its Node of
// type it in pool, and returns the name they share.
func driftedNodeIn(t *testing.T, kube client.Client, pool *v1.NodePool, it *scheduling.InstanceType, name string, since time.Time) string {
	t.Helper()
	ctx := context.Background()
	labels := map[string]string{
		v1.NodePoolLabelKey: pool.Name, corev1.LabelInstanceTypeStable: it.Name, corev1.LabelTopologyZone: zone,
		v1.CapacityTypeLabelKey: v1.CapacityTypeOnDemand, v1.NodeInitializedLabelKey: "true", corev1.LabelHostname: name,
		corev1.LabelArchStable: "amd64", corev1.LabelOSStable: "linux",
	}
	providerID := "aws:///" + zone + "/i-" + name
	claim := &v1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: v1.NodeClaimSpec{
			Requirements: v1.Requirements{{Key: corev1.LabelInstanceTypeStable, Operator: corev1.NodeSelectorOpIn, Values: []string{it.Name}}},
			NodeClassRef: pool.Spec.Template.Spec.NodeClassRef.DeepCopy(),
		},
	}
	if err := kube.Create(ctx, claim); err != nil {
		t.Fatal(err)
	}
	claim.Status.ProviderID, claim.Status.NodeName = providerID, name
	claim.Status.Capacity, claim.Status.Allocatable = it.Capacity, it.Allocatable
	claim.Status.Conditions = []metav1.Condition{
		{Type: v1.ConditionTypeInitialized, Status: metav1.ConditionTrue, Reason: v1.ConditionTypeInitialized, LastTransitionTime: metav1.NewTime(since)},
		{Type: v1.ConditionTypeDrifted, Status: metav1.ConditionTrue, Reason: "NodePoolDrifted", LastTransitionTime: metav1.NewTime(since)},
	}
	if err := kube.Status().Update(ctx, claim); err != nil {
		t.Fatal(err)
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: corev1.NodeSpec{ProviderID: providerID}}
	if err := kube.Create(ctx, node); err != nil {
		t.Fatal(err)
	}
	node.Status.Capacity, node.Status.Allocatable = it.Capacity, it.Allocatable
	node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
	if err := kube.Status().Update(ctx, node); err != nil {
		t.Fatal(err)
	}
	return name
}

// inflatePodOn runs on node a 1-vCPU pod that must not share a host with
// another such pod.
func inflatePodOn(t *testing.T, kube client.Client, node string) *corev1.Pod {
	t.Helper()
	ctx := context.Background()
	app := map[string]string{"app": "inflate"}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "inflate-" + node, Labels: app},
		Spec: corev1.PodSpec{
			NodeName: node,
			Containers: []corev1.Container{{Name: "c", Image: "inflate", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("256Mi")}}}},
			Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				TopologyKey: corev1.LabelHostname, LabelSelector: &metav1.LabelSelector{MatchLabels: app},
			}}}},
		},
	}
	if err := kube.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	pod.Status.Phase = corev1.PodRunning
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	if err := kube.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
	return pod
}

// awaitIdle waits until the queue runs no command, stepping the clock
// whenever a command waits on it.
func awaitIdle(t *testing.T, q *Queue, clk *clocktesting.FakeClock) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		q.mu.Lock()
		executing := q.executing
		q.mu.Unlock()
		if executing == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the queue still runs %d commands after %s of fake time", executing, clk.Since(now))
		}
		if clk.HasWaiters() {
			clk.Step(replacementPoll)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
