package disruption

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/disruption/rollout"
)

// Hold is why a NodePool's voluntary disruption, or only its drift, is held
// this pass by Joist's disruption controls (see v1.ParseDisruptionControls).
type Hold struct {
	// Voluntary holds emptiness, drift and consolidation; Reason is the
	// DisruptionPaused condition's reason and Message what users read.
	Voluntary       bool
	Reason, Message string
	// ObserveDrift holds drift only: the pool's drift mode is observe.
	ObserveDrift bool
	// Halted holds voluntary disruption after repeated failed
	// replacements: the pool's breaker or the cluster's is open.
	Halted                  bool
	HaltReason, HaltMessage string
}

// blocks says why reason may not disrupt the pool's nodes, or "". Repair is
// never held: it is what fixes a broken node.
func (h Hold) blocks(reason v1.DisruptionReason) string {
	switch {
	case reason == v1.DisruptionReasonUnhealthy:
		return ""
	case h.Voluntary:
		return h.Message
	case h.Halted:
		return h.HaltMessage
	case h.ObserveDrift && reason == v1.DisruptionReasonDrifted:
		return observeMessage
	}
	return ""
}

var observeMessage = fmt.Sprintf("nodepool drift mode is observe (%s)", v1.DriftModeAnnotationKey)

// reportObserved tells users which drifted nodes observe-only drift keeps:
// the blocked nodes reported once per pass are emptiness's, which observe
// does not hold.
func (c *Controller) reportObserved(blocked []Blocked) {
	for _, b := range blocked {
		if b.Reason != observeMessage {
			continue
		}
		c.emitOnce(b.Node.Name+"/observe", b.Reason, func() {
			c.recorder.Normal(b.Node, reasonDisruptionBlocked, actionDisrupt, "Cannot disrupt Node: %s", b.Reason)
			c.recorder.Normal(b.NodeClaim, reasonDisruptionBlocked, actionDisrupt, "Cannot disrupt NodeClaim: %s", b.Reason)
		})
	}
}

// ClusterPause is the cluster-wide pause as read this pass: Err is set
// when it could not be read, which holds disruption like a pause does
// (voluntary disruption can wait; a pause missed cannot be undone).
type ClusterPause struct {
	Paused bool
	Err    error
	// Breaker is the cluster-wide breaker's policy (zero: the default).
	Breaker rollout.Policy
}

// Holds computes each NodePool's hold from its annotations, its breaker
// (counted against specs, the pools' identities: see specIdentity), the
// cluster pause and the cluster's breaker at env.Now; pools with nothing
// held are absent.
func Holds(env *Env, cluster ClusterPause, specs map[string]string) map[string]Hold {
	pools := env.Snapshot.NodePools
	out := map[string]Hold{}
	for _, p := range pools {
		controls, errs := v1.ParseDisruptionControls(p.Annotations)
		h := Hold{ObserveDrift: controls.DriftMode == v1.DriftModeObserve}
		switch {
		case len(errs) > 0:
			msgs := make([]string, len(errs))
			for i, e := range errs {
				msgs[i] = e.Error()
			}
			h.Voluntary, h.Reason = true, v1.DisruptionPausedReasonInvalid
			h.Message = "nodepool disruption controls are invalid, so voluntary disruption is held: " + strings.Join(msgs, "; ")
		case controls.Paused:
			h.Voluntary, h.Reason = true, v1.DisruptionPausedReasonNodePool
			h.Message = fmt.Sprintf("nodepool voluntary disruption is paused (%s)", v1.DisruptionPausedAnnotationKey)
		case cluster.Err != nil:
			h.Voluntary, h.Reason = true, v1.DisruptionPausedReasonCluster
			h.Message = fmt.Sprintf("the cluster-wide disruption pause (ConfigMap %s) cannot be read: %v", v1.DisruptionSettingsConfigMap, cluster.Err)
		case cluster.Paused:
			h.Voluntary, h.Reason = true, v1.DisruptionPausedReasonCluster
			h.Message = fmt.Sprintf("voluntary disruption is paused for the whole cluster (ConfigMap %s)", v1.DisruptionSettingsConfigMap)
		}
		out[p.Name] = h
	}
	breakerHolds(out, pools, specs, cluster, env)
	for name, h := range out {
		if !h.Voluntary && !h.ObserveDrift && !h.Halted {
			delete(out, name)
		}
	}
	return out
}

