package simulation

import (
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/state"
)

// SchedulablePools are the NodePools a pass may open claims from: Ready,
// dynamic (no replicas) and not being deleted, ordered by weight descending, then name descending.
func SchedulablePools(pools []*v1.NodePool) []*v1.NodePool {
	var out []*v1.NodePool
	for _, p := range pools {
		// A static pool (replicas set) keeps its own count of nodes: pods
		// never open claims in it, as in Karpenter.
		if p.DeletionTimestamp == nil && p.Spec.Replicas == nil && meta.IsStatusConditionTrue(p.Status.Conditions, v1.ConditionTypeReady) {
			out = append(out, p)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		wi, wj := weight(out[i]), weight(out[j])
		if wi != wj {
			return wi > wj
		}
		return out[i].Name > out[j].Name
	})
	return out
}

func weight(p *v1.NodePool) int32 {
	if p.Spec.Weight == nil {
		return 0
	}
	return *p.Spec.Weight
}

// SolverPool converts a NodePool with its instance types and current usage.
func SolverPool(p *v1.NodePool, types []*scheduling.InstanceType, usage corev1.ResourceList) *scheduling.NodePool {
	out := &scheduling.NodePool{
		Name:          p.Name,
		Weight:        weight(p),
		Labels:        p.Spec.Template.Labels,
		Taints:        p.Spec.Template.Spec.Taints,
		Limits:        corev1.ResourceList(p.Spec.Limits),
		Usage:         usage,
		InstanceTypes: types,
	}
	// An invalid value is refused at terraform plan; here it counts the
	// baseline, the cautious reading.
	out.BurstableCPU, _ = v1.BurstableCPU(p.Spec.Template.Labels)
	for _, r := range p.Spec.Template.Spec.Requirements {
		out.Requirements = append(out.Requirements, scheduling.Requirement{NodeSelectorRequirement: r.NodeSelectorRequirement(), MinValues: r.MinValues})
	}
	return out
}

// SolverNode converts a state node: bound pods plus pods nominated to it
// occupy it. An in-flight claim carries its labels plus the values its
// requirements already pin down.
func SolverNode(n *state.StateNode) *scheduling.Node {
	pods := make([]*corev1.Pod, 0, len(n.Pods)+len(n.Nominated))
	pods = append(append(pods, n.Pods...), n.Nominated...)
	labels := n.Labels()
	if n.InFlight() {
		labels = inFlightLabels(n.NodeClaim)
	}
	return &scheduling.Node{
		Name:        n.Name(),
		NodePool:    n.NodePool(),
		Labels:      labels,
		Taints:      n.Taints(),
		Allocatable: n.Allocatable(),
		Pods:        pods,
		Initialized: n.Initialized(),
	}
}

func inFlightLabels(claim *v1.NodeClaim) map[string]string {
	out := map[string]string{}
	reqs, _ := claim.Spec.Requirements.Parse()
	for key, req := range reqs {
		if v, ok := req.SingleValue(); ok {
			out[key] = v
		}
	}
	for k, v := range claim.Labels {
		out[k] = v
	}
	return out
}

// DaemonSetPods turns each DaemonSet's template into the pod it would run
// on every node it tolerates, with the requests the apiserver gives that
// pod: limits stand in for missing requests, and the LimitRanges of the
// DaemonSet's namespace (limitRanges, by namespace) fill what is left.
func DaemonSetPods(dss []*appsv1.DaemonSet, limitRanges map[string][]*corev1.LimitRange) []*corev1.Pod {
	out := make([]*corev1.Pod, 0, len(dss))
	for _, ds := range dss {
		if ds.DeletionTimestamp != nil {
			continue
		}
		out = append(out, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Namespace:       ds.Namespace,
				Name:            ds.Name,
				UID:             ds.UID,
				Labels:          ds.Spec.Template.Labels,
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(ds, appsv1.SchemeGroupVersion.WithKind("DaemonSet"))},
			},
			Spec: scheduling.AdmittedPodSpec(ds.Spec.Template.Spec, limitRanges[ds.Namespace]),
		})
	}
	return out
}
