package sqs_test

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/clienttest"
)

func TestBatchOperations(t *testing.T) {
	ctx := context.Background()
	c, _ := newClient(t)
	url := aws.String(createQueue(t, c, "batch", nil))

	// The SDK checks every entry's MD5OfMessageBody.
	sent, err := c.SendMessageBatch(ctx, &awssqs.SendMessageBatchInput{QueueUrl: url, Entries: []types.SendMessageBatchRequestEntry{
		{Id: aws.String("a"), MessageBody: aws.String("first")},
		{Id: aws.String("b"), MessageBody: aws.String("second"), DelaySeconds: 901},
		{Id: aws.String("c"), MessageBody: aws.String("third")},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(sent.Successful) != 2 || len(sent.Failed) != 1 || aws.ToString(sent.Failed[0].Id) != "b" ||
		aws.ToString(sent.Failed[0].Code) != "InvalidParameterValue" || !sent.Failed[0].SenderFault {
		t.Fatalf("SendMessageBatch = %+v", sent)
	}

	got, err := c.ReceiveMessage(ctx, &awssqs.ReceiveMessageInput{QueueUrl: url, MaxNumberOfMessages: 10})
	if err != nil || len(got.Messages) != 2 {
		t.Fatalf("ReceiveMessage = %+v, %v", got, err)
	}
	vis, err := c.ChangeMessageVisibilityBatch(ctx, &awssqs.ChangeMessageVisibilityBatchInput{QueueUrl: url, Entries: []types.ChangeMessageVisibilityBatchRequestEntry{
		{Id: aws.String("x"), ReceiptHandle: got.Messages[0].ReceiptHandle, VisibilityTimeout: 120},
		{Id: aws.String("y"), ReceiptHandle: aws.String("garbage!"), VisibilityTimeout: 120},
	}})
	if err != nil || len(vis.Successful) != 1 || len(vis.Failed) != 1 || aws.ToString(vis.Failed[0].Code) != "ReceiptHandleIsInvalid" {
		t.Fatalf("ChangeMessageVisibilityBatch = %+v, %v", vis, err)
	}
	del, err := c.DeleteMessageBatch(ctx, &awssqs.DeleteMessageBatchInput{QueueUrl: url, Entries: []types.DeleteMessageBatchRequestEntry{
		{Id: aws.String("m0"), ReceiptHandle: got.Messages[0].ReceiptHandle},
		{Id: aws.String("m1"), ReceiptHandle: got.Messages[1].ReceiptHandle},
	}})
	if err != nil || len(del.Successful) != 2 {
		t.Fatalf("DeleteMessageBatch = %+v, %v", del, err)
	}
	attrs, err := c.GetQueueAttributes(ctx, &awssqs.GetQueueAttributesInput{QueueUrl: url, AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameAll}})
	if err != nil || attrs.Attributes["ApproximateNumberOfMessages"] != "0" || attrs.Attributes["ApproximateNumberOfMessagesNotVisible"] != "0" {
		t.Fatalf("queue after batch delete = %v, %v", attrs.Attributes, err)
	}

	_, err = c.DeleteMessageBatch(ctx, &awssqs.DeleteMessageBatchInput{QueueUrl: url, Entries: []types.DeleteMessageBatchRequestEntry{
		{Id: aws.String("same"), ReceiptHandle: aws.String("h")}, {Id: aws.String("same"), ReceiptHandle: aws.String("h")},
	}})
	if code := clienttest.ErrorCode(t, err); code != "AWS.SimpleQueueService.BatchEntryIdsNotDistinct" {
		t.Fatalf("repeated IDs code = %s", code)
	}
	_, err = c.DeleteMessageBatch(ctx, &awssqs.DeleteMessageBatchInput{QueueUrl: url, Entries: []types.DeleteMessageBatchRequestEntry{}})
	if code := clienttest.ErrorCode(t, err); code != "AWS.SimpleQueueService.EmptyBatchRequest" {
		t.Fatalf("empty batch code = %s", code)
	}
}
