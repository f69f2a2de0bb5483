package scheduling_test

import (
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	. "github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
)

// Test builders: small, explicit objects so each table case reads as the
// situation it describes.

type podOpt func(*corev1.Pod)

var podSeq int

func mkPod(name, cpu, mem string, opts ...podOpt) *corev1.Pod {
	podSeq++
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(fmt.Sprintf("uid-%s-%d", name, podSeq)), Labels: map[string]string{}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}}}}},
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

func pods(n int, prefix, cpu, mem string, opts ...podOpt) []*corev1.Pod {
	out := make([]*corev1.Pod, n)
	for i := range out {
		out[i] = mkPod(prefix+"-"+strconv.Itoa(i), cpu, mem, opts...)
	}
	return out
}

func withLabels(kv ...string) podOpt {
	return func(p *corev1.Pod) {
		for i := 0; i < len(kv); i += 2 {
			p.Labels[kv[i]] = kv[i+1]
		}
	}
}

func withNodeSelector(kv ...string) podOpt {
	return func(p *corev1.Pod) {
		if p.Spec.NodeSelector == nil {
			p.Spec.NodeSelector = map[string]string{}
		}
		for i := 0; i < len(kv); i += 2 {
			p.Spec.NodeSelector[kv[i]] = kv[i+1]
		}
	}
}

func withRequest(name, q string) podOpt {
	return func(p *corev1.Pod) {
		p.Spec.Containers[0].Resources.Requests[corev1.ResourceName(name)] = resource.MustParse(q)
	}
}

func withToleration(key, value string, effect corev1.TaintEffect) podOpt {
	return func(p *corev1.Pod) {
		op := corev1.TolerationOpEqual
		if value == "" {
			op = corev1.TolerationOpExists
		}
		p.Spec.Tolerations = append(p.Spec.Tolerations, corev1.Toleration{Key: key, Operator: op, Value: value, Effect: effect})
	}
}

func affinity(p *corev1.Pod) *corev1.Affinity {
	if p.Spec.Affinity == nil {
		p.Spec.Affinity = &corev1.Affinity{}
	}
	return p.Spec.Affinity
}

func nodeAffinity(p *corev1.Pod) *corev1.NodeAffinity {
	a := affinity(p)
	if a.NodeAffinity == nil {
		a.NodeAffinity = &corev1.NodeAffinity{}
	}
	return a.NodeAffinity
}

func expr(key string, op corev1.NodeSelectorOperator, values ...string) corev1.NodeSelectorRequirement {
	return corev1.NodeSelectorRequirement{Key: key, Operator: op, Values: values}
}

// withRequiredTerms adds required node-affinity terms (ORed).
func withRequiredTerms(terms ...[]corev1.NodeSelectorRequirement) podOpt {
	return func(p *corev1.Pod) {
		na := nodeAffinity(p)
		if na.RequiredDuringSchedulingIgnoredDuringExecution == nil {
			na.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{}
		}
		for _, t := range terms {
			na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms = append(na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms, corev1.NodeSelectorTerm{MatchExpressions: t})
		}
	}
}

func withPreferredTerm(weight int32, reqs ...corev1.NodeSelectorRequirement) podOpt {
	return func(p *corev1.Pod) {
		na := nodeAffinity(p)
		na.PreferredDuringSchedulingIgnoredDuringExecution = append(na.PreferredDuringSchedulingIgnoredDuringExecution, corev1.PreferredSchedulingTerm{Weight: weight, Preference: corev1.NodeSelectorTerm{MatchExpressions: reqs}})
	}
}

func term(key string, kv ...string) corev1.PodAffinityTerm {
	ml := map[string]string{}
	for i := 0; i < len(kv); i += 2 {
		ml[kv[i]] = kv[i+1]
	}
	return corev1.PodAffinityTerm{TopologyKey: key, LabelSelector: &metav1.LabelSelector{MatchLabels: ml}}
}

func withPodAffinity(t corev1.PodAffinityTerm) podOpt {
	return func(p *corev1.Pod) {
		a := affinity(p)
		if a.PodAffinity == nil {
			a.PodAffinity = &corev1.PodAffinity{}
		}
		a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution, t)
	}
}

func withPreferredPodAffinity(weight int32, t corev1.PodAffinityTerm) podOpt {
	return func(p *corev1.Pod) {
		a := affinity(p)
		if a.PodAffinity == nil {
			a.PodAffinity = &corev1.PodAffinity{}
		}
		a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution = append(a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution, corev1.WeightedPodAffinityTerm{Weight: weight, PodAffinityTerm: t})
	}
}

