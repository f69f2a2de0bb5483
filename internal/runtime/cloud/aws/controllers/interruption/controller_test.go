package interruption_test

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	k8sevents "k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/cache"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/controllers/interruption"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/events"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/policy"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/policy/queue"
)

// controllerKey is the access key the controller signs with, so its calls
// can be told apart from the test's setup in the request log.
const controllerKey = "AKIAJOISTCONTROLLER1"

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// makeQueue creates a queue and its five rules as joist_interruption_queue
// does: retention, policy, rules and SQS targets.
func makeQueue(t *testing.T, ctx context.Context, name string) string {
	t.Helper()
	q := sqs.NewFromConfig(sim.AWSConfig())
	arn := sim.SQS.QueueARN(name)
	out, err := q.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: map[string]string{
		"MessageRetentionPeriod": strconv.Itoa(queue.MessageRetentionSeconds),
		"SqsManagedSseEnabled":   "true",
		"Policy":                 queue.QueuePolicy(arn, name),
	}})
	if err != nil {
		t.Fatal(err)
	}
	eb := eventbridge.NewFromConfig(sim.AWSConfig())
	for _, r := range queue.Rules {
		if _, err := eb.PutRule(ctx, &eventbridge.PutRuleInput{Name: aws.String(r.RuleName(name)), EventPattern: aws.String(r.Pattern())}); err != nil {
			t.Fatal(err)
		}
		if _, err := eb.PutTargets(ctx, &eventbridge.PutTargetsInput{Rule: aws.String(r.RuleName(name)), Targets: []ebtypes.Target{{Id: aws.String("queue"), Arn: aws.String(arn)}}}); err != nil {
			t.Fatal(err)
		}
	}
	return aws.ToString(out.QueueUrl)
}

func launchSpot(t *testing.T, ctx context.Context) ec2types.Instance {
	t.Helper()
	e := ec2.NewFromConfig(sim.AWSConfig())
	n := sim.EC2.Network()
	img := sim.EC2.Images()[0]
	out, err := e.RunInstances(ctx, &ec2.RunInstancesInput{
		ImageId: aws.String(img.ImageID), InstanceType: ec2types.InstanceTypeM5Large, MinCount: aws.Int32(1), MaxCount: aws.Int32(1),
		SubnetId: aws.String(n.PrivateSubnetIDs[0]), InstanceMarketOptions: &ec2types.InstanceMarketOptionsRequest{MarketType: ec2types.MarketTypeSpot},
	})
	if err != nil {
		t.Fatal(err)
	}
	id := aws.ToString(out.Instances[0].InstanceId)
	// Wait until running, so later state-change events are the test's own.
	for {
		got, err := e.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{id}})
		if err != nil {
			t.Fatal(err)
		}
		if got.Reservations[0].Instances[0].State.Name == ec2types.InstanceStateNameRunning {
			return got.Reservations[0].Instances[0]
		}
		select {
		case <-ctx.Done():
			t.Fatalf("instance %s never ran", id)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// purge empties the queue of the launch's state-change events.
func purge(t *testing.T, ctx context.Context, url string) {
	t.Helper()
	if _, err := sqs.NewFromConfig(sim.AWSConfig()).PurgeQueue(ctx, &sqs.PurgeQueueInput{QueueUrl: aws.String(url)}); err != nil {
		t.Fatal(err)
	}
}

// claimFor records a NodeClaim for an instance, as the launch would.
func claimFor(t *testing.T, ctx context.Context, in ec2types.Instance) *v1.NodeClaim {
	t.Helper()
	return claimIn(t, ctx, in, "default")
}

// claimIn is claimFor with the claim in pool; conditions, when given, are
// set True in its status.
func claimIn(t *testing.T, ctx context.Context, in ec2types.Instance, pool string, conditions ...string) *v1.NodeClaim {
	t.Helper()
	zone := aws.ToString(in.Placement.AvailabilityZone)
	nc := &v1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: pool + "-",
			Labels: map[string]string{
				v1.NodePoolLabelKey: pool, corev1.LabelInstanceTypeStable: string(in.InstanceType),
				corev1.LabelTopologyZone: zone, v1.CapacityTypeLabelKey: v1.CapacityTypeSpot,
			},
		},
		Spec: v1.NodeClaimSpec{
			NodeClassRef: &v1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"},
			Requirements: v1.Requirements{},
		},
	}
	if err := kube.Create(ctx, nc); err != nil {
		t.Fatal(err)
	}
	nc.Status.ProviderID = "aws:///" + zone + "/" + aws.ToString(in.InstanceId)
	for _, c := range conditions {
		nc.Status.Conditions = append(nc.Status.Conditions, metav1.Condition{Type: c, Status: metav1.ConditionTrue, Reason: c, LastTransitionTime: metav1.Now()})
	}
	if err := kube.Status().Update(ctx, nc); err != nil {
		t.Fatal(err)
	}
	return nc
}

