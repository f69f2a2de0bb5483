package disruption

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/events"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/metrics"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/nodeclaim"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/simulation"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/state"
)

// Orchestration timers.
const (
	// Bounds of the wait for replacements to initialize; between them the
	// wait grows by commandTimeoutPerCommand for every queued command, so a
	// long queue (whose replacements launch slower) is not failed early.
	MinCommandTimeout        = 10 * time.Minute
	MaxCommandTimeout        = time.Hour
	commandTimeoutPerCommand = 80 * time.Millisecond
	replacementPoll          = 2 * time.Second
	// releaseGrace keeps a finished command's nodes held until the cache
	// shows their claims deleting, so they are not mistaken for stale taints.
	releaseGrace = time.Minute
)

// Queue executes commands: taint the candidates, create the replacements,
// wait for them to initialize, then delete the candidates; on failure it
// rolls the candidates back (untaints them).
type Queue struct {
	kube client.Client
	// live reads from the API server: a replacement the cache does not
	// show is either not cached yet or already gone, and only it can tell.
	live     client.Reader
	cluster  *state.Cluster
	recorder *events.Recorder
	clock    clock.Clock

	mu   sync.Mutex
	held map[string]time.Time // node name -> held until (zero: while executing)
	// executing counts the commands started and not yet finished or
	// rolled back.
	executing int
	// failed, when set, hears of every command whose replacements failed
	// (the disruption breaker counts them).
	failed func(context.Context, *Command, error)
}

// CommandTimeout is how long a command waits for its replacements to
// initialize while queued commands are in the queue (the command itself
// included): 80 ms each, clamped to [10 min, 1 h].
func CommandTimeout(queued int) time.Duration {
	return min(max(time.Duration(queued)*commandTimeoutPerCommand, MinCommandTimeout), MaxCommandTimeout)
}

// NewQueue builds the orchestration queue.
func NewQueue(kube client.Client, live client.Reader, cluster *state.Cluster, rec *events.Recorder, clk clock.Clock) *Queue {
	return &Queue{kube: kube, live: live, cluster: cluster, recorder: rec, clock: clk, held: map[string]time.Time{}}
}

// Held names the Nodes of executing commands.
func (q *Queue) Held() map[string]bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.clock.Now()
	out := map[string]bool{}
	for name, until := range q.held {
		if !until.IsZero() && now.After(until) {
			delete(q.held, name)
			continue
		}
		out[name] = true
	}
	return out
}

// hold and release bracket every command exactly once.
func (q *Queue) hold(cmd *Command) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.executing++
	for _, c := range cmd.Candidates {
		q.held[c.Node.Name] = time.Time{}
	}
}

func (q *Queue) release(cmd *Command, after time.Duration) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.executing--
	until := q.clock.Now().Add(after)
	for _, c := range cmd.Candidates {
		if after == 0 {
			delete(q.held, c.Node.Name)
		} else {
			q.held[c.Node.Name] = until
		}
	}
}

// Execute starts cmd: it taints the candidates and creates the
// replacements now, and finishes in the background (bounded by ctx).
func (q *Queue) Execute(ctx context.Context, cmd *Command, pools []*v1.NodePool) error {
	logger := log.FromContext(ctx).WithValues("command", cmd.String())
	q.hold(cmd)
	if err := q.markCandidates(ctx, cmd); err != nil {
		failedQueue(cmd)
		q.rollback(ctx, cmd)
		return err
	}
	created, err := q.createReplacements(ctx, cmd, pools)
	if err != nil {
		// Replacements created before the failure stay as capacity;
		// consolidation removes them if nothing needs them.
		failedQueue(cmd)
		q.rollback(ctx, cmd)
		return err
	}
	logger.Info("disrupting nodes")
	go q.finish(ctx, cmd, created)
	return nil
}

func (q *Queue) markCandidates(ctx context.Context, cmd *Command) error {
	for _, c := range cmd.Candidates {
		node := c.Node.DeepCopy()
		stored := node.DeepCopy()
		if v1.ApplyDisruptedTaint(node) {
			if err := q.kube.Patch(ctx, node, client.MergeFromWithOptions(stored, client.MergeFromWithOptimisticLock{})); err != nil {
				return fmt.Errorf("tainting node %s for disruption: %w", node.Name, err)
			}
		}
		claim := c.NodeClaim.DeepCopy()
		storedClaim := claim.DeepCopy()
		nodeclaim.Set(claim, v1.ConditionTypeDisruptionReason, metav1.ConditionTrue, string(cmd.Reason), "")
		if err := q.kube.Status().Patch(ctx, claim, client.MergeFrom(storedClaim)); err != nil {
			return fmt.Errorf("marking nodeclaim %s disrupted: %w", claim.Name, err)
		}
	}
	return nil
}

