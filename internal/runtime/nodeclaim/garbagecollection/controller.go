// Package garbagecollection reconciles the two sides of every launch: cloud
// instances of this cluster that no NodeClaim knows are terminated, and
// NodeClaims whose instance is gone are deleted.
package garbagecollection

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/events"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/nodeclaim"
)

// Timers (Karpenter's): an instance younger than MinInstanceAge may still be
// getting its claim's status written; passes run every FastInterval for the
// first FastPasses successful passes after start, then every SlowInterval.
const (
	MinInstanceAge = 30 * time.Second
	FastInterval   = 10 * time.Second
	FastPasses     = 20
	SlowInterval   = 2 * time.Minute
)

// Controller is the garbage collector, a leader-elected runnable.
type Controller struct {
	kube     client.Client
	cloud    cloud.Provider
	recorder *events.Recorder
	clock    clock.Clock
}

// NewController wires the collector.
func NewController(kube client.Client, provider cloud.Provider, rec *events.Recorder, clk clock.Clock) *Controller {
	return &Controller{kube: kube, cloud: provider, recorder: rec, clock: clk}
}

// NeedLeaderElection keeps collection on the leader.
func (c *Controller) NeedLeaderElection() bool { return true }

// Start runs passes until ctx ends.
func (c *Controller) Start(ctx context.Context) error {
	logger := log.FromContext(ctx).WithName("garbagecollection")
	ctx = log.IntoContext(ctx, logger)
	passes := 0
	for {
		if err := c.Collect(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			logger.Error(err, "garbage collection pass")
		} else {
			passes++
		}
		interval := FastInterval
		if passes >= FastPasses {
			interval = SlowInterval
		}
		select {
		case <-ctx.Done():
			return nil
		case <-c.clock.After(interval):
		}
	}
}

// Collect runs one pass. Claims are listed before instances, so an
// instance launched meanwhile is protected by MinInstanceAge.
func (c *Controller) Collect(ctx context.Context) error {
	claims := &v1.NodeClaimList{}
	if err := c.kube.List(ctx, claims); err != nil {
		return fmt.Errorf("listing nodeclaims: %w", err)
	}
	instances, err := c.cloud.List(ctx)
	if err != nil {
		return fmt.Errorf("listing instances: %w", err)
	}
	known := map[string]bool{}
	for i := range claims.Items {
		if id := claims.Items[i].Status.ProviderID; id != "" {
			known[id] = true
		}
	}
	live := map[string]bool{}
	var errs []error
	now := c.clock.Now()
	for _, inst := range instances {
		id := inst.Status.ProviderID
		live[id] = true
		// Instances already shutting down need nothing more.
		if known[id] || inst.DeletionTimestamp != nil || now.Sub(inst.CreationTimestamp.Time) < MinInstanceAge {
			continue
		}
		if err := c.collectInstance(ctx, inst); err != nil {
			errs = append(errs, err)
		}
	}
	for i := range claims.Items {
		claim := &claims.Items[i]
		if claim.DeletionTimestamp != nil || claim.Status.ProviderID == "" || live[claim.Status.ProviderID] {
			continue
		}
		launched := nodeclaim.Get(claim, v1.ConditionTypeLaunched)
		if launched == nil || launched.Status != "True" || now.Sub(launched.LastTransitionTime.Time) < MinInstanceAge {
			continue
		}
		if err := c.collectClaim(ctx, claim); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// collectInstance terminates an instance no claim owns and deletes its Node.
func (c *Controller) collectInstance(ctx context.Context, inst *v1.NodeClaim) error {
	id := inst.Status.ProviderID
	if err := c.cloud.Delete(ctx, inst); err != nil && !cloud.IsNodeClaimNotFound(err) {
		return fmt.Errorf("terminating orphan instance %s: %w", id, err)
	}
	log.FromContext(ctx).Info("garbage collected instance without a nodeclaim", "provider-id", id)
	nodes, err := nodeclaim.NodesByProviderID(ctx, c.kube, id)
	if err != nil {
		return err
	}
	for _, n := range nodes {
		if err := nodeclaim.DeleteNode(ctx, c.kube, n); err != nil {
			return err
		}
	}
	return nil
}

// collectClaim deletes a claim whose instance is gone, unless its Node
// still reports Ready (the instance list may be lagging).
func (c *Controller) collectClaim(ctx context.Context, claim *v1.NodeClaim) error {
	nodes, err := nodeclaim.NodesFor(ctx, c.kube, claim)
	if err != nil {
		return err
	}
	for _, n := range nodes {
		if nodeReady(n) {
			return nil
		}
	}
	if err := c.kube.Delete(ctx, claim); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting nodeclaim %s: %w", claim.Name, err)
	}
	c.recorder.Normal(claim, events.GarbageCollected, events.ActionDelete, "Instance %s no longer exists", claim.Status.ProviderID)
	log.FromContext(ctx).Info("garbage collected nodeclaim whose instance is gone", "nodeclaim", claim.Name, "provider-id", claim.Status.ProviderID)
	return nil
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
