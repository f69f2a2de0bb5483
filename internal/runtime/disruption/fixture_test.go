package disruption

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/state"
)

// Test fixtures: a synthetic catalog of families f0, f1, ... with sizes of
// 1 to 16 vCPUs (4 GiB each) in one zone; on-demand costs $0.05 per vCPU
// hour (1 % more per family index), spot 30 % of that.

var now = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)

const zone = "z1"

var sizes = []int64{1, 2, 4, 8, 16}

func typeName(family int, cpu int64) string { return fmt.Sprintf("f%d.%dx", family, cpu) }

func odPrice(family int, cpu int64) float64 { return 0.05 * float64(cpu) * (1 + 0.01*float64(family)) }

func catalog(families int) []*scheduling.InstanceType {
	var out []*scheduling.InstanceType
	for f := range families {
		for _, cpu := range sizes {
			name := typeName(f, cpu)
			res := corev1.ResourceList{
				corev1.ResourceCPU:    *resource.NewQuantity(cpu, resource.DecimalSI),
				corev1.ResourceMemory: *resource.NewQuantity(cpu*4<<30, resource.BinarySI),
				corev1.ResourcePods:   *resource.NewQuantity(110, resource.DecimalSI),
			}
			out = append(out, &scheduling.InstanceType{
				Name: name, Capacity: res, Allocatable: res.DeepCopy(),
				Labels: map[string]string{corev1.LabelInstanceTypeStable: name, corev1.LabelArchStable: "amd64", corev1.LabelOSStable: "linux"},
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
	after := time.Duration(0)
	p := &v1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name)},
		Spec: v1.NodePoolSpec{
			Template: v1.NodeClaimTemplate{Spec: v1.NodeClaimTemplateSpec{
				Requirements: v1.Requirements{{Key: v1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{v1.CapacityTypeOnDemand}}},
				NodeClassRef: &v1.NodeClassReference{Group: v1.AWSGroup, Kind: "EC2NodeClass", Name: "default"},
			}},
			Disruption: v1.Disruption{
				ConsolidateAfter:    v1.NillableDuration{Duration: &after},
				ConsolidationPolicy: v1.ConsolidationPolicyWhenEmptyOrUnderutilized,
				Budgets:             []v1.Budget{{Nodes: "100%"}},
			},
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

func budgets(b ...v1.Budget) poolOpt { return func(p *v1.NodePool) { p.Spec.Disruption.Budgets = b } }

var podSeq int

type podOpt func(*corev1.Pod)

func mkPod(cpu string, opts ...podOpt) *corev1.Pod {
	podSeq++
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("pod-%d", podSeq), UID: types.UID(fmt.Sprintf("pod-uid-%d", podSeq)),
			Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("256Mi")}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}},
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

type nodeOpt func(*state.StateNode)

// mkNode is an initialized, Ready, consolidatable node of pool running pods.
func mkNode(name string, pool *v1.NodePool, family int, cpu int64, capacityType string, pods []*corev1.Pod, opts ...nodeOpt) *state.StateNode {
	it := typeName(family, cpu)
	labels := map[string]string{
		corev1.LabelInstanceTypeStable: it, corev1.LabelTopologyZone: zone, v1.CapacityTypeLabelKey: capacityType,
		v1.NodePoolLabelKey: pool.Name, v1.NodeInitializedLabelKey: "true", corev1.LabelHostname: name,
		corev1.LabelArchStable: "amd64", corev1.LabelOSStable: "linux",
	}
	alloc := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewQuantity(cpu, resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(cpu*4<<30, resource.BinarySI),
		corev1.ResourcePods:   *resource.NewQuantity(110, resource.DecimalSI),
	}
	providerID := "aws:///" + zone + "/i-" + name
	n := &state.StateNode{
		Node: &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
			Spec:       corev1.NodeSpec{ProviderID: providerID},
			Status: corev1.NodeStatus{Allocatable: alloc, Capacity: alloc,
				Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}},
		},
		NodeClaim: &v1.NodeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, CreationTimestamp: metav1.NewTime(now.Add(-time.Hour))},
			Status: v1.NodeClaimStatus{ProviderID: providerID, NodeName: name, Conditions: []metav1.Condition{
				{Type: v1.ConditionTypeInitialized, Status: metav1.ConditionTrue},
				{Type: v1.ConditionTypeConsolidatable, Status: metav1.ConditionTrue},
			}},
		},
	}
	for _, p := range pods {
		p.Spec.NodeName = name
	}
	n.Pods = pods
	for _, o := range opts {
		o(n)
	}
	return n
}

func drifted(since time.Time) nodeOpt {
	return func(n *state.StateNode) {
		n.NodeClaim.Status.Conditions = append(n.NodeClaim.Status.Conditions, metav1.Condition{
			Type: v1.ConditionTypeDrifted, Status: metav1.ConditionTrue, Reason: "NodePoolDrifted", LastTransitionTime: metav1.NewTime(since)})
	}
}

func notConsolidatable(n *state.StateNode) {
	var keep []metav1.Condition
	for _, c := range n.NodeClaim.Status.Conditions {
		if c.Type != v1.ConditionTypeConsolidatable {
			keep = append(keep, c)
		}
	}
	n.NodeClaim.Status.Conditions = keep
}

func mkEnv(pools []*v1.NodePool, nodes []*state.StateNode, families int) *Env {
	types := map[string][]*scheduling.InstanceType{}
	cat := catalog(families)
	for _, p := range pools {
		types[p.Name] = cat
	}
	return &Env{
		Now:           now,
		Snapshot:      &state.Snapshot{Nodes: nodes, NodePools: pools},
		InstanceTypes: types,
		PDBs:          NewPDBLimits(nil),
		Queued:        map[string]bool{},
	}
}

func candidateNames(cands []*Candidate) []string {
	var out []string
	for _, c := range cands {
		out = append(out, c.Name())
	}
	return out
}
