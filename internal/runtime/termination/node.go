package termination

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/events"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/metrics"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/nodeclaim"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/pods"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/ratelimit"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/state"
)

// Timers of the Node finalizer.
const (
	// minDrainTime catches pods bound just before the taint landed.
	minDrainTime       = 5 * time.Second
	drainRequeue       = time.Second
	instanceRecheck    = 5 * time.Second
	maxNodeConcurrency = 100
)

// NodeController is the Node's karpenter.sh/termination finalizer.
type NodeController struct {
	kube      client.Client
	cloud     cloud.Provider
	recorder  *events.Recorder
	clock     clock.Clock
	evictions *EvictionQueue
}

// NewNodeController wires the Node finalizer; evictions must be running.
func NewNodeController(kube client.Client, provider cloud.Provider, rec *events.Recorder, clk clock.Clock, evictions *EvictionQueue) *NodeController {
	return &NodeController{kube: kube, cloud: provider, recorder: rec, clock: clk, evictions: evictions}
}

// Reconcile advances one deleted Node through termination.
func (c *NodeController) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	node := &corev1.Node{}
	if err := c.kube.Get(ctx, req.NamespacedName, node); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if node.DeletionTimestamp == nil || !controllerutil.ContainsFinalizer(node, v1.TerminationFinalizer) {
		return reconcile.Result{}, nil
	}
	ctx = log.IntoContext(ctx, log.FromContext(ctx).WithValues("node", node.Name))
	claim, err := c.claimFor(ctx, node)
	if err != nil {
		return reconcile.Result{}, err
	}
	if claim != nil && claim.DeletionTimestamp == nil {
		// Deleting either object terminates both.
		if err := c.kube.Delete(ctx, claim); client.IgnoreNotFound(err) != nil {
			return reconcile.Result{}, fmt.Errorf("deleting nodeclaim %s of node %s: %w", claim.Name, node.Name, err)
		}
	}
	if gone, err := c.instanceGone(ctx, node); err != nil {
		return reconcile.Result{}, err
	} else if gone {
		return reconcile.Result{}, c.release(ctx, node)
	}
	deadline, err := c.deadline(claim)
	if err != nil {
		log.FromContext(ctx).Error(err, "ignoring the termination deadline")
	}
	if err := c.taint(ctx, node, deadline); err != nil {
		// The cache had not shown a write to the node yet (the disruption
		// queue's taint, the kubelet's status): read it again.
		if apierrors.IsConflict(err) {
			return reconcile.Result{Requeue: true}, nil
		}
		return reconcile.Result{}, err
	}
	pods, err := state.PodsOn(ctx, c.kube, node.Name)
	if err != nil {
		return reconcile.Result{}, err
	}
	now := c.clock.Now()
	if drained, err := c.drain(ctx, node, claim, pods, deadline, now); err != nil || !drained {
		return reconcile.Result{RequeueAfter: drainRequeue}, err
	}
	if detached, err := c.awaitVolumes(ctx, node, claim, pods, deadline, now); err != nil || !detached {
		return reconcile.Result{RequeueAfter: drainRequeue}, err
	}
	if gone, err := terminateInstance(ctx, c.kube, c.cloud, c.recorder, claim, node.Spec.ProviderID); err != nil || !gone {
		return reconcile.Result{RequeueAfter: instanceRecheck}, err
	}
	return reconcile.Result{}, c.release(ctx, node)
}

func (c *NodeController) claimFor(ctx context.Context, node *corev1.Node) (*v1.NodeClaim, error) {
	if node.Spec.ProviderID == "" {
		return nil, nil
	}
	claims, err := nodeclaim.ClaimsByProviderID(ctx, c.kube, node.Spec.ProviderID)
	if err != nil || len(claims) == 0 {
		return nil, err
	}
	return claims[0], nil
}

// instanceGone lets a NotReady Node whose instance no longer exists go
// without draining: its pods are not running anywhere.
func (c *NodeController) instanceGone(ctx context.Context, node *corev1.Node) (bool, error) {
	if node.Spec.ProviderID == "" || state.IsNodeReady(node) {
		return false, nil
	}
	_, err := c.cloud.Get(metrics.WithController(ctx, "node.termination"), node.Spec.ProviderID)
	if cloud.IsNodeClaimNotFound(err) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("looking up the instance of node %s: %w", node.Name, err)
	}
	return false, nil
}

// deadline is the claim's annotated deadline, or the one its grace period
// implies while the NodeClaim finalizer has not annotated it yet.
func (c *NodeController) deadline(claim *v1.NodeClaim) (*time.Time, error) {
	if claim == nil {
		return nil, nil
	}
	d, err := AnnotatedDeadline(claim)
	if d != nil || err != nil {
		return d, err
	}
	return TerminationDeadline(claim), nil
}

