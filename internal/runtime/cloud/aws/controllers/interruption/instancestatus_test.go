package interruption_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/go-logr/logr"
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