func (q *Queue) createReplacements(ctx context.Context, cmd *Command, pools []*v1.NodePool) ([]*v1.NodeClaim, error) {
	var created []*v1.NodeClaim
	for _, r := range cmd.Replacements {
		var pool *v1.NodePool
		for _, p := range pools {
			if p.Name == r.NodePool {
				pool = p
			}
		}
		if pool == nil {
			return created, fmt.Errorf("nodepool %s of the replacement is gone", r.NodePool)
		}
		claim := simulation.NewNodeClaim(pool, r)
		metav1.SetMetaDataAnnotation(&claim.ObjectMeta, v1.ReplacementForAnnotationKey, replaced(cmd))
		if err := q.kube.Create(ctx, claim); err != nil {
			return created, fmt.Errorf("creating a replacement nodeclaim in nodepool %s: %w", pool.Name, err)
		}
		q.cluster.ClaimCreated(claim)
		metrics.NodeClaimsCreated.With(metrics.CreatedLabels(string(cmd.Reason), claim)).Inc()
		created = append(created, claim)
		for _, c := range cmd.Candidates {
			q.recorder.Normal(c.Node, reasonDisruptionLaunching, actionDisrupt, "Launching NodeClaim: %s", string(cmd.Reason))
		}
	}
	return created, nil
}

// Resume finishes a command an earlier leader started and did not finish:
// its candidates are tainted and its replacements created. Like Execute's
// second half, it waits for the replacements and deletes the candidates,
// or rolls back.
func (q *Queue) Resume(ctx context.Context, cmd *Command, replacements []*v1.NodeClaim) {
	var names []string
	for _, r := range replacements {
		names = append(names, r.Name)
	}
	log.FromContext(ctx).Info("resuming a disruption command an earlier leader started", "command", cmd.String(), "replacements", strings.Join(names, ","))
	q.hold(cmd)
	go q.finish(ctx, cmd, replacements)
}

// replaced names the command's candidates' NodeClaims, for
// ReplacementForAnnotationKey.
func replaced(cmd *Command) string {
	var names []string
	for _, c := range cmd.Candidates {
		names = append(names, c.NodeClaim.Name)
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}

// finish waits for the replacements and deletes the candidates, or rolls
// back when a replacement fails or the command times out.
func (q *Queue) finish(ctx context.Context, cmd *Command, replacements []*v1.NodeClaim) {
	logger := log.FromContext(ctx).WithValues("command", cmd.String())
	if err := q.awaitInitialized(ctx, cmd, replacements); err != nil {
		logger.Error(err, "abandoning disruption command")
		failedQueue(cmd)
		q.rollback(context.WithoutCancel(ctx), cmd)
		if q.failed != nil {
			q.failed(ctx, cmd, err)
		}
		return
	}
	var errs []error
	for _, c := range cmd.Candidates {
		// The drain bound counts from now, once the replacements are up,
		// so their launch does not eat into it.
		if c.DrainBound != nil {
			if err := q.tightenDeadline(ctx, c.NodeClaim, q.clock.Now().Add(*c.DrainBound)); err != nil {
				errs = append(errs, err)
				continue
			}
		}
		if err := q.kube.Delete(ctx, c.NodeClaim); client.IgnoreNotFound(err) != nil {
			errs = append(errs, err)
			continue
		}
		q.recorder.Normal(c.Node, reasonDisruptionTerminating, actionDisrupt, "Disrupting Node: %s", cmd.Reason)
		q.recorder.Normal(c.NodeClaim, reasonDisruptionTerminating, actionDisrupt, "Disrupting NodeClaim: %s", cmd.Reason)
		metrics.Disrupted(string(cmd.Reason), c.NodeClaim, c.Pool, len(c.Reschedulable))
		if cmd.Reason == v1.DisruptionReasonUnhealthy && c.Repair.Eligible {
			repaired(c)
		}
	}
	decisions.WithLabelValues(cmd.Decision(), reasonLabel(cmd.Reason), consolidationTypeOf(cmd.Method)).Inc()
	if err := errors.Join(errs...); err != nil {
		logger.Error(err, "deleting disrupted nodeclaims")
	}
	q.release(cmd, releaseGrace)
}

// tightenDeadline sets the claim's termination deadline annotation to
// deadline unless it already holds an earlier one: a bound may shorten the
// drain, never lengthen it.
func (q *Queue) tightenDeadline(ctx context.Context, claim *v1.NodeClaim, deadline time.Time) error {
	return retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		current := &v1.NodeClaim{}
		if err := q.kube.Get(ctx, client.ObjectKeyFromObject(claim), current); err != nil {
			return client.IgnoreNotFound(err)
		}
		if s, ok := current.Annotations[v1.NodeClaimTerminationTimestampAnnotationKey]; ok {
			if t, err := time.Parse(time.RFC3339, s); err == nil && !t.After(deadline) {
				return nil
			}
		}
		stored := current.DeepCopy()
		metav1.SetMetaDataAnnotation(&current.ObjectMeta, v1.NodeClaimTerminationTimestampAnnotationKey, deadline.UTC().Format(time.RFC3339))
		if err := q.kube.Patch(ctx, current, client.MergeFromWithOptions(stored, client.MergeFromWithOptimisticLock{})); err != nil {
			return err
		}
		return nil
	})
}

