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
}

// blocks says why reason may not disrupt the pool's nodes, or "". Repair is
// never held: it is what fixes a broken node.
func (h Hold) blocks(reason v1.DisruptionReason) string {
	switch {
	case reason == v1.DisruptionReasonUnhealthy:
		return ""
	case h.Voluntary:
		return h.Message
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
}

// Holds computes each NodePool's hold from its annotations and the cluster
// pause; pools with nothing held are absent.
func Holds(pools []*v1.NodePool, cluster ClusterPause) map[string]Hold {
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
		if h.Voluntary || h.ObserveDrift {
			out[p.Name] = h
		}
	}
	return out
}

// readClusterPause reads the cluster-wide pause; none when the controller
// has no namespace to read it from or the ConfigMap does not exist.
func (c *Controller) readClusterPause(ctx context.Context) ClusterPause {
	if c.opts.Settings == nil || c.opts.SettingsNamespace == "" {
		return ClusterPause{}
	}
	cm := &corev1.ConfigMap{}
	err := c.opts.Settings.Get(ctx, client.ObjectKey{Namespace: c.opts.SettingsNamespace, Name: v1.DisruptionSettingsConfigMap}, cm)
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
	return ClusterPause{Paused: paused}
}

// reportHolds keeps each NodePool's DisruptionPaused condition on what
// holds it: True with the reason while held, False once not. A pool that
// never had the condition and is not held is left alone, so a cluster that
// uses none of the controls sees no new condition. A failed write is
// retried next pass.
func (c *Controller) reportHolds(ctx context.Context, env *Env) {
	for _, p := range env.Snapshot.NodePools {
		if p.DeletionTimestamp != nil {
			continue
		}
		h := env.Holds[p.Name]
		cond := metav1.Condition{Type: v1.ConditionTypeDisruptionPaused, Status: metav1.ConditionFalse, Reason: v1.DisruptionPausedReasonNone,
			Message: "", ObservedGeneration: p.Generation}
		if h.Voluntary {
			cond.Status, cond.Reason, cond.Message = metav1.ConditionTrue, h.Reason, h.Message
		}
		old := meta.FindStatusCondition(p.Status.Conditions, cond.Type)
		if old == nil && !h.Voluntary {
			continue
		}
		if old != nil && old.Status == cond.Status && old.Reason == cond.Reason && old.Message == cond.Message && old.ObservedGeneration == cond.ObservedGeneration {
			continue
		}
		updated := p.DeepCopy()
		meta.SetStatusCondition(&updated.Status.Conditions, cond)
		if err := c.kube.Status().Update(ctx, updated); err != nil {
			log.FromContext(ctx).V(1).Info("writing DisruptionPaused", "nodepool", p.Name, "error", err.Error())
			continue
		}
		if h.Voluntary {
			c.emitOnce(p.Name+"/paused", h.Message, func() {
				c.recorder.Normal(p, reasonDisruptionBlocked, actionDisrupt, "%s", h.Message)
			})
		}
	}
}
