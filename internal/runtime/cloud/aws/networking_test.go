package aws_test

import (
	"fmt"
	"strings"
	"testing"

	sdkaws "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/instancetype"
	"github.com/joistdev/terraform-provider-joist/internal/testenv"
)

// ipPrefixCount puts Ipv4PrefixCount on the primary interface of the launch
// template, with the node class's security groups there; the claim's pod
// capacity stays the ENI-limited count Karpenter computes (m5.large: 3
// ENIs × 9 secondary IPv4 addresses + 2 = 29), prefixes or not.
func TestIPPrefixCountReachesTheLaunchTemplate(t *testing.T) {
	ctx := testContext(t)
	nc := testenv.NodeClass("prefixes", cluster, "al2023@latest")
	nc.Spec.IPPrefixCount = sdkaws.Int32(3)
	nc = readyNodeClass(t, prov, nc)
	before := len(sim.Requests().Requests("ec2", "CreateLaunchTemplate"))
	claim := testenv.NodeClaim("prefixes-1", "general", nc.Name,
		testenv.In(corev1.LabelInstanceTypeStable, "m5.large"), testenv.In(v1.CapacityTypeLabelKey, v1.CapacityTypeOnDemand))
	claim.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	got, err := prov.Create(ctx, claim)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = prov.Delete(ctx, got) })

	templates := sim.Requests().Requests("ec2", "CreateLaunchTemplate")[before:]
	if len(templates) != 1 {
		t.Fatalf("%d CreateLaunchTemplate calls, want 1", len(templates))
	}
	p := templates[0].Parameters
	const ni = "LaunchTemplateData.NetworkInterface.1."
	if v := fmt.Sprint(p[ni+"Ipv4PrefixCount"]); v != "3" {
		t.Errorf("%sIpv4PrefixCount = %s, want 3 (parameters %v)", ni, v, p)
	}
	if v := fmt.Sprint(p[ni+"DeviceIndex"]); v != "0" {
		t.Errorf("%sDeviceIndex = %s, want the primary interface, 0", ni, v)
	}
	for i, sg := range nc.Status.SecurityGroups {
		if _, ok := p[fmt.Sprintf("%sSecurityGroupId.%d", ni, i+1)]; !ok {
			t.Errorf("security group %s is not on the primary interface (parameters %v)", sg.ID, p)
		}
	}
	if _, ok := p["LaunchTemplateData.SecurityGroupId.1"]; ok {
		t.Errorf("security groups on the template, not on its primary interface (EC2 refuses both at once)")
	}
	if pods := got.Status.Capacity.Pods().Value(); pods != 29 {
		t.Errorf("claim pod capacity %d, want the ENI-limited 29", pods)
	}
}

// networkInterfaces with an efa-only interface on card 0: of m5.large (no
// EFA) and c5n.18xlarge (one EFA), only c5n is offered to the fleet; the
// template declares both interfaces (the efa-only one without prefixes),
// EC2 attaches them, and the claim has one EFA and 14 ENIs' pods
// (15 − the efa-only one) × 49 + 2 = 688.
func TestNetworkInterfacesLaunchOnlyEFATypes(t *testing.T) {
	ctx := testContext(t)
	nc := testenv.NodeClass("efa-interfaces", cluster, "al2023@latest")
	nc.Spec.IPPrefixCount = sdkaws.Int32(1)
	nc.Spec.NetworkInterfaces = []awsv1.NetworkInterface{
		{NetworkCardIndex: 0, DeviceIndex: 0, InterfaceType: awsv1.NetworkInterfaceTypeInterface},
		{NetworkCardIndex: 0, DeviceIndex: 1, InterfaceType: awsv1.NetworkInterfaceTypeEFAOnly},
	}
	nc = readyNodeClass(t, prov, nc)
	ltBefore := len(sim.Requests().Requests("ec2", "CreateLaunchTemplate"))
	fleetBefore := len(sim.Requests().Requests("ec2", "CreateFleet"))
	claim := testenv.NodeClaim("efa-interfaces-1", "general", nc.Name,
		testenv.In(corev1.LabelInstanceTypeStable, "m5.large", "c5n.18xlarge"), testenv.In(v1.CapacityTypeLabelKey, v1.CapacityTypeOnDemand))
	claim.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	got, err := prov.Create(ctx, claim)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = prov.Delete(ctx, got) })
	if typ := got.Labels[corev1.LabelInstanceTypeStable]; typ != "c5n.18xlarge" {
		t.Errorf("launched %s, want c5n.18xlarge, the only type with EFA", typ)
	}
	for _, f := range sim.Requests().Requests("ec2", "CreateFleet")[fleetBefore:] {
		for k, v := range f.Parameters {
			if strings.HasSuffix(k, ".InstanceType") && v != "c5n.18xlarge" {
				t.Errorf("fleet override %s = %v: a type without EFA was offered", k, v)
			}
		}
	}
	templates := sim.Requests().Requests("ec2", "CreateLaunchTemplate")[ltBefore:]
	if len(templates) != 1 {
		t.Fatalf("%d CreateLaunchTemplate calls, want 1", len(templates))
	}
	p := templates[0].Parameters
	for k, want := range map[string]string{
		"LaunchTemplateData.NetworkInterface.1.InterfaceType": "interface", "LaunchTemplateData.NetworkInterface.1.Ipv4PrefixCount": "1",
		"LaunchTemplateData.NetworkInterface.2.InterfaceType": "efa-only", "LaunchTemplateData.NetworkInterface.2.DeviceIndex": "1",
		"LaunchTemplateData.NetworkInterface.2.NetworkCardIndex": "0",
	} {
		if v := fmt.Sprint(p[k]); v != want {
			t.Errorf("%s = %s, want %s", k, v, want)
		}
	}
	if v, ok := p["LaunchTemplateData.NetworkInterface.2.Ipv4PrefixCount"]; ok {
		t.Errorf("efa-only interface has Ipv4PrefixCount %v: EC2 refuses it", v)
	}
	if efa := got.Status.Capacity[instancetype.ResourceEFA]; efa.Value() != 1 {
		t.Errorf("claim efa capacity %s, want 1", efa.String())
	}
	if pods := got.Status.Capacity.Pods().Value(); pods != 688 {
		t.Errorf("claim pods capacity %d, want 688", pods)
	}
	if kinds := interfaceTypes(t, got.Status.ProviderID); fmt.Sprint(kinds) != "[interface efa-only]" {
		t.Errorf("instance interfaces %v, want [interface efa-only]", kinds)
	}
}