// taint adds karpenter.sh/disrupted:NoSchedule (replacing any taint of the
// same key) and the exclude-from-external-load-balancers label.
func (c *NodeController) taint(ctx context.Context, node *corev1.Node, deadline *time.Time) error {
	stored := node.DeepCopy()
	if !v1.ApplyDisruptedTaint(node) {
		return nil
	}
	if err := c.kube.Patch(ctx, node, client.MergeFromWithOptions(stored, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("tainting node %s: %w", node.Name, err)
	}
	if deadline != nil {
		c.recorder.Normal(node, reasonTerminationGracePeriodExpiring, actionTerminate,
			"All pods will be deleted by %s", deadline.UTC().Format(time.RFC3339))
	}
	return nil
}

// drain runs one drain pass; true once no drainable pod is left and the
// minimum drain time has passed.
func (c *NodeController) drain(ctx context.Context, node *corev1.Node, claim *v1.NodeClaim, onNode []*corev1.Pod, deadline *time.Time, now time.Time) (bool, error) {
	plan := PlanDrain(onNode, deadline, now)
	for _, d := range plan.Delete {
		if err := c.kube.Delete(ctx, d.Pod, client.GracePeriodSeconds(d.GracePeriod),
			client.Preconditions{UID: &d.Pod.UID}); client.IgnoreNotFound(err) != nil {
			return false, fmt.Errorf("deleting pod %s/%s at the termination deadline: %w", d.Pod.Namespace, d.Pod.Name, err)
		}
		podsDrained.WithLabelValues(DrainReason(claim)).Inc()
		log.FromContext(ctx).Info("deleted pod at the termination deadline", "pod", client.ObjectKeyFromObject(d.Pod).String(), "grace-period", d.GracePeriod)
	}
	c.evictions.Add(DrainReason(claim), plan.Evict...)
	if !plan.Done() {
		blocked := 0
		for _, pod := range plan.Waiting {
			if pods.DoNotDisrupt(pod, now) {
				blocked++
			}
		}
		msg := fmt.Sprintf("%d pods are waiting to be evicted (tier %d)", len(plan.Evict)+len(plan.Waiting)+len(plan.Delete), plan.Tier)
		if blocked > 0 {
			msg += fmt.Sprintf(", %d of them protected by %s", blocked, v1.DoNotDisruptAnnotationKey)
		}
		c.recorder.Warning(node, reasonFailedDraining, actionDrain, "Failed to drain node, %s", msg)
		return false, setCondition(ctx, c.kube, claim, v1.ConditionTypeDrained, metav1.ConditionUnknown, "Draining", msg)
	}
	if now.Sub(node.DeletionTimestamp.Time) < minDrainTime {
		return false, nil
	}
	if claim != nil && !nodeclaim.IsTrue(claim, v1.ConditionTypeDrained) {
		nodesDrained.WithLabelValues(claim.Labels[v1.NodePoolLabelKey]).Inc()
	}
	return true, setCondition(ctx, c.kube, claim, v1.ConditionTypeDrained, metav1.ConditionTrue, v1.ConditionTypeDrained, "")
}

// awaitVolumes waits for the node's volumes to detach, unless the deadline passed.
func (c *NodeController) awaitVolumes(ctx context.Context, node *corev1.Node, claim *v1.NodeClaim, pods []*corev1.Pod, deadline *time.Time, now time.Time) (bool, error) {
	if deadline != nil && !now.Before(*deadline) {
		return true, setCondition(ctx, c.kube, claim, v1.ConditionTypeVolumesDetached, metav1.ConditionFalse, "TerminationGracePeriodElapsed", "")
	}
	vas, err := pendingVolumeAttachments(ctx, c.kube, node, pods, now)
	if err != nil {
		return false, err
	}
	if len(vas) > 0 {
		c.recorder.Normal(node, reasonAwaitingVolumeDetachment, actionTerminate, "Awaiting deletion of %d VolumeAttachments bound to node", len(vas))
		return false, setCondition(ctx, c.kube, claim, v1.ConditionTypeVolumesDetached, metav1.ConditionFalse, reasonAwaitingVolumeDetachment,
			fmt.Sprintf("%d VolumeAttachments remain, e.g. %s", len(vas), vas[0].Name))
	}
	return true, setCondition(ctx, c.kube, claim, v1.ConditionTypeVolumesDetached, metav1.ConditionTrue, v1.ConditionTypeVolumesDetached, "")
}

// release removes the Node's finalizer.
func (c *NodeController) release(ctx context.Context, node *corev1.Node) error {
	if err := removeFinalizer(ctx, c.kube, node, v1.TerminationFinalizer); err != nil {
		return err
	}
	pool := node.Labels[v1.NodePoolLabelKey]
	now := c.clock.Now()
	metrics.NodesTerminated.WithLabelValues(pool, node.Labels[corev1.LabelTopologyZone]).Inc()
	nodesTerminationDuration.WithLabelValues(pool).Observe(now.Sub(node.DeletionTimestamp.Time).Seconds())
	nodesLifetime.WithLabelValues(pool).Observe(now.Sub(node.CreationTimestamp.Time).Seconds())
	log.FromContext(ctx).Info("deleted node")
	return nil
}

// Register adds the controller; NodeClaim changes (a deadline annotation)
// wake their Node.
func (c *NodeController) Register(mgr manager.Manager) error {
	return builder.ControllerManagedBy(mgr).
		Named("node.termination").
		For(&corev1.Node{}).
		Watches(&v1.NodeClaim{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			if name := o.(*v1.NodeClaim).Status.NodeName; name != "" {
				return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: name}}}
			}
			return nil
		})).
		WithOptions(controller.Options{MaxConcurrentReconciles: ratelimit.Concurrency(maxNodeConcurrency), RateLimiter: ratelimit.PerObject()}).
		Complete(c)
}
