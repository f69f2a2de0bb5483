package instancetype

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/capacity"
)

// netInfo is an instance type with the given cards (interfaces each), IPv4
// addresses per interface and EFA interfaces (0: no EFA).
func netInfo(name string, ipv4 int32, efa int32, cards ...int32) ec2types.InstanceTypeInfo {
	n := &ec2types.NetworkInfo{EnaSupport: ec2types.EnaSupportRequired, Ipv4AddressesPerInterface: aws.Int32(ipv4),
		MaximumNetworkInterfaces: aws.Int32(cards[0]), DefaultNetworkCardIndex: aws.Int32(0)}
	for i, c := range cards {
		n.NetworkCards = append(n.NetworkCards, ec2types.NetworkCardInfo{NetworkCardIndex: aws.Int32(int32(i)), MaximumNetworkInterfaces: aws.Int32(c)})
	}
	if efa > 0 {
		n.EfaSupported, n.EfaInfo = aws.Bool(true), &ec2types.EfaInfo{MaximumEfaInterfaces: aws.Int32(efa)}
	}
	return ec2types.InstanceTypeInfo{InstanceType: ec2types.InstanceType(name), NetworkInfo: n}
}

func nic(card, device int32, kind awsv1.NetworkInterfaceType) awsv1.NetworkInterface {
	return awsv1.NetworkInterface{NetworkCardIndex: card, DeviceIndex: device, InterfaceType: kind}
}

// Only types with the cards, device slots and EFA interfaces a node class
// names take its interfaces, as Karpenter's compatibility check has it.
func TestFitsNetworkInterfaces(t *testing.T) {
	primary := nic(0, 0, awsv1.NetworkInterfaceTypeInterface)
	plain := netInfo("m5.large", 10, 0, 3)
	c5n := netInfo("c5n.18xlarge", 50, 1, 15)
	c6in := netInfo("c6in.32xlarge", 50, 2, 8, 8)
	for _, tc := range []struct {
		name string
		nis  []awsv1.NetworkInterface
		info ec2types.InstanceTypeInfo
		want bool
	}{
		{"no interfaces, any type", nil, plain, true},
		{"primary only", []awsv1.NetworkInterface{primary}, plain, true},
		{"efa-only on a type without EFA", []awsv1.NetworkInterface{primary, nic(0, 1, awsv1.NetworkInterfaceTypeEFAOnly)}, plain, false},
		{"efa-only on an EFA type", []awsv1.NetworkInterface{primary, nic(0, 1, awsv1.NetworkInterfaceTypeEFAOnly)}, c5n, true},
		{"second card on a one-card type", []awsv1.NetworkInterface{primary, nic(1, 0, awsv1.NetworkInterfaceTypeEFAOnly)}, c5n, false},
		{"second card on a two-card type", []awsv1.NetworkInterface{primary, nic(1, 0, awsv1.NetworkInterfaceTypeEFAOnly)}, c6in, true},
		{"more efa-only than the type has", []awsv1.NetworkInterface{primary, nic(0, 1, awsv1.NetworkInterfaceTypeEFAOnly), nic(1, 0, awsv1.NetworkInterfaceTypeEFAOnly)}, c5n, false},
		{"device slot past the card's interfaces", []awsv1.NetworkInterface{primary, nic(0, 3, awsv1.NetworkInterfaceTypeInterface)}, plain, false},
	} {
		if got := FitsNetworkInterfaces(tc.info, tc.nis); got != tc.want {
			t.Errorf("%s (%s): fits = %v, want %v", tc.name, tc.info.InstanceType, got, tc.want)
		}
	}
}

// With networkInterfaces the node advertises one EFA per efa-only interface
// (not the type's maximum), and efa-only interfaces on card 0 take their
// ENI out of the pod count.
func TestNetworkInterfacesShapeEFAAndPods(t *testing.T) {
	c6in := netInfo("c6in.32xlarge", 50, 2, 8, 8)
	nc := &awsv1.EC2NodeClass{}
	nc.Spec.AMIFamily = aws.String(awsv1.AMIFamilyAL2023)
	if in := Instance(c6in, nc); in.Extended.Name(ResourceEFA, resource.DecimalSI).Value() != 2 || in.EFAOnlyENIs != 0 {
		t.Errorf("no interfaces: efa %v, efa-only ENIs %d; want the type's 2 and none", in.Extended[ResourceEFA], in.EFAOnlyENIs)
	}
	nc.Spec.NetworkInterfaces = []awsv1.NetworkInterface{nic(0, 0, awsv1.NetworkInterfaceTypeInterface), nic(0, 1, awsv1.NetworkInterfaceTypeEFAOnly)}
	in := Instance(c6in, nc)
	if got := in.Extended.Name(ResourceEFA, resource.DecimalSI).Value(); got != 1 || in.EFAOnlyENIs != 1 {
		t.Errorf("one efa-only on card 0: efa %d, efa-only ENIs %d; want 1 and 1", got, in.EFAOnlyENIs)
	}
	if pods := capacity.Pods(in, capacity.Kubelet{}, capacity.Options{Family: capacity.AL2023}); pods != 7*49+2 {
		t.Errorf("pods = %d, want (8-1 ENIs) × 49 + 2 = %d", pods, 7*49+2)
	}
	nc.Spec.NetworkInterfaces = []awsv1.NetworkInterface{nic(0, 0, awsv1.NetworkInterfaceTypeInterface)}
	if in := Instance(c6in, nc); in.Extended.Name(ResourceEFA, resource.DecimalSI).Value() != 0 {
		t.Errorf("primary interface only: efa %v, want none", in.Extended[ResourceEFA])
	}
}
