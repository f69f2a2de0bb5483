package interruption_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/go-logr/logr"

	"github.com/joistdev/terraform-provider-joist/internal/awssim"
	"github.com/joistdev/terraform-provider-joist/internal/awssim/fault"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/cache"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/controllers/interruption"
)

// controllerCalls are the controller's recorded calls of an SQS operation
// on one queue.
func controllerCalls(operation, queue string) []awssim.Request {
	var out []awssim.Request
	for _, r := range sim.Requests().Requests("sqs", operation) {
		if r.AccessKeyID == controllerKey && strings.HasSuffix(fmt.Sprint(r.Parameters["QueueUrl"]), "/"+queue) {
			out = append(out, r)
		}
	}
	return out
}

func sendRaw(t *testing.T, url string, n int) {
	t.Helper()
	q := sqs.NewFromConfig(sim.AWSConfig())
	for i := range n {
		if _, err := q.SendMessage(testContext(t), &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String(fmt.Sprintf("not an event %d", i))}); err != nil {
			t.Fatal(err)
		}
	}
}

// One receive's messages are deleted with one DeleteMessageBatch, and those
// whose deletion failed go with the next poll's.
func TestHandledMessagesAreDeletedInBatches(t *testing.T) {
	ctx := testContext(t)
	const name = "batch-demo"
	url := makeQueue(t, ctx, name)
	c := newController(t, name, cache.NewUnavailableOfferings())
	purge(t, ctx, url)

	sendRaw(t, url, 6)
	if v := waitQueued(t, ctx, url, 6); v != 6 {
		t.Fatalf("queue holds %d messages, want 6", v)
	}
	if err := c.Poll(ctx); err != nil {
		t.Fatal(err)
	}
	if v, f := queueDepth(t, ctx, url); v+f != 0 {
		t.Errorf("queue holds %d visible and %d in-flight messages after a poll, want none", v, f)
	}
	receives := len(controllerCalls("ReceiveMessage", name))
	if n := len(controllerCalls("DeleteMessage", name)); n != 0 {
		t.Errorf("the controller made %d DeleteMessage calls for 6 messages, want none (one DeleteMessageBatch per receive)", n)
	}
	if n := len(controllerCalls("DeleteMessageBatch", name)); n != receives {
		t.Errorf("the controller made %d DeleteMessageBatch calls for %d receives, want one per receive", n, receives)
	}

	// The deletion fails (every SDK attempt): the messages stay in flight
	// and go with the next poll's deletion.
	f, err := sim.Faults().Add(fault.Fault{Service: "sqs", Operation: "DeleteMessageBatch", Kind: fault.ServerError})
	if err != nil {
		t.Fatal(err)
	}
	sendRaw(t, url, 3)
	if v := waitQueued(t, ctx, url, 3); v != 3 {
		t.Fatalf("queue holds %d messages, want 3", v)
	}
	if err := c.Poll(ctx); err == nil {
		t.Error("a poll whose deletion failed returned no error")
	}
	sim.Faults().Remove(f.ID)
	if v, f := queueDepth(t, ctx, url); v != 0 || f != 3 {
		t.Fatalf("queue holds %d visible and %d in-flight messages after the failed deletion, want 0 and 3", v, f)
	}
	sendRaw(t, url, 1)
	if v := waitQueued(t, ctx, url, 1); v != 1 {
		t.Fatalf("queue holds %d messages, want 1", v)
	}
	before := len(controllerCalls("DeleteMessageBatch", name))
	if err := c.Poll(ctx); err != nil {
		t.Fatal(err)
	}
	batches := controllerCalls("DeleteMessageBatch", name)[before:]
	if len(batches) != 1 {
		t.Fatalf("the poll after the failure made %d DeleteMessageBatch calls, want 1", len(batches))
	}
	if entries, _ := batches[0].Parameters["Entries"].([]any); len(entries) != 4 {
		t.Errorf("the poll after the failure deleted %d messages in its batch, want 4 (1 new, 3 retried): %v", len(entries), batches[0].Parameters)
	}
	if v, f := queueDepth(t, ctx, url); v+f != 0 {
		t.Errorf("queue holds %d visible and %d in-flight messages after the retry, want none", v, f)
	}
	assertAllowedByPolicy(t, name)
}

// Messages that trickle in, as instances' state changes do during a
// scale-out, are gathered: after a partial batch the poller waits before
// receiving again, so one receive and one delete carry them all.
func TestTrickledMessagesAreGathered(t *testing.T) {
	ctx := testContext(t)
	const name = "gather-demo"
	url := makeQueue(t, ctx, name)
	purge(t, ctx, url)
	c := interruption.NewController(interruption.Options{
		Kube: kube, SQS: sqs.NewFromConfig(controllerAWS()), QueueName: name, Unavailable: cache.NewUnavailableOfferings(),
		Logger: logr.Discard(), Recorder: recorder(t), Gather: 5 * time.Second,
	})
	runCtx, stop := context.WithCancel(ctx)
	stopped := make(chan struct{})
	go func() { defer close(stopped); _ = c.Start(runCtx) }()
	defer func() { stop(); <-stopped }()

	drained := func(what string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			if v, f := queueDepth(t, ctx, url); v+f == 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("the queue still holds messages 20s after %s", what)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	// The first message opens a partial batch; the next six arrive one at
	// a time inside the wait that follows it.
	sendRaw(t, url, 1)
	drained("the first message")
	before := len(controllerCalls("DeleteMessageBatch", name))
	for range 6 {
		sendRaw(t, url, 1)
		time.Sleep(100 * time.Millisecond)
	}
	drained("six more")
	batches := controllerCalls("DeleteMessageBatch", name)[before:]
	if len(batches) != 1 {
		t.Fatalf("six messages sent 100ms apart during the wait were deleted in %d DeleteMessageBatch calls, want 1", len(batches))
	}
	if entries, _ := batches[0].Parameters["Entries"].([]any); len(entries) != 6 {
		t.Errorf("the batch deleted %d messages, want 6", len(entries))
	}
}