func withAntiAffinity(t corev1.PodAffinityTerm) podOpt {
	return func(p *corev1.Pod) {
		a := affinity(p)
		if a.PodAntiAffinity == nil {
			a.PodAntiAffinity = &corev1.PodAntiAffinity{}
		}
		a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution, t)
	}
}

func withPreferredAntiAffinity(weight int32, t corev1.PodAffinityTerm) podOpt {
	return func(p *corev1.Pod) {
		a := affinity(p)
		if a.PodAntiAffinity == nil {
			a.PodAntiAffinity = &corev1.PodAntiAffinity{}
		}
		a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution = append(a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution, corev1.WeightedPodAffinityTerm{Weight: weight, PodAffinityTerm: t})
	}
}

func withSpread(key string, maxSkew int32, when corev1.UnsatisfiableConstraintAction, kv ...string) podOpt {
	return withSpreadC(corev1.TopologySpreadConstraint{TopologyKey: key, MaxSkew: maxSkew, WhenUnsatisfiable: when}, kv...)
}

func withSpreadC(c corev1.TopologySpreadConstraint, kv ...string) podOpt {
	return func(p *corev1.Pod) {
		ml := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			ml[kv[i]] = kv[i+1]
		}
		c.LabelSelector = &metav1.LabelSelector{MatchLabels: ml}
		p.Spec.TopologySpreadConstraints = append(p.Spec.TopologySpreadConstraints, c)
	}
}

func withHostPort(port int32) podOpt {
	return func(p *corev1.Pod) {
		p.Spec.Containers[0].Ports = append(p.Spec.Containers[0].Ports, corev1.ContainerPort{ContainerPort: port, HostPort: port})
	}
}

func withOwner(uid string) podOpt {
	return func(p *corev1.Pod) {
		t := true
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: uid, UID: types.UID(uid), Controller: &t}}
	}
}

// mkType builds an instance type whose allocatable equals its capacity, so
// table cases can reason in round numbers.
func mkType(name, arch string, cpu int64, memGi int64, price float64, zones ...string) *InstanceType {
	if len(zones) == 0 {
		zones = []string{"z1", "z2", "z3"}
	}
	res := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewQuantity(cpu, resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(memGi<<30, resource.BinarySI),
		corev1.ResourcePods:   *resource.NewQuantity(110, resource.DecimalSI),
	}
	it := &InstanceType{Name: name, Capacity: res, Allocatable: res.DeepCopy(), Labels: map[string]string{
		labelArch: arch, labelOS: "linux", labelInstanceType: name,
		"karpenter.k8s.aws/instance-family": familyOf(name),
		"karpenter.k8s.aws/instance-cpu":    strconv.FormatInt(cpu, 10),
	}}
	for _, z := range zones {
		it.Offerings = append(it.Offerings, Offering{Zone: z, CapacityType: CapacityTypeOnDemand, Price: price, Available: true})
	}
	return it
}

func familyOf(name string) string {
	for i := range name {
		if name[i] == '.' {
			return name[:i]
		}
	}
	return name
}

func withSpot(it *InstanceType, price float64) *InstanceType {
	var extra []Offering
	for _, o := range it.Offerings {
		if o.CapacityType == CapacityTypeOnDemand {
			extra = append(extra, Offering{Zone: o.Zone, CapacityType: CapacityTypeSpot, Price: price, Available: true})
		}
	}
	it.Offerings = append(it.Offerings, extra...)
	return it
}

func withExtended(it *InstanceType, name string, n int64) *InstanceType {
	it.Capacity[corev1.ResourceName(name)] = *resource.NewQuantity(n, resource.DecimalSI)
	it.Allocatable[corev1.ResourceName(name)] = *resource.NewQuantity(n, resource.DecimalSI)
	return it
}

func mkPool(name string, its []*InstanceType, reqs ...corev1.NodeSelectorRequirement) *NodePool {
	p := &NodePool{Name: name, InstanceTypes: its}
	for _, r := range reqs {
		p.Requirements = append(p.Requirements, Requirement{NodeSelectorRequirement: r})
	}
	return p
}

func mkNode(name string, cpu int64, memGi int64, labels map[string]string, bound ...*corev1.Pod) *Node {
	res := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewQuantity(cpu, resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(memGi<<30, resource.BinarySI),
		corev1.ResourcePods:   *resource.NewQuantity(110, resource.DecimalSI),
	}
	l := map[string]string{labelHostname: name}
	for k, v := range labels {
		l[k] = v
	}
	return &Node{Name: name, Labels: l, Allocatable: res, Pods: bound, Initialized: true}
}

func quantity(s string) resource.Quantity { return resource.MustParse(s) }
