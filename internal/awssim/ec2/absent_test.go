package ec2_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/smithy-go"

	sim "github.com/joistdev/terraform-provider-joist/internal/awssim/ec2"
)

// As EC2 (and moto): an absent ID among others fails the whole
// DescribeInstances or TerminateInstances, whose error names every absent
// ID, and terminates nothing.
func TestAnAbsentIDFailsTheWholeCallAndIsNamed(t *testing.T) {
	_, client, _ := newEC2(t, sim.Options{})
	w := discover(t, client)
	live := aws.ToString(run(t, client, w, "m5.large", 1, "")[0].InstanceId)
	absent := []string{"i-00000000000000001", "i-00000000000000002"}
	ids := append([]string{live}, absent...)

	_, err := client.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: ids})
	assertNamesAbsent(t, "DescribeInstances", err, absent)
	_, err = client.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: ids})
	assertNamesAbsent(t, "TerminateInstances", err, absent)

	out, err := client.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{live}})
	if err != nil {
		t.Fatal(err)
	}
	if st := out.Reservations[0].Instances[0].State.Name; st == ec2types.InstanceStateNameShuttingDown || st == ec2types.InstanceStateNameTerminated {
		t.Errorf("a failed TerminateInstances left the live instance %s", st)
	}
}

func assertNamesAbsent(t *testing.T, op string, err error, absent []string) {
	t.Helper()
	var ae smithy.APIError
	if !errors.As(err, &ae) || ae.ErrorCode() != "InvalidInstanceID.NotFound" {
		t.Fatalf("%s with absent IDs: %v, want InvalidInstanceID.NotFound", op, err)
	}
	for _, id := range absent {
		if !strings.Contains(ae.ErrorMessage(), id) {
			t.Errorf("%s error %q does not name absent instance %s", op, ae.ErrorMessage(), id)
		}
	}
}