// readClusterPause reads the cluster-wide pause; none when the controller
// has no namespace to read it from or the ConfigMap does not exist.
func (c *Controller) readClusterPause(ctx context.Context) ClusterPause {
	if c.opts.APIReader == nil || c.opts.SettingsNamespace == "" {
		return ClusterPause{}
	}
	cm := &corev1.ConfigMap{}
	err := c.opts.APIReader.Get(ctx, client.ObjectKey{Namespace: c.opts.SettingsNamespace, Name: v1.DisruptionSettingsConfigMap}, cm)
	if apierrors.IsNotFound(err) {
		return ClusterPause{}
	}
	if err != nil {
		log.FromContext(ctx).Error(err, "reading the cluster-wide disruption pause; voluntary disruption is held this pass")
		return ClusterPause{Err: err}
	}
	paused, err := v1.ParsePaused(cm.Data[v1.DisruptionSettingsPausedKey])
	if err != nil {
		return ClusterPause{Err: errors.New(v1.DisruptionSettingsPausedKey + ": " + err.Error())}
	}
	out := ClusterPause{Paused: paused}
	if s := cm.Data[v1.DisruptionSettingsBreakerKey]; s != "" {
		if out.Breaker, err = v1.ParseBreakerPolicy(s); err != nil {
			return ClusterPause{Err: errors.New(v1.DisruptionSettingsBreakerKey + ": " + err.Error())}
		}
	}
	return out
}

// reportHolds keeps each NodePool's DisruptionPaused and DisruptionHalted
// conditions on what holds it (True with the reason while held, False once
// not) and the breaker gauge. A pool that never had a condition and is not
// held by it is left without, so a cluster that uses none of the controls
// sees no new condition. A failed write is retried next pass.
func (c *Controller) reportHolds(ctx context.Context, env *Env) {
	for _, p := range env.Snapshot.NodePools {
		if p.DeletionTimestamp != nil {
			continue
		}
		h := env.Holds[p.Name]
		breakerOpen.WithLabelValues(p.Name).Set(float64(btoi(h.Halted)))
		updated := p.DeepCopy()
		paused := setHoldCondition(updated, v1.ConditionTypeDisruptionPaused, h.Voluntary, h.Reason, h.Message, v1.DisruptionPausedReasonNone)
		halted := setHoldCondition(updated, v1.ConditionTypeDisruptionHalted, h.Halted, h.HaltReason, h.HaltMessage, v1.DisruptionHaltedReasonNone)
		if !paused && !halted {
			continue
		}
		if err := c.kube.Status().Update(ctx, updated); err != nil {
			log.FromContext(ctx).V(1).Info("writing the disruption hold conditions", "nodepool", p.Name, "error", err.Error())
			continue
		}
		if paused && h.Voluntary {
			c.emitOnce(p.Name+"/paused", h.Message, func() {
				c.recorder.Normal(p, reasonDisruptionBlocked, actionDisrupt, "%s", h.Message)
			})
		}
		if halted && h.Halted && h.HaltReason == v1.DisruptionHaltedReasonCluster {
			c.emitOnce(p.Name+"/halted", h.HaltMessage, func() {
				c.recorder.Warning(p, reasonDisruptionHalted, actionDisrupt, "%s", h.HaltMessage)
			})
		}
	}
}

// setHoldCondition sets the condition on pool to held (True, reason and
// message) or not (False, none); it reports whether it changed anything.
// An absent condition stays absent while not held.
func setHoldCondition(pool *v1.NodePool, typ string, held bool, reason, message, none string) bool {
	cond := metav1.Condition{Type: typ, Status: metav1.ConditionFalse, Reason: none, ObservedGeneration: pool.Generation}
	if held {
		cond.Status, cond.Reason, cond.Message = metav1.ConditionTrue, reason, message
	}
	old := meta.FindStatusCondition(pool.Status.Conditions, typ)
	if old == nil && !held {
		return false
	}
	if old != nil && old.Status == cond.Status && old.Reason == cond.Reason && old.Message == cond.Message && old.ObservedGeneration == cond.ObservedGeneration {
		return false
	}
	meta.SetStatusCondition(&pool.Status.Conditions, cond)
	return true
}
