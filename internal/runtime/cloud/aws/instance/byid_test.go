package instance_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/cache"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/instance"
)

// concurrently runs f for every ID at once and returns its errors by ID.
func concurrently(ids []string, f func(id string) error) map[string]error {
	errs := make(map[string]error, len(ids))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Go(func() {
			err := f(id)
			mu.Lock()
			errs[id] = err
			mu.Unlock()
		})
	}
	wg.Wait()
	return errs
}

// Describes and terminations asked for together share one call each; an
// absent instance among them fails only itself (EC2 fails the whole call
// and names it, and the rest are asked again once).
func TestConcurrentGetsAndTerminatesShareCalls(t *testing.T) {
	ctx := context.Background()
	launcher := instance.New(ec2c, cluster, cache.NewUnavailableOfferings(), instance.BatchOptions{Idle: time.Minute, Max: time.Minute, MaxItems: 5})
	insts, errs := launchAll(t, launcher, "m5.large", 5)
	var live []string
	for i, inst := range insts {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		live = append(live, inst.ID)
	}
	absent := []string{"i-0000000000000dead", "i-0000000000000beef"}

	p := instance.New(ec2c, cluster, cache.NewUnavailableOfferings(), instance.BatchOptions{})
	before := sim.Requests().Count("ec2", "DescribeInstances")
	got := map[string]*instance.Instance{}
	var mu sync.Mutex
	getErrs := concurrently(append(append([]string{}, live...), absent...), func(id string) error {
		inst, err := p.Get(ctx, id)
		mu.Lock()
		got[id] = inst
		mu.Unlock()
		return err
	})
	// One call for all seven; EC2 names the two absent ones, one more for
	// the five.
	if n := sim.Requests().Count("ec2", "DescribeInstances") - before; n != 2 {
		t.Errorf("7 concurrent Gets (2 absent) made %d DescribeInstances calls, want 2", n)
	}
	for _, id := range live {
		if getErrs[id] != nil || got[id] == nil || got[id].ID != id {
			t.Errorf("Get(%s) = %+v, %v, want the instance", id, got[id], getErrs[id])
		}
	}
	for _, id := range absent {
		if !cloud.IsNodeClaimNotFound(getErrs[id]) {
			t.Errorf("Get(%s) of an absent instance: %v, want a NodeClaimNotFoundError", id, getErrs[id])
		}
	}

	before = sim.Requests().Count("ec2", "TerminateInstances")
	termErrs := concurrently(append(append([]string{}, live...), absent[0]), func(id string) error { return p.Terminate(ctx, id) })
	if n := sim.Requests().Count("ec2", "TerminateInstances") - before; n != 2 {
		t.Errorf("6 concurrent Terminates (1 absent) made %d TerminateInstances calls, want 2", n)
	}
	if !cloud.IsNodeClaimNotFound(termErrs[absent[0]]) {
		t.Errorf("Terminate(%s) of an absent instance: %v, want a NodeClaimNotFoundError", absent[0], termErrs[absent[0]])
	}
	out, err := ec2c.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: live})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range out.Reservations {
		for _, i := range r.Instances {
			id := aws.ToString(i.InstanceId)
			if termErrs[id] != nil {
				t.Errorf("Terminate(%s): %v", id, termErrs[id])
			}
			if s := i.State.Name; s != ec2types.InstanceStateNameShuttingDown && s != ec2types.InstanceStateNameTerminated {
				t.Errorf("instance %s is %s after Terminate", id, s)
			}
		}
	}
}
