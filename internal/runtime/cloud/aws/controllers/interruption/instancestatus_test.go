package interruption_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/controllers/interruption"
)

func TestUnhealthyInstances(t *testing.T) {
	now := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	check := func(status ec2types.StatusType, since time.Time) *ec2types.InstanceStatusSummary {
		d := ec2types.InstanceStatusDetails{Name: ec2types.StatusNameReachability, Status: status}
		if !since.IsZero() {
			d.ImpairedSince = aws.Time(since)
		}
		return &ec2types.InstanceStatusSummary{Details: []ec2types.InstanceStatusDetails{d}}
	}
	ok := check(ec2types.StatusTypePassed, time.Time{})
	got := interruption.UnhealthyInstances([]ec2types.InstanceStatus{
		{InstanceId: aws.String("i-fine"), InstanceStatus: ok, SystemStatus: ok},
		{InstanceId: aws.String("i-blip"), InstanceStatus: check(ec2types.StatusTypeFailed, now.Add(-119*time.Second)), SystemStatus: ok},
		{InstanceId: aws.String("i-broken"), InstanceStatus: check(ec2types.StatusTypeFailed, now.Add(-2*time.Minute)), SystemStatus: ok},
		{InstanceId: aws.String("i-host"), InstanceStatus: ok, SystemStatus: check(ec2types.StatusTypeFailed, now.Add(-time.Hour))},
		{InstanceId: aws.String("i-retiring"), InstanceStatus: ok, SystemStatus: ok, Events: []ec2types.InstanceStatusEvent{{Code: ec2types.EventCodeInstanceRetirement}}},
		{InstanceId: aws.String("i-rebooted"), InstanceStatus: ok, SystemStatus: ok, Events: []ec2types.InstanceStatusEvent{
			{Code: ec2types.EventCodeSystemReboot, Description: aws.String("[Completed] scheduled reboot")},
		}},
		{InstanceId: aws.String("i-spared"), InstanceStatus: ok, SystemStatus: ok, Events: []ec2types.InstanceStatusEvent{
			{Code: ec2types.EventCodeInstanceRetirement, Description: aws.String("[Canceled] The instance is running on degraded hardware")},
		}},
	}, now)
	want := map[string][]interruption.Kind{
		"i-broken": {interruption.InstanceStatus}, "i-host": {interruption.SystemStatus}, "i-retiring": {interruption.EventStatus},
	}
	if len(got) != len(want) {
		t.Fatalf("unhealthy %+v, want %v", got, want)
	}
	for _, u := range got {
		if w := want[u.InstanceID]; len(w) != 1 || len(u.Kinds) != 1 || u.Kinds[0] != w[0] {
			t.Errorf("%s: kinds %v, want %v", u.InstanceID, u.Kinds, w)
		}
	}
}

