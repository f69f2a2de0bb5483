package e2e

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/instancetype"
)

// testEC2Networking runs the scenarios of EC2 networking features (pod
// ENIs, prefix delegation, EFA) in parallel on the shared world.
func testEC2Networking(t *testing.T) {
	t.Run("pod-eni", testPodENI)
}

// testPodENI: a pod with security groups of its own (it requests
// vpc.amazonaws.com/pod-eni) on a pool of t3 and m5 types gets an m5:
// t3, though cheaper, cannot trunk, and the node advertises the branch
// interfaces Karpenter's table gives the type.
func testPodENI(t *testing.T) {
	t.Parallel()
	const pool = "pod-eni"
	nodeClass(t, pool)
	ns := namespace(t, "e2e-pod-eni")
	nodePool(t, pool, pool, nil, spotAndOnDemand, amd64,
		req(corev1.LabelInstanceTypeStable, corev1.NodeSelectorOpIn, "t3.large", "t3.xlarge", "m5.large", "m5.xlarge"))
	spec := podSpec(pool, requests("500m", "1Gi"))
	spec.Containers[0].Resources.Requests[instancetype.ResourcePodENI] = resource.MustParse("1")
	spec.Containers[0].Resources.Limits = corev1.ResourceList{instancetype.ResourcePodENI: resource.MustParse("1")}
	create(t, deployment(ns, "pause", 2, spec))
	waitRunning(t, ns, 2)

	for _, n := range nodesOf(t, pool) {
		typ := n.Labels[corev1.LabelInstanceTypeStable]
		want := instancetype.PodENIs(typ)
		if want == 0 {
			t.Errorf("node %s is a %s, which cannot trunk: a pod-eni pod needs a trunking-compatible type", n.Name, typ)
			continue
		}
		if got := n.Status.Allocatable[instancetype.ResourcePodENI]; got.Value() != want {
			t.Errorf("node %s (%s) allocatable pod-eni = %s, want %d", n.Name, typ, got.String(), want)
		}
	}
	for _, c := range claimsOf(t, pool) {
		typ := c.Labels[corev1.LabelInstanceTypeStable]
		if got := c.Status.Capacity[instancetype.ResourcePodENI]; got.Value() != instancetype.PodENIs(typ) {
			t.Errorf("nodeclaim %s (%s) capacity pod-eni = %s, want %d", c.Name, typ, got.String(), instancetype.PodENIs(typ))
		}
		t.Logf("pod-eni pods run on %s %s (pod-eni %d)", typ, c.Labels[v1.CapacityTypeLabelKey], instancetype.PodENIs(typ))
	}
}