// A claim requesting EFA from a node class without networkInterfaces gets
// every EFA interface of its type, one per network card: c6in.32xlarge has
// two cards and two EFA interfaces.
func TestEFARequestDeclaresTheTypesEFAInterfaces(t *testing.T) {
	ctx := testContext(t)
	nc := readyNodeClass(t, prov, testenv.NodeClass("efa-request", cluster, "al2023@latest"))
	ltBefore := len(sim.Requests().Requests("ec2", "CreateLaunchTemplate"))
	claim := testenv.NodeClaim("efa-request-1", "general", nc.Name,
		testenv.In(corev1.LabelInstanceTypeStable, "c6in.32xlarge"), testenv.In(v1.CapacityTypeLabelKey, v1.CapacityTypeOnDemand))
	claim.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), instancetype.ResourceEFA: resource.MustParse("1")}
	got, err := prov.Create(ctx, claim)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = prov.Delete(ctx, got) })
	templates := sim.Requests().Requests("ec2", "CreateLaunchTemplate")[ltBefore:]
	if len(templates) != 1 {
		t.Fatalf("%d CreateLaunchTemplate calls, want 1", len(templates))
	}
	p := templates[0].Parameters
	for i, want := range [][2]string{{"0", "0"}, {"1", "1"}} {
		ni := fmt.Sprintf("LaunchTemplateData.NetworkInterface.%d.", i+1)
		if kind, card, device := fmt.Sprint(p[ni+"InterfaceType"]), fmt.Sprint(p[ni+"NetworkCardIndex"]), fmt.Sprint(p[ni+"DeviceIndex"]); kind != "efa" || card != want[0] || device != want[1] {
			t.Errorf("interface %d: type %s card %s device %s, want efa on card %s device %s", i+1, kind, card, device, want[0], want[1])
		}
	}
	if _, ok := p["LaunchTemplateData.NetworkInterface.3.InterfaceType"]; ok {
		t.Errorf("more than the type's two EFA interfaces declared")
	}
	if kinds := interfaceTypes(t, got.Status.ProviderID); fmt.Sprint(kinds) != "[efa efa]" {
		t.Errorf("instance interfaces %v, want [efa efa]", kinds)
	}
}

// interfaceTypes are the types of an instance's network interfaces, as EC2
// describes them.
func interfaceTypes(t *testing.T, providerID string) []string {
	t.Helper()
	id := providerID[strings.LastIndex(providerID, "/")+1:]
	out, err := ec2.NewFromConfig(sim.Config).DescribeInstances(testContext(t), &ec2.DescribeInstancesInput{InstanceIds: []string{id}})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, ni := range out.Reservations[0].Instances[0].NetworkInterfaces {
		kinds = append(kinds, sdkaws.ToString(ni.InterfaceType))
	}
	return kinds
}
