package nodeclass_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/fault"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/controllers/nodeclass"
	"github.com/joistdev/terraform-provider-joist/internal/testenv"
)

// TestIAMDenialKeepsTheLastResolutionForAWhile: while IAM denies
// DescribeSubnets (UnauthorizedOperation through the SDK, as after a
// policy edit), the node class stays Ready with its resolved subnets and a
// Warning event names the call and the missing permission. Once the
// denial has lasted DenialGrace (the controller's clock stepped past it)
// the node class turns NotReady, its SubnetsReady condition naming the
// permission. A definite answer (no subnet matches) still turns it
// NotReady at once: TestNodeClassNotReadyExplainsWhy.
func TestIAMDenialKeepsTheLastResolutionForAWhile(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	nc := readyNodeClass(t, ctx, "denied")
	subnets := len(nc.Status.Subnets)

	f, err := sim.Faults().Add(fault.Fault{Service: "ec2", Operation: "DescribeSubnets", Kind: fault.Deny})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Faults().Remove(f.ID) })
	poke := func(v string) {
		prov.Subnets().Invalidate()
		patch := client.MergeFrom(nc.DeepCopy())
		nc.Annotations["test.joist.dev/poke"] = v
		if err := kube.Client.Patch(ctx, nc, patch); err != nil {
			t.Fatal(err)
		}
	}
	poke("denied")

	testenv.Eventually(t, ctx, "an AWSAccessDenied event naming EC2 DescribeSubnets and ec2:DescribeSubnets", func() error {
		got := &awsv1.EC2NodeClass{}
		if err := kube.Client.Get(ctx, client.ObjectKeyFromObject(nc), got); err != nil {
			return err
		}
		if c := meta.FindStatusCondition(got.Status.Conditions, v1.ConditionTypeReady); c == nil || c.Status != "True" {
			t.Fatalf("the node class left Ready on an IAM denial: %+v", c)
		}
		if len(got.Status.Subnets) != subnets {
			t.Fatalf("the node class lost its subnets on an IAM denial: %d, had %d", len(got.Status.Subnets), subnets)
		}
		list := &eventsv1.EventList{}
		if err := kube.Client.List(ctx, list); err != nil {
			return err
		}
		for _, e := range list.Items {
			if e.Regarding.Name == nc.Name && e.Reason == nodeclass.AWSAccessDenied && e.Type == "Warning" &&
				strings.Contains(e.Note, "EC2 DescribeSubnets") && strings.Contains(e.Note, "lacks ec2:DescribeSubnets") {
				return nil
			}
		}
		return fmt.Errorf("no such event yet")
	})

	clk.Step(nodeclass.DenialGrace + time.Second)
	poke("denied-too-long")
	testenv.Eventually(t, ctx, "NotReady once the denial outlasts DenialGrace", func() error {
		got := &awsv1.EC2NodeClass{}
		if err := kube.Client.Get(ctx, client.ObjectKeyFromObject(nc), got); err != nil {
			return err
		}
		c := meta.FindStatusCondition(got.Status.Conditions, v1.ConditionTypeSubnetsReady)
		if c == nil || c.Status != "False" || !strings.Contains(c.Message, "IAM policy lacks ec2:DescribeSubnets") {
			return fmt.Errorf("SubnetsReady %+v", c)
		}
		if meta.IsStatusConditionTrue(got.Status.Conditions, v1.ConditionTypeReady) {
			return fmt.Errorf("still Ready")
		}
		return nil
	})

	// The permission granted again, the node class resolves again.
	sim.Faults().Remove(f.ID)
	poke("granted")
	testenv.Eventually(t, ctx, "Ready again once the call is allowed", func() error {
		got := &awsv1.EC2NodeClass{}
		if err := kube.Client.Get(ctx, client.ObjectKeyFromObject(nc), got); err != nil {
			return err
		}
		if !meta.IsStatusConditionTrue(got.Status.Conditions, v1.ConditionTypeReady) {
			return fmt.Errorf("not Ready")
		}
		return nil
	})
}
