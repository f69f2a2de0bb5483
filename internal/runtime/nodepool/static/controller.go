package static

import (
	"context"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/events"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/metrics"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/nodeclaim"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/simulation"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/state"
)

// Name names the controller in logs and metrics.
const Name = "static"

// Event reasons.
const (
	reasonDisabled     = "StaticCapacityDisabled"
	reasonLimitReached = "NodeLimitReached"
	reasonScaledDown   = "Overprovisioned"
	reasonLaunching    = "ReplicasLaunching"
)

// Controller keeps static NodePools at spec.replicas.
type Controller struct {
	kube     client.Client
	cluster  *state.Cluster
	cloud    cloud.Provider
	recorder *events.Recorder
	clock    clock.Clock
	// enabled is the StaticCapacity feature gate. Off, static pools get no
	// nodes (as in Karpenter) and a warning event says why.
	enabled bool
	opts    scheduling.Options

	mu sync.Mutex
	// deleted are claims this controller deleted that the cache may not
	// show as deleting yet, so a second pass does not delete more.
	deleted map[string]bool
}

// NewController wires the controller.
func NewController(kube client.Client, cluster *state.Cluster, provider cloud.Provider, rec *events.Recorder, clk clock.Clock, enabled bool, opts scheduling.Options) *Controller {
	return &Controller{kube: kube, cluster: cluster, cloud: provider, recorder: rec, clock: clk, enabled: enabled, opts: opts, deleted: map[string]bool{}}
}

// Reconcile brings one static pool to its replicas.
func (c *Controller) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	pool := &v1.NodePool{}
	if err := c.kube.Get(ctx, req.NamespacedName, pool); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if pool.Spec.Replicas == nil || pool.DeletionTimestamp != nil {
		return reconcile.Result{}, nil
	}
	if !c.enabled {
		c.recorder.Warning(pool, reasonDisabled, events.ActionScheduling,
			"NodePool sets spec.replicas but the StaticCapacity feature gate is off: no nodes are launched for it; set FEATURE_GATES=StaticCapacity=true")
		return reconcile.Result{}, nil
	}
	logger := log.FromContext(ctx).WithValues("nodepool", pool.Name)
	snap, err := c.cluster.Snapshot(ctx)
	if err != nil {
		return reconcile.Result{}, err
	}
	deleted := c.pruneDeleted(snap)
	count := simulation.CountStatic(snap.Nodes, pool.Name, deleted)
	replicas := *pool.Spec.Replicas
	if over := int64(count.Active) - replicas; over > 0 {
		// Only active claims count: a replacement under way must not make
		// the pool look over-provisioned.
		return reconcile.Result{RequeueAfter: time.Minute}, c.scaleDown(ctx, pool, snap, int(over), count)
	}
	if !meta.IsStatusConditionTrue(pool.Status.Conditions, v1.ConditionTypeReady) {
		return reconcile.Result{RequeueAfter: time.Minute}, nil
	}
	n := simulation.StaticToLaunch(count, replicas, pool.Spec.Limits)
	if n == 0 {
		room, limited := count.NodeRoom(pool.Spec.Limits)
		if limited && room == 0 && int64(count.Active+count.PendingDisruption) < replicas {
			limit := pool.Spec.Limits[simulation.ResourceNodes]
			logger.Info("nodepool node limit reached", "replicas", replicas, "active", count.Active, "limit", limit.Value())
			c.recorder.Warning(pool, reasonLimitReached, events.ActionScheduling,
				"NodePool has %d of %d replicas and limits.nodes=%s allows no more; raise limits.nodes or lower replicas", count.Active, replicas, limit.String())
			return reconcile.Result{RequeueAfter: 30 * time.Second}, nil
		}
		// Replicas reached, or a batch still launching: its claims'
		// updates wake the pool again.
		return reconcile.Result{RequeueAfter: time.Minute}, nil
	}
	its, err := c.cloud.GetInstanceTypes(metrics.WithController(ctx, Name), pool)
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("instance types of nodepool %s: %w", pool.Name, err)
	}
	nc, err := simulation.StaticClaim(snap, pool, its, c.opts)
	if err != nil {
		c.recorder.Warning(pool, events.NoCompatibleInstanceTypes, events.ActionScheduling, "Cannot launch a static replica: %s", err)
		return reconcile.Result{RequeueAfter: time.Minute}, nil
	}
	logger.Info("provisioning nodeclaims to satisfy replica count", "current", count.Active, "desired", replicas, "provision-count", n)
	created, err := createStatic(ctx, c.kube, c.cluster, pool, nc, int(n), metrics.ReasonProvisioned)
	if created > 0 {
		c.recorder.Normal(pool, reasonLaunching, events.ActionScheduling,
			"Created %d of %d nodes (%d this pass; at most %d launch at a time)", count.Active+created, replicas, created, simulation.StaticLaunchBatch)
	}
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("created %d of %d nodeclaims: %w", created, n, err)
	}
	return reconcile.Result{RequeueAfter: time.Minute}, nil
}

func (c *Controller) scaleDown(ctx context.Context, pool *v1.NodePool, snap *state.Snapshot, over int, count simulation.StaticCount) error {
	chosen := ScaleDownChoice(snap.Nodes, pool.Name, over, c.clock.Now())
	log.FromContext(ctx).Info("deprovisioning nodeclaims to satisfy replica count", "nodepool", pool.Name,
		"current", count.Active, "desired", *pool.Spec.Replicas, "deprovision-count", len(chosen))
	for _, claim := range chosen {
		if err := c.kube.Delete(ctx, claim); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting nodeclaim %s: %w", claim.Name, err)
		}
		c.mu.Lock()
		c.deleted[claim.Name] = true
		c.mu.Unlock()
		c.recorder.Normal(claim, reasonScaledDown, events.ActionScheduling,
			"Deleting NodeClaim: static NodePool %s has more nodes than its %d replicas", pool.Name, *pool.Spec.Replicas)
	}
	return nil
}

// pruneDeleted forgets deleted claims the snapshot shows going or gone,
// and returns a copy of the rest.
func (c *Controller) pruneDeleted(snap *state.Snapshot) map[string]bool {
	live := map[string]bool{}
	for _, n := range snap.Nodes {
		if n.NodeClaim != nil && n.NodeClaim.DeletionTimestamp == nil {
			live[n.NodeClaim.Name] = true
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]bool{}
	for name := range c.deleted {
		if !live[name] {
			delete(c.deleted, name)
			continue
		}
		out[name] = true
	}
	return out
}

// Register adds the controller: a pool's changes (replicas, readiness) and
// its claims' changes wake it.
func (c *Controller) Register(mgr manager.Manager) error {
	return builder.ControllerManagedBy(mgr).
		Named(Name).
		For(&v1.NodePool{}).
		Watches(&v1.NodeClaim{}, handler.EnqueueRequestsFromMapFunc(nodeclaim.PoolRequest)).
		Complete(c)
}
