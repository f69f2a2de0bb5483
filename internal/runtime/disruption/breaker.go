package disruption

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/disruption/rollout"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/metrics"
)

// reasonDisruptionHalted is the Warning a NodePool gets when its breaker,
// or the cluster's, opens.
const reasonDisruptionHalted = "DisruptionHalted"

var breakerOpen = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Namespace: "joist", Subsystem: "disruption", Name: "breaker_open",
	Help: "1 while the NodePool's voluntary disruption is halted by a disruption circuit breaker (its own or the cluster's), else 0.",
}, []string{metrics.LabelNodePool})

func init() { crmetrics.Registry.MustRegister(breakerOpen) }

// specIdentity is what a pool's breaker and drift rollout are counted
// against: the pool's hash, its node class's hash annotations and the
// release the node class resolves (its AMIs), so a new release is a new
// rollout and closes the breaker as a spec change does. ok is false when the
// node class cannot be read or has no release resolved now, so a transient
// error never passes for a change (which would close the breaker).
func (c *Controller) specIdentity(ctx context.Context, pool *v1.NodePool) (string, bool) {
	id := pool.Annotations[v1.NodePoolHashAnnotationKey]
	if c.cloud == nil {
		return id, true // no provider, no node classes
	}
	kind, ok := cloud.NodeClassKindOf(c.cloud, pool.Spec.Template.Spec.NodeClassRef)
	if !ok {
		return id, true
	}
	nc := kind.New()
	if err := c.kube.Get(ctx, client.ObjectKey{Name: pool.Spec.Template.Spec.NodeClassRef.Name}, nc); err != nil {
		return "", false
	}
	return identity(pool, kind, nc)
}

// identity is specIdentity once the pool's node class is read.
func identity(pool *v1.NodePool, kind cloud.NodeClassKind, nc cloud.NodeClass) (string, bool) {
	release := ""
	if kind.Release != nil {
		if release = kind.Release(nc); release == "" {
			return "", false
		}
	}
	return rollout.SpecIdentity(pool.Annotations[v1.NodePoolHashAnnotationKey], kind.HashAnnotations(nc), release), true
}

// specIdentities are the pools' identities this pass; a pool whose node
// class cannot be read is absent.
func (c *Controller) specIdentities(ctx context.Context, pools []*v1.NodePool) map[string]string {
	out := map[string]string{}
	for _, p := range pools {
		if id, ok := c.specIdentity(ctx, p); ok {
			out[p.Name] = id
		}
	}
	return out
}

// commandFailed counts a failed replacement against the breaker of each
// pool the command disrupted, on the NodePool (so a restart keeps it), and
// warns the pool when its breaker opens. A command cut short because this
// replica stopped leading is no replacement failure.
func (c *Controller) commandFailed(ctx context.Context, cmd *Command, cause error) {
	if ctx.Err() != nil || errors.Is(cause, context.Canceled) {
		return
	}
	ctx = context.WithoutCancel(ctx)
	c.stopRollout(ctx, cmd, cause)
	pools := map[string]bool{}
	for _, cand := range cmd.Candidates {
		if cand.Pool != nil {
			pools[cand.Pool.Name] = true
		}
	}
	for _, name := range slices.Sorted(maps.Keys(pools)) {
		opened, err := c.countFailure(ctx, name)
		if err != nil {
			log.FromContext(ctx).Error(err, "counting a failed replacement against the disruption breaker", "nodepool", name)
			continue
		}
		if opened != nil {
			msg := fmt.Sprintf("%d replacements failed within %s (last: %s); voluntary disruption of this NodePool is halted until it or its node class changes (a new AMI release included), or %s is set to a new value",
				len(opened.record.Failures), opened.policy.Window, cause, v1.DisruptionBreakerResetAnnotationKey)
			log.FromContext(ctx).Info("disruption breaker opened", "nodepool", name, "failures", len(opened.record.Failures))
			c.recorder.Warning(opened.pool, reasonDisruptionHalted, actionDisrupt, "%s", msg)
		}
	}
}

type openedBreaker struct {
	pool   *v1.NodePool
	record rollout.Record
	policy rollout.Policy
}

// countFailure adds a failure to the pool's breaker record; it returns the
// pool when this failure opened the breaker.
func (c *Controller) countFailure(ctx context.Context, name string) (*openedBreaker, error) {
	var opened *openedBreaker
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		opened = nil
		pool := &v1.NodePool{}
		if err := c.kube.Get(ctx, client.ObjectKey{Name: name}, pool); err != nil {
			return client.IgnoreNotFound(err)
		}
		controls, _ := v1.ParseDisruptionControls(pool.Annotations)
		policy := rollout.PoolDefault
		if controls.Breaker != nil {
			policy = *controls.Breaker
		}
		rec := rollout.Parse(pool.Annotations[v1.DisruptionBreakerStateAnnotationKey])
		if id, ok := c.specIdentity(ctx, pool); ok {
			rec = rec.For(id, controls.BreakerReset)
		}
		wasOpen := rec.Open()
		rec = rec.Fail(c.clock.Now(), policy)
		stored := pool.DeepCopy()
		if pool.Annotations == nil {
			pool.Annotations = map[string]string{}
		}
		pool.Annotations[v1.DisruptionBreakerStateAnnotationKey] = rec.Encode()
		if err := c.kube.Patch(ctx, pool, client.MergeFromWithOptions(stored, client.MergeFromWithOptimisticLock{})); err != nil {
			return err
		}
		if rec.Open() && !wasOpen {
			opened = &openedBreaker{pool: pool, record: rec, policy: policy}
		}
		return nil
	})
	return opened, err
}

// breakerHolds marks the pools whose breaker, or the cluster's, is open.
func breakerHolds(holds map[string]Hold, pools []*v1.NodePool, specs map[string]string, cluster ClusterPause, env *Env) {
	var records []rollout.Record
	open := map[string]rollout.Record{}
	for _, p := range pools {
		controls, _ := v1.ParseDisruptionControls(p.Annotations)
		rec := rollout.Parse(p.Annotations[v1.DisruptionBreakerStateAnnotationKey])
		if spec, ok := specs[p.Name]; ok {
			rec = rec.For(spec, controls.BreakerReset)
		} else if rec.Reset != controls.BreakerReset {
			rec = rollout.Record{}
		}
		records = append(records, rec)
		if rec.Open() {
			open[p.Name] = rec
		}
	}
	policy := cluster.Breaker
	if policy.Failures == 0 {
		policy = rollout.ClusterDefault
	}
	clusterOpen, n := rollout.ClusterOpen(records, env.Now, policy)
	for _, p := range pools {
		h := holds[p.Name]
		rec, poolOpen := open[p.Name]
		switch {
		case poolOpen:
			h.Halted, h.HaltReason = true, v1.DisruptionHaltedReasonNodePool
			h.HaltMessage = fmt.Sprintf("nodepool disruption breaker opened at %s after %d failed replacements; voluntary disruption is halted until the nodepool or its node class changes (a new AMI release included), or %s is set to a new value",
				rec.Opened.Format("2006-01-02T15:04:05Z"), len(rec.Failures), v1.DisruptionBreakerResetAnnotationKey)
		case clusterOpen:
			h.Halted, h.HaltReason = true, v1.DisruptionHaltedReasonCluster
			h.HaltMessage = fmt.Sprintf("cluster disruption breaker is open: %d replacements failed across nodepools within %s; voluntary disruption is halted until they age out or their nodepools are reset", n, policy.Window)
		default:
			continue
		}
		holds[p.Name] = h
	}
}