// TestFailedStatusCheckReplacesTheNodeClaimAtOnce polls awssim's
// DescribeInstanceStatus: an instance whose status check has failed for
// three minutes loses its NodeClaim with a termination deadline of now (no
// graceful drain); one failing for a few seconds, and a healthy one, keep
// theirs; a scheduled retirement deletes its NodeClaim with the usual drain.
func TestFailedStatusCheckReplacesTheNodeClaimAtOnce(t *testing.T) {
	ctx := testContext(t)
	broken, blip, retiring := launchSpot(t, ctx), launchSpot(t, ctx), launchSpot(t, ctx)
	brokenClaim, blipClaim, retiringClaim := claimFor(t, ctx, broken), claimFor(t, ctx, blip), claimFor(t, ctx, retiring)
	for _, nc := range []*v1.NodeClaim{brokenClaim, blipClaim, retiringClaim} {
		hold(t, nc)
	}
	if err := sim.EC2.SetImpairedSince(aws.ToString(broken.InstanceId), true, false, time.Now().Add(-3*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := sim.EC2.SetImpaired(aws.ToString(blip.InstanceId), true, false); err != nil {
		t.Fatal(err)
	}
	if err := sim.EC2.ScheduleChange([]string{aws.ToString(retiring.InstanceId)}, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	c := interruption.NewStatusController(interruption.Options{Kube: kube, Logger: logr.Discard(), Recorder: recorder(t)}, ec2.NewFromConfig(controllerAWS()))
	before := time.Now().Add(-time.Second)
	if err := c.Check(ctx); err != nil {
		t.Fatal(err)
	}
	got := get(t, brokenClaim)
	if got.DeletionTimestamp == nil {
		t.Fatal("the NodeClaim of an instance failing its status check for 3 minutes was not deleted")
	}
	deadline, err := time.Parse(time.RFC3339, got.Annotations[v1.NodeClaimTerminationTimestampAnnotationKey])
	if err != nil || deadline.Before(before.Truncate(time.Second)) || deadline.After(time.Now()) {
		t.Errorf("termination deadline %q (%v), want the time of the check", got.Annotations[v1.NodeClaimTerminationTimestampAnnotationKey], err)
	}
	waitEvent(t, ctx, brokenClaim, "InstanceUnhealthy")
	if got := get(t, blipClaim); got.DeletionTimestamp != nil {
		t.Error("a status check failing for seconds deleted its NodeClaim")
	}
	got = get(t, retiringClaim)
	if got.DeletionTimestamp == nil {
		t.Error("a scheduled retirement did not delete its NodeClaim")
	}
	if _, ok := got.Annotations[v1.NodeClaimTerminationTimestampAnnotationKey]; ok {
		t.Error("a scheduled event forced the drain; it should drain as usual")
	}
	called := false
	for _, r := range sim.Requests().Requests("ec2", "DescribeInstanceStatus") {
		called = called || r.AccessKeyID == controllerKey
	}
	if !called {
		t.Error("the controller never called DescribeInstanceStatus")
	}
	assertAllowedByPolicy(t, "status-demo")
}

// hold keeps a deleted NodeClaim readable, as termination's finalizer does.
func hold(t *testing.T, nc *v1.NodeClaim) {
	t.Helper()
	stored := nc.DeepCopy()
	nc.Finalizers = []string{"test.joist.dev/hold"}
	if err := kube.Patch(t.Context(), nc, client.MergeFrom(stored)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		current := &v1.NodeClaim{}
		if kube.Get(context.Background(), client.ObjectKeyFromObject(nc), current) == nil {
			patch := client.MergeFrom(current.DeepCopy())
			current.Finalizers = nil
			_ = kube.Patch(context.Background(), current, patch)
		}
	})
}

func get(t *testing.T, nc *v1.NodeClaim) *v1.NodeClaim {
	t.Helper()
	out := &v1.NodeClaim{}
	if err := kube.Get(t.Context(), client.ObjectKeyFromObject(nc), out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestEndedScheduledEventLeavesTheNodeClaim: EC2 keeps listing a scheduled
// event after it completed or was canceled, its description marked so;
// such an event deletes nothing.
func TestEndedScheduledEventLeavesTheNodeClaim(t *testing.T) {
	ctx := testContext(t)
	completed, canceled := launchSpot(t, ctx), launchSpot(t, ctx)
	var claims []*v1.NodeClaim
	for i, in := range []ec2types.Instance{completed, canceled} {
		nc := claimFor(t, ctx, in)
		hold(t, nc)
		claims = append(claims, nc)
		id := aws.ToString(in.InstanceId)
		if err := sim.EC2.ScheduleChange([]string{id}, time.Now().Add(-time.Hour)); err != nil {
			t.Fatal(err)
		}
		if err := sim.EC2.EndScheduledEvents(id, i == 1); err != nil {
			t.Fatal(err)
		}
	}
	c := interruption.NewStatusController(interruption.Options{Kube: kube, Logger: logr.Discard(), Recorder: recorder(t)}, ec2.NewFromConfig(controllerAWS()))
	if err := c.Check(ctx); err != nil {
		t.Fatal(err)
	}
	for _, nc := range claims {
		if get(t, nc).DeletionTimestamp != nil {
			t.Errorf("NodeClaim %s was deleted for a scheduled event that has ended", nc.Name)
		}
	}
}

// TestStatusPassIsBudgeted: a NodePool whose every node is reported at once
// is not emptied in one pass. Scheduled retirements of all five nodes of a
// pool with the default budget (10%, so one node) replace one node per pass
// while it is being deleted; failed status checks on two of five (over the
// 20% safety limit) replace none and say so.
func TestStatusPassIsBudgeted(t *testing.T) {
	ctx := testContext(t)
	retiring := statusPool(t, ctx, "status-retiring", 5)
	for _, m := range retiring {
		if err := sim.EC2.ScheduleChange([]string{m.instance}, time.Now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	impaired := statusPool(t, ctx, "status-impaired", 5)
	for _, m := range impaired[:2] {
		if err := sim.EC2.SetImpairedSince(m.instance, true, false, time.Now().Add(-3*time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	c := interruption.NewStatusController(interruption.Options{Kube: kube, Logger: logr.Discard(), Recorder: recorder(t)}, ec2.NewFromConfig(controllerAWS()))
	for pass := 1; pass <= 2; pass++ {
		if err := c.Check(ctx); err != nil {
			t.Fatal(err)
		}
		if n := deleting(t, retiring); n != 1 {
			t.Errorf("after pass %d, %d of the 5 retiring NodeClaims are being deleted; the pool's budget allows 1 at a time", pass, n)
		}
		if n := deleting(t, impaired); n != 0 {
			t.Errorf("after pass %d, %d NodeClaims of a pool with 2 of 5 nodes failing status checks are being deleted; want none (over the safety limit)", pass, n)
		}
	}
	waitEvent(t, ctx, impaired[0].claim, "DisruptionBlocked")
}

type statusMachine struct {
	instance string
	claim    *v1.NodeClaim
}

// statusPool creates a NodePool with the CRD's default budget and n
// initialized NodeClaims of it on running instances, held by a finalizer.
func statusPool(t *testing.T, ctx context.Context, name string, n int) []statusMachine {
	t.Helper()
	pool := &v1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.NodePoolSpec{Template: v1.NodeClaimTemplate{Spec: v1.NodeClaimTemplateSpec{
			Requirements: v1.Requirements{},
			NodeClassRef: &v1.NodeClassReference{Group: v1.AWSGroup, Kind: "EC2NodeClass", Name: "default"},
		}}},
	}
	if err := kube.Create(ctx, pool); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kube.Delete(context.Background(), pool) })
	var out []statusMachine
	for range n {
		in := launchSpot(t, ctx)
		nc := claimIn(t, ctx, in, name, v1.ConditionTypeLaunched, v1.ConditionTypeRegistered, v1.ConditionTypeInitialized)
		hold(t, nc)
		out = append(out, statusMachine{instance: aws.ToString(in.InstanceId), claim: nc})
	}
	return out
}

func deleting(t *testing.T, ms []statusMachine) int {
	t.Helper()
	n := 0
	for _, m := range ms {
		if get(t, m.claim).DeletionTimestamp != nil {
			n++
		}
	}
	return n
}