// timeout is the command timeout for the queue as it is now.
func (q *Queue) timeout() time.Duration {
	q.mu.Lock()
	defer q.mu.Unlock()
	return CommandTimeout(q.executing)
}

func (q *Queue) awaitInitialized(ctx context.Context, cmd *Command, replacements []*v1.NodeClaim) error {
	start := q.clock.Now()
	waiting := len(replacements) > 0
	for waiting {
		waiting = false
		for _, r := range replacements {
			claim, err := q.readReplacement(ctx, r)
			if apierrors.IsNotFound(err) {
				return fmt.Errorf("replacement nodeclaim %s was deleted before it initialized", r.Name)
			}
			if err != nil {
				waiting = true
				continue
			}
			if claim.DeletionTimestamp != nil {
				return fmt.Errorf("replacement nodeclaim %s is being deleted before it initialized", r.Name)
			}
			if !meta.IsStatusConditionTrue(claim.Status.Conditions, v1.ConditionTypeInitialized) {
				waiting = true
			}
		}
		if !waiting {
			break
		}
		// The timeout follows the queue's length as commands come and go.
		if timeout := q.timeout(); q.clock.Since(start) > timeout {
			return fmt.Errorf("replacements did not initialize within %s", timeout)
		}
		for _, c := range cmd.Candidates {
			q.recorder.Normal(c.Node, reasonDisruptionWaitingReadiness, actionDisrupt, "Waiting on readiness to continue disruption")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-q.clock.After(replacementPoll):
		}
	}
	return nil
}

// readReplacement reads a replacement through the cache, and from the API
// server when the cache does not show it: one created a moment ago may not
// be cached yet, and one deleted before the cache showed it (a failed
// launch) never will be. The queue created it, so NotFound from the API
// server means it is gone.
func (q *Queue) readReplacement(ctx context.Context, r *v1.NodeClaim) (*v1.NodeClaim, error) {
	claim := &v1.NodeClaim{}
	err := q.kube.Get(ctx, client.ObjectKeyFromObject(r), claim)
	if !apierrors.IsNotFound(err) {
		return claim, err
	}
	return claim, q.live.Get(ctx, client.ObjectKeyFromObject(r), claim)
}

// rollback untaints the candidates and clears their DisruptionReason.
func (q *Queue) rollback(ctx context.Context, cmd *Command) {
	for _, c := range cmd.Candidates {
		if err := Untaint(ctx, q.kube, c.Node.Name, c.NodeClaim.Name); err != nil {
			log.FromContext(ctx).Error(err, "rolling back disruption", "node", c.Node.Name)
		}
	}
	q.release(cmd, 0)
}

// Untaint removes the disrupted taint from a Node that is not being deleted
// and the DisruptionReason condition from its claim.
func Untaint(ctx context.Context, kube client.Client, nodeName, claimName string) error {
	node := &corev1.Node{}
	if err := kube.Get(ctx, client.ObjectKey{Name: nodeName}, node); err != nil {
		return client.IgnoreNotFound(err)
	}
	if node.DeletionTimestamp == nil && v1.HasDisruptedTaint(node) {
		stored := node.DeepCopy()
		var taints []corev1.Taint
		for _, t := range node.Spec.Taints {
			if t.Key != v1.DisruptedTaintKey {
				taints = append(taints, t)
			}
		}
		node.Spec.Taints = taints
		if node.Labels[v1.NodeExcludeFromExternalLoadBalancersLabelKey] == v1.NodeExcludeFromExternalLoadBalancersLabelValue {
			delete(node.Labels, v1.NodeExcludeFromExternalLoadBalancersLabelKey)
		}
		if err := kube.Patch(ctx, node, client.MergeFromWithOptions(stored, client.MergeFromWithOptimisticLock{})); err != nil {
			return fmt.Errorf("untainting node %s: %w", nodeName, err)
		}
	}
	claim := &v1.NodeClaim{}
	if err := kube.Get(ctx, client.ObjectKey{Name: claimName}, claim); err != nil {
		return client.IgnoreNotFound(err)
	}
	if claim.DeletionTimestamp != nil || meta.FindStatusCondition(claim.Status.Conditions, v1.ConditionTypeDisruptionReason) == nil {
		return nil
	}
	stored := claim.DeepCopy()
	meta.RemoveStatusCondition(&claim.Status.Conditions, v1.ConditionTypeDisruptionReason)
	return client.IgnoreNotFound(kube.Status().Patch(ctx, claim, client.MergeFrom(stored)))
}
