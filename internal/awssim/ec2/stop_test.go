package ec2_test

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	sim "github.com/joistdev/terraform-provider-joist/internal/awssim/ec2"
)

func TestStopInstancesStopsOnDemandAndRefusesSpot(t *testing.T) {
	_, client, _ := newEC2(t, sim.Options{})
	w := discover(t, client)
	id := *run(t, client, w, "m5.large", 1, "")[0].InstanceId
	eventually(t, "running", func() bool { return state(t, client, id) == ec2types.InstanceStateNameRunning })
	out, err := client.StopInstances(ctx, &ec2.StopInstancesInput{InstanceIds: []string{id}})
	if err != nil {
		t.Fatal(err)
	}
	if c := out.StoppingInstances[0]; c.PreviousState.Name != ec2types.InstanceStateNameRunning || c.CurrentState.Name != ec2types.InstanceStateNameStopping {
		t.Errorf("stop: %s -> %s", c.PreviousState.Name, c.CurrentState.Name)
	}
	eventually(t, "stopped", func() bool { return state(t, client, id) == ec2types.InstanceStateNameStopped })
	// A stopped instance can still be terminated.
	if _, err := client.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{id}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "terminated", func() bool { return state(t, client, id) == ec2types.InstanceStateNameTerminated })
	if _, err := client.StopInstances(ctx, &ec2.StopInstancesInput{InstanceIds: []string{id}}); apiCode(t, err) != "IncorrectInstanceState" {
		t.Errorf("stopping a terminated instance: %v", err)
	}

	spot := *run(t, client, w, "m5.large", 1, ec2types.MarketTypeSpot)[0].InstanceId
	if _, err := client.StopInstances(ctx, &ec2.StopInstancesInput{InstanceIds: []string{spot}}); apiCode(t, err) != "UnsupportedOperation" {
		t.Errorf("stopping a one-time spot instance: %v", err)
	}
}
