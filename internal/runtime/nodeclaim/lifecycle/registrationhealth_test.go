package lifecycle

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kevents "k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/events"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/state/nodepoolhealth"
	"github.com/joistdev/terraform-provider-joist/internal/testenv"
)

// TestNodeRegistrationHealthy: a NodePool's NodeRegistrationHealthy
// condition follows its last four launches as Karpenter v1.15 sets it:
// True on a registration while fewer than half failed, False when a
// timeout makes half fail (with the launch's reason, or RegistrationFailed
// for an instance that never became a Node), and back to True only once
// the failures leave the window. Claims the pool does not own count for
// nothing.
func TestNodeRegistrationHealthy(t *testing.T) {
	ctx := context.Background()
	kube := testenv.KubeFor(t)
	pool := createPool(t, kube.Client, "general")
	c := &Controller{kube: kube.Client, recorder: events.NewRecorder(kevents.NewFakeRecorder(100)),
		clock: clocktesting.NewFakeClock(time.Now()), health: nodepoolhealth.New()}
	owned := metav1.OwnerReference{APIVersion: v1.SchemeGroupVersion.String(), Kind: "NodePool", Name: pool.Name, UID: pool.UID}
	claim := func(launched metav1.ConditionStatus, reason, msg string, owners ...metav1.OwnerReference) *v1.NodeClaim {
		return &v1.NodeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: "general-abc", Labels: map[string]string{v1.NodePoolLabelKey: pool.Name}, OwnerReferences: owners},
			Status:     v1.NodeClaimStatus{Conditions: []metav1.Condition{{Type: v1.ConditionTypeLaunched, Status: launched, Reason: reason, Message: msg}}},
		}
	}
	registered := claim(metav1.ConditionTrue, v1.ConditionTypeLaunched, "", owned)
	neverLaunched := claim(metav1.ConditionUnknown, "CreateFleetFailed", "CreateFleet: Unavailable", owned)
	neverRegistered := claim(metav1.ConditionTrue, v1.ConditionTypeLaunched, "", owned)
	stranger := claim(metav1.ConditionUnknown, "CreateFleetFailed", "CreateFleet: Unavailable")

	condition := func() *metav1.Condition {
		t.Helper()
		got := &v1.NodePool{}
		if err := kube.Client.Get(ctx, client.ObjectKeyFromObject(pool), got); err != nil {
			t.Fatal(err)
		}
		return meta.FindStatusCondition(got.Status.Conditions, v1.ConditionTypeNodeRegistrationHealthy)
	}
	step := func(what string, cl *v1.NodeClaim, ok bool, want metav1.ConditionStatus, reason string) {
		t.Helper()
		if err := c.registrationHealth(ctx, cl, ok); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		got := condition()
		switch {
		case want == "" && got != nil:
			t.Errorf("%s: NodeRegistrationHealthy %s (%s), want none", what, got.Status, got.Reason)
		case want != "" && (got == nil || got.Status != want || got.Reason != reason):
			t.Errorf("%s: NodeRegistrationHealthy %+v, want %s with reason %s", what, got, want, reason)
		}
	}
	step("a failure before any success", neverLaunched, false, "", "")
	step("a failure of a claim the pool does not own", stranger, false, "", "")
	// Two failures (the stranger's did not count) are half of the window.
	step("a second failure, a launch timeout", neverLaunched, false, metav1.ConditionFalse, "CreateFleetFailed")
	if got := condition(); got.Message != "CreateFleet: Unavailable" {
		t.Errorf("message %q, want the launch's", got.Message)
	}
	step("a registration while two of three failed", registered, true, metav1.ConditionFalse, "CreateFleetFailed")
	step("a second registration: two of four failed", registered, true, metav1.ConditionFalse, "CreateFleetFailed")
	step("a third: one of four failed", registered, true, metav1.ConditionTrue, v1.ConditionTypeNodeRegistrationHealthy)
	step("a registration timeout: one of four failed", neverRegistered, false, metav1.ConditionTrue, v1.ConditionTypeNodeRegistrationHealthy)
	step("a second registration timeout: two of four", neverRegistered, false, metav1.ConditionFalse, events.RegistrationFailed)
}

