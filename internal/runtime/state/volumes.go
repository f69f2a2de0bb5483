package state

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/volumetopology"
)

// VolumeObjects reads the claims the pods' volumes use, and for each the
// bound PersistentVolume or, while unbound, the StorageClass, each once.
// Reads go through the informers; objects that do not exist are recorded as
// nil so volumetopology can say what the pod waits for.
func (c *Cluster) VolumeObjects(ctx context.Context, pods []*corev1.Pod) (volumetopology.Objects, error) {
	objs := volumetopology.NewObjects()
	for _, pod := range pods {
		for _, ref := range volumetopology.Claims(pod) {
			if _, done := objs.Claims[ref.Key]; done {
				continue
			}
			pvc := &corev1.PersistentVolumeClaim{}
			found, err := c.get(ctx, "persistentvolumeclaim", ref.Key, pvc)
			if err != nil {
				return objs, err
			}
			if !found {
				objs.Claims[ref.Key] = nil
				continue
			}
			objs.Claims[ref.Key] = pvc
			if name := pvc.Spec.VolumeName; name != "" {
				if _, done := objs.Volumes[name]; !done {
					pv := &corev1.PersistentVolume{}
					if found, err = c.get(ctx, "persistentvolume", client.ObjectKey{Name: name}, pv); err != nil {
						return objs, err
					}
					objs.Volumes[name] = nil
					if found {
						objs.Volumes[name] = pv
					}
				}
				continue
			}
			name := ""
			if pvc.Spec.StorageClassName != nil {
				name = *pvc.Spec.StorageClassName
			}
			if _, done := objs.StorageClasses[name]; name != "" && !done {
				sc := &storagev1.StorageClass{}
				if found, err = c.get(ctx, "storageclass", client.ObjectKey{Name: name}, sc); err != nil {
					return objs, err
				}
				objs.StorageClasses[name] = nil
				if found {
					objs.StorageClasses[name] = sc
				}
			}
		}
	}
	return objs, nil
}

// get reads key into obj; a missing object is not an error.
func (c *Cluster) get(ctx context.Context, kind string, key client.ObjectKey, obj client.Object) (bool, error) {
	if err := c.kube.Get(ctx, key, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		name := key.Name
		if key.Namespace != "" {
			name = key.String()
		}
		return false, fmt.Errorf("reading %s %s: %w", kind, name, err)
	}
	return true, nil
}
