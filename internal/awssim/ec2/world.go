package ec2

import (
	"fmt"
	"net/netip"
	"strings"

	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

// world is the account's network and images: one VPC with a private
// (discoverable) and a public subnet per zone, security groups, and images.
type world struct {
	vpc     ec2types.Vpc
	subnets []*subnet
	groups  []*ec2types.SecurityGroup
	images  []*image
}

type subnet struct {
	ec2types.Subnet
	next netip.Addr // next address to hand out
}

// eksctlSubnetName is the Name tag eksctl gives a cluster's subnets
// ("eksctl-c-cluster/SubnetPrivateUSWEST2A"); Karpenter's own end-to-end
// suites select the private ones by Name "*Private*".
func eksctlSubnetName(cluster, kind, zone string) string {
	return fmt.Sprintf("eksctl-%s-cluster/Subnet%s%s", cluster, kind, strings.ToUpper(strings.ReplaceAll(zone, "-", "")))
}

// seedWorld builds the world an EKS cluster created the usual way has:
// subnets and security groups that Karpenter discovers by the
// karpenter.sh/discovery=<cluster> tag, and public subnets it must not pick.
func seedWorld(s *Service) world {
	cluster := s.opts.ClusterName
	w := world{vpc: ec2types.Vpc{
		VpcId:           ptr("vpc-" + s.ids.Hex(17)),
		CidrBlock:       ptr("10.0.0.0/16"),
		State:           ec2types.VpcStateAvailable,
		OwnerId:         ptr(s.opts.AccountID),
		IsDefault:       ptr(false),
		InstanceTenancy: ec2types.TenancyDefault,
		DhcpOptionsId:   ptr("dopt-" + s.ids.Hex(17)),
		Tags:            tags("Name", cluster+"-vpc"),
	}}
	for i, z := range s.region.Zones {
		private := netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 0, byte(32 * i), 0}), 19)
		w.subnets = append(w.subnets, newSubnet(s, w.vpc, z.Name, z.ID, private, false,
			tags("Name", eksctlSubnetName(cluster, "Private", z.Name), "karpenter.sh/discovery", cluster,
				"kubernetes.io/role/internal-elb", "1")))
	}
	for i, z := range s.region.Zones {
		public := netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 0, byte(192 + 16*i), 0}), 20)
		w.subnets = append(w.subnets, newSubnet(s, w.vpc, z.Name, z.ID, public, true,
			tags("Name", eksctlSubnetName(cluster, "Public", z.Name), "kubernetes.io/role/elb", "1")))
	}
	group := func(name, description string, t []ec2types.Tag) *ec2types.SecurityGroup {
		return &ec2types.SecurityGroup{
			GroupId: ptr("sg-" + s.ids.Hex(17)), GroupName: ptr(name), Description: ptr(description),
			VpcId: w.vpc.VpcId, OwnerId: ptr(s.opts.AccountID), Tags: t,
		}
	}
	w.groups = []*ec2types.SecurityGroup{
		group("default", "default VPC security group", nil),
		group("eks-cluster-sg-"+cluster+"-"+s.ids.Hex(8), "EKS created security group applied to ENI that is attached to EKS Control Plane master nodes, as well as any managed workloads.",
			tags("Name", "eks-cluster-sg-"+cluster, "aws:eks:cluster-name", cluster, "kubernetes.io/cluster/"+cluster, "owned",
				"karpenter.sh/discovery", cluster)),
		group(cluster+"-node", "Node security group for "+cluster,
			tags("Name", cluster+"-node", "karpenter.sh/discovery", cluster)),
	}
	for _, g := range w.groups {
		g.SecurityGroupArn = ptr("arn:aws:ec2:" + s.opts.Region + ":" + s.opts.AccountID + ":security-group/" + *g.GroupId)
	}
	w.images = seedImages(s)
	return w
}

