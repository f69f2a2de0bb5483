package aws_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/fault"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/ami"
	"github.com/joistdev/terraform-provider-joist/internal/testenv"
)

// TestAMIAliasParametersInOneCall: an alias's SSM parameters (one per
// variant: architectures, GPU and Neuron images) are read in one
// GetParameters call at each refresh; a role denied ssm:GetParameters (a
// policy written for Karpenter) still resolves them, one GetParameter each.
func TestAMIAliasParametersInOneCall(t *testing.T) {
	ctx := context.Background()
	calls := func(key string) (batched, single int) {
		for _, r := range sim.Requests().Requests("ssm", "") {
			if r.AccessKeyID != key {
				continue
			}
			switch r.Operation {
			case "GetParameters":
				batched++
			case "GetParameter":
				single++
			}
		}
		return batched, single
	}
	provider := func(key string) *ami.Provider {
		cfg := sim.AWSConfig()
		cfg.Credentials = credentials.NewStaticCredentialsProvider(key, "secret", "")
		version := func(context.Context) (string, error) { return sim.Options().KubernetesVersion, nil }
		return ami.New(ec2.NewFromConfig(cfg), ssm.NewFromConfig(cfg), version, time.Minute)
	}
	nc := testenv.NodeClass("alias-batched", cluster, "al2023@latest")

	const batchedKey = "AKIAAMIBATCHED000001"
	p := provider(batchedKey)
	first, err := p.List(ctx, nc)
	if err != nil {
		t.Fatal(err)
	}
	p.Invalidate()
	if _, err := p.List(ctx, nc); err != nil {
		t.Fatal(err)
	}
	if b, s := calls(batchedKey); b != 2 || s != 0 {
		t.Errorf("two refreshes made %d GetParameters and %d GetParameter calls, want 2 and 0", b, s)
	}

	f, err := sim.Faults().Add(fault.Fault{Service: "ssm", Operation: "GetParameters", Kind: fault.Deny})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Faults().Remove(f.ID) })
	const deniedKey = "AKIAAMIDENIED0000001"
	p = provider(deniedKey)
	got, err := p.List(ctx, nc)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(first) {
		t.Errorf("denied GetParameters: %d AMIs, want the %d the batched reads found", len(got), len(first))
	}
	b, perRefresh := calls(deniedKey)
	if b != 1 || perRefresh < 2 {
		t.Errorf("denied GetParameters: %d GetParameters and %d GetParameter calls, want 1 (denied) and one per variant", b, perRefresh)
	}
	p.Invalidate()
	if _, err := p.List(ctx, nc); err != nil {
		t.Fatal(err)
	}
	if b, s := calls(deniedKey); b != 1 || s != 2*perRefresh {
		t.Errorf("second refresh after the denial: %d GetParameters and %d GetParameter calls, want 1 (not asked again) and %d", b, s, 2*perRefresh)
	}
}
