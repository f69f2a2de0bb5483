package launchtemplate

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
)

// TestNodeClassOptionsReachTheTemplate: connection tracking, enclave and CPU
// options are written into the launch template's data; connection tracking
// lives on the primary interface, which then carries the security groups.
func TestNodeClassOptionsReachTheTemplate(t *testing.T) {
	cfg := config("default", "general", "ami-1")
	cfg.SecurityGroupIDs = []string{"sg-2", "sg-1"}
	cfg.ConnectionTracking = &awsv1.ConnectionTracking{TCPEstablishedTimeout: aws.Int32(3600), UDPTimeout: aws.Int32(30)}
	cfg.EnclaveOptions = &awsv1.EnclaveOptions{Enabled: true}
	cfg.CPUOptions = &awsv1.CPUOptions{NestedVirtualization: aws.String("enabled")}
	d := data(cfg)
	if len(d.NetworkInterfaces) != 1 || len(d.SecurityGroupIds) != 0 {
		t.Fatalf("interfaces %v, groups %v: want the groups on one primary interface", d.NetworkInterfaces, d.SecurityGroupIds)
	}
	ni := d.NetworkInterfaces[0]
	if got := ni.Groups; len(got) != 2 || got[0] != "sg-1" {
		t.Errorf("interface groups %v, want [sg-1 sg-2]", got)
	}
	ct := ni.ConnectionTrackingSpecification
	if ct == nil || aws.ToInt32(ct.TcpEstablishedTimeout) != 3600 || aws.ToInt32(ct.UdpTimeout) != 30 || ct.UdpStreamTimeout != nil {
		t.Errorf("connection tracking %+v, want tcp 3600, udp 30, stream unset", ct)
	}
	if d.EnclaveOptions == nil || !aws.ToBool(d.EnclaveOptions.Enabled) {
		t.Errorf("enclave options %+v, want enabled", d.EnclaveOptions)
	}
	if d.CpuOptions == nil || d.CpuOptions.NestedVirtualization != ec2types.NestedVirtualizationSpecificationEnabled {
		t.Errorf("cpu options %+v, want nested virtualization enabled", d.CpuOptions)
	}

	plain := data(config("default", "general", "ami-1"))
	if plain.NetworkInterfaces != nil || plain.EnclaveOptions != nil || plain.CpuOptions != nil {
		t.Errorf("a node class without the options got %+v", plain)
	}
}

// ipPrefixCount goes on the primary interface, which then carries the
// security groups; 0 is passed as set, not dropped.
func TestIPPrefixCountOnThePrimaryInterface(t *testing.T) {
	for _, n := range []int32{0, 1, 16} {
		cfg := config("default", "general", "ami-1")
		cfg.SecurityGroupIDs = []string{"sg-1"}
		cfg.IPPrefixCount = aws.Int32(n)
		d := data(cfg)
		if len(d.NetworkInterfaces) != 1 || len(d.SecurityGroupIds) != 0 {
			t.Fatalf("prefix count %d: interfaces %v, groups %v; want the groups on one primary interface", n, d.NetworkInterfaces, d.SecurityGroupIds)
		}
		ni := d.NetworkInterfaces[0]
		if aws.ToInt32(ni.DeviceIndex) != 0 || ni.Ipv4PrefixCount == nil || *ni.Ipv4PrefixCount != n || len(ni.Groups) != 1 {
			t.Errorf("prefix count %d: primary interface %+v", n, ni)
		}
	}
}

// The node class's interfaces are declared as written; efa-only ones carry
// no prefixes, public IP or connection tracking (EC2 refuses them there).
// Without interfaces, an EFA count declares one efa interface per card.
func TestNetworkInterfacesInTheTemplate(t *testing.T) {
	cfg := config("default", "general", "ami-1")
	cfg.SecurityGroupIDs = []string{"sg-1"}
	cfg.IPPrefixCount = aws.Int32(2)
	cfg.ConnectionTracking = &awsv1.ConnectionTracking{UDPTimeout: aws.Int32(30)}
	cfg.NetworkInterfaces = []awsv1.NetworkInterface{
		{NetworkCardIndex: 0, DeviceIndex: 0, InterfaceType: awsv1.NetworkInterfaceTypeInterface},
		{NetworkCardIndex: 1, DeviceIndex: 0, InterfaceType: awsv1.NetworkInterfaceTypeEFAOnly},
	}
	cfg.EFACount = 4 // ignored: the node class's interfaces win
	d := data(cfg)
	if len(d.NetworkInterfaces) != 2 || len(d.SecurityGroupIds) != 0 {
		t.Fatalf("interfaces %+v, template groups %v; want the two declared, groups on them", d.NetworkInterfaces, d.SecurityGroupIds)
	}
	p, e := d.NetworkInterfaces[0], d.NetworkInterfaces[1]
	if aws.ToString(p.InterfaceType) != "interface" || aws.ToInt32(p.Ipv4PrefixCount) != 2 || p.ConnectionTrackingSpecification == nil || len(p.Groups) != 1 {
		t.Errorf("primary interface %+v", p)
	}
	if aws.ToString(e.InterfaceType) != "efa-only" || aws.ToInt32(e.NetworkCardIndex) != 1 || e.Ipv4PrefixCount != nil || e.ConnectionTrackingSpecification != nil || e.AssociatePublicIpAddress != nil {
		t.Errorf("efa-only interface %+v", e)
	}

	cfg.NetworkInterfaces = nil
	cfg.EFACount = 2
	d = data(cfg)
	if len(d.NetworkInterfaces) != 2 {
		t.Fatalf("EFA count 2: interfaces %+v", d.NetworkInterfaces)
	}
	for i, ni := range d.NetworkInterfaces {
		device := int32(1)
		if i == 0 {
			device = 0
		}
		if aws.ToString(ni.InterfaceType) != "efa" || aws.ToInt32(ni.NetworkCardIndex) != int32(i) || aws.ToInt32(ni.DeviceIndex) != device || aws.ToInt32(ni.Ipv4PrefixCount) != 2 {
			t.Errorf("EFA interface %d: %+v", i, ni)
		}
	}
}

