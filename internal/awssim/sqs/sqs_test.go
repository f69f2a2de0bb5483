package sqs_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/clienttest"
	"github.com/joistdev/terraform-provider-joist/internal/awssim/sqs"
)

const account = "111122223333"

func newClient(t *testing.T) (*awssqs.Client, *sqs.Service) {
	t.Helper()
	svc := sqs.New(account, clienttest.Region)
	return awssqs.NewFromConfig(clienttest.Config(t, svc)), svc
}

func createQueue(t *testing.T, c *awssqs.Client, name string, attrs map[string]string) string {
	t.Helper()
	out, err := c.CreateQueue(context.Background(), &awssqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs})
	if err != nil {
		t.Fatalf("CreateQueue %s: %v", name, err)
	}
	return aws.ToString(out.QueueUrl)
}

func TestQueueLifecycle(t *testing.T) {
	ctx := context.Background()
	c, _ := newClient(t)

	out, err := c.CreateQueue(ctx, &awssqs.CreateQueueInput{
		QueueName: aws.String("karpenter"),
		Attributes: map[string]string{
			"MessageRetentionPeriod": "300",
			"Policy":                 `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":["events.amazonaws.com","sqs.amazonaws.com"]},"Action":"sqs:SendMessage","Resource":"*"}]}`,
		},
		Tags: map[string]string{"owner": "joist"},
	})
	if err != nil {
		t.Fatal(err)
	}
	url := aws.ToString(out.QueueUrl)
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, "/"+account+"/karpenter") {
		t.Fatalf("queue URL %q is not http://<server host>/<account>/<name>", url)
	}

	got, err := c.GetQueueUrl(ctx, &awssqs.GetQueueUrlInput{QueueName: aws.String("karpenter")})
	if err != nil || aws.ToString(got.QueueUrl) != url {
		t.Fatalf("GetQueueUrl = %v, %v; want %s", aws.ToString(got.QueueUrl), err, url)
	}

	// Same attributes: idempotent. Different value: QueueAlreadyExists.
	if again := createQueue(t, c, "karpenter", map[string]string{"MessageRetentionPeriod": "300"}); again != url {
		t.Fatalf("idempotent CreateQueue returned %s, want %s", again, url)
	}
	_, err = c.CreateQueue(ctx, &awssqs.CreateQueueInput{QueueName: aws.String("karpenter"), Attributes: map[string]string{"MessageRetentionPeriod": "600"}})
	if code := clienttest.ErrorCode(t, err); code != "QueueAlreadyExists" {
		t.Fatalf("conflicting CreateQueue code = %s, want QueueAlreadyExists", code)
	}
	var exists *types.QueueNameExists
	if !errors.As(err, &exists) {
		t.Fatalf("conflicting CreateQueue error %T is not *types.QueueNameExists", err)
	}

	_, err = c.SetQueueAttributes(ctx, &awssqs.SetQueueAttributesInput{QueueUrl: aws.String(url), Attributes: map[string]string{
		"KmsMasterKeyId":       "alias/aws/sqs",
		"SqsManagedSseEnabled": "false",
		"VisibilityTimeout":    "45",
	}})
	if err != nil {
		t.Fatal(err)
	}
	attrs, err := c.GetQueueAttributes(ctx, &awssqs.GetQueueAttributesInput{QueueUrl: aws.String(url), AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameAll}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"QueueArn":                    "arn:aws:sqs:" + clienttest.Region + ":" + account + ":karpenter",
		"MessageRetentionPeriod":      "300",
		"VisibilityTimeout":           "45",
		"KmsMasterKeyId":              "alias/aws/sqs",
		"SqsManagedSseEnabled":        "false",
		"DelaySeconds":                "0",
		"ApproximateNumberOfMessages": "0",
	}
	for k, v := range want {
		if attrs.Attributes[k] != v {
			t.Errorf("attribute %s = %q, want %q", k, attrs.Attributes[k], v)
		}
	}
	if !strings.Contains(attrs.Attributes["Policy"], "events.amazonaws.com") {
		t.Errorf("Policy not stored as given: %q", attrs.Attributes["Policy"])
	}

	one, err := c.GetQueueAttributes(ctx, &awssqs.GetQueueAttributesInput{QueueUrl: aws.String(url), AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameQueueArn}})
	if err != nil || len(one.Attributes) != 1 {
		t.Fatalf("GetQueueAttributes(QueueArn) = %v, %v; want exactly QueueArn", one.Attributes, err)
	}

	_, err = c.SetQueueAttributes(ctx, &awssqs.SetQueueAttributesInput{QueueUrl: aws.String(url), Attributes: map[string]string{"VisibilityTimeout": "50000"}})
	if code := clienttest.ErrorCode(t, err); code != "InvalidAttributeValue" {
		t.Fatalf("out-of-range VisibilityTimeout code = %s", code)
	}
	_, err = c.SetQueueAttributes(ctx, &awssqs.SetQueueAttributesInput{QueueUrl: aws.String(url), Attributes: map[string]string{"Colour": "blue"}})
	if code := clienttest.ErrorCode(t, err); code != "InvalidAttributeName" {
		t.Fatalf("unknown attribute code = %s", code)
	}

	list, err := c.ListQueues(ctx, &awssqs.ListQueuesInput{QueueNamePrefix: aws.String("karp")})
	if err != nil || len(list.QueueUrls) != 1 || list.QueueUrls[0] != url {
		t.Fatalf("ListQueues = %v, %v", list.QueueUrls, err)
	}

	if _, err := c.DeleteQueue(ctx, &awssqs.DeleteQueueInput{QueueUrl: aws.String(url)}); err != nil {
		t.Fatal(err)
	}
	_, err = c.GetQueueUrl(ctx, &awssqs.GetQueueUrlInput{QueueName: aws.String("karpenter")})
	if code := clienttest.ErrorCode(t, err); code != "AWS.SimpleQueueService.NonExistentQueue" {
		t.Fatalf("GetQueueUrl after delete code = %s", code)
	}
	var missing *types.QueueDoesNotExist
	if !errors.As(err, &missing) {
		t.Fatalf("GetQueueUrl after delete error %T is not *types.QueueDoesNotExist", err)
	}
}

