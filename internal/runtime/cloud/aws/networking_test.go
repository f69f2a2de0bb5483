package aws_test

import (
	"fmt"
	"testing"

	sdkaws "github.com/aws/aws-sdk-go-v2/aws"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
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
