package aws

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/ec2"

	"github.com/joistdev/terraform-provider-joist/internal/awssim"
	"github.com/joistdev/terraform-provider-joist/internal/awssim/fault"
)

// TestRetriesDrawOnAQuota throttles every DescribeSubnets and calls it
// through the provider's retryer until the retry quota is spent: from then
// on a throttled call fails after its one attempt, with the SDK's quota
// error, instead of being tried retryMaxAttempts times.
func TestRetriesDrawOnAQuota(t *testing.T) {
	ctx := context.Background()
	sim, err := awssim.Start(ctx, awssim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sim.Close)
	if _, err := sim.Faults().Add(fault.Fault{Service: "ec2", Operation: "DescribeSubnets", Kind: fault.Throttle}); err != nil {
		t.Fatal(err)
	}
	cfg := tune(sim.AWSConfig())
	r := cfg.Retryer()
	if got := r.MaxAttempts(); got != retryMaxAttempts {
		t.Fatalf("MaxAttempts = %d, want %d", got, retryMaxAttempts)
	}
	// Backoff only slows the test; the quota is the retryer's own.
	client := ec2.NewFromConfig(cfg, func(o *ec2.Options) { o.Retryer = retry.AddWithMaxBackoffDelay(r, 0) })
	const maxCalls = 100 // 500 tokens at 5 a retry: the bucket is empty after 15 calls
	for call := 1; call <= maxCalls; call++ {
		before := sim.Requests().Count("ec2", "DescribeSubnets")
		_, err := client.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{})
		if err == nil {
			t.Fatal("DescribeSubnets succeeded under a throttling fault")
		}
		attempts := sim.Requests().Count("ec2", "DescribeSubnets") - before
		if attempts == 1 && call > 1 {
			var quota ratelimit.QuotaExceededError
			if !errors.As(err, &quota) {
				t.Fatalf("call %d made one attempt but failed with %v, not the retry quota", call, err)
			}
			t.Logf("call %d: quota spent, one attempt: %v", call, err)
			return
		}
	}
	t.Fatalf("after %d throttled calls every call still retried: the retryer has no quota", maxCalls)
}