// In an IPv6 cluster the primary interface gets the instance's primary
// IPv6 address, and ipPrefixCount delegates IPv6 prefixes instead of IPv4
// ones, also when the node class's interfaces shape the template (an
// efa-only interface gets neither).
func TestIPv6OnThePrimaryInterface(t *testing.T) {
	cfg := config("default", "general", "ami-1")
	cfg.IPv6, cfg.IPPrefixCount = true, aws.Int32(2)
	d := data(cfg)
	if len(d.NetworkInterfaces) != 1 {
		t.Fatalf("interfaces %v, want the primary one", d.NetworkInterfaces)
	}
	ni := d.NetworkInterfaces[0]
	if !aws.ToBool(ni.PrimaryIpv6) || aws.ToInt32(ni.Ipv6AddressCount) != 1 || aws.ToInt32(ni.Ipv6PrefixCount) != 2 || ni.Ipv4PrefixCount != nil {
		t.Errorf("primary interface %+v, want a primary IPv6 address and 2 IPv6 prefixes, no IPv4 prefixes", ni)
	}

	cfg.NetworkInterfaces = []awsv1.NetworkInterface{
		{NetworkCardIndex: 0, DeviceIndex: 0, InterfaceType: awsv1.NetworkInterfaceTypeInterface},
		{NetworkCardIndex: 1, DeviceIndex: 0, InterfaceType: awsv1.NetworkInterfaceTypeEFAOnly},
	}
	d = data(cfg)
	if len(d.NetworkInterfaces) != 2 {
		t.Fatalf("interfaces %v, want the node class's two", d.NetworkInterfaces)
	}
	if p := d.NetworkInterfaces[0]; !aws.ToBool(p.PrimaryIpv6) || aws.ToInt32(p.Ipv6PrefixCount) != 2 || p.Ipv4PrefixCount != nil {
		t.Errorf("primary interface %+v, want IPv6 and IPv6 prefixes", p)
	}
	if e := d.NetworkInterfaces[1]; e.PrimaryIpv6 != nil || e.Ipv6PrefixCount != nil || e.Ipv6AddressCount != nil {
		t.Errorf("efa-only interface %+v, want no IPv6 settings", e)
	}
}

// A launch into a capacity block or an interruptible reservation carries
// its market type beside the reservation target; an ODCR launch and a
// launch outside reservations carry none.
func TestReservationMarketTypes(t *testing.T) {
	for name, c := range map[string]struct {
		id            string
		kind          awsv1.CapacityReservationType
		interruptible bool
		want          ec2types.MarketType
	}{
		"capacity block": {"cr-1", awsv1.CapacityReservationTypeCapacityBlock, false, ec2types.MarketTypeCapacityBlock},
		"interruptible":  {"cr-2", awsv1.CapacityReservationTypeDefault, true, ec2types.MarketTypeInterruptibleCapacityReservation},
		"odcr":           {"cr-3", awsv1.CapacityReservationTypeDefault, false, ""},
		"no reservation": {"", "", false, ""},
	} {
		cfg := config("default", "general", "ami-1")
		cfg.CapacityReservationID, cfg.CapacityReservationType, cfg.Interruptible = c.id, c.kind, c.interruptible
		d := data(cfg)
		var got ec2types.MarketType
		if d.InstanceMarketOptions != nil {
			got = d.InstanceMarketOptions.MarketType
		}
		if got != c.want {
			t.Errorf("%s: market type %q, want %q", name, got, c.want)
		}
		if target := d.CapacityReservationSpecification; c.id != "" && (target == nil || aws.ToString(target.CapacityReservationTarget.CapacityReservationId) != c.id) {
			t.Errorf("%s: reservation target %+v, want %s", name, target, c.id)
		}
	}
}