// TestLaunchTimeoutIsAnnounced: a claim given up at the launch timeout is
// reported as a FailedLaunch warning on the claim and its NodePool, naming
// the timeout and the last launch error.
func TestLaunchTimeoutIsAnnounced(t *testing.T) {
	claim := &v1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "boot-abc", UID: "uid-1", Labels: map[string]string{v1.NodePoolLabelKey: "boot"}},
		Status: v1.NodeClaimStatus{Conditions: []metav1.Condition{{Type: v1.ConditionTypeLaunched, Status: metav1.ConditionUnknown,
			Reason: "CreateFleetFailed", Message: "CreateFleet: RequestLimitExceeded"}}},
	}
	pool := &v1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "boot", UID: "uid-pool"}}
	fake := kevents.NewFakeRecorder(10)
	announceLaunchTimedOut(events.NewRecorder(fake), claim, pool)
	var got []string
	for len(fake.Events) > 0 {
		got = append(got, <-fake.Events)
	}
	if len(got) != 2 {
		t.Fatalf("events %q; want one on the claim and one on the pool", got)
	}
	for _, e := range got {
		for _, want := range []string{"Warning " + events.FailedLaunch + " Failed to launch node: ", LaunchTimeout.String(), "CreateFleet: RequestLimitExceeded"} {
			if !strings.Contains(e, want) {
				t.Errorf("event %q does not contain %q", e, want)
			}
		}
	}
	if !strings.Contains(got[1], "NodeClaim boot-abc") {
		t.Errorf("the nodepool's event %q does not name the nodeclaim", got[1])
	}
}

// TestRegistrationHealthRetriesAStaleRead: the NodePool read is stale (as
// the cache may be right after another write to the pool), so the
// condition's optimistic-lock patch conflicts. The outcome is still
// recorded and the condition written, on a fresh read, rather than lost
// with an error the registration's reconcile would not retry.
func TestRegistrationHealthRetriesAStaleRead(t *testing.T) {
	ctx := context.Background()
	kube := testenv.KubeFor(t)
	pool := createPool(t, kube.Client, "stale")
	stale := pool.DeepCopy()
	pool.Labels = map[string]string{"changed": "after-the-read"}
	if err := kube.Client.Update(ctx, pool); err != nil {
		t.Fatal(err)
	}
	ww, err := client.NewWithWatch(kube.Config, client.Options{Scheme: kube.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	staleReads := 1
	reader := interceptor.NewClient(ww, interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
		if p, ok := obj.(*v1.NodePool); ok && staleReads > 0 {
			staleReads--
			stale.DeepCopyInto(p)
			return nil
		}
		return c.Get(ctx, key, obj, opts...)
	}})
	health := nodepoolhealth.New()
	c := &Controller{kube: reader, recorder: events.NewRecorder(kevents.NewFakeRecorder(100)),
		clock: clocktesting.NewFakeClock(time.Now()), health: health}
	claim := &v1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "stale-abc", Labels: map[string]string{v1.NodePoolLabelKey: pool.Name},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: v1.SchemeGroupVersion.String(), Kind: "NodePool", Name: pool.Name, UID: pool.UID}}},
		Status: v1.NodeClaimStatus{Conditions: []metav1.Condition{{Type: v1.ConditionTypeLaunched, Status: metav1.ConditionTrue, Reason: v1.ConditionTypeLaunched}}},
	}
	if err := c.registrationHealth(ctx, claim, true); err != nil {
		t.Fatalf("registration after a stale read: %v", err)
	}
	if staleReads != 0 {
		t.Fatal("the stale read was not served")
	}
	got := &v1.NodePool{}
	if err := kube.Client.Get(ctx, client.ObjectKeyFromObject(pool), got); err != nil {
		t.Fatal(err)
	}
	if cond := meta.FindStatusCondition(got.Status.Conditions, v1.ConditionTypeNodeRegistrationHealthy); cond == nil || cond.Status != metav1.ConditionTrue {
		t.Errorf("NodeRegistrationHealthy %+v, want True", cond)
	}
	if got := health.Status(pool.UID); got != nodepoolhealth.Healthy {
		t.Errorf("pool health %v after the registration, want it recorded (Healthy)", got)
	}
}

// createPool creates an on-demand NodePool of that name.
func createPool(t *testing.T, kube client.Client, name string) *v1.NodePool {
	t.Helper()
	pool := &v1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.NodePoolSpec{Template: v1.NodeClaimTemplate{Spec: v1.NodeClaimTemplateSpec{
			Requirements: v1.Requirements{testenv.In(v1.CapacityTypeLabelKey, v1.CapacityTypeOnDemand)},
			NodeClassRef: &v1.NodeClassReference{Group: v1.AWSGroup, Kind: "EC2NodeClass", Name: "default"},
		}}},
	}
	if err := kube.Create(context.Background(), pool); err != nil {
		t.Fatal(err)
	}
	return pool
}
