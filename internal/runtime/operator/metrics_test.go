package operator

import (
	"context"
	"maps"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/testenv"
)

// The per-node and per-pod series read from a real apiserver: a managed
// node with a workload pod and a DaemonSet pod, and a pending pod.
func TestWorkloadSeries(t *testing.T) {
	ctx := context.Background()
	kube := testenv.KubeFor(t).Client
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	const providerID = "aws:///us-west-2a/i-0123456789abcdef0"
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "ip-10-0-0-1", Labels: map[string]string{
		v1.NodePoolLabelKey: "general", corev1.LabelTopologyZone: "us-west-2a", corev1.LabelInstanceTypeStable: "m5.large",
		v1.CapacityTypeLabelKey: "spot", corev1.LabelArchStable: "amd64", v1.LabelInstanceCPU: "2",
	}}, Spec: corev1.NodeSpec{ProviderID: providerID}}
	must(kube.Create(ctx, node))
	node.Status.Capacity = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("8Gi")}
	node.Status.Allocatable = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1930m"), corev1.ResourceMemory: resource.MustParse("7Gi")}
	must(kube.Status().Update(ctx, node))
	claim := testenv.NodeClaim("general-abc", "general", "default", testenv.In(v1.CapacityTypeLabelKey, "spot"))
	must(kube.Create(ctx, claim))
	claim.Status.ProviderID = providerID
	must(kube.Status().Update(ctx, claim))
	pod := func(name, nodeName, cpu string, daemon bool) {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
			Spec: corev1.PodSpec{NodeName: nodeName, Containers: []corev1.Container{{Name: "c", Image: "pause",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)},
					Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}}}
		if daemon {
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "logs", UID: "ds"}}
		}
		must(kube.Create(ctx, p))
	}
	pod("web", node.Name, "500m", false)
	pod("logs", node.Name, "100m", true)
	pod("pending", "", "1", false)

	w := &Workload{Reader: kube}
	must(w.Refresh(ctx))
	labels := func(resourceType string) map[string]string {
		l := map[string]string{"resource_type": resourceType}
		for i, v := range nodeLabelValues(node, true) {
			l[nodeLabels[i]] = v
		}
		return l
	}
	for _, tc := range []struct {
		name   string
		family *StateFamily
		res    string
		want   float64
	}{
		{"allocatable cpu", NodeAllocatable, "cpu", 1.93},
		{"allocatable memory", NodeAllocatable, "memory", 7 << 30},
		{"overhead cpu", NodeSystemOverhead, "cpu", 0.07},
		{"pod requests", NodeTotalPodRequests, "cpu", 0.6},
		{"pod limits", NodeTotalPodLimits, "cpu", 0.6},
		{"daemon requests", NodeTotalDaemonRequests, "cpu", 0.1},
	} {
		if got, ok := seriesValue(t, tc.family, labels(tc.res)); !ok || got < tc.want-1e-9 || got > tc.want+1e-9 {
			t.Errorf("%s = %v (found %v), want %v", tc.name, got, ok, tc.want)
		}
	}
	if l := labels("cpu"); l["instance_cpu"] != "2" || l["managed"] != "true" || l["nodepool"] != "general" || l["capacity_type"] != "spot" || l["node_name"] != node.Name {
		t.Errorf("node labels %v", l)
	}
	if _, ok := seriesValue(t, PodState, map[string]string{"name": "web", "namespace": "default", "node": node.Name, "nodepool": "general",
		"instance_type": "m5.large", "scheduled": "true", "managed": "true", "owner": "", "zone": "us-west-2a", "arch": "amd64",
		"capacity_type": "spot", "phase": "Pending", "ready": "false"}); !ok {
		t.Error("no karpenter_pods_state series for pod web with its node's labels")
	}
	if n := testutil.CollectAndCount(PodState); n != 3 {
		t.Errorf("%d karpenter_pods_state series, want one per pod (3)", n)
	}
	// The registry serves them (no duplicate or malformed series).
	if n, err := testutil.GatherAndCount(crmetrics.Registry, "karpenter_nodes_allocatable", "karpenter_pods_state"); err != nil || n != 5 {
		t.Errorf("the registry gathered %d series (%v), want 2 allocatable and 3 pod states", n, err)
	}

	// A pod gone is no longer reported.
	must(kube.Delete(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "pending"}}))
	must(w.Refresh(ctx))
	if n := testutil.CollectAndCount(PodState); n != 2 {
		t.Errorf("%d karpenter_pods_state series after a pod's deletion, want 2", n)
	}

	// One node in the cluster state: the Node and its NodeClaim share a
	// provider ID; a claim not launched yet counts on its own.
	must(kube.Create(ctx, testenv.NodeClaim("general-def", "general", "default", testenv.In(v1.CapacityTypeLabelKey, "spot"))))
	if n, err := CountStateNodes(ctx, kube); err != nil || n != 2 {
		t.Errorf("CountStateNodes = %d (%v), want 2", n, err)
	}
}

// seriesValue is the value of family's series with exactly these labels.
func seriesValue(t *testing.T, family *StateFamily, labels map[string]string) (float64, bool) {
	t.Helper()
	ch := make(chan prometheus.Metric, 1024)
	family.Collect(ch)
	close(ch)
	for m := range ch {
		var out dto.Metric
		if err := m.Write(&out); err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, lp := range out.GetLabel() {
			got[lp.GetName()] = lp.GetValue()
		}
		if maps.Equal(got, labels) {
			return out.GetGauge().GetValue(), true
		}
	}
	return 0, false
}
