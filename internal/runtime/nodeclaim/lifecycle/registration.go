package lifecycle

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/events"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/nodeclaim"
)

// register finds the claim's Node and makes it the claim's: finalizer,
// owner reference, labels, annotations and taints synced, the unregistered
// taint removed.
func (c *Controller) register(ctx context.Context, claim *v1.NodeClaim) (result, error) {
	if nodeclaim.IsTrue(claim, v1.ConditionTypeRegistered) {
		return result{}, nil
	}
	if !nodeclaim.IsTrue(claim, v1.ConditionTypeLaunched) {
		nodeclaim.Set(claim, v1.ConditionTypeRegistered, metav1.ConditionUnknown, "NotLaunched", "Node not launched")
		return result{}, nil
	}
	nodes, err := nodeclaim.NodesFor(ctx, c.kube, claim)
	if err != nil {
		return result{}, err
	}
	switch len(nodes) {
	case 0:
		nodeclaim.Set(claim, v1.ConditionTypeRegistered, metav1.ConditionUnknown, "NodeNotFound", "Node not registered with cluster")
		return result{}, nil
	case 1:
	default:
		nodeclaim.Set(claim, v1.ConditionTypeRegistered, metav1.ConditionFalse, "MultipleNodesFound", "Invariant violated, matched multiple nodes")
		return result{}, nil
	}
	node := nodes[0]
	// A stale read of the claim may bring us back after the sync; the
	// Node then no longer carries the taint, rightly.
	synced := ownedBy(node, claim) && node.Labels[v1.NodeRegisteredLabelKey] == "true"
	if !synced && !hasTaint(node, v1.UnregisteredNoExecuteTaint) {
		c.recorder.Warning(node, events.UnregisteredTaintMissing, events.ActionRegister,
			"Node %s registered without the %s taint; nodes should register with it (kubelet --register-with-taints) so pods wait for the sync", node.Name, v1.UnregisteredTaintKey)
		log.FromContext(ctx).Error(fmt.Errorf("node %s has no %s taint", node.Name, v1.UnregisteredTaintKey), "registering node")
	}
	stored := node.DeepCopy()
	SyncNode(claim, node)
	if !equality.Semantic.DeepEqual(stored, node) {
		// The optimistic lock keeps concurrent taint and finalizer edits.
		// On a conflict (the kubelet's status, usually) the newer Node's
		// watch event wakes the claim again once the cache has it.
		if err := c.kube.Patch(ctx, node, client.MergeFromWithOptions(stored, client.MergeFromWithOptimisticLock{})); err != nil {
			if apierrors.IsConflict(err) {
				return result{}, nil
			}
			return result{}, fmt.Errorf("syncing node %s: %w", node.Name, err)
		}
	}
	claim.Status.NodeName = node.Name
	nodeclaim.Set(claim, v1.ConditionTypeRegistered, metav1.ConditionTrue, v1.ConditionTypeRegistered, "")
	if !synced {
		log.FromContext(ctx).Info("registered nodeclaim", "node", node.Name)
	}
	return result{}, nil
}

// SyncNode writes the claim's ownership onto its Node: the termination
// finalizer, an owner reference, the claim's labels (except those the
// kubelet owns) and annotations, its taints and startup taints (unless the
// Node opts out with karpenter.sh/do-not-sync-taints), and the registered
// label; the unregistered taint goes.
func SyncNode(claim *v1.NodeClaim, node *corev1.Node) {
	controllerutil.AddFinalizer(node, v1.TerminationFinalizer)
	if !ownedBy(node, claim) {
		node.OwnerReferences = append(node.OwnerReferences, metav1.OwnerReference{
			APIVersion:         v1.SchemeGroupVersion.String(),
			Kind:               "NodeClaim",
			Name:               claim.Name,
			UID:                claim.UID,
			BlockOwnerDeletion: new(true),
		})
	}
	if node.Labels == nil {
		node.Labels = map[string]string{}
	}
	for k, v := range claim.Labels {
		if !v1.IsRestrictedNodeLabel(k) {
			node.Labels[k] = v
		}
	}
	if len(claim.Annotations) > 0 && node.Annotations == nil {
		node.Annotations = map[string]string{}
	}
	for k, v := range claim.Annotations {
		node.Annotations[k] = v
	}
	if node.Labels[v1.NodeDoNotSyncTaintsLabelKey] != "true" {
		for _, t := range append(append([]corev1.Taint(nil), claim.Spec.Taints...), claim.Spec.StartupTaints...) {
			if !hasTaint(node, t) {
				node.Spec.Taints = append(node.Spec.Taints, t)
			}
		}
	}
	kept := node.Spec.Taints[:0]
	for _, t := range node.Spec.Taints {
		if !t.MatchTaint(&v1.UnregisteredNoExecuteTaint) {
			kept = append(kept, t)
		}
	}
	node.Spec.Taints = kept
	node.Labels[v1.NodeRegisteredLabelKey] = "true"
}

func ownedBy(node *corev1.Node, claim *v1.NodeClaim) bool {
	for _, o := range node.OwnerReferences {
		if o.UID == claim.UID {
			return true
		}
	}
	return false
}

func hasTaint(node *corev1.Node, t corev1.Taint) bool {
	for _, have := range node.Spec.Taints {
		if have.MatchTaint(&t) {
			return true
		}
	}
	return false
}