func newSubnet(s *Service, vpc ec2types.Vpc, zone, zoneID string, cidr netip.Prefix, public bool, t []ec2types.Tag) *subnet {
	id := "subnet-" + s.ids.Hex(17)
	size := 1<<(32-cidr.Bits()) - 5 // AWS reserves five addresses per subnet
	return &subnet{
		Subnet: ec2types.Subnet{
			SubnetId: ptr(id), VpcId: vpc.VpcId, CidrBlock: ptr(cidr.String()),
			AvailabilityZone: ptr(zone), AvailabilityZoneId: ptr(zoneID),
			AvailableIpAddressCount: ptr(int32(size)), State: ec2types.SubnetStateAvailable,
			DefaultForAz: ptr(false), MapPublicIpOnLaunch: ptr(public), OwnerId: ptr(s.opts.AccountID),
			SubnetArn: ptr("arn:aws:ec2:" + s.opts.Region + ":" + s.opts.AccountID + ":subnet/" + id),
			Tags:      t,
		},
		next: cidr.Addr().Next().Next().Next().Next(), // .0 to .3 are reserved
	}
}

// allocateIP hands out the subnet's next address.
func (sn *subnet) allocateIP() (netip.Addr, bool) {
	if *sn.AvailableIpAddressCount <= 0 {
		return netip.Addr{}, false
	}
	ip := sn.next
	sn.next = sn.next.Next()
	sn.AvailableIpAddressCount = ptr(*sn.AvailableIpAddressCount - 1)
	return ip, true
}

func (sn *subnet) releaseIP() { sn.release(1) }

// release returns n addresses to the subnet's count.
func (sn *subnet) release(n int32) {
	sn.AvailableIpAddressCount = ptr(*sn.AvailableIpAddressCount + n)
}

// allocatePrefix hands out the subnet's next /28 (prefix delegation): 16
// addresses on a 16-address boundary.
func (sn *subnet) allocatePrefix() (netip.Prefix, bool) {
	if *sn.AvailableIpAddressCount < 16 {
		return netip.Prefix{}, false
	}
	a := sn.next.As4()
	if rem := a[3] % 16; rem != 0 {
		for range 16 - rem {
			sn.next = sn.next.Next()
		}
	}
	p := netip.PrefixFrom(sn.next, 28)
	for range 16 {
		sn.next = sn.next.Next()
	}
	sn.AvailableIpAddressCount = ptr(*sn.AvailableIpAddressCount - 16)
	return p, true
}

// tags builds a tag list from key, value pairs.
func tags(kv ...string) []ec2types.Tag {
	out := make([]ec2types.Tag, 0, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, ec2types.Tag{Key: ptr(kv[i]), Value: ptr(kv[i+1])})
	}
	return out
}

func (s *Service) subnetByID(id string) *subnet {
	for _, sn := range s.world.subnets {
		if *sn.SubnetId == id {
			return sn
		}
	}
	return nil
}

func (s *Service) groupByID(id string) *ec2types.SecurityGroup {
	for _, g := range s.world.groups {
		if *g.GroupId == id {
			return g
		}
	}
	return nil
}

// Network names the seeded network, for wiring other services (an EKS
// cluster's VPC configuration) and for tests.
type Network struct {
	VpcID                  string
	PrivateSubnetIDs       []string // one per zone, tagged for discovery
	PublicSubnetIDs        []string
	ClusterSecurityGroupID string
	NodeSecurityGroupID    string
}

// Network returns the IDs of the seeded VPC, subnets and security groups.
func (s *Service) Network() Network {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := Network{VpcID: *s.world.vpc.VpcId, ClusterSecurityGroupID: *s.world.groups[1].GroupId, NodeSecurityGroupID: *s.world.groups[2].GroupId}
	for _, sn := range s.world.subnets {
		if *sn.MapPublicIpOnLaunch {
			n.PublicSubnetIDs = append(n.PublicSubnetIDs, *sn.SubnetId)
		} else {
			n.PrivateSubnetIDs = append(n.PrivateSubnetIDs, *sn.SubnetId)
		}
	}
	return n
}
