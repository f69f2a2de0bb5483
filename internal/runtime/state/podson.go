package state

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/pods"
)

// PodsOn lists the pods bound to the node (through the PodNodeNameIndex).
func PodsOn(ctx context.Context, kube client.Reader, nodeName string) ([]*corev1.Pod, error) {
	list := &corev1.PodList{}
	if err := kube.List(ctx, list, client.MatchingFields{PodNodeNameIndex: nodeName}); err != nil {
		return nil, fmt.Errorf("listing pods of node %s: %w", nodeName, err)
	}
	out := make([]*corev1.Pod, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, &list.Items[i])
	}
	return out, nil
}

// ReschedulableOn counts the node's pods that need a new home when it goes
// (pods.IsReschedulable); 0 for a node not yet named or when the pods
// cannot be read, as it only feeds metrics.
func ReschedulableOn(ctx context.Context, kube client.Reader, nodeName string) int {
	if nodeName == "" {
		return 0
	}
	on, err := PodsOn(ctx, kube, nodeName)
	if err != nil {
		return 0
	}
	n := 0
	for _, p := range on {
		if pods.IsReschedulable(p) {
			n++
		}
	}
	return n
}
