package interruption

import (
	"context"
	"time"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/awserr"
)

// Telling users the queue cannot be read (Joist's reasons: Karpenter only
// logs it). A failing receive means interruption notices go unheard, so
// nodes are reclaimed without a drain; the log alone is easy to miss.
const (
	reasonReceiveFailed    = "InterruptionQueueReceiveFailed"
	reasonReceiveRecovered = "InterruptionQueueReceiveRecovered"
	actionReceive          = "Receiving"
	// reportEvery bounds the warnings while the queue stays unreadable: one
	// at the first failure, then one per reportEvery, not one per poll.
	reportEvery = 10 * time.Minute
)

// receiveHealth remembers whether receiving fails and when users were last
// told. Only the poller touches it.
type receiveHealth struct {
	failing  bool
	reported time.Time
}

// failed records a failure at now and says whether to tell users: on the
// first failure, and again once reportEvery has passed since the last time.
func (h *receiveHealth) failed(now time.Time) bool {
	tell := !h.failing || now.Sub(h.reported) >= reportEvery
	h.failing = true
	if tell {
		h.reported = now
	}
	return tell
}

// succeeded records a success and says whether it ends a failure.
func (h *receiveHealth) succeeded() bool {
	ended := h.failing
	h.failing = false
	return ended
}

// observeReceive counts a failed receive, keeps the failing gauge, and
// tells users on every EC2NodeClass (the AWS side of their configuration)
// when the queue becomes unreadable, while it stays so (bounded), and when
// it can be read again.
func (c *Controller) observeReceive(ctx context.Context, err error) {
	if err == nil {
		receiveFailing.Set(0)
		if c.health.succeeded() {
			c.tellNodeClasses(ctx, false, reasonReceiveRecovered, "Receiving from the interruption queue %s works again", c.opts.QueueName)
		}
		return
	}
	if ctx.Err() != nil {
		return // shutting down, not failing
	}
	code := awserr.Code(err)
	if code == "" {
		code = "client"
	}
	receiveErrors.WithLabelValues(code).Inc()
	receiveFailing.Set(1)
	if c.health.failed(time.Now()) {
		c.tellNodeClasses(ctx, true, reasonReceiveFailed,
			"Cannot receive from the interruption queue %s: spot interruptions, rebalance recommendations and scheduled changes are not acted on until it can. %s%v",
			c.opts.QueueName, receiveHint(code), err)
	}
}

// receiveHint names the usual fix for a receive error code.
func receiveHint(code string) string {
	switch code {
	case "KMS.AccessDeniedException":
		return "The queue is encrypted with a KMS key the controller may not use: grant kms:Decrypt on it " +
			"(joist_controller_iam_role's interruption_queue_kms_key_arn). "
	case "AWS.SimpleQueueService.NonExistentQueue", "QueueDoesNotExist":
		return "Create the queue (joist_interruption_queue) or fix INTERRUPTION_QUEUE. "
	case "AccessDenied", "AccessDeniedException":
		return "The controller's role may not read the queue (joist_controller_iam_role's interruption_queue_name). "
	}
	return ""
}

func (c *Controller) tellNodeClasses(ctx context.Context, warning bool, reason, format string, args ...any) {
	var list awsv1.EC2NodeClassList
	if err := c.opts.Kube.List(ctx, &list); err != nil {
		c.opts.Logger.Error(err, "listing EC2NodeClasses to report the interruption queue's state")
		return
	}
	for i := range list.Items {
		if warning {
			c.opts.Recorder.Warning(&list.Items[i], reason, actionReceive, format, args...)
		} else {
			c.opts.Recorder.Normal(&list.Items[i], reason, actionReceive, format, args...)
		}
	}
}
