package instancetype

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
)

// FitsNetworkInterfaces reports whether a type can launch with a node
// class's network interfaces: it supports ENA, has every network card and
// device slot they name, and as many EFA interfaces as they declare
// efa-only. Without interfaces every type fits.
func FitsNetworkInterfaces(info ec2types.InstanceTypeInfo, nis []awsv1.NetworkInterface) bool {
	if len(nis) == 0 {
		return true
	}
	n := info.NetworkInfo
	if n == nil || len(n.NetworkCards) == 0 || n.EnaSupport == ec2types.EnaSupportUnsupported {
		return false
	}
	for _, ni := range nis {
		slots := int32(-1)
		for _, card := range n.NetworkCards {
			if aws.ToInt32(card.NetworkCardIndex) == ni.NetworkCardIndex {
				slots = aws.ToInt32(card.MaximumNetworkInterfaces)
			}
		}
		if ni.DeviceIndex >= slots {
			return false
		}
	}
	if efa := EFAOnly(nis, -1); efa > 0 {
		return n.EfaInfo != nil && efa <= int(aws.ToInt32(n.EfaInfo.MaximumEfaInterfaces))
	}
	return true
}

// EFAOnly counts the efa-only interfaces, on one network card or, with
// card -1, on all.
func EFAOnly(nis []awsv1.NetworkInterface, card int32) int {
	n := 0
	for _, ni := range nis {
		if ni.InterfaceType == awsv1.NetworkInterfaceTypeEFAOnly && (card < 0 || ni.NetworkCardIndex == card) {
			n++
		}
	}
	return n
}
