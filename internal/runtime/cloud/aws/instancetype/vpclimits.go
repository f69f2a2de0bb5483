package instancetype

import "github.com/joistdev/terraform-provider-joist/internal/ec2data"

// vpcLimits is the VPC resource controller's view of the instance types,
// as internal/ec2data ships it.
var vpcLimits = ec2data.VPCLimits

// PodENIs is the vpc.amazonaws.com/pod-eni capacity of a type: the branch
// interfaces the VPC resource controller advertises on trunking-compatible
// types, 0 on others and on types the table does not know.
func PodENIs(instanceType string) int64 { return vpcLimits()[instanceType].BranchInterfaces }

// WindowsPrivateIPv4s is the vpc.amazonaws.com/PrivateIPv4Address capacity
// of a Windows node of a type: the primary interface's secondary IPv4
// addresses, 0 on types the table does not know.
func WindowsPrivateIPv4s(instanceType string) int64 {
	if l, ok := vpcLimits()[instanceType]; ok && l.IPv4PerInterface > 0 {
		return l.IPv4PerInterface - 1
	}
	return 0
}
