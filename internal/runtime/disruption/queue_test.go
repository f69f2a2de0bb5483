package disruption

import (
	"context"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/requirements"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/state"
	"github.com/joistdev/terraform-provider-joist/internal/testenv"
)

func TestCommandTimeout(t *testing.T) {
	for _, tc := range []struct {
		queued int
		want   time.Duration
	}{
		{0, 10 * time.Minute},
		{1, 10 * time.Minute},
		{7500, 10 * time.Minute}, // 7500 x 80 ms is exactly the floor
		{7501, 10*time.Minute + 80*time.Millisecond},
		{30000, 40 * time.Minute},
		{45000, time.Hour},
		{1000000, time.Hour},
	} {
		if got := CommandTimeout(tc.queued); got != tc.want {
			t.Errorf("CommandTimeout(%d) = %s, want %s", tc.queued, got, tc.want)
		}
	}
}

// apiserver is an envtest kube-apiserver with the runtime's CRDs.
func apiserver(t *testing.T) client.Client { return testenv.KubeFor(t).Client }

// queueWorld is a real apiserver with the pool "default" and the instance
// type (f0.4x) the queue tests' candidates and replacements use.
func queueWorld(t *testing.T) (client.Client, *v1.NodePool, *scheduling.InstanceType) {
	t.Helper()
	kube := apiserver(t)
	pool := mkPool("default")
	if err := kube.Create(context.Background(), pool); err != nil {
		t.Fatal(err)
	}
	return kube, pool, catalog(1)[2]
}

// TestQueueRollsBackFailedCommands runs drift commands through the queue
// against a real apiserver. Nothing launches the replacements, so they
// never initialize: one is deleted the way an insufficient-capacity launch
// deletes it, the other runs into the command timeout. Either way the
// candidate must end up as before the command: untainted, without a
// DisruptionReason, not deleted, and the failure counted.
func TestQueueRollsBackFailedCommands(t *testing.T) {
	kube, pool, it := queueWorld(t)
	ctx := context.Background()

	t.Run("replacement deleted", func(t *testing.T) {
		clk := clocktesting.NewFakeClock(now)
		q := NewQueue(kube, kube, state.NewCluster(kube, clk), nil, clk)
		cand := candidateIn(t, kube, pool, it, "deleted-replacement")
		failures := driftQueueFailures(t)

		execute(t, q, kube, pool, cand, it)
		replacement := replacementOf(t, kube, cand)
		// As the launch does on insufficient capacity; the finalizer keeps
		// the claim visible, deleting.
		if err := kube.Delete(ctx, replacement); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { removeFinalizers(kube, replacement) })
		waitReleased(t, q, clk, cand, replacementPoll, nil)
		if clk.Since(now) >= 10*time.Minute {
			t.Fatalf("the command was released after %s of fake time: by its timeout, not the deleted replacement", clk.Since(now))
		}

		assertRolledBack(t, kube, cand)
		if got := driftQueueFailures(t) - failures; got != 1 {
			t.Errorf("queue failures rose by %v, want 1", got)
		}
	})

	t.Run("command timeout", func(t *testing.T) {
		clk := clocktesting.NewFakeClock(now)
		q := NewQueue(kube, kube, state.NewCluster(kube, clk), nil, clk)
		cand := candidateIn(t, kube, pool, it, "slow-replacement")
		failures := driftQueueFailures(t)

		start := clk.Now()
		execute(t, q, kube, pool, cand, it)
		replacement := replacementOf(t, kube, cand)
		t.Cleanup(func() { removeFinalizers(kube, replacement) })
		// Whenever the command is back to waiting, it has checked the
		// time: within the timeout it must still hold its candidate.
		waitReleased(t, q, clk, cand, time.Minute, func() {
			if clk.Since(start) > 10*time.Minute {
				return
			}
			node := &corev1.Node{}
			if err := kube.Get(ctx, client.ObjectKeyFromObject(cand.Node), node); err != nil {
				t.Fatal(err)
			}
			if !hasDisruptedTaint(node) {
				t.Fatalf("the command gave up after %s, before its 10m timeout", clk.Since(start))
			}
		})
		if clk.Since(start) <= 10*time.Minute || clk.Since(start) > 12*time.Minute {
			t.Errorf("the command was released after %s of fake time, want just past its 10m timeout", clk.Since(start))
		}

		assertRolledBack(t, kube, cand)
		if got := driftQueueFailures(t) - failures; got != 1 {
			t.Errorf("queue failures rose by %v, want 1", got)
		}
		if err := kube.Get(ctx, client.ObjectKeyFromObject(replacement), &v1.NodeClaim{}); err != nil {
			t.Errorf("the replacement is gone after the rollback: %v", err)
		}
	})
}