func newController(t *testing.T, name string, unavailable *cache.UnavailableOfferings) *interruption.Controller {
	return interruption.NewController(interruption.Options{
		Kube: kube, SQS: sqs.NewFromConfig(controllerAWS()), QueueName: name, Unavailable: unavailable, Logger: logr.Discard(),
		Recorder: recorder(t),
	})
}

// controllerAWS is the AWS configuration the controller signs with.
func controllerAWS() aws.Config {
	cfg := sim.AWSConfig()
	cfg.Credentials = credentials.NewStaticCredentialsProvider(controllerKey, "secret", "")
	return cfg
}

// recorder records events into the apiserver until the test ends.
func recorder(t *testing.T) *events.Recorder {
	cs, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		t.Fatal(err)
	}
	b := k8sevents.NewBroadcaster(&k8sevents.EventSinkImpl{Interface: cs.EventsV1()})
	stop := make(chan struct{})
	b.StartRecordingToSink(stop)
	t.Cleanup(func() { close(stop); b.Shutdown() })
	return events.NewRecorder(b.NewRecorder(scheme, "karpenter"))
}

// waitEvent waits until an event with reason is recorded about the NodeClaim.
func waitEvent(t *testing.T, ctx context.Context, nc *v1.NodeClaim, reason string) {
	t.Helper()
	cs, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		t.Fatal(err)
	}
	for {
		list, err := cs.EventsV1().Events("").List(ctx, metav1.ListOptions{FieldSelector: "regarding.name=" + nc.Name})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range list.Items {
			if e.Reason == reason {
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no %s event about NodeClaim %s", reason, nc.Name)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func queueDepth(t *testing.T, ctx context.Context, url string) (visible, inFlight int) {
	t.Helper()
	out, err := sqs.NewFromConfig(sim.AWSConfig()).GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl: aws.String(url), AttributeNames: []sqstypes.QueueAttributeName{"ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"},
	})
	if err != nil {
		t.Fatal(err)
	}
	visible, _ = strconv.Atoi(out.Attributes["ApproximateNumberOfMessages"])
	inFlight, _ = strconv.Atoi(out.Attributes["ApproximateNumberOfMessagesNotVisible"])
	return visible, inFlight
}

// waitQueued waits up to 10 s for want visible messages and returns how
// many there are: EC2 hands its events to EventBridge on a goroutine of its
// own, so a message follows the call that caused it, not at once.
func waitQueued(t *testing.T, ctx context.Context, url string, want int) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		v, _ := queueDepth(t, ctx, url)
		if v >= want || time.Now().After(deadline) {
			return v
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func gone(t *testing.T, ctx context.Context, nc *v1.NodeClaim) bool {
	t.Helper()
	err := kube.Get(ctx, client.ObjectKeyFromObject(nc), &v1.NodeClaim{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return apierrors.IsNotFound(err)
}

func TestSpotInterruptionDeletesTheNodeClaim(t *testing.T) {
	ctx := testContext(t)
	url := makeQueue(t, ctx, "spot-demo")
	spot, bystander := launchSpot(t, ctx), launchSpot(t, ctx)
	nc, other := claimFor(t, ctx, spot), claimFor(t, ctx, bystander)
	unavailable := cache.NewUnavailableOfferings()
	c := newController(t, "spot-demo", unavailable)
	purge(t, ctx, url)

	sim.Requests().Reset()
	// EC2 warns; EventBridge routes the warning to the queue.
	if err := sim.EC2.InterruptSpot(aws.ToString(spot.InstanceId), time.Hour); err != nil {
		t.Fatal(err)
	}
	if v := waitQueued(t, ctx, url, 1); v != 1 {
		t.Fatalf("queue holds %d messages after the warning, want 1 (EventBridge rule or queue policy broken)", v)
	}
	if err := c.Poll(ctx); err != nil {
		t.Fatal(err)
	}
	if !gone(t, ctx, nc) {
		t.Error("the interrupted instance's NodeClaim still exists")
	}
	if gone(t, ctx, other) {
		t.Error("another instance's NodeClaim was deleted")
	}
	zone := aws.ToString(spot.Placement.AvailabilityZone)
	if !unavailable.IsUnavailable(string(spot.InstanceType), zone, v1.CapacityTypeSpot) {
		t.Errorf("%s spot in %s is not marked unavailable", spot.InstanceType, zone)
	}
	if v, f := queueDepth(t, ctx, url); v+f != 0 {
		t.Errorf("queue holds %d visible and %d in-flight messages after handling, want none", v, f)
	}
	waitEvent(t, ctx, nc, "SpotInterrupted")
	waitEvent(t, ctx, nc, "TerminatingOnInterruption")
	assertAllowedByPolicy(t, "spot-demo")
}

func TestRebalanceAndUnparsableMessages(t *testing.T) {
	ctx := testContext(t)
	url := makeQueue(t, ctx, "rebalance-demo")
	in := launchSpot(t, ctx)
	nc := claimFor(t, ctx, in)
	c := newController(t, "rebalance-demo", cache.NewUnavailableOfferings())
	purge(t, ctx, url)
	if err := sim.EC2.RecommendRebalance(aws.ToString(in.InstanceId)); err != nil {
		t.Fatal(err)
	}
	if _, err := sqs.NewFromConfig(sim.AWSConfig()).SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String("not an event")}); err != nil {
		t.Fatal(err)
	}
	if v := waitQueued(t, ctx, url, 2); v != 2 {
		t.Fatalf("queue holds %d messages, want 2", v)
	}
	if err := c.Poll(ctx); err != nil {
		t.Fatal(err)
	}
	if gone(t, ctx, nc) {
		t.Error("a rebalance recommendation deleted the NodeClaim")
	}
	waitEvent(t, ctx, nc, "SpotRebalanceRecommendation")
	if v, f := queueDepth(t, ctx, url); v+f != 0 {
		t.Errorf("queue holds %d visible and %d in-flight messages, want none", v, f)
	}
}

func TestStateChangeToShuttingDownDeletesTheNodeClaim(t *testing.T) {
	ctx := testContext(t)
	url := makeQueue(t, ctx, "stop-demo")
	in := launchSpot(t, ctx)
	nc := claimFor(t, ctx, in)
	c := newController(t, "stop-demo", cache.NewUnavailableOfferings())
	purge(t, ctx, url)
	if _, err := ec2.NewFromConfig(sim.AWSConfig()).TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{aws.ToString(in.InstanceId)}}); err != nil {
		t.Fatal(err)
	}
	if err := c.Poll(ctx); err != nil {
		t.Fatal(err)
	}
	if !gone(t, ctx, nc) {
		t.Error("the NodeClaim of a terminating instance still exists")
	}
	if v, f := queueDepth(t, ctx, url); v+f != 0 {
		t.Errorf("queue holds %d visible and %d in-flight messages, want none", v, f)
	}
}

