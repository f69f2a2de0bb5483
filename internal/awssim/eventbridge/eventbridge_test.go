package eventbridge_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsevents "github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/clienttest"
	"github.com/joistdev/terraform-provider-joist/internal/awssim/eventbridge"
	"github.com/joistdev/terraform-provider-joist/internal/awssim/sqs"
)

const (
	account              = "111122223333"
	spotInterruption     = `{"source":["aws.ec2"],"detail-type":["EC2 Spot Instance Interruption Warning"]}`
	spotInterruptionType = "EC2 Spot Instance Interruption Warning"
)

type world struct {
	events  *awsevents.Client
	queues  *awssqs.Client
	service *eventbridge.Service
	sqs     *sqs.Service
}

func newWorld(t *testing.T) world {
	t.Helper()
	q := sqs.New(account, clienttest.Region)
	eb := eventbridge.New(account, clienttest.Region, q)
	return world{
		events:  awsevents.NewFromConfig(clienttest.Config(t, eb)),
		queues:  awssqs.NewFromConfig(clienttest.Config(t, q)),
		service: eb,
		sqs:     q,
	}
}

// queue creates a queue whose policy lets EventBridge deliver to it, as
// Karpenter's interruption queue has.
func (w world) queue(t *testing.T, name string) string {
	t.Helper()
	policy := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":["events.amazonaws.com","sqs.amazonaws.com"]},"Action":"sqs:SendMessage","Resource":"` + w.sqs.QueueARN(name) + `"}]}`
	out, err := w.queues.CreateQueue(context.Background(), &awssqs.CreateQueueInput{QueueName: aws.String(name), Attributes: map[string]string{"Policy": policy}})
	if err != nil {
		t.Fatal(err)
	}
	return aws.ToString(out.QueueUrl)
}

// receiveAll drains the queue without waiting.
func (w world) receiveAll(t *testing.T, url string) []string {
	t.Helper()
	out, err := w.queues.ReceiveMessage(context.Background(), &awssqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 10})
	if err != nil {
		t.Fatal(err)
	}
	var bodies []string
	for _, m := range out.Messages {
		bodies = append(bodies, aws.ToString(m.Body))
	}
	return bodies
}

