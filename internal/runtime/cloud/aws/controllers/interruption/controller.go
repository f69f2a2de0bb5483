package interruption

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/cache"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/instance"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/events"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/metrics"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/state"
)

// Polling, as Karpenter: long polls of up to ten messages, hidden for 20s
// while being handled, handled ten at a time.
const (
	maxMessages       = 10
	waitSeconds       = 20
	visibilitySeconds = 20
	parallelism       = 10
	// errorBackoff spaces retries when the queue cannot be reached.
	errorBackoff = 10 * time.Second
	// defaultGather is how long the poller waits after a batch of fewer
	// than ten messages. A long poll returns as soon as one message is
	// there, so during a scale-out, when every instance's state changes
	// trickle in, back-to-back polls would carry one or two messages each
	// and a receive and a delete per message. Two seconds is nothing
	// against a spot notice's two minutes.
	defaultGather = 2 * time.Second
)

// Options are the controller's collaborators.
type Options struct {
	Kube      client.Client
	SQS       *sqs.Client
	QueueName string
	// Unavailable is the cloud provider's unavailable-offerings cache; spot
	// interruptions take their pool out of it for a while.
	Unavailable *cache.UnavailableOfferings
	Recorder    *events.Recorder
	Logger      logr.Logger
	// Gather is the wait after a partial batch; zero takes defaultGather.
	Gather time.Duration
}

// Controller polls the interruption queue. It is a manager Runnable that
// runs only on the leader.
type Controller struct {
	opts     Options
	queueURL string
	// retry holds handled messages whose deletion failed; the next poll
	// deletes them with its own. Only Poll touches it (one poller).
	retry []handled
	// health is whether receiving fails, for the warnings (one poller).
	health receiveHealth
}

// handled is a message to delete from the queue.
type handled struct {
	msg      sqstypes.Message
	emitted  time.Time // when the event happened; zero when unparsable
	received time.Time
}

var (
	_ manager.Runnable               = (*Controller)(nil)
	_ manager.LeaderElectionRunnable = (*Controller)(nil)
)

// NewController returns the controller; Register adds it to a manager.
func NewController(opts Options) *Controller {
	opts.Logger = opts.Logger.WithName("interruption").WithValues("queue", opts.QueueName)
	if opts.Gather == 0 {
		opts.Gather = defaultGather
	}
	return &Controller{opts: opts}
}

// Register adds the controller to mgr.
func (c *Controller) Register(mgr manager.Manager) error { return mgr.Add(c) }

// NeedLeaderElection keeps a single consumer per cluster.
func (c *Controller) NeedLeaderElection() bool { return true }

// Start polls until ctx ends.
func (c *Controller) Start(ctx context.Context) error {
	c.opts.Logger.Info("polling the interruption queue")
	for ctx.Err() == nil {
		n, err := c.poll(ctx)
		wait := time.Duration(0)
		switch {
		case err != nil && ctx.Err() == nil:
			c.opts.Logger.Error(err, "polling the interruption queue; retrying", "after", errorBackoff)
			wait = errorBackoff
		case n > 0 && n < maxMessages:
			wait = c.opts.Gather
		}
		if wait > 0 {
			select {
			case <-ctx.Done():
			case <-time.After(wait):
			}
		}
	}
	return nil
}

// Poll receives one batch of messages (waiting up to 20s for the first) and
// handles it. Handled and unparsable messages are deleted together, with one
// DeleteMessageBatch; a message whose handling failed stays and comes back
// after the visibility timeout, and one whose deletion failed is deleted
// with the next poll's.
func (c *Controller) Poll(ctx context.Context) error {
	_, err := c.poll(ctx)
	return err
}

// poll is Poll that also says how many messages it received.
func (c *Controller) poll(ctx context.Context) (int, error) {
	url, out, err := c.receive(ctx)
	c.observeReceive(ctx, err)
	if err != nil {
		return 0, err
	}
	if len(out.Messages) == 0 {
		return 0, c.delete(ctx, url, nil)
	}
	claims, err := c.claimsByInstance(ctx)
	if err != nil {
		return len(out.Messages), errors.Join(err, c.delete(ctx, url, nil))
	}
	var (
		wg   sync.WaitGroup
		sem  = make(chan struct{}, parallelism)
		mu   sync.Mutex
		errs []error
		done []handled
	)
	received := time.Now()
	for _, msg := range out.Messages {
		wg.Add(1)
		sem <- struct{}{}
		go func(msg sqstypes.Message) {
			defer func() { <-sem; wg.Done() }()
			emitted, err := c.handle(ctx, msg, claims)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			done = append(done, handled{msg: msg, emitted: emitted, received: received})
		}(msg)
	}
	wg.Wait()
	return len(out.Messages), errors.Join(append(errs, c.delete(ctx, url, done))...)
}

