package aws_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/fault"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	awsprovider "github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/controllers/nodeclass"
	"github.com/joistdev/terraform-provider-joist/internal/testenv"
)

func TestLaunchPermissionDryRuns(t *testing.T) {
	ctx := testContext(t)
	nc := readyNodeClass(t, prov, testenv.NodeClass("dry-run", cluster, "al2023@latest"))
	if reason, msg := prov.ValidateLaunchPermissions(ctx, nc); reason != "" {
		t.Fatalf("permitted calls failed validation: %s: %s", reason, msg)
	}

	// A refused RunInstances fails validation on a node class not yet checked.
	f, err := sim.Faults().Add(fault.Fault{Service: "ec2", Operation: "RunInstances", Kind: fault.ServerError, Status: 501, Code: "UnauthorizedOperation"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Faults().Remove(f.ID) })
	denied := testenv.NodeClass("dry-run-denied", cluster, "al2023@latest")
	if err := kube.Client.Create(ctx, denied); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kube.Client.Delete(ctx, denied) })
	nodeclass.Resolve(ctx, prov, denied)
	c := meta.FindStatusCondition(denied.Status.Conditions, v1.ConditionTypeValidationSucceeded)
	if c == nil || c.Status != "False" || c.Reason != awsprovider.ReasonRunInstancesAuthCheckFailed {
		t.Fatalf("ValidationSucceeded = %+v, want False with %s", c, awsprovider.ReasonRunInstancesAuthCheckFailed)
	}
	if meta.IsStatusConditionTrue(denied.Status.Conditions, v1.ConditionTypeReady) {
		t.Error("node class is Ready although launches would be refused")
	}
}

// DISABLE_DRY_RUN: a node class whose launches EC2 would refuse still
// validates, and no dry run is sent.
func TestDisableDryRunSkipsThePermissionChecks(t *testing.T) {
	s := settings()
	s.DisableDryRun = true
	p, err := awsprovider.New(sim.Config, kube.Client, s)
	if err != nil {
		t.Fatal(err)
	}
	nc := readyNodeClass(t, prov, testenv.NodeClass("no-dry-run", cluster, "al2023@latest"))
	f, err := sim.Faults().Add(fault.Fault{Service: "ec2", Operation: "RunInstances", Kind: fault.ServerError, Status: 501, Code: "UnauthorizedOperation"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Faults().Remove(f.ID) })
	before := sim.Requests().Count("ec2", "RunInstances")
	if reason, msg := p.ValidateLaunchPermissions(testContext(t), nc); reason != "" {
		t.Errorf("DISABLE_DRY_RUN still validated: %s: %s", reason, msg)
	}
	if n := sim.Requests().Count("ec2", "RunInstances") - before; n != 0 {
		t.Errorf("%d RunInstances dry runs with DISABLE_DRY_RUN, want none", n)
	}
}

func TestThrottledCallsAreRetried(t *testing.T) {
	f, err := sim.Faults().Add(fault.Fault{Service: "ec2", Operation: "DescribeSubnets", Kind: fault.Throttle, Count: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Faults().Remove(f.ID) })
	nc := testenv.NodeClass("throttled", cluster, "al2023@latest")
	nc.Spec.SubnetSelectorTerms[0].Tags["kubernetes.io/role/internal-elb"] = "*" // a selector not cached yet
	before := sim.Requests().Count("ec2", "DescribeSubnets")
	subnets, err := prov.Subnets().List(testContext(t), nc)
	if err != nil {
		t.Fatalf("throttled twice, the call should succeed on retry: %v", err)
	}
	if len(subnets) != len(sim.EC2.Region().Zones) {
		t.Errorf("%d subnets", len(subnets))
	}
	if n := sim.Requests().Count("ec2", "DescribeSubnets") - before; n != 3 {
		t.Errorf("%d DescribeSubnets requests, want 2 throttled and 1 answered", n)
	}
}
