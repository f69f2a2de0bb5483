package nodeclaim

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/state"
)

// NodesFor lists the Nodes carrying the claim's providerID (normally one).
func NodesFor(ctx context.Context, kube client.Reader, claim *v1.NodeClaim) ([]*corev1.Node, error) {
	if claim.Status.ProviderID == "" {
		return nil, nil
	}
	return NodesByProviderID(ctx, kube, claim.Status.ProviderID)
}

// NodesByProviderID lists the Nodes with that providerID.
func NodesByProviderID(ctx context.Context, kube client.Reader, providerID string) ([]*corev1.Node, error) {
	list := &corev1.NodeList{}
	if err := kube.List(ctx, list, client.MatchingFields{state.NodeProviderIDIndex: providerID}); err != nil {
		return nil, fmt.Errorf("listing nodes with providerID %s: %w", providerID, err)
	}
	out := make([]*corev1.Node, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, &list.Items[i])
	}
	return out, nil
}

// ClaimsByProviderID lists the NodeClaims with that providerID.
func ClaimsByProviderID(ctx context.Context, kube client.Reader, providerID string) ([]*v1.NodeClaim, error) {
	list := &v1.NodeClaimList{}
	if err := kube.List(ctx, list, client.MatchingFields{state.ClaimProviderIDIndex: providerID}); err != nil {
		return nil, fmt.Errorf("listing nodeclaims with providerID %s: %w", providerID, err)
	}
	out := make([]*v1.NodeClaim, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, &list.Items[i])
	}
	return out, nil
}

// DeleteNode deletes the Node and releases its termination finalizer at
// once, without draining: for Nodes of instances no NodeClaim owns, which
// garbage collection has already terminated.
func DeleteNode(ctx context.Context, kube client.Client, node *corev1.Node) error {
	if node.DeletionTimestamp == nil {
		if err := kube.Delete(ctx, node); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting node %s: %w", node.Name, err)
		}
	}
	if !controllerutil.ContainsFinalizer(node, v1.TerminationFinalizer) {
		return nil
	}
	stored := node.DeepCopy()
	controllerutil.RemoveFinalizer(node, v1.TerminationFinalizer)
	if err := kube.Patch(ctx, node, client.MergeFrom(stored)); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("releasing node %s: %w", node.Name, err)
	}
	return nil
}
