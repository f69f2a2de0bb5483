package simulation

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/state"
)

func TestBuildLeavesOutRemovedAndDeletingNodes(t *testing.T) {
	pod := func(name string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name)}}
	}
	node := func(name string, taints ...corev1.Taint) *state.StateNode {
		return &state.StateNode{
			Node:      &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{Taints: taints}},
			NodeClaim: &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: name + "-claim", Labels: map[string]string{v1.NodePoolLabelKey: "default"}}},
			Pods:      []*corev1.Pod{pod(name + "-pod")},
		}
	}
	inFlight := &state.StateNode{NodeClaim: &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "launching", Labels: map[string]string{v1.NodePoolLabelKey: "default"}}}}
	ready := &v1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Status: v1.NodePoolStatus{Conditions: []metav1.Condition{{Type: v1.ConditionTypeReady, Status: metav1.ConditionTrue}}}}
	snap := &state.Snapshot{
		Nodes:     []*state.StateNode{node("kept"), node("removed"), node("draining", v1.DisruptedNoScheduleTaint), inFlight},
		NodePools: []*v1.NodePool{ready, {ObjectMeta: metav1.ObjectMeta{Name: "without-types"}, Status: ready.Status}},
	}
	catalog := map[string][]*scheduling.InstanceType{"default": {{Name: "m5.large"}}}
	without := map[string]bool{"removed": true}

	displaced := Displaced(snap.Nodes, without)
	if len(displaced) != 1 || displaced[0].Name != "draining-pod" {
		t.Fatalf("displaced %v, want only the pod of the node being deleted", displaced)
	}
	in := Build(snap, nil, displaced, nil, catalog, scheduling.Options{}, without)
	if len(in.Nodes) != 1 || in.Nodes[0].Name != "kept" {
		t.Errorf("nodes %v, want only kept", in.Nodes)
	}
	if len(in.InFlight) != 1 || in.InFlight[0].Name != "launching" {
		t.Errorf("in-flight %v, want launching", in.InFlight)
	}
	if len(in.NodePools) != 1 || in.NodePools[0].Name != "default" {
		t.Errorf("pools %v, want the ready pool with instance types only", in.NodePools)
	}
	if len(in.Pods) != 1 {
		t.Errorf("pods %v, want the displaced pod", in.Pods)
	}
}

// TestBuildConvertsNodesOnce: Builds sharing a Nodes get the same solver
// node for a state node, with its pods' requests summed, and the nodes a
// Build leaves out are left out of each Build on its own.
func TestBuildConvertsNodesOnce(t *testing.T) {
	pod := func(name, cpu string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name)},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}}}
	}
	node := func(name string, pods ...*corev1.Pod) *state.StateNode {
		return &state.StateNode{
			Node:      &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}},
			NodeClaim: &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: name + "-claim", Labels: map[string]string{v1.NodePoolLabelKey: "default"}}},
			Pods:      pods,
		}
	}
	snap := &state.Snapshot{Nodes: []*state.StateNode{node("a", pod("a1", "500m"), pod("a2", "250m")), node("b", pod("b1", "1"))}}
	var nodes Nodes
	first := Build(snap, &nodes, nil, nil, nil, scheduling.Options{}, map[string]bool{"b": true})
	second := Build(snap, &nodes, nil, nil, nil, scheduling.Options{}, map[string]bool{"a": true})
	third := Build(snap, &nodes, nil, nil, nil, scheduling.Options{}, nil)
	if len(first.Nodes) != 1 || first.Nodes[0].Name != "a" || len(second.Nodes) != 1 || second.Nodes[0].Name != "b" {
		t.Fatalf("nodes %v and %v, want a alone, then b alone", first.Nodes, second.Nodes)
	}
	if len(third.Nodes) != 2 || third.Nodes[0] != first.Nodes[0] || third.Nodes[1] != second.Nodes[0] {
		t.Errorf("a later Build converted the nodes again")
	}
	if got := first.Nodes[0].Requests.Cpu(); got.MilliValue() != 750 {
		t.Errorf("node a requests %v CPU, want 750m (its two pods)", got)
	}
}

// TestDaemonSetPodsTakeTheirNamespacesLimitRanges checks each DaemonSet pod
// asks for what the apiserver will admit it with: its limits where it sets
// no requests, and its own namespace's LimitRange defaults, not another's.
func TestDaemonSetPodsTakeTheirNamespacesLimitRanges(t *testing.T) {
	ds := func(ns string, limits corev1.ResourceList) *appsv1.DaemonSet {
		return &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "agent"}, Spec: appsv1.DaemonSetSpec{Template: corev1.PodTemplateSpec{
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "agent", Resources: corev1.ResourceRequirements{Limits: limits}}}},
		}}}
	}
	mem := func(q string) corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(q)}
	}
	lr := &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Namespace: "limited", Name: "defaults"}, Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
		Type: corev1.LimitTypeContainer, DefaultRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")},
	}}}}
	dss := []*appsv1.DaemonSet{ds("limited", mem("1Gi")), ds("open", mem("2Gi"))}
	got := DaemonSetPods(dss, map[string][]*corev1.LimitRange{"limited": {lr}})
	want := []corev1.ResourceList{
		{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("1Gi")},
		mem("2Gi"),
	}
	for i, p := range got {
		if r := scheduling.PodRequests(p); !equality.Semantic.DeepEqual(r, want[i]) {
			t.Errorf("%s/%s requests cpu=%s memory=%s, want cpu=%s memory=%s", p.Namespace, p.Name,
				r.Cpu(), r.Memory(), want[i].Cpu(), want[i].Memory())
		}
	}
	if dss[0].Spec.Template.Spec.Containers[0].Resources.Requests != nil {
		t.Errorf("the DaemonSet's template was modified: %v", dss[0].Spec.Template.Spec.Containers[0].Resources)
	}
}
