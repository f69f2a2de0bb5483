package ec2_test

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	sim "github.com/joistdev/terraform-provider-joist/internal/awssim/ec2"
)

// TestRunInstancesClientTokenIsIdempotent: a RunInstances repeated with the
// same ClientToken (what the SDK does when it retries a call whose answer
// was lost) returns the first reservation and launches nothing more.
func TestRunInstancesClientTokenIsIdempotent(t *testing.T) {
	_, client, _ := newEC2(t, sim.Options{})
	w := discover(t, client)
	in := &ec2.RunInstancesInput{
		ImageId: aws.String(w.al2023x86), InstanceType: ec2types.InstanceTypeM5Large, SubnetId: aws.String(w.subnets["us-west-2a"]),
		MinCount: aws.Int32(2), MaxCount: aws.Int32(2), ClientToken: aws.String("retry-me"),
	}
	first, err := client.RunInstances(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	again, err := client.RunInstances(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(again.ReservationId) != aws.ToString(first.ReservationId) {
		t.Errorf("the repeated call made reservation %s, want the first one %s", aws.ToString(again.ReservationId), aws.ToString(first.ReservationId))
	}
	out, err := client.DescribeInstances(ctx, &ec2.DescribeInstancesInput{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range out.Reservations {
		n += len(r.Instances)
	}
	if n != 2 {
		t.Errorf("%d instances after two calls with one ClientToken, want 2", n)
	}
}