func TestRuleLifecycle(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)

	put, err := w.events.PutRule(ctx, &awsevents.PutRuleInput{
		Name:         aws.String("joist-spot"),
		EventPattern: aws.String(spotInterruption),
		Description:  aws.String("spot interruptions"),
		Tags:         []types.Tag{{Key: aws.String("owner"), Value: aws.String("joist")}},
	})
	if err != nil {
		t.Fatal(err)
	}
	wantARN := "arn:aws:events:" + clienttest.Region + ":" + account + ":rule/joist-spot"
	if aws.ToString(put.RuleArn) != wantARN {
		t.Fatalf("RuleArn = %s, want %s", aws.ToString(put.RuleArn), wantARN)
	}

	d, err := w.events.DescribeRule(ctx, &awsevents.DescribeRuleInput{Name: aws.String("joist-spot")})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(d.EventPattern) != spotInterruption || d.State != types.RuleStateEnabled ||
		aws.ToString(d.Description) != "spot interruptions" || aws.ToString(d.EventBusName) != "default" {
		t.Fatalf("DescribeRule = %+v", d)
	}

	if _, err := w.events.DisableRule(ctx, &awsevents.DisableRuleInput{Name: aws.String("joist-spot")}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.events.PutRule(ctx, &awsevents.PutRuleInput{Name: aws.String("other"), EventPattern: aws.String(`{"source":["aws.health"]}`)}); err != nil {
		t.Fatal(err)
	}
	list, err := w.events.ListRules(ctx, &awsevents.ListRulesInput{NamePrefix: aws.String("joist-")})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Rules) != 1 || aws.ToString(list.Rules[0].Name) != "joist-spot" || list.Rules[0].State != types.RuleStateDisabled {
		t.Fatalf("ListRules(joist-) = %+v", list.Rules)
	}

	arn := put.RuleArn
	if _, err := w.events.TagResource(ctx, &awsevents.TagResourceInput{ResourceARN: arn, Tags: []types.Tag{{Key: aws.String("env"), Value: aws.String("test")}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.events.UntagResource(ctx, &awsevents.UntagResourceInput{ResourceARN: arn, TagKeys: []string{"owner"}}); err != nil {
		t.Fatal(err)
	}
	tags, err := w.events.ListTagsForResource(ctx, &awsevents.ListTagsForResourceInput{ResourceARN: arn})
	if err != nil {
		t.Fatal(err)
	}
	if len(tags.Tags) != 1 || aws.ToString(tags.Tags[0].Key) != "env" {
		t.Fatalf("tags = %+v, want only env", tags.Tags)
	}

	// Targets block deletion, as in EventBridge.
	_, err = w.events.PutTargets(ctx, &awsevents.PutTargetsInput{Rule: aws.String("joist-spot"), Targets: []types.Target{{Id: aws.String("q"), Arn: aws.String(w.sqs.QueueARN("karpenter"))}}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = w.events.DeleteRule(ctx, &awsevents.DeleteRuleInput{Name: aws.String("joist-spot")})
	if code := clienttest.ErrorCode(t, err); code != "ValidationException" {
		t.Fatalf("DeleteRule with targets code = %s", code)
	}
	if _, err := w.events.RemoveTargets(ctx, &awsevents.RemoveTargetsInput{Rule: aws.String("joist-spot"), Ids: []string{"q"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.events.DeleteRule(ctx, &awsevents.DeleteRuleInput{Name: aws.String("joist-spot")}); err != nil {
		t.Fatal(err)
	}
	_, err = w.events.DescribeRule(ctx, &awsevents.DescribeRuleInput{Name: aws.String("joist-spot")})
	var notFound *types.ResourceNotFoundException
	if !errors.As(err, &notFound) {
		t.Fatalf("DescribeRule after delete error = %v, want ResourceNotFoundException", err)
	}
	// Deleting again succeeds.
	if _, err := w.events.DeleteRule(ctx, &awsevents.DeleteRuleInput{Name: aws.String("joist-spot")}); err != nil {
		t.Fatalf("second DeleteRule: %v", err)
	}
}

func TestPutRuleRejectsBadPattern(t *testing.T) {
	w := newWorld(t)
	_, err := w.events.PutRule(context.Background(), &awsevents.PutRuleInput{Name: aws.String("bad"), EventPattern: aws.String(`{"source":"aws.ec2"}`)})
	var invalid *types.InvalidEventPatternException
	if !errors.As(err, &invalid) {
		t.Fatalf("PutRule with a bad pattern error = %v, want InvalidEventPatternException", err)
	}
}

func TestTargetsListAndLimit(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	if _, err := w.events.PutRule(ctx, &awsevents.PutRuleInput{Name: aws.String("r"), EventPattern: aws.String(spotInterruption)}); err != nil {
		t.Fatal(err)
	}
	var targets []types.Target
	for _, id := range []string{"a", "b", "c", "d", "e"} {
		targets = append(targets, types.Target{Id: aws.String(id), Arn: aws.String(w.sqs.QueueARN(id)), InputPath: aws.String("$.detail")})
	}
	if _, err := w.events.PutTargets(ctx, &awsevents.PutTargetsInput{Rule: aws.String("r"), Targets: targets}); err != nil {
		t.Fatal(err)
	}
	got, err := w.events.ListTargetsByRule(ctx, &awsevents.ListTargetsByRuleInput{Rule: aws.String("r")})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Targets) != 5 || aws.ToString(got.Targets[2].Id) != "c" || aws.ToString(got.Targets[2].InputPath) != "$.detail" {
		t.Fatalf("ListTargetsByRule = %+v", got.Targets)
	}
	_, err = w.events.PutTargets(ctx, &awsevents.PutTargetsInput{Rule: aws.String("r"), Targets: []types.Target{{Id: aws.String("f"), Arn: aws.String(w.sqs.QueueARN("f"))}}})
	if code := clienttest.ErrorCode(t, err); code != "LimitExceededException" {
		t.Fatalf("sixth target code = %s", code)
	}
	_, err = w.events.PutTargets(ctx, &awsevents.PutTargetsInput{Rule: aws.String("missing"), Targets: targets[:1]})
	if code := clienttest.ErrorCode(t, err); code != "ResourceNotFoundException" {
		t.Fatalf("PutTargets on a missing rule code = %s", code)
	}
}

func TestSpotInterruptionDeliveredToQueue(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	url := w.queue(t, "karpenter")
	if _, err := w.events.PutRule(ctx, &awsevents.PutRuleInput{Name: aws.String("SpotInterruptionRule"), EventPattern: aws.String(spotInterruption)}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.events.PutTargets(ctx, &awsevents.PutTargetsInput{
		Rule:    aws.String("SpotInterruptionRule"),
		Targets: []types.Target{{Id: aws.String("KarpenterInterruptionQueueTarget"), Arn: aws.String(w.sqs.QueueARN("karpenter"))}},
	}); err != nil {
		t.Fatal(err)
	}

	instance := "arn:aws:ec2:" + clienttest.Region + ":" + account + ":instance/i-0123456789abcdef0"
	when := time.Date(2026, 11, 22, 4, 0, 0, 0, time.UTC)
	id, err := w.service.PutEvent(eventbridge.Event{
		Source:     "aws.ec2",
		DetailType: spotInterruptionType,
		Detail:     map[string]string{"instance-id": "i-0123456789abcdef0", "instance-action": "terminate"},
		Resources:  []string{instance},
		Time:       when,
	})
	if err != nil {
		t.Fatal(err)
	}
	// Neither a different detail-type nor a different source matches.
	for _, e := range []eventbridge.Event{
		{Source: "aws.ec2", DetailType: "EC2 Instance Rebalance Recommendation", Detail: map[string]string{"instance-id": "i-1"}},
		{Source: "aws.health", DetailType: spotInterruptionType, Detail: map[string]string{}},
	} {
		if _, err := w.service.PutEvent(e); err != nil {
			t.Fatal(err)
		}
	}

	bodies := w.receiveAll(t, url)
	if len(bodies) != 1 {
		t.Fatalf("queue holds %d messages, want only the spot interruption: %v", len(bodies), bodies)
	}
	var env struct {
		Version    string            `json:"version"`
		ID         string            `json:"id"`
		DetailType string            `json:"detail-type"`
		Source     string            `json:"source"`
		Account    string            `json:"account"`
		Time       string            `json:"time"`
		Region     string            `json:"region"`
		Resources  []string          `json:"resources"`
		Detail     map[string]string `json:"detail"`
	}
	if err := json.Unmarshal([]byte(bodies[0]), &env); err != nil {
		t.Fatalf("message body is not an event envelope: %v\n%s", err, bodies[0])
	}
	if env.Version != "0" || env.ID != id || env.DetailType != spotInterruptionType || env.Source != "aws.ec2" ||
		env.Account != account || env.Region != clienttest.Region || env.Time != "2026-11-22T04:00:00Z" ||
		len(env.Resources) != 1 || env.Resources[0] != instance ||
		env.Detail["instance-id"] != "i-0123456789abcdef0" || env.Detail["instance-action"] != "terminate" {
		t.Fatalf("envelope = %+v", env)
	}
}

func TestPutEventsDeliversCustomEvents(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	url := w.queue(t, "custom")
	if _, err := w.events.PutRule(ctx, &awsevents.PutRuleInput{Name: aws.String("custom"), EventPattern: aws.String(`{"source":["joist.test"],"detail":{"n":[{"numeric":[">=",10]}]}}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.events.PutTargets(ctx, &awsevents.PutTargetsInput{Rule: aws.String("custom"), Targets: []types.Target{{Id: aws.String("q"), Arn: aws.String(w.sqs.QueueARN("custom")), InputPath: aws.String("$.detail")}}}); err != nil {
		t.Fatal(err)
	}
	out, err := w.events.PutEvents(ctx, &awsevents.PutEventsInput{Entries: []types.PutEventsRequestEntry{
		{Source: aws.String("joist.test"), DetailType: aws.String("t"), Detail: aws.String(`{"n":12}`)},
		{Source: aws.String("joist.test"), DetailType: aws.String("t"), Detail: aws.String(`{"n":3}`)},
		{Source: aws.String("aws.ec2"), DetailType: aws.String(spotInterruptionType), Detail: aws.String(`{}`)},
		{Source: aws.String("joist.test"), DetailType: aws.String("t"), Detail: aws.String(`[1]`)},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if out.FailedEntryCount != 2 || aws.ToString(out.Entries[0].EventId) == "" ||
		aws.ToString(out.Entries[2].ErrorCode) != "NotAuthorizedForSourceException" ||
		aws.ToString(out.Entries[3].ErrorCode) != "MalformedDetail" {
		t.Fatalf("PutEvents = %d failed, entries %+v", out.FailedEntryCount, out.Entries)
	}
	bodies := w.receiveAll(t, url)
	if len(bodies) != 1 || bodies[0] != `{"n":12}` {
		t.Fatalf("queue holds %v, want only the InputPath of the matching event", bodies)
	}
}

func TestUndeliverableEventsAreCounted(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	// A queue without a policy refuses EventBridge, as in AWS.
	closed, err := w.queues.CreateQueue(ctx, &awssqs.CreateQueueInput{QueueName: aws.String("closed")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.events.PutRule(ctx, &awsevents.PutRuleInput{Name: aws.String("r"), EventPattern: aws.String(spotInterruption)}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.events.PutTargets(ctx, &awsevents.PutTargetsInput{Rule: aws.String("r"), Targets: []types.Target{
		{Id: aws.String("gone"), Arn: aws.String(w.sqs.QueueARN("gone"))},
		{Id: aws.String("closed"), Arn: aws.String(w.sqs.QueueARN("closed"))},
	}}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.service.PutEvent(eventbridge.Event{Source: "aws.ec2", DetailType: spotInterruptionType, Detail: map[string]string{}}); err != nil {
		t.Fatal(err)
	}
	if n := w.service.FailedInvocations(); n != 2 {
		t.Fatalf("FailedInvocations = %d, want 2", n)
	}
	if bodies := w.receiveAll(t, aws.ToString(closed.QueueUrl)); len(bodies) != 0 {
		t.Fatalf("queue without a policy received %v", bodies)
	}
}
