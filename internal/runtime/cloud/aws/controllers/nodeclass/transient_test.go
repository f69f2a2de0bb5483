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

// TestTransientErrorsKeepTheLastResolution: while every DescribeSubnets
// answers 500 and every SSM GetParameters (an alias reads its variants with it) is throttled, longer than a
// resolution waits (the SDK's retries included), the node class stays
// Ready with its resolved subnets and AMIs, and an event names each
// failing call. A definite answer still turns it NotReady (see
// TestNodeClassNotReadyExplainsWhy).
func TestTransientErrorsKeepTheLastResolution(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	nc := readyNodeClass(t, ctx, "transient")
	subnets, amis := len(nc.Status.Subnets), len(nc.Status.AMIs)

	for _, f := range []fault.Fault{
		{Service: "ec2", Operation: "DescribeSubnets", Kind: fault.ServerError},
		{Service: "ssm", Operation: "GetParameters", Kind: fault.Throttle},
	} {
		added, err := sim.Faults().Add(f)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sim.Faults().Remove(added.ID) })
	}
	// Forget what the providers cached, and wake the controller.
	prov.Subnets().Invalidate()
	prov.AMIs().Invalidate()
	patch := client.MergeFrom(nc.DeepCopy())
	nc.Annotations["test.joist.dev/poke"] = "1"
	if err := kube.Client.Patch(ctx, nc, patch); err != nil {
		t.Fatal(err)
	}

	var notReady []string
	testenv.Eventually(t, ctx, "TransientAWSError events naming DescribeSubnets and GetParameters", func() error {
		got := &awsv1.EC2NodeClass{}
		if err := kube.Client.Get(ctx, client.ObjectKeyFromObject(nc), got); err != nil {
			return err
		}
		if c := meta.FindStatusCondition(got.Status.Conditions, v1.ConditionTypeReady); c == nil || c.Status != "True" {
			notReady = append(notReady, fmt.Sprintf("%+v", c))
		}
		if len(got.Status.Subnets) != subnets || len(got.Status.AMIs) != amis {
			notReady = append(notReady, fmt.Sprintf("status lost: %d subnets, %d AMIs", len(got.Status.Subnets), len(got.Status.AMIs)))
		}
		list := &eventsv1.EventList{}
		if err := kube.Client.List(ctx, list); err != nil {
			return err
		}
		var subnetEvent, ssmEvent bool
		for _, e := range list.Items {
			if e.Regarding.Name != nc.Name || e.Reason != nodeclass.TransientAWSError {
				continue
			}
			subnetEvent = subnetEvent || strings.Contains(e.Note, "EC2 DescribeSubnets")
			ssmEvent = ssmEvent || strings.Contains(e.Note, "SSM GetParameters")
		}
		if !subnetEvent || !ssmEvent {
			return fmt.Errorf("events: DescribeSubnets %v, GetParameters %v", subnetEvent, ssmEvent)
		}
		return nil
	})
	if len(notReady) > 0 {
		t.Errorf("the node class left Ready during transient errors: %v", notReady[0])
	}
}
