package simulation

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/volumetopology"
)

// VolumeTopology splits pods into those whose volumes resolve, with the
// topology alternatives each pod's volumes allow, and those that wait for
// their storage (a claim or storage class that does not exist, a claim that
// must be bound first); the latter sit this pass out with the reason.
func VolumeTopology(pods []*corev1.Pod, objs volumetopology.Objects) ([]*corev1.Pod, map[types.UID][][]corev1.NodeSelectorRequirement, []scheduling.PodError) {
	ready := make([]*corev1.Pod, 0, len(pods))
	topo := map[types.UID][][]corev1.NodeSelectorRequirement{}
	var waiting []scheduling.PodError
	for _, pod := range pods {
		alts, err := volumetopology.ForPod(pod, objs)
		if err != nil {
			waiting = append(waiting, scheduling.PodError{Pod: pod, Err: err})
			continue
		}
		if len(alts) > 0 {
			topo[pod.UID] = alts
		}
		ready = append(ready, pod)
	}
	return ready, topo, waiting
}