// TestQueueFailsAReplacementGoneBeforeTheCacheShowedIt: the queue reads
// through a cache that never shows the replacement (an informer that lags
// behind a launch failing at once). The replacement is created and deleted
// unseen; the command must fail at its next poll, not at its 10-minute
// timeout, and roll the candidate back.
func TestQueueFailsAReplacementGoneBeforeTheCacheShowedIt(t *testing.T) {
	env := testenv.KubeFor(t)
	kube := env.Client
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	pool := mkPool("default")
	if err := kube.Create(ctx, pool); err != nil {
		t.Fatal(err)
	}
	it := catalog(1)[2]
	// Only initialized claims (the candidates) reach this cache; Nodes are
	// read live, so the rollback's optimistic lock sees the taint.
	initialized, err := labels.Parse(v1.NodeInitializedLabelKey + "=true")
	if err != nil {
		t.Fatal(err)
	}
	lagging, err := cache.New(env.Config, cache.Options{Scheme: env.Scheme, ByObject: map[client.Object]cache.ByObject{
		&v1.NodeClaim{}: {Label: initialized},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lagging.GetInformer(ctx, &v1.NodeClaim{}); err != nil {
		t.Fatal(err)
	}
	go func() { _ = lagging.Start(ctx) }()
	if !lagging.WaitForCacheSync(ctx) {
		t.Fatal("the cache did not sync")
	}
	cached, err := client.New(env.Config, client.Options{Scheme: env.Scheme, Cache: &client.CacheOptions{Reader: lagging, DisableFor: []client.Object{&corev1.Node{}}}})
	if err != nil {
		t.Fatal(err)
	}
	clk := clocktesting.NewFakeClock(now)
	q := NewQueue(cached, kube, state.NewCluster(cached, clk), nil, clk)
	cand := candidateIn(t, kube, pool, it, "unseen-replacement")
	failures := driftQueueFailures(t)

	execute(t, q, kube, pool, cand, it)
	replacement := replacementOf(t, kube, cand)
	// The rollback reads the candidate's claim through the cache.
	eventuallyCached(t, lagging, cand.NodeClaim, func(c *v1.NodeClaim) bool {
		return meta.FindStatusCondition(c.Status.Conditions, v1.ConditionTypeDisruptionReason) != nil
	})
	// Gone for good, as a launch that fails deletes it and its finalizer
	// goes with the instance.
	if err := kube.Delete(ctx, replacement); err != nil {
		t.Fatal(err)
	}
	removeFinalizers(kube, replacement)
	waitReleased(t, q, clk, cand, replacementPoll, nil)
	if clk.Since(now) >= MinCommandTimeout {
		t.Fatalf("the command was released after %s of fake time: by its timeout, not the deleted replacement", clk.Since(now))
	}
	assertRolledBack(t, kube, cand)
	if got := driftQueueFailures(t) - failures; got != 1 {
		t.Errorf("queue failures rose by %v, want 1", got)
	}
}

// eventuallyCached waits until the cache shows claim as ok wants it.
func eventuallyCached(t *testing.T, c cache.Cache, claim *v1.NodeClaim, ok func(*v1.NodeClaim) bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for got := (&v1.NodeClaim{}); c.Get(context.Background(), client.ObjectKeyFromObject(claim), got) != nil || !ok(got); {
		if time.Now().After(deadline) {
			t.Fatalf("nodeclaim %s not in the cache as wanted after 30s", claim.Name)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A replacement that cannot be created fails the command at once: the
// candidate is rolled back, nothing is deleted, and the failure counts.
func TestQueueRollsBackWhenReplacementsCannotBeCreated(t *testing.T) {
	kube, pool, it := queueWorld(t)
	ctx := context.Background()
	clk := clocktesting.NewFakeClock(now)
	q := NewQueue(kube, kube, state.NewCluster(kube, clk), nil, clk)
	cand := candidateIn(t, kube, pool, it, "orphan-replacement")
	failures := driftQueueFailures(t)

	replacement := &scheduling.NewClaim{NodePool: "deleted-pool", Requirements: requirements.NewRequirements(),
		InstanceTypes: []scheduling.ClaimOption{{Type: it, Price: odPrice(0, 4), Offerings: it.Offerings[:1]}}}
	cmd := &Command{Method: MethodDrift, Reason: v1.DisruptionReasonDrifted, Candidates: []*Candidate{cand}, Replacements: []*scheduling.NewClaim{replacement}}
	err := q.Execute(ctx, cmd, []*v1.NodePool{pool})
	if err == nil || !strings.Contains(err.Error(), "deleted-pool") {
		t.Fatalf("Execute = %v, want an error naming the replacement's missing nodepool", err)
	}
	assertRolledBack(t, kube, cand)
	if got := driftQueueFailures(t) - failures; got != 1 {
		t.Errorf("queue failures rose by %v, want 1", got)
	}
	if q.Held()[cand.Node.Name] {
		t.Errorf("candidate %s still held by a failed command", cand.Node.Name)
	}
}

func driftQueueFailures(t *testing.T) float64 {
	t.Helper()
	m := &dto.Metric{}
	if err := queueFailures.WithLabelValues("replace", "drifted", "").Write(m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

// candidateIn creates an initialized NodeClaim and its Node in pool and
// returns them as a disruption candidate.
func candidateIn(t *testing.T, kube client.Client, pool *v1.NodePool, it *scheduling.InstanceType, name string) *Candidate {
	t.Helper()
	ctx := context.Background()
	labels := map[string]string{
		v1.NodePoolLabelKey: pool.Name, corev1.LabelInstanceTypeStable: it.Name, corev1.LabelTopologyZone: zone,
		v1.CapacityTypeLabelKey: v1.CapacityTypeOnDemand, v1.NodeInitializedLabelKey: "true",
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
	claim.Status.ProviderID = providerID
	claim.Status.NodeName = name
	claim.Status.Conditions = []metav1.Condition{
		{Type: v1.ConditionTypeInitialized, Status: metav1.ConditionTrue, Reason: v1.ConditionTypeInitialized, LastTransitionTime: metav1.NewTime(now)},
		{Type: v1.ConditionTypeDrifted, Status: metav1.ConditionTrue, Reason: "NodePoolDrifted", LastTransitionTime: metav1.NewTime(now)},
	}
	if err := kube.Status().Update(ctx, claim); err != nil {
		t.Fatal(err)
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: corev1.NodeSpec{ProviderID: providerID, Taints: []corev1.Taint{
			{Key: "dedicated", Value: "batch", Effect: corev1.TaintEffectNoSchedule},
		}},
	}
	if err := kube.Create(ctx, node); err != nil {
		t.Fatal(err)
	}
	return &Candidate{
		StateNode: &state.StateNode{Node: node, NodeClaim: claim}, Pool: pool,
		InstanceType: it, Zone: zone, CapacityType: v1.CapacityTypeOnDemand, Price: odPrice(0, 4),
	}
}

// execute starts a drift command replacing cand with one node of type it,
// and checks that it tainted and marked the candidate.
func execute(t *testing.T, q *Queue, kube client.Client, pool *v1.NodePool, cand *Candidate, it *scheduling.InstanceType) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	replacement := &scheduling.NewClaim{
		NodePool: pool.Name,
		Requirements: requirements.NewRequirements(
			requirements.New(v1.NodePoolLabelKey, corev1.NodeSelectorOpIn, pool.Name),
			requirements.New(corev1.LabelInstanceTypeStable, corev1.NodeSelectorOpIn, it.Name),
			requirements.New(v1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, v1.CapacityTypeOnDemand),
		),
		InstanceTypes: []scheduling.ClaimOption{{Type: it, Price: odPrice(0, 4), Offerings: it.Offerings[:1]}},
		Requests:      corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
	}
	cmd := &Command{Method: MethodDrift, Reason: v1.DisruptionReasonDrifted, Candidates: []*Candidate{cand}, Replacements: []*scheduling.NewClaim{replacement}}
	if err := q.Execute(ctx, cmd, []*v1.NodePool{pool}); err != nil {
		t.Fatal(err)
	}
	node := &corev1.Node{}
	if err := kube.Get(ctx, client.ObjectKeyFromObject(cand.Node), node); err != nil {
		t.Fatal(err)
	}
	if !hasDisruptedTaint(node) {
		t.Fatalf("node %s has taints %v after the command started, want %s", node.Name, node.Spec.Taints, v1.DisruptedTaintKey)
	}
	claim := &v1.NodeClaim{}
	if err := kube.Get(ctx, client.ObjectKeyFromObject(cand.NodeClaim), claim); err != nil {
		t.Fatal(err)
	}
	if c := meta.FindStatusCondition(claim.Status.Conditions, v1.ConditionTypeDisruptionReason); c == nil || c.Reason != string(v1.DisruptionReasonDrifted) {
		t.Fatalf("nodeclaim %s has DisruptionReason %+v after the command started, want reason %s", claim.Name, c, v1.DisruptionReasonDrifted)
	}
	if !q.Held()[node.Name] {
		t.Fatalf("node %s is not held by the queue while its command runs", node.Name)
	}
}

// replacementOf finds the replacement the command created for cand.
func replacementOf(t *testing.T, kube client.Client, cand *Candidate) *v1.NodeClaim {
	t.Helper()
	claims := &v1.NodeClaimList{}
	if err := kube.List(context.Background(), claims, client.MatchingLabels{v1.NodePoolLabelKey: cand.Pool.Name}); err != nil {
		t.Fatal(err)
	}
	var out *v1.NodeClaim
	for i := range claims.Items {
		c := &claims.Items[i]
		if c.Status.ProviderID == "" && c.DeletionTimestamp == nil {
			if out != nil {
				t.Fatalf("more than one replacement: %s and %s", out.Name, c.Name)
			}
			out = c
		}
	}
	if out == nil {
		t.Fatal("the command created no replacement nodeclaim")
	}
	return out
}

// waitReleased advances the fake clock by step each time the command
// waits on it, calling onWait first, until the queue lets go of cand: a
// failed command releases its candidates once it has rolled them back.
func waitReleased(t *testing.T, q *Queue, clk *clocktesting.FakeClock, cand *Candidate, step time.Duration, onWait func()) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for q.Held()[cand.Node.Name] {
		if time.Now().After(deadline) {
			t.Fatalf("the command still holds node %s after %s of fake time", cand.Node.Name, clk.Since(now))
		}
		if clk.HasWaiters() {
			if onWait != nil {
				onWait()
			}
			clk.Step(step)
			continue
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// assertRolledBack checks the candidate is back as it was before the
// command, its other taints kept.
func assertRolledBack(t *testing.T, kube client.Client, cand *Candidate) {
	t.Helper()
	ctx := context.Background()
	node := &corev1.Node{}
	if err := kube.Get(ctx, client.ObjectKeyFromObject(cand.Node), node); err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(node.Spec.Taints, cand.Node.Spec.Taints) {
		t.Errorf("node %s has taints %v after the rollback, want those it had before: %v", node.Name, node.Spec.Taints, cand.Node.Spec.Taints)
	}
	if _, ok := node.Labels[v1.NodeExcludeFromExternalLoadBalancersLabelKey]; ok {
		t.Errorf("node %s still excluded from external load balancers after the rollback", node.Name)
	}
	if node.DeletionTimestamp != nil {
		t.Errorf("node %s is being deleted after the rollback", node.Name)
	}
	claim := &v1.NodeClaim{}
	if err := kube.Get(ctx, client.ObjectKeyFromObject(cand.NodeClaim), claim); err != nil {
		t.Fatal(err)
	}
	if c := meta.FindStatusCondition(claim.Status.Conditions, v1.ConditionTypeDisruptionReason); c != nil {
		t.Errorf("nodeclaim %s keeps DisruptionReason %+v after the rollback", claim.Name, c)
	}
	if !meta.IsStatusConditionTrue(claim.Status.Conditions, v1.ConditionTypeDrifted) {
		t.Errorf("nodeclaim %s lost its Drifted condition in the rollback", claim.Name)
	}
	if claim.DeletionTimestamp != nil {
		t.Errorf("nodeclaim %s is being deleted after the rollback", claim.Name)
	}
}

func hasDisruptedTaint(node *corev1.Node) bool {
	for _, t := range node.Spec.Taints {
		if t.Key == v1.DisruptedTaintKey && t.Effect == corev1.TaintEffectNoSchedule {
			return true
		}
	}
	return false
}

func removeFinalizers(kube client.Client, claim *v1.NodeClaim) {
	ctx := context.Background()
	stored := &v1.NodeClaim{}
	if err := kube.Get(ctx, client.ObjectKeyFromObject(claim), stored); err != nil {
		return
	}
	patch := client.MergeFrom(stored.DeepCopy())
	stored.Finalizers = nil
	_ = kube.Patch(ctx, stored, patch)
}
