package simulation

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
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
	in := Build(snap, displaced, nil, catalog, scheduling.Options{}, without)
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
