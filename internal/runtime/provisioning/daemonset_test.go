package provisioning_test

import (
	"context"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
)

// TestDaemonSetOverheadSizesTheClaim runs scheduling passes against the
// real apiserver for one pending pod and a DaemonSet whose template sets
// no requests: in one case its container sets only limits, in the other
// its namespace's LimitRange gives the defaults. The apiserver admits the
// DaemonSet's pods with requests all the same, so the claim must hold the
// pod and that DaemonSet pod on every instance type it may launch as; once
// it launches as the smallest of them and the DaemonSet pod binds there,
// the next pass keeps the pod on it and creates no further claim.
func TestDaemonSetOverheadSizesTheClaim(t *testing.T) {
	agentMemory := resource.MustParse("2560Mi")
	cases := []struct {
		name       string
		limitRange []corev1.LimitRangeItem
		resources  corev1.ResourceRequirements
	}{
		{name: "limits only", resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: agentMemory}}},
		// Written as users write it: a default limit, which the apiserver
		// also stores as the default request.
		{name: "LimitRange default", limitRange: []corev1.LimitRangeItem{{Type: corev1.LimitTypeContainer, Default: corev1.ResourceList{corev1.ResourceMemory: agentMemory}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			ctx := context.Background()
			// The DaemonSet lives in its own namespace, so only it gets the
			// LimitRange's defaults.
			w.create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "monitoring"}})
			if tc.limitRange != nil {
				w.create(t, &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Namespace: "monitoring", Name: "defaults"},
					Spec: corev1.LimitRangeSpec{Limits: tc.limitRange}})
			}
			labels := map[string]string{"app": "agent"}
			ds := &appsv1.DaemonSet{
				ObjectMeta: metav1.ObjectMeta{Namespace: "monitoring", Name: "agent"},
				Spec: appsv1.DaemonSetSpec{
					Selector: &metav1.LabelSelector{MatchLabels: labels},
					Template: corev1.PodTemplateSpec{
						ObjectMeta: metav1.ObjectMeta{Labels: labels},
						Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "agent", Image: "pause", Resources: tc.resources}}},
					},
				},
			}
			w.create(t, ds)
			app := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "app"}}
			w.pendingPod(t, app)

			res := w.schedule(t)
			if len(res.Created) != 1 {
				t.Fatalf("created %d nodeclaims, want one for app; unassigned %q", len(res.Created), reasons(res))
			}
			claim := res.Created[0]

			// The DaemonSet's pod on the launched node, as the apiserver
			// admits it.
			const nodeName = "launched"
			agent := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Namespace: ds.Namespace, Name: "agent-launched", Labels: labels,
					OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(ds, appsv1.SchemeGroupVersion.WithKind("DaemonSet"))}},
				Spec: *ds.Spec.Template.Spec.DeepCopy(),
			}
			agent.Spec.NodeName = nodeName
			w.create(t, agent)
			if got := scheduling.PodRequests(agent)[corev1.ResourceMemory]; got.Cmp(agentMemory) != 0 {
				t.Fatalf("the apiserver admitted the DaemonSet pod with %s memory, want %s: the test's premise", got.String(), agentMemory.String())
			}
			need := scheduling.SumRequests([]*corev1.Pod{app, agent})

			smallest := w.checkOptions(t, claim, need)

			// Launch as the smallest option; the DaemonSet pod is bound there.
			zone := smallest.Offerings[0].Zone
			node := &corev1.Node{
				ObjectMeta: metav1.ObjectMeta{Name: nodeName, Labels: map[string]string{
					v1.NodePoolLabelKey: w.pool.Name, corev1.LabelInstanceTypeStable: smallest.Name, corev1.LabelHostname: nodeName,
					corev1.LabelTopologyZone: zone, v1.CapacityTypeLabelKey: v1.CapacityTypeOnDemand,
				}},
				Spec: corev1.NodeSpec{ProviderID: "aws:///" + zone + "/i-launched"},
			}
			w.create(t, node)
			node.Status.Capacity = smallest.Capacity
			node.Status.Allocatable = smallest.Allocatable
			must(t, w.kube.Status().Update(ctx, node))
			must(t, w.kube.Get(ctx, client.ObjectKeyFromObject(claim), claim))
			claim.Status.ProviderID = node.Spec.ProviderID
			must(t, w.kube.Status().Update(ctx, claim))
			w.synced(t, node, claim)

			again := w.schedule(t)
			if again.Pods != 0 || len(again.Created) != 0 {
				t.Errorf("after the %s node launched and the DaemonSet pod bound: %d pods pending again, %d more nodeclaims created; want app to stay on the node and none",
					smallest.Name, again.Pods, len(again.Created))
			}
		})
	}
}

// checkOptions checks every instance type the claim may launch as has room
// for need, and returns the one with the least memory.
func (w *world) checkOptions(t *testing.T, claim *v1.NodeClaim, need corev1.ResourceList) *scheduling.InstanceType {
	t.Helper()
	its, err := w.cloud.GetInstanceTypes(context.Background(), w.pool)
	if err != nil {
		t.Fatal(err)
	}
	var options []string
	for _, r := range claim.Spec.Requirements {
		if r.Key == corev1.LabelInstanceTypeStable {
			options = r.Values
		}
	}
	var smallest *scheduling.InstanceType
	for _, it := range its {
		if !slices.Contains(options, it.Name) {
			continue
		}
		for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			if have, want := it.Allocatable[name], need[name]; have.Cmp(want) < 0 {
				t.Errorf("option %s has %s %s allocatable, the pod and the DaemonSet pod need %s", it.Name, have.String(), name, want.String())
			}
		}
		if mem := it.Allocatable[corev1.ResourceMemory]; smallest == nil || mem.Cmp(smallest.Allocatable[corev1.ResourceMemory]) < 0 {
			smallest = it
		}
	}
	if smallest == nil {
		t.Fatalf("the claim lists no known instance type: %v", options)
	}
	return smallest
}
