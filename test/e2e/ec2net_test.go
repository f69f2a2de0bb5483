package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/instancetype"
)

// testEC2Networking runs the scenarios of EC2 networking features (pod
// ENIs, prefix delegation, EFA, placement groups) in parallel on the shared
// world.
func testEC2Networking(t *testing.T) {
	t.Run("pod-eni", testPodENI)
	t.Run("prefix-delegation", testPrefixDelegation)
	t.Run("efa", testEFA)
	t.Run("capacity-block", testCapacityBlock)
	t.Run("placement-group", testPlacementGroup)
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
	create(t, deployment(ns, "pause", 2, withOne(podSpec(pool, requests("500m", "1Gi")), instancetype.ResourcePodENI)))
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

// testPrefixDelegation: a node class with ipPrefixCount 2 launches from a
// template whose primary interface asks for 2 IPv4 prefixes, and its m5.large
// node has the pod capacity Karpenter computes, the ENI-limited 29.
func testPrefixDelegation(t *testing.T) {
	t.Parallel()
	const pool = "prefix-delegation"
	nodeClassWith(t, pool, func(s *awsv1.EC2NodeClassSpec) { s.IPPrefixCount = aws.Int32(2) })
	ns := namespace(t, "e2e-prefix-delegation")
	nodePool(t, pool, pool, nil, req(v1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, v1.CapacityTypeOnDemand),
		req(corev1.LabelInstanceTypeStable, corev1.NodeSelectorOpIn, "m5.large"))
	create(t, deployment(ns, "pause", 1, podSpec(pool, requests("500m", "1Gi"))))
	waitRunning(t, ns, 1)

	templates := 0
	for _, r := range worldOf(t).sim.Requests().Requests("ec2", "CreateLaunchTemplate") {
		if !tagged(r.Parameters, v1.LabelNodeClass, pool) || r.Parameters["DryRun"] == "true" {
			continue // the node class's validation asks a dry run with an image only
		}
		templates++
		if v := fmt.Sprint(r.Parameters["LaunchTemplateData.NetworkInterface.1.Ipv4PrefixCount"]); v != "2" {
			t.Errorf("launch template of node class %s: primary interface Ipv4PrefixCount %s, want 2 (parameters %v)", pool, v, r.Parameters)
		}
	}
	if templates == 0 {
		t.Fatalf("no CreateLaunchTemplate call for node class %s", pool)
	}
	const wantPods = 29 // 3 ENIs × (10 IPv4 addresses − 1) + 2
	for _, n := range nodesOf(t, pool) {
		if got := n.Status.Capacity.Pods().Value(); got != wantPods {
			t.Errorf("node %s pods capacity %d, want %d", n.Name, got, wantPods)
		}
	}
	for _, c := range claimsOf(t, pool) {
		if got := c.Status.Capacity.Pods().Value(); got != wantPods {
			t.Errorf("nodeclaim %s pods capacity %d, want %d", c.Name, got, wantPods)
		}
	}
}

// tagged reports whether a request's tag specifications carry key=value.
func tagged(params map[string]any, key, value string) bool {
	for k, v := range params {
		if strings.HasPrefix(k, "TagSpecification.") && strings.HasSuffix(k, ".Key") && v == key &&
			params[strings.TrimSuffix(k, ".Key")+".Value"] == value {
			return true
		}
	}
	return false
}

// testEFA: a pod requesting vpc.amazonaws.com/efa, on a pool of m5 and
// c5n types, gets a c5n (m5 has no EFA) launched with the type's EFA
// interface, so the node has the EFA device and the pod runs.
func testEFA(t *testing.T) {
	t.Parallel()
	const pool = "efa"
	nodeClass(t, pool)
	ns := namespace(t, "e2e-efa")
	nodePool(t, pool, pool, nil, req(v1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, v1.CapacityTypeOnDemand),
		req(corev1.LabelInstanceTypeStable, corev1.NodeSelectorOpIn, "m5.xlarge", "m5.2xlarge", "c5n.9xlarge", "c5n.18xlarge"))
	create(t, deployment(ns, "pause", 1, withOne(podSpec(pool, requests("1", "2Gi")), instancetype.ResourceEFA)))
	waitRunning(t, ns, 1)

	nodes := nodesOf(t, pool)
	if len(nodes) != 1 {
		t.Fatalf("%d nodes, want 1", len(nodes))
	}
	n := nodes[0]
	typ := n.Labels[corev1.LabelInstanceTypeStable]
	if !strings.HasPrefix(typ, "c5n.") {
		t.Errorf("EFA pod runs on %s, want a c5n type (the pool's only EFA types)", typ)
	}
	if got := n.Status.Allocatable[instancetype.ResourceEFA]; got.Value() != 1 {
		t.Errorf("node %s (%s) allocatable efa %s, want 1", n.Name, typ, got.String())
	}
	inst, ok := instances(t, pool)[n.Spec.ProviderID]
	if !ok {
		t.Fatalf("no instance for node %s", n.Name)
	}
	var kinds []string
	for _, ni := range inst.NetworkInterfaces {
		kinds = append(kinds, aws.ToString(ni.InterfaceType))
	}
	if fmt.Sprint(kinds) != "[efa]" {
		t.Errorf("instance %s interfaces %v, want [efa] (the primary interface as EFA)", aws.ToString(inst.InstanceId), kinds)
	}
	t.Logf("EFA pod runs on %s with interfaces %v", typ, kinds)
}

// withOne has the pod request (and limit) one of an extended resource.
func withOne(spec corev1.PodSpec, name corev1.ResourceName) corev1.PodSpec {
	spec.Containers[0].Resources.Requests[name] = resource.MustParse("1")
	spec.Containers[0].Resources.Limits = corev1.ResourceList{name: resource.MustParse("1")}
	return spec
}
