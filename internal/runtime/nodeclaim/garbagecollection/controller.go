// Package garbagecollection reconciles the two sides of every launch: cloud
// instances of this cluster that no NodeClaim knows are terminated, and
// registered NodeClaims whose instance is gone are deleted.
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
	"github.com/joistdev/terraform-provider-joist/internal/runtime/metrics"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/nodeclaim"
)

// controllerName names the collector in metrics.
const controllerName = "nodeclaim.garbagecollection"

// Timers (Karpenter's): an instance younger than MinInstanceAge may still be
// getting its claim's status written; instance passes run every
// FastInterval for the first FastPasses successful passes after start, then
// every SlowInterval; claims are checked at most every ClaimInterval.
const (
	MinInstanceAge = 30 * time.Second
	FastInterval   = 10 * time.Second
	FastPasses     = 20
	SlowInterval   = 2 * time.Minute
	ClaimInterval  = 2 * time.Minute
	// MinRegisteredAge is how long a claim must have been registered before
	// a listing that lacks its instance counts against it. Karpenter does
	// not wait; EC2's listings can lag a launch by tens of seconds, and a
	// node may register before its instance is listed and be Ready after.
	MinRegisteredAge = 30 * time.Second
)

// Controller is the garbage collector, a leader-elected runnable.
type Controller struct {
	kube      client.Client
	cloud     cloud.Provider
	recorder  *events.Recorder
	clock     clock.Clock
	lastClaim time.Time // when claims were last checked
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

// Collect runs one pass. Instances are listed before NodeClaims, as
// Karpenter does: a claim written while the (possibly long) listing runs is
// then in the claim list, so its instance is never taken for an orphan.
func (c *Controller) Collect(ctx context.Context) error {
	instances, err := c.cloud.List(metrics.WithController(ctx, controllerName))
	if err != nil {
		return fmt.Errorf("listing instances: %w", err)
	}
	claims := &v1.NodeClaimList{}
	if err := c.kube.List(ctx, claims); err != nil {
		return fmt.Errorf("listing nodeclaims: %w", err)
	}
	now := c.clock.Now()
	var errs []error
	for _, inst := range Orphans(instances, claims.Items, now) {
		if err := c.collectInstance(ctx, inst); err != nil {
			errs = append(errs, err)
		}
	}
	if now.Sub(c.lastClaim) >= ClaimInterval {
		for _, claim := range Lost(claims.Items, instances, now) {
			if err := c.collectClaim(ctx, claim); err != nil {
				errs = append(errs, err)
			}
		}
		if len(errs) == 0 {
			c.lastClaim = now
		}
	}
	return errors.Join(errs...)
}

// Orphans are the listed instances no claim owns: not shutting down, older
// than MinInstanceAge, whose providerID no claim has, and not named (by
// their nodeclaim tag) by a claim whose launch has not returned yet.
// Stopping and stopped instances are orphans like running ones.
func Orphans(instances []*v1.NodeClaim, claims []v1.NodeClaim, now time.Time) []*v1.NodeClaim {
	known := map[string]bool{}
	launching := map[string]bool{}
	for i := range claims {
		if id := claims[i].Status.ProviderID; id != "" {
			known[id] = true
		} else {
			launching[claims[i].Name] = true
		}
	}
	var out []*v1.NodeClaim
	for _, inst := range instances {
		switch {
		case inst.DeletionTimestamp != nil, known[inst.Status.ProviderID]:
		case now.Sub(inst.CreationTimestamp.Time) < MinInstanceAge:
		case inst.Name != "" && launching[inst.Name]:
		default:
			out = append(out, inst)
		}
	}
	return out
}

// Lost are the claims whose instance is gone, as Karpenter decides it: the
// claim is registered (since MinRegisteredAge), not being deleted, and its
// providerID is not among the instances that are not shutting down. Their
// Nodes are checked separately: a Ready Node keeps its claim.
func Lost(claims []v1.NodeClaim, instances []*v1.NodeClaim, now time.Time) []*v1.NodeClaim {
	live := map[string]bool{}
	for _, inst := range instances {
		if inst.DeletionTimestamp == nil {
			live[inst.Status.ProviderID] = true
		}
	}
	var out []*v1.NodeClaim
	for i := range claims {
		claim := &claims[i]
		if claim.DeletionTimestamp != nil || claim.Status.ProviderID == "" || live[claim.Status.ProviderID] {
			continue
		}
		registered := nodeclaim.Get(claim, v1.ConditionTypeRegistered)
		if registered == nil || registered.Status != "True" || now.Sub(registered.LastTransitionTime.Time) < MinRegisteredAge {
			continue
		}
		out = append(out, claim)
	}
	return out
}

// collectInstance terminates an instance no claim owns and deletes its Node.
// The cloud provider terminates only instances tagged as this cluster's.
func (c *Controller) collectInstance(ctx context.Context, inst *v1.NodeClaim) error {
	id := inst.Status.ProviderID
	if err := c.cloud.Delete(metrics.WithController(ctx, controllerName), inst); err != nil && !cloud.IsNodeClaimNotFound(err) {
		return fmt.Errorf("terminating orphan instance %s: %w", id, err)
	}
	log.FromContext(ctx).Info("garbage collected instance without a nodeclaim", "provider-id", id, "nodeclaim-tag", inst.Name)
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
// still reports Ready (the kubelet is alive, so the listing is wrong).
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
