package ec2_test

import (
	"net/netip"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	sim "github.com/joistdev/terraform-provider-joist/internal/awssim/ec2"
)

// A primary interface asking for prefixes (prefix delegation) gets /28s of
// its subnet, aligned, counted against the subnet's free addresses and
// returned when the instance terminates; /80s for IPv6 prefixes.
func TestLaunchPrefixes(t *testing.T) {
	_, client, _ := newEC2(t, sim.Options{})
	w := discover(t, client)
	subnet := w.subnets["us-west-2a"]
	free := func() int32 {
		out, err := client.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{SubnetIds: []string{subnet}})
		if err != nil {
			t.Fatal(err)
		}
		return aws.ToInt32(out.Subnets[0].AvailableIpAddressCount)
	}
	before := free()
	lt, err := client.CreateLaunchTemplate(ctx, &ec2.CreateLaunchTemplateInput{
		LaunchTemplateName: aws.String("prefixes"),
		LaunchTemplateData: &ec2types.RequestLaunchTemplateData{
			ImageId: aws.String(w.al2023x86), InstanceType: "m5.large",
			NetworkInterfaces: []ec2types.LaunchTemplateInstanceNetworkInterfaceSpecificationRequest{{
				DeviceIndex: aws.Int32(0), SubnetId: aws.String(subnet), Groups: w.groups, Ipv4PrefixCount: aws.Int32(2), Ipv6PrefixCount: aws.Int32(1),
			}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	out, err := client.RunInstances(ctx, &ec2.RunInstancesInput{
		LaunchTemplate: &ec2types.LaunchTemplateSpecification{LaunchTemplateId: lt.LaunchTemplate.LaunchTemplateId},
		MinCount:       aws.Int32(1), MaxCount: aws.Int32(1),
	})
	if err != nil {
		t.Fatal(err)
	}
	id := *out.Instances[0].InstanceId
	described, err := client.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{id}})
	if err != nil {
		t.Fatal(err)
	}
	ni := described.Reservations[0].Instances[0].NetworkInterfaces[0]
	if len(ni.Ipv4Prefixes) != 2 || len(ni.Ipv6Prefixes) != 1 {
		t.Fatalf("primary interface prefixes %+v / %+v, want 2 IPv4 and 1 IPv6", ni.Ipv4Prefixes, ni.Ipv6Prefixes)
	}
	for _, p := range ni.Ipv4Prefixes {
		pfx, err := netip.ParsePrefix(aws.ToString(p.Ipv4Prefix))
		if err != nil || pfx.Bits() != 28 || pfx.Addr().As4()[3]%16 != 0 {
			t.Errorf("IPv4 prefix %q is not an aligned /28 (%v)", aws.ToString(p.Ipv4Prefix), err)
		}
	}
	if got := free(); got != before-1-32 {
		t.Errorf("subnet has %d free addresses after the launch, want %d (one address and two /28s fewer)", got, before-33)
	}
	if _, err := client.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{id}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the addresses back", func() bool { return free() == before })
}
