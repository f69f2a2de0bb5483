package impact

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
)

// Fixtures: families f0 and f1 of 2, 4 and 8 vCPUs (4 GiB each) in zone z1;
// on-demand costs $0.05 per vCPU hour in f0 and $0.04 in f1, spot 30 % of it.

var now = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)

const zone = "z1"

func odPrice(family int, cpu int64) float64 { return float64(cpu) * []float64{0.05, 0.04}[family] }

func catalog() []*scheduling.InstanceType {
	var out []*scheduling.InstanceType
	for f := range 2 {
		for _, cpu := range []int64{2, 4, 8} {
			name := fmt.Sprintf("f%d.%dx", f, cpu)
			res := corev1.ResourceList{
				corev1.ResourceCPU:    *resource.NewQuantity(cpu, resource.DecimalSI),
				corev1.ResourceMemory: *resource.NewQuantity(cpu*4<<30, resource.BinarySI),
				corev1.ResourcePods:   *resource.NewQuantity(110, resource.DecimalSI),
			}
			out = append(out, &scheduling.InstanceType{
				Name: name, Capacity: res, Allocatable: res.DeepCopy(),
				Labels: map[string]string{corev1.LabelInstanceTypeStable: name, v1.LabelInstanceFamily: fmt.Sprintf("f%d", f),
					corev1.LabelArchStable: "amd64", corev1.LabelOSStable: "linux"},
				Offerings: []scheduling.Offering{
					{Zone: zone, CapacityType: v1.CapacityTypeOnDemand, Price: odPrice(f, cpu), Available: true},
					{Zone: zone, CapacityType: v1.CapacityTypeSpot, Price: 0.3 * odPrice(f, cpu), Available: true},
				},
			})
		}
	}
	return out
}

type poolOpt func(*v1.NodePool)

func mkPool(name string, opts ...poolOpt) *v1.NodePool {
	p := &v1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name)},
		Spec: v1.NodePoolSpec{
			Template: v1.NodeClaimTemplate{Spec: v1.NodeClaimTemplateSpec{
				Requirements: v1.Requirements{
					{Key: v1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{v1.CapacityTypeOnDemand, v1.CapacityTypeSpot}},
					{Key: v1.LabelInstanceFamily, Operator: corev1.NodeSelectorOpIn, Values: []string{"f0", "f1"}},
				},
				NodeClassRef: &v1.NodeClassReference{Group: v1.AWSGroup, Kind: "EC2NodeClass", Name: "default"},
			}},
			Disruption: v1.Disruption{Budgets: []v1.Budget{{Nodes: "20%"}}},
		},
		Status: v1.NodePoolStatus{Conditions: []metav1.Condition{{Type: v1.ConditionTypeReady, Status: metav1.ConditionTrue}}},
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

func capacityTypes(values ...string) poolOpt {
	return func(p *v1.NodePool) { p.Spec.Template.Spec.Requirements[0].Values = values }
}

func families(values ...string) poolOpt {
	return func(p *v1.NodePool) { p.Spec.Template.Spec.Requirements[1].Values = values }
}

func budget(nodes string) poolOpt {
	return func(p *v1.NodePool) { p.Spec.Disruption.Budgets = []v1.Budget{{Nodes: nodes}} }
}

func cpuLimit(q string) poolOpt {
	return func(p *v1.NodePool) { p.Spec.Limits = v1.Limits{corev1.ResourceCPU: resource.MustParse(q)} }
}

func taint(key, value string) poolOpt {
	return func(p *v1.NodePool) {
		p.Spec.Template.Spec.Taints = append(p.Spec.Template.Spec.Taints, corev1.Taint{Key: key, Value: value, Effect: corev1.TaintEffectNoSchedule})
	}
}

// world builds a Cluster.
type world struct {
	c   Cluster
	seq int
}

func (w *world) pool(p *v1.NodePool) { w.c.NodePools = append(w.c.NodePools, *p) }

// pod is a running pod of ReplicaSet owner on node ("" leaves it pending
// and unschedulable, as kube-scheduler marks it).
func (w *world) pod(owner, node, cpu string) {
	w.seq++
	p := corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("%s-%d", owner, w.seq), UID: types.UID(fmt.Sprintf("pod-uid-%d", w.seq)),
			Labels:          map[string]string{"app": owner},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: owner, UID: types.UID("rs-" + owner), Controller: new(true)}}},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("256Mi")}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}
	if node == "" {
		p.Status.Phase = corev1.PodPending
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}}
	}
	w.c.Pods = append(w.c.Pods, p)
}

// node is an initialized, Ready node of pool, launched from its current
// spec, of type f<family>.<cpu>x.
func (w *world) node(name string, pool *v1.NodePool, family int, cpu int64, capacityType string) {
	it := fmt.Sprintf("f%d.%dx", family, cpu)
	labels := map[string]string{
		corev1.LabelInstanceTypeStable: it, corev1.LabelTopologyZone: zone, v1.CapacityTypeLabelKey: capacityType,
		v1.LabelInstanceFamily: fmt.Sprintf("f%d", family),
		v1.NodePoolLabelKey:    pool.Name, v1.NodeInitializedLabelKey: "true", corev1.LabelHostname: name,
		corev1.LabelArchStable: "amd64", corev1.LabelOSStable: "linux",
	}
	alloc := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewQuantity(cpu, resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(cpu*4<<30, resource.BinarySI),
		corev1.ResourcePods:   *resource.NewQuantity(110, resource.DecimalSI),
	}
	providerID := "aws:///" + zone + "/i-" + name
	w.c.Nodes = append(w.c.Nodes, corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec:       corev1.NodeSpec{ProviderID: providerID},
		Status: corev1.NodeStatus{Allocatable: alloc, Capacity: alloc,
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}},
	})
	w.c.NodeClaims = append(w.c.NodeClaims, v1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, Annotations: pool.HashAnnotations(), CreationTimestamp: metav1.NewTime(now.Add(-time.Hour))},
		Spec:       v1.NodeClaimSpec{NodeClassRef: pool.Spec.Template.Spec.NodeClassRef},
		Status: v1.NodeClaimStatus{ProviderID: providerID, NodeName: name, Capacity: alloc, Allocatable: alloc, Conditions: []metav1.Condition{
			{Type: v1.ConditionTypeLaunched, Status: metav1.ConditionTrue},
			{Type: v1.ConditionTypeInitialized, Status: metav1.ConditionTrue},
		}},
	})
}

func (w *world) predict(planned *v1.NodePool) *Result {
	base := map[string][]*scheduling.InstanceType{}
	for _, p := range w.c.NodePools {
		base[p.Name] = catalog()
	}
	return Predict(Input{Cluster: w.c, Planned: planned, BaseTypes: base, Now: now})
}
