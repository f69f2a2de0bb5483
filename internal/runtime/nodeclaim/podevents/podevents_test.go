package podevents

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	nodeclaimdisruption "github.com/joistdev/terraform-provider-joist/internal/runtime/nodeclaim/disruption"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/state"
	"github.com/joistdev/terraform-provider-joist/internal/testenv"
)

func TestStampsPodEvent(t *testing.T) {
	stored := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		at   time.Time
		want bool
	}{
		{stored.Add(-time.Minute), false}, // never backwards
		{stored.Add(9 * time.Second), false},
		{stored.Add(10 * time.Second), true},
		{time.Time{}.Add(time.Hour), false},
	} {
		if got := StampsPodEvent(stored, tc.at); got != tc.want {
			t.Errorf("StampsPodEvent(%s, %s) = %v, want %v", stored, tc.at, got, tc.want)
		}
	}
	if !StampsPodEvent(time.Time{}, stored) {
		t.Error("a claim without a pod event was not stamped")
	}
}

// The consolidation clock runs from the time each pod records for its
// event, so neither a controller restart (which lists every pod again) nor
// DaemonSet pods move it; a pod bound later does.
func TestPodEventsUseThePodsOwnTimes(t *testing.T) {
	ctx := context.Background()
	kube := testenv.KubeFor(t)
	c := kube.Client
	now := time.Now().Truncate(time.Second)
	after := 10 * time.Minute

	pool := &v1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: "general"},
		Spec: v1.NodePoolSpec{
			Template: v1.NodeClaimTemplate{Spec: v1.NodeClaimTemplateSpec{
				Requirements: v1.Requirements{testenv.In(v1.CapacityTypeLabelKey, v1.CapacityTypeOnDemand)},
				NodeClassRef: &v1.NodeClassReference{Group: v1.AWSGroup, Kind: "EC2NodeClass", Name: "default"},
			}},
			Disruption: v1.Disruption{ConsolidateAfter: v1.NillableDuration{Duration: &after}, ConsolidationPolicy: v1.ConsolidationPolicyWhenEmptyOrUnderutilized},
		},
	}
	must(t, c.Create(ctx, pool))
	const providerID = "aws:///us-west-2a/i-0123456789abcdef0"
	claim := testenv.NodeClaim("general-abc", pool.Name, "default", testenv.In(v1.CapacityTypeLabelKey, v1.CapacityTypeOnDemand))
	must(t, c.Create(ctx, claim))
	claim.Status.ProviderID = providerID
	claim.Status.Conditions = []metav1.Condition{{Type: v1.ConditionTypeInitialized, Status: metav1.ConditionTrue, Reason: "Initialized",
		LastTransitionTime: metav1.NewTime(now.Add(-2 * time.Hour))}}
	must(t, c.Status().Update(ctx, claim))
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "ip-10-0-0-1"}, Spec: corev1.NodeSpec{ProviderID: providerID}}
	must(t, c.Create(ctx, node))

	// Before the controller starts: a workload pod bound an hour ago and a
	// DaemonSet pod bound just now.
	boundPod(t, c, "web-1", node.Name, now.Add(-time.Hour), false)
	boundPod(t, c, "logs-1", node.Name, now, true)

	stop := startPodEvents(t, kube)
	// A workload pod bound after the DaemonSet pod, earlier than now: the
	// informer delivers events in order, so once its time is stored the
	// DaemonSet pod has been seen, and counting it would have stored now.
	boundPod(t, c, "web-2", node.Name, now.Add(-30*time.Minute), false)
	if got := waitPodEvent(t, c, claim, now.Add(-30*time.Minute)); !got.Equal(now.Add(-30 * time.Minute)) {
		t.Fatalf("lastPodEventTime = %s, want web-2's binding at %s (the DaemonSet pod bound at %s must not count)", got, now.Add(-30*time.Minute), now)
	}

	// A restart lists every pod again.
	stop()
	startPodEvents(t, kube)
	boundPod(t, c, "web-3", node.Name, now.Add(-20*time.Minute), false)
	if got := waitPodEvent(t, c, claim, now.Add(-20*time.Minute)); !got.Equal(now.Add(-20 * time.Minute)) {
		t.Fatalf("after a restart lastPodEventTime = %s, want web-3's binding at %s: the restart moved the clock", got, now.Add(-20*time.Minute))
	}
	must(t, c.Get(ctx, client.ObjectKeyFromObject(claim), claim))
	if ok, _ := nodeclaimdisruption.Consolidatable(claim, pool, now); !ok {
		t.Errorf("last pod event 20m ago with consolidateAfter 10m: not consolidatable")
	}
}

func boundPod(t *testing.T, c client.Client, name, node string, scheduled time.Time, daemon bool) {
	t.Helper()
	ctx := context.Background()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "pause"}}},
	}
	if daemon {
		pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "logs", UID: "ds-uid"}}
	}
	must(t, c.Create(ctx, pod))
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(scheduled)}}
	must(t, c.Status().Update(ctx, pod))
}

// startPodEvents runs the controller in its own manager until the
// returned stop (or the test's end).
func startPodEvents(t *testing.T, kube *testenv.Kube) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	mgr, err := manager.New(kube.Config, manager.Options{Scheme: kube.Scheme, Cache: state.CacheOptions(),
		Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
		// The restart registers the controller's name a second time.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)}})
	must(t, err)
	must(t, state.Setup(ctx, mgr))
	must(t, NewPodEvents(mgr.GetClient(), clock.RealClock{}).Register(mgr))
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			t.Error(err)
		}
	}()
	stop = func() { cancel(); <-done }
	t.Cleanup(stop)
	return stop
}

// waitPodEvent waits until the claim's lastPodEventTime is at least
// atLeast and returns it.
func waitPodEvent(t *testing.T, c client.Client, claim *v1.NodeClaim, atLeast time.Time) time.Time {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		got := &v1.NodeClaim{}
		must(t, c.Get(context.Background(), client.ObjectKeyFromObject(claim), got))
		if at := got.Status.LastPodEventTime.Time; !at.Before(atLeast) {
			return at
		}
		if time.Now().After(deadline) {
			t.Fatalf("lastPodEventTime stayed %s, never reached %s", got.Status.LastPodEventTime.Time, atLeast)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
