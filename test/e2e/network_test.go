package e2e

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

// TestIPv6Cluster: a world whose EKS cluster is IPv6 (DescribeCluster
// reports only an IPv6 service range). An AL2023 node class becomes Ready,
// a pod gets a node, and the node's launch template gives it a primary
// IPv6 address and the IPv6 range in its NodeConfig. A world of its own:
// the cluster's IP family is what every scenario of a world shares.
func TestIPv6Cluster(t *testing.T) {
	t.Parallel()
	w := ownWorld(t, worldOptions{name: "ipv6", ipFamily: "ipv6"})
	nodeClass(t, "ipv6")
	nodePool(t, "ipv6", "ipv6", nil, spotAndOnDemand, amd64, categoriesCMR)
	ns := namespace(t, "e2e-ipv6")
	create(t, deployment(ns, "pause", 1, podSpec("ipv6", requests("1", "1Gi"))))
	waitRunning(t, ns, 1)
	nodes := nodesOf(t, "ipv6")
	if len(nodes) != 1 || len(nodes[0].Status.Addresses) == 0 || !strings.Contains(nodes[0].Status.Addresses[0].Address, ":") {
		t.Errorf("the node does not register with an IPv6 InternalIP first: %v", nodes)
	}

	var templates []string
	for _, r := range w.sim.Requests().Requests("ec2", "CreateLaunchTemplate") {
		if r.Parameters["LaunchTemplateData.NetworkInterface.1.PrimaryIpv6"] == "true" && r.Parameters["LaunchTemplateData.NetworkInterface.1.Ipv6AddressCount"] == "1" {
			templates = append(templates, fmt.Sprint(r.Parameters["LaunchTemplateName"]))
		}
	}
	if len(templates) == 0 {
		t.Fatal("no CreateLaunchTemplate request gave the primary interface an IPv6 address")
	}
	data, ok := w.sim.EC2.LaunchTemplateData(templates[0])
	if !ok {
		t.Fatalf("launch template %s not in the simulator", templates[0])
	}
	ud, err := base64.StdEncoding.DecodeString(aws.ToString(data.UserData))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(ud), "cidr: fd5e:9a41:77c3::/108") {
		t.Errorf("the NodeConfig lacks the cluster's IPv6 service range:\n%s", ud)
	}
}

// testWindows: a pod selecting kubernetes.io/os=windows gets a Windows
// Server 2022 node from a windows2022@latest node class (the pool is
// tainted so no other scenario's pods land there).
func testWindows(t *testing.T) {
	t.Parallel()
	nodeClassWith(t, "windows", func(s *awsv1.EC2NodeClassSpec) {
		s.AMISelectorTerms = []awsv1.AMISelectorTerm{{Alias: "windows2022@latest"}}
	})
	taint := corev1.Taint{Key: "os", Value: "windows", Effect: corev1.TaintEffectNoSchedule}
	np := &v1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: "windows"},
		Spec: v1.NodePoolSpec{
			Template: v1.NodeClaimTemplate{Spec: v1.NodeClaimTemplateSpec{
				NodeClassRef: &v1.NodeClassReference{Group: v1.AWSGroup, Kind: "EC2NodeClass", Name: "windows"},
				Requirements: v1.Requirements{req(corev1.LabelOSStable, corev1.NodeSelectorOpIn, "windows"), spotAndOnDemand, categoriesCMR},
				Taints:       []corev1.Taint{taint},
				ExpireAfter:  v1.MustParseNillableDuration("720h"),
			}},
			Disruption: v1.Disruption{ConsolidateAfter: v1.MustParseNillableDuration("Never"), ConsolidationPolicy: v1.ConsolidationPolicyWhenEmptyOrUnderutilized},
		},
	}
	create(t, np)
	ns := namespace(t, "e2e-windows")
	spec := podSpec("windows", requests("1", "2Gi"))
	spec.NodeSelector[corev1.LabelOSStable] = "windows"
	spec.Tolerations = []corev1.Toleration{{Key: taint.Key, Operator: corev1.TolerationOpEqual, Value: taint.Value, Effect: taint.Effect}}
	create(t, deployment(ns, "pause", 1, spec))
	waitRunning(t, ns, 1)
	nodes := nodesOf(t, "windows")
	if len(nodes) != 1 {
		t.Fatalf("%d nodes in the windows pool, want 1", len(nodes))
	}
	n := nodes[0]
	if n.Labels[corev1.LabelOSStable] != "windows" || n.Labels[corev1.LabelWindowsBuild] != "10.0.20348" || n.Labels[corev1.LabelArchStable] != "amd64" {
		t.Errorf("node %s: os %q, windows-build %q, arch %q; want windows, 10.0.20348, amd64",
			n.Name, n.Labels[corev1.LabelOSStable], n.Labels[corev1.LabelWindowsBuild], n.Labels[corev1.LabelArchStable])
	}
	for _, i := range instances(t, "windows") {
		if i.Platform != ec2types.PlatformValuesWindows {
			t.Errorf("instance %s platform %q, want windows", aws.ToString(i.InstanceId), i.Platform)
		}
	}
}
