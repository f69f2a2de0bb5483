package termination

import (
	"context"
	"fmt"
	"time"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/pods"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// pendingVolumeAttachments lists the VolumeAttachments on node the
// attach/detach controller still has to remove. Attachments of volumes
// still used by pods the drain leaves running (they tolerate the disrupted
// taint, or are mirror pods) are not waited for: they detach only when the
// instance is gone.
func pendingVolumeAttachments(ctx context.Context, kube client.Reader, node *corev1.Node, pods []*corev1.Pod, now time.Time) ([]*storagev1.VolumeAttachment, error) {
	list := &storagev1.VolumeAttachmentList{}
	if err := kube.List(ctx, list); err != nil {
		return nil, fmt.Errorf("listing volumeattachments: %w", err)
	}
	var onNode []*storagev1.VolumeAttachment
	for i := range list.Items {
		if list.Items[i].Spec.NodeName == node.Name {
			onNode = append(onNode, &list.Items[i])
		}
	}
	if len(onNode) == 0 {
		return nil, nil
	}
	kept, err := volumesOfRemainingPods(ctx, kube, pods, now)
	if err != nil {
		return nil, err
	}
	var out []*storagev1.VolumeAttachment
	for _, va := range onNode {
		if pv := va.Spec.Source.PersistentVolumeName; pv != nil && kept[*pv] {
			continue
		}
		out = append(out, va)
	}
	return out, nil
}

// volumesOfRemainingPods are the PersistentVolume names used by active pods
// that the drain does not remove.
func volumesOfRemainingPods(ctx context.Context, kube client.Reader, onNode []*corev1.Pod, now time.Time) (map[string]bool, error) {
	out := map[string]bool{}
	for _, pod := range onNode {
		if pods.IsTerminal(pod) || pods.IsDrainable(pod, now) {
			continue
		}
		for _, vol := range pod.Spec.Volumes {
			if vol.PersistentVolumeClaim == nil {
				continue
			}
			pvc := &corev1.PersistentVolumeClaim{}
			if err := kube.Get(ctx, client.ObjectKey{Namespace: pod.Namespace, Name: vol.PersistentVolumeClaim.ClaimName}, pvc); err != nil {
				if client.IgnoreNotFound(err) == nil {
					continue
				}
				return nil, fmt.Errorf("reading pvc %s/%s: %w", pod.Namespace, vol.PersistentVolumeClaim.ClaimName, err)
			}
			if pvc.Spec.VolumeName != "" {
				out[pvc.Spec.VolumeName] = true
			}
		}
	}
	return out, nil
}