func TestQueueTags(t *testing.T) {
	ctx := context.Background()
	c, _ := newClient(t)
	out, err := c.CreateQueue(ctx, &awssqs.CreateQueueInput{QueueName: aws.String("tagged"), Tags: map[string]string{"a": "1", "b": "2"}})
	if err != nil {
		t.Fatal(err)
	}
	url := out.QueueUrl
	if _, err := c.TagQueue(ctx, &awssqs.TagQueueInput{QueueUrl: url, Tags: map[string]string{"c": "3"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.UntagQueue(ctx, &awssqs.UntagQueueInput{QueueUrl: url, TagKeys: []string{"a"}}); err != nil {
		t.Fatal(err)
	}
	tags, err := c.ListQueueTags(ctx, &awssqs.ListQueueTagsInput{QueueUrl: url})
	if err != nil {
		t.Fatal(err)
	}
	if len(tags.Tags) != 2 || tags.Tags["b"] != "2" || tags.Tags["c"] != "3" {
		t.Fatalf("tags = %v, want b=2 c=3", tags.Tags)
	}
}

func TestSendReceiveDelete(t *testing.T) {
	ctx := context.Background()
	c, _ := newClient(t)
	url := aws.String(createQueue(t, c, "work", nil))

	// The SDK validates MD5OfMessageBody itself; a wrong checksum fails the call.
	sent, err := c.SendMessage(ctx, &awssqs.SendMessageInput{
		QueueUrl:    url,
		MessageBody: aws.String(`{"hello":"wörld"}`),
		MessageAttributes: map[string]types.MessageAttributeValue{
			"kind": {DataType: aws.String("String"), StringValue: aws.String("greeting")},
			"n":    {DataType: aws.String("Number"), StringValue: aws.String("7")},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(sent.MD5OfMessageAttributes) == "" {
		t.Fatal("SendMessage with attributes returned no MD5OfMessageAttributes")
	}

	got, err := c.ReceiveMessage(ctx, &awssqs.ReceiveMessageInput{
		QueueUrl:                    url,
		MaxNumberOfMessages:         10,
		VisibilityTimeout:           1,
		MessageAttributeNames:       []string{"All"},
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Messages) != 1 {
		t.Fatalf("received %d messages, want 1", len(got.Messages))
	}
	m := got.Messages[0]
	if aws.ToString(m.MessageId) != aws.ToString(sent.MessageId) || aws.ToString(m.Body) != `{"hello":"wörld"}` {
		t.Fatalf("received %s %q, want %s", aws.ToString(m.MessageId), aws.ToString(m.Body), aws.ToString(sent.MessageId))
	}
	if m.Attributes["ApproximateReceiveCount"] != "1" || m.Attributes["SentTimestamp"] == "" {
		t.Fatalf("system attributes = %v", m.Attributes)
	}
	if aws.ToString(m.MessageAttributes["kind"].StringValue) != "greeting" {
		t.Fatalf("message attributes = %v", m.MessageAttributes)
	}
	if aws.ToString(m.MD5OfMessageAttributes) != aws.ToString(sent.MD5OfMessageAttributes) {
		t.Fatalf("MD5OfMessageAttributes on receive %s != on send %s", aws.ToString(m.MD5OfMessageAttributes), aws.ToString(sent.MD5OfMessageAttributes))
	}

	// Hidden for the visibility timeout.
	hidden, err := c.ReceiveMessage(ctx, &awssqs.ReceiveMessageInput{QueueUrl: url})
	if err != nil || len(hidden.Messages) != 0 {
		t.Fatalf("message visible during its visibility timeout: %v, %v", hidden.Messages, err)
	}

	// Returned again after it, with a new receipt handle and receive count.
	again, err := c.ReceiveMessage(ctx, &awssqs.ReceiveMessageInput{
		QueueUrl:                    url,
		WaitTimeSeconds:             10,
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameApproximateReceiveCount},
	})
	if err != nil || len(again.Messages) != 1 {
		t.Fatalf("message not redelivered after the visibility timeout: %v, %v", again.Messages, err)
	}
	r := again.Messages[0]
	if aws.ToString(r.MessageId) != aws.ToString(m.MessageId) || r.Attributes["ApproximateReceiveCount"] != "2" {
		t.Fatalf("redelivered %s with attributes %v", aws.ToString(r.MessageId), r.Attributes)
	}
	if aws.ToString(r.ReceiptHandle) == aws.ToString(m.ReceiptHandle) {
		t.Fatal("redelivery reused the receipt handle")
	}

	// Extend, then delete; the queue is empty afterwards.
	if _, err := c.ChangeMessageVisibility(ctx, &awssqs.ChangeMessageVisibilityInput{QueueUrl: url, ReceiptHandle: r.ReceiptHandle, VisibilityTimeout: 600}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DeleteMessage(ctx, &awssqs.DeleteMessageInput{QueueUrl: url, ReceiptHandle: r.ReceiptHandle}); err != nil {
		t.Fatal(err)
	}
	_, err = c.ChangeMessageVisibility(ctx, &awssqs.ChangeMessageVisibilityInput{QueueUrl: url, ReceiptHandle: r.ReceiptHandle, VisibilityTimeout: 0})
	if code := clienttest.ErrorCode(t, err); code != "AWS.SimpleQueueService.MessageNotInflight" {
		t.Fatalf("ChangeMessageVisibility on a deleted message code = %s", code)
	}
	attrs, err := c.GetQueueAttributes(ctx, &awssqs.GetQueueAttributesInput{QueueUrl: url, AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameAll}})
	if err != nil {
		t.Fatal(err)
	}
	if attrs.Attributes["ApproximateNumberOfMessages"] != "0" || attrs.Attributes["ApproximateNumberOfMessagesNotVisible"] != "0" {
		t.Fatalf("queue not empty after delete: %v", attrs.Attributes)
	}

	_, err = c.DeleteMessage(ctx, &awssqs.DeleteMessageInput{QueueUrl: url, ReceiptHandle: aws.String("not-a-handle!")})
	if code := clienttest.ErrorCode(t, err); code != "ReceiptHandleIsInvalid" {
		t.Fatalf("DeleteMessage with a bad handle code = %s", code)
	}
}

func TestReceiveValidation(t *testing.T) {
	c, _ := newClient(t)
	url := aws.String(createQueue(t, c, "strict", nil))
	_, err := c.ReceiveMessage(context.Background(), &awssqs.ReceiveMessageInput{QueueUrl: url, MaxNumberOfMessages: 11})
	if code := clienttest.ErrorCode(t, err); code != "InvalidParameterValue" {
		t.Fatalf("MaxNumberOfMessages=11 code = %s", code)
	}
	_, err = c.SendMessage(context.Background(), &awssqs.SendMessageInput{QueueUrl: aws.String(strings.Replace(aws.ToString(url), "strict", "absent", 1)), MessageBody: aws.String("x")})
	if code := clienttest.ErrorCode(t, err); code != "AWS.SimpleQueueService.NonExistentQueue" {
		t.Fatalf("SendMessage to a missing queue code = %s", code)
	}
}

func TestLongPollReturnsWhenMessageArrives(t *testing.T) {
	ctx := context.Background()
	c, _ := newClient(t)
	url := aws.String(createQueue(t, c, "poll", nil))

	type result struct {
		out *awssqs.ReceiveMessageOutput
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := c.ReceiveMessage(ctx, &awssqs.ReceiveMessageInput{QueueUrl: url, WaitTimeSeconds: 20})
		done <- result{out, err}
	}()
	// The poll must still be waiting: nothing has been sent yet.
	select {
	case r := <-done:
		t.Fatalf("long poll returned before any message was sent: %v, %v", r.out, r.err)
	case <-time.After(200 * time.Millisecond):
	}
	if _, err := c.SendMessage(ctx, &awssqs.SendMessageInput{QueueUrl: url, MessageBody: aws.String("wake up")}); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil || len(r.out.Messages) != 1 || aws.ToString(r.out.Messages[0].Body) != "wake up" {
		t.Fatalf("long poll result = %v, %v", r.out, r.err)
	}
}

func TestRetentionPeriodValidation(t *testing.T) {
	ctx := context.Background()
	c, _ := newClient(t)
	url := aws.String(createQueue(t, c, "short", map[string]string{"MessageRetentionPeriod": "60"}))
	if _, err := c.SendMessage(ctx, &awssqs.SendMessageInput{QueueUrl: url, MessageBody: aws.String("kept")}); err != nil {
		t.Fatal(err)
	}
	_, err := c.SetQueueAttributes(ctx, &awssqs.SetQueueAttributesInput{QueueUrl: url, Attributes: map[string]string{"MessageRetentionPeriod": "59"}})
	if code := clienttest.ErrorCode(t, err); code != "InvalidAttributeValue" {
		t.Fatalf("MessageRetentionPeriod below 60 code = %s", code)
	}
	got, err := c.ReceiveMessage(ctx, &awssqs.ReceiveMessageInput{QueueUrl: url})
	if err != nil || len(got.Messages) != 1 {
		t.Fatalf("message within retention not received: %v, %v", got, err)
	}
}

func TestDeliverChecksQueuePolicy(t *testing.T) {
	c, svc := newClient(t)
	url := aws.String(createQueue(t, c, "target", nil))
	arn := svc.QueueARN("target")
	const rule = "arn:aws:events:us-west-2:111122223333:rule/target-spot"
	if _, err := svc.Deliver("events.amazonaws.com", rule, arn, "x"); err == nil {
		t.Fatal("delivery to a queue without a policy succeeded")
	}
	policy := `{"Statement":[{"Effect":"Allow","Principal":{"Service":"events.amazonaws.com"},"Action":"sqs:SendMessage","Resource":"` + arn + `"}]}`
	if _, err := c.SetQueueAttributes(context.Background(), &awssqs.SetQueueAttributesInput{QueueUrl: url, Attributes: map[string]string{"Policy": policy}}); err != nil {
		t.Fatal(err)
	}
	id, err := svc.Deliver("events.amazonaws.com", rule, arn, "from another service")
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.ReceiveMessage(context.Background(), &awssqs.ReceiveMessageInput{QueueUrl: url})
	if err != nil || len(got.Messages) != 1 || aws.ToString(got.Messages[0].MessageId) != id {
		t.Fatalf("ReceiveMessage = %v, %v; want message %s", got, err, id)
	}
	if _, err := svc.Deliver("events.amazonaws.com", rule, svc.QueueARN("absent"), "x"); err == nil {
		t.Fatal("delivery to a missing queue succeeded")
	}
}

// A queue policy naming its rules in aws:SourceArn takes deliveries from
// those rules only, as SQS does for EventBridge.
func TestDeliverChecksSourceArn(t *testing.T) {
	c, svc := newClient(t)
	url := aws.String(createQueue(t, c, "guarded", nil))
	arn := svc.QueueARN("guarded")
	ours, other := "arn:aws:events:us-west-2:111122223333:rule/guarded-spot", "arn:aws:events:us-west-2:444455556666:rule/guarded-spot"
	for _, tc := range []struct {
		condition string
		allowed   map[string]bool
	}{
		{`{"ArnEquals":{"aws:SourceArn":["` + ours + `"]}}`, map[string]bool{ours: true, other: false}},
		{`{"ArnLike":{"aws:SourceArn":"arn:aws:events:*:111122223333:rule/guarded-*"}}`, map[string]bool{ours: true, other: false}},
		{`{"StringEquals":{"aws:SourceAccount":"444455556666"}}`, map[string]bool{ours: false, other: true}},
	} {
		policy := `{"Statement":[{"Effect":"Allow","Principal":{"Service":"events.amazonaws.com"},"Action":"sqs:SendMessage","Resource":"` + arn +
			`","Condition":` + tc.condition + `}]}`
		if _, err := c.SetQueueAttributes(context.Background(), &awssqs.SetQueueAttributesInput{QueueUrl: url, Attributes: map[string]string{"Policy": policy}}); err != nil {
			t.Fatal(err)
		}
		for source, want := range tc.allowed {
			if _, err := svc.Deliver("events.amazonaws.com", source, arn, "x"); (err == nil) != want {
				t.Errorf("condition %s, delivery for %s: err = %v, want allowed %v", tc.condition, source, err, want)
			}
		}
	}
}

func TestCloseEndsLongPolls(t *testing.T) {
	c, svc := newClient(t)
	url := aws.String(createQueue(t, c, "closing", nil))
	done := make(chan int, 1)
	go func() {
		out, err := c.ReceiveMessage(context.Background(), &awssqs.ReceiveMessageInput{QueueUrl: url, WaitTimeSeconds: 20})
		if err != nil {
			done <- -1
			return
		}
		done <- len(out.Messages)
	}()
	select {
	case n := <-done:
		t.Fatalf("long poll on an empty queue returned early with %d", n)
	case <-time.After(200 * time.Millisecond):
	}
	svc.Close()
	if n := <-done; n != 0 {
		t.Fatalf("long poll ended by Close returned %d, want 0 messages and no error", n)
	}
}

func TestFIFOQueueMessages(t *testing.T) {
	ctx := context.Background()
	c, _ := newClient(t)
	_, err := c.CreateQueue(ctx, &awssqs.CreateQueueInput{QueueName: aws.String("orders"), Attributes: map[string]string{"FifoQueue": "true"}})
	if code := clienttest.ErrorCode(t, err); code != "InvalidParameterValue" {
		t.Fatalf("FifoQueue without .fifo name code = %s", code)
	}
	url := aws.String(createQueue(t, c, "orders.fifo", map[string]string{"FifoQueue": "true", "ContentBasedDeduplication": "true"}))
	_, err = c.SendMessage(ctx, &awssqs.SendMessageInput{QueueUrl: url, MessageBody: aws.String("no group")})
	if code := clienttest.ErrorCode(t, err); code != "MissingParameter" {
		t.Fatalf("FIFO send without MessageGroupId code = %s", code)
	}
	var seqs []string
	for _, body := range []string{"one", "two"} {
		out, err := c.SendMessage(ctx, &awssqs.SendMessageInput{QueueUrl: url, MessageBody: aws.String(body), MessageGroupId: aws.String("g")})
		if err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, aws.ToString(out.SequenceNumber))
	}
	if len(seqs[0]) != 20 || seqs[0] >= seqs[1] {
		t.Fatalf("sequence numbers %v are not increasing 20-digit strings", seqs)
	}
	got, err := c.ReceiveMessage(ctx, &awssqs.ReceiveMessageInput{QueueUrl: url, MaxNumberOfMessages: 10, MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll}})
	if err != nil || len(got.Messages) != 2 || aws.ToString(got.Messages[0].Body) != "one" || got.Messages[0].Attributes["MessageGroupId"] != "g" {
		t.Fatalf("FIFO receive = %+v, %v", got, err)
	}
}