// receive finds the queue and receives one batch.
func (c *Controller) receive(ctx context.Context) (string, *sqs.ReceiveMessageOutput, error) {
	url, err := c.url(ctx)
	if err != nil {
		return "", nil, err
	}
	out, err := c.opts.SQS.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
		QueueUrl: aws.String(url), MaxNumberOfMessages: maxMessages,
		WaitTimeSeconds: waitSeconds, VisibilityTimeout: visibilitySeconds,
	})
	if err != nil {
		return "", nil, fmt.Errorf("receiving from queue %s: %w", c.opts.QueueName, err)
	}
	return url, out, nil
}

func (c *Controller) url(ctx context.Context) (string, error) {
	if c.queueURL != "" {
		return c.queueURL, nil
	}
	out, err := c.opts.SQS.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(c.opts.QueueName)})
	if err != nil {
		return "", fmt.Errorf("finding queue %s (INTERRUPTION_QUEUE; is it created, e.g. by joist_interruption_queue?): %w", c.opts.QueueName, err)
	}
	c.queueURL = aws.ToString(out.QueueUrl)
	return c.queueURL, nil
}

// claimsByInstance indexes the NodeClaims by their instance ID.
func (c *Controller) claimsByInstance(ctx context.Context) (map[string]*v1.NodeClaim, error) {
	list, err := c.listClaims(ctx)
	if err != nil {
		return nil, err
	}
	return byInstance(list), nil
}

// listClaims lists the NodeClaims.
func (c *Controller) listClaims(ctx context.Context) ([]*v1.NodeClaim, error) {
	var list v1.NodeClaimList
	if err := c.opts.Kube.List(ctx, &list); err != nil {
		return nil, fmt.Errorf("listing NodeClaims: %w", err)
	}
	out := make([]*v1.NodeClaim, len(list.Items))
	for i := range list.Items {
		out[i] = &list.Items[i]
	}
	return out, nil
}

// byInstance indexes claims by their instance ID.
func byInstance(claims []*v1.NodeClaim) map[string]*v1.NodeClaim {
	out := make(map[string]*v1.NodeClaim, len(claims))
	for _, nc := range claims {
		if id, err := instance.ParseProviderID(nc.Status.ProviderID); err == nil {
			out[id] = nc
		}
	}
	return out
}

// handle acts on one message and returns when its event happened (zero for
// an unparsable message, which is dropped); nil error means delete it.
func (c *Controller) handle(ctx context.Context, msg sqstypes.Message, claims map[string]*v1.NodeClaim) (time.Time, error) {
	m, err := Parse(aws.ToString(msg.Body))
	if err != nil {
		receivedMessages.WithLabelValues("unknown").Inc()
		c.opts.Logger.Error(err, "dropping unparsable message", "messageID", aws.ToString(msg.MessageId))
		return time.Time{}, nil
	}
	receivedMessages.WithLabelValues(string(m.Kind)).Inc()
	for _, id := range m.InstanceIDs {
		nc, ok := claims[id]
		if !ok {
			continue // not ours
		}
		if err := c.act(ctx, m, nc); err != nil {
			return time.Time{}, fmt.Errorf("message %s (%s) for instance %s: %w", m.ID, m.Kind, id, err)
		}
	}
	return m.Time, nil
}

