package state

import (
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// lastApplied is kubectl's copy of the whole object, often the largest
// annotation on a workload.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// CacheOptions trims what the informers keep: managed fields and kubectl's
// last-applied copy everywhere, and for pods every container field that no
// controller here reads (env, commands, probes, mounts, images) and volumes not backed by a claim. At 10k pods
// this is most of the cache's memory. Nothing may Update a pod read from
// this cache (the stripped fields would be lost); patch instead.
func CacheOptions() cache.Options {
	return cache.Options{
		DefaultTransform: stripMeta,
		ByObject: map[client.Object]cache.ByObject{
			&corev1.Pod{}: {Transform: TransformPod},
		},
	}
}

func stripMeta(obj any) (any, error) {
	if m, ok := obj.(metav1.Object); ok {
		m.SetManagedFields(nil)
		if a := m.GetAnnotations(); a != nil {
			if _, ok := a[lastApplied]; ok {
				delete(a, lastApplied)
				m.SetAnnotations(a)
			}
		}
	}
	return obj, nil
}

// TransformPod keeps what scheduling, disruption and termination read:
// metadata, requests, affinity, tolerations, topology, claim-backed volumes,
// ports, node name, priority and status conditions.
func TransformPod(obj any) (any, error) {
	obj, _ = stripMeta(obj)
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	trim := func(cs []corev1.Container) {
		for i := range cs {
			c := &cs[i]
			c.Image, c.Command, c.Args, c.WorkingDir = "", nil, nil, ""
			c.Env, c.EnvFrom, c.VolumeMounts, c.VolumeDevices = nil, nil, nil, nil
			c.LivenessProbe, c.ReadinessProbe, c.StartupProbe, c.Lifecycle = nil, nil, nil, nil
			c.SecurityContext, c.TerminationMessagePath = nil, ""
		}
	}
	trim(pod.Spec.Containers)
	trim(pod.Spec.InitContainers)
	pod.Spec.EphemeralContainers = nil
	// Only claim-backed volumes constrain placement and drains; every pod
	// carries a projected service-account token volume that none read.
	vols := pod.Spec.Volumes[:0]
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim != nil || v.Ephemeral != nil {
			vols = append(vols, v)
		}
	}
	pod.Spec.Volumes = vols
	for i := range pod.Status.ContainerStatuses {
		st := &pod.Status.ContainerStatuses[i]
		st.Image, st.ImageID, st.ContainerID = "", "", ""
		st.LastTerminationState = corev1.ContainerState{}
	}
	pod.Status.InitContainerStatuses = nil
	pod.Status.EphemeralContainerStatuses = nil
	return pod, nil
}
