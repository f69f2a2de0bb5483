package benchfixture

import (
	"fmt"
	"math/rand"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The pod mixes follow Karpenter's scheduling benchmark
// (pkg/controllers/provisioning/scheduling/scheduling_benchmark_test.go):
// CPU from {100m,250m,500m,1,1.5} and memory from
// {100Mi,256Mi,512Mi,1Gi,2Gi,4Gi}, label values from a..g, drawn from one
// RNG in the generator's order (labels first, then CPU, then memory).
var (
	PodCPU    = []string{"100m", "250m", "500m", "1", "1.5"}
	PodMemory = []string{"100Mi", "256Mi", "512Mi", "1Gi", "2Gi", "4Gi"}
)

// Pod label keys of the generator (the affinity key's spelling is
// upstream's).
const (
	LabelKey    = "my-label"
	AffinityKey = "my-affininity"
)

func labelValue(r *rand.Rand) string { return string(rune('a' + r.Intn(7))) }

// Pod is a pending pod in the default namespace with one container
// requesting cpu and mem; its UID derives from its name.
func Pod(name, cpu, mem string, labels map[string]string) *corev1.Pod {
	if labels == nil {
		labels = map[string]string{}
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name), Labels: labels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodPending},
	}
}

// sized draws the pod's CPU and memory after its labels, as upstream does.
func sized(r *rand.Rand, name string, labels map[string]string) *corev1.Pod {
	cpu := PodCPU[r.Intn(len(PodCPU))]
	return Pod(name, cpu, PodMemory[r.Intn(len(PodMemory))], labels)
}

func selector(key, value string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: map[string]string{key: value}}
}

// GenericPods is upstream's makeGenericPods: n pods with a random
// "my-label" value and random requests.
func GenericPods(n int, r *rand.Rand) []*corev1.Pod {
	return genericPods("generic", 0, n, r)
}

func genericPods(prefix string, from, to int, r *rand.Rand) []*corev1.Pod {
	out := make([]*corev1.Pod, 0, to-from)
	for i := from; i < to; i++ {
		out = append(out, sized(r, fmt.Sprintf("%s-%d", prefix, i), map[string]string{LabelKey: labelValue(r)}))
	}
	return out
}

// DiversePods is upstream's makeDiversePods: a fifth each of generic pods,
// zonal spread and hostname spread (maxSkew 1, DoNotSchedule, the pod's
// label and the spread's selector drawn independently, so a spread need not
// select its own pod), zonal self affinity, and hostname anti-affinity among
// all "app: nginx" pods; the remainder is generic.
func DiversePods(n int, r *rand.Rand) []*corev1.Pod {
	per := n / 5
	out := genericPods("generic", 0, per, r)
	for _, key := range []string{corev1.LabelTopologyZone, corev1.LabelHostname} {
		for i := 0; i < per; i++ {
			p := sizedAfter(r, fmt.Sprintf("spread-%s-%d", key, i), map[string]string{LabelKey: labelValue(r)}, func(p *corev1.Pod, sel string) {
				p.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{
					MaxSkew: 1, TopologyKey: key, WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: selector(LabelKey, sel)}}
			})
			out = append(out, p)
		}
	}
	for i := 0; i < per; i++ {
		v := labelValue(r)
		p := sized(r, fmt.Sprintf("affinity-%d", i), map[string]string{AffinityKey: v})
		p.Spec.Affinity = &corev1.Affinity{PodAffinity: &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{
			{TopologyKey: corev1.LabelTopologyZone, LabelSelector: selector(AffinityKey, v)}}}}
		out = append(out, p)
	}
	for i := 0; i < per; i++ {
		p := sized(r, fmt.Sprintf("anti-%d", i), map[string]string{"app": "nginx"})
		p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{
			{TopologyKey: corev1.LabelHostname, LabelSelector: selector("app", "nginx")}}}}
		out = append(out, p)
	}
	return append(out, genericPods("generic", len(out), n, r)...)
}

// sizedAfter draws one more label value (the spread's selector) between the
// pod's label and its requests, as upstream's spread pods do.
func sizedAfter(r *rand.Rand, name string, labels map[string]string, with func(*corev1.Pod, string)) *corev1.Pod {
	sel := labelValue(r)
	p := sized(r, name, labels)
	with(p, sel)
	return p
}