// act applies a message to one NodeClaim.
func (c *Controller) act(ctx context.Context, m Message, nc *v1.NodeClaim) error {
	log := c.opts.Logger.WithValues("NodeClaim", nc.Name, "kind", m.Kind, "messageID", m.ID)
	c.emit(m, nc)
	switch m.Kind {
	case SpotInterrupted:
		c.markUnavailable(nc, v1.CapacityTypeSpot)
	case CapacityReservationInterrupted:
		c.markUnavailable(nc, v1.CapacityTypeReserved)
	}
	if !m.Drains() || !nc.DeletionTimestamp.IsZero() {
		return nil
	}
	// A broken instance cannot be drained through its kubelet: its
	// deadline is now, so termination skips the graceful drain and the
	// wait for volumes.
	if m.Forceful() {
		if err := c.deadlineNow(ctx, nc); err != nil {
			return err
		}
	}
	if err := c.opts.Kube.Delete(ctx, nc); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting NodeClaim %s: %w", nc.Name, err)
	}
	pool := &v1.NodePool{}
	if err := c.opts.Kube.Get(ctx, client.ObjectKey{Name: nc.Labels[v1.NodePoolLabelKey]}, pool); err != nil {
		pool = nil
	}
	metrics.Disrupted(string(m.Kind), nc, pool, state.ReschedulableOn(ctx, c.opts.Kube, nc.Status.NodeName))
	c.opts.Recorder.Normal(nc, reasonTerminatingOnInterruption, events.ActionDelete, "Interruption triggered termination for the NodeClaim")
	log.Info("deleting NodeClaim on interruption")
	return nil
}

// deadlineNow sets the NodeClaim's termination deadline to now unless it
// has one already.
func (c *Controller) deadlineNow(ctx context.Context, nc *v1.NodeClaim) error {
	if _, ok := nc.Annotations[v1.NodeClaimTerminationTimestampAnnotationKey]; ok {
		return nil
	}
	stored := nc.DeepCopy()
	metav1.SetMetaDataAnnotation(&nc.ObjectMeta, v1.NodeClaimTerminationTimestampAnnotationKey, time.Now().UTC().Format(time.RFC3339))
	if err := c.opts.Kube.Patch(ctx, nc, client.MergeFrom(stored)); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("setting the termination deadline of NodeClaim %s: %w", nc.Name, err)
	}
	return nil
}

func (c *Controller) markUnavailable(nc *v1.NodeClaim, capacityType string) {
	it, zone := nc.Labels[corev1.LabelInstanceTypeStable], nc.Labels[corev1.LabelTopologyZone]
	if c.opts.Unavailable == nil || it == "" || zone == "" {
		return
	}
	c.opts.Unavailable.MarkUnavailable(it, zone, capacityType)
}

// delete removes handled messages, and those whose deletion failed last
// time, ten per DeleteMessageBatch call. Entries that fail are kept for the
// next poll unless their receipt handle has expired: such a message is
// visible again and the next receive hands it out with a new handle.
func (c *Controller) delete(ctx context.Context, url string, done []handled) error {
	pending := append(c.retry, done...)
	c.retry = nil
	var errs []error
	for start := 0; start < len(pending); start += maxMessages {
		chunk := pending[start:min(start+maxMessages, len(pending))]
		entries := make([]sqstypes.DeleteMessageBatchRequestEntry, len(chunk))
		byID := make(map[string]handled, len(chunk))
		for i, h := range chunk {
			id := strconv.Itoa(i)
			entries[i] = sqstypes.DeleteMessageBatchRequestEntry{Id: aws.String(id), ReceiptHandle: h.msg.ReceiptHandle}
			byID[id] = h
		}
		out, err := c.opts.SQS.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(url), Entries: entries})
		if err != nil {
			c.keep(chunk...)
			errs = append(errs, fmt.Errorf("deleting %d messages from queue %s: %w", len(chunk), c.opts.QueueName, err))
			continue
		}
		for _, ok := range out.Successful {
			h := byID[aws.ToString(ok.Id)]
			deletedMessages.Inc()
			if !h.emitted.IsZero() {
				messageQueueDuration.Observe(time.Since(h.emitted).Seconds())
			}
		}
		for _, f := range out.Failed {
			h := byID[aws.ToString(f.Id)]
			c.keep(h)
			errs = append(errs, fmt.Errorf("deleting message %s from queue %s: %s: %s", aws.ToString(h.msg.MessageId), c.opts.QueueName, aws.ToString(f.Code), aws.ToString(f.Message)))
		}
	}
	return errors.Join(errs...)
}

// keep queues messages for the next delete while their receipt handles
// can still be valid.
func (c *Controller) keep(hs ...handled) {
	for _, h := range hs {
		if time.Since(h.received) < visibilitySeconds*time.Second {
			c.retry = append(c.retry, h)
		}
	}
}