// assertAllowedByPolicy holds every call the controller made against the
// controller policy rendered for this queue.
func assertAllowedByPolicy(t *testing.T, queue string) {
	t.Helper()
	o := sim.Options()
	doc, err := policy.Render(policy.Params{
		Region: o.Region, AccountID: o.AccountID, ClusterName: o.ClusterName,
		NodeRoleARN: "arn:aws:iam::" + o.AccountID + ":role/demo-node", QueueName: queue,
	})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range sim.Requests().Requests("", "") {
		if r.AccessKeyID != controllerKey {
			continue
		}
		n++
		req := policy.Request{Action: policy.ActionOf(r.Service, r.Operation), Resource: sim.SQS.QueueARN(queue), Context: map[string][]string{"aws:RequestedRegion": {o.Region}}}
		if ok, err := doc.Allows(req); err != nil || !ok {
			t.Errorf("controller call %s:%s is not allowed by the controller policy (err %v)", r.Service, r.Operation, err)
		}
	}
	if n < 3 {
		t.Errorf("recorded %d controller calls, want GetQueueUrl, ReceiveMessage and DeleteMessageBatch", n)
	}
}

// The rules route only the state changes the controller acts on: a launch
// (pending, running) queues nothing; a termination queues shutting-down.
// (Instances here stay shutting-down for the whole run.)
func TestQueueHoldsOnlyStateChangesActedOn(t *testing.T) {
	ctx := testContext(t)
	url := makeQueue(t, ctx, "states-demo")
	in := launchSpot(t, ctx)
	if v, f := queueDepth(t, ctx, url); v+f != 0 {
		t.Errorf("after a launch the queue holds %d visible and %d in-flight messages, want none", v, f)
	}
	if _, err := ec2.NewFromConfig(sim.AWSConfig()).TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{aws.ToString(in.InstanceId)}}); err != nil {
		t.Fatal(err)
	}
	q := sqs.NewFromConfig(sim.AWSConfig())
	out, err := q.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 10, WaitTimeSeconds: 5})
	if err != nil {
		t.Fatal(err)
	}
	var states []string
	for _, m := range out.Messages {
		var ev struct {
			Detail struct {
				State string `json:"state"`
			} `json:"detail"`
		}
		if err := json.Unmarshal([]byte(aws.ToString(m.Body)), &ev); err != nil {
			t.Fatal(err)
		}
		states = append(states, ev.Detail.State)
	}
	if want := []string{"shutting-down"}; !slices.Equal(states, want) {
		t.Errorf("states queued by a termination: %v, want %v", states, want)
	}
}
