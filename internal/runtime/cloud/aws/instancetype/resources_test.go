package instancetype

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	corev1 "k8s.io/api/core/v1"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
)

// The VPC resources carry Karpenter's values: pod-eni is the branch
// interfaces of trunking types on every OS, PrivateIPv4Address the
// primary interface's secondary IPv4 addresses on Windows only.
func TestVPCResourcesPerInstanceType(t *testing.T) {
	for _, tc := range []struct {
		typ, family       string
		podENI, windowsIP int64
	}{
		{"m5.large", awsv1.AMIFamilyAL2023, 9, 0},
		{"m5.xlarge", awsv1.AMIFamilyBottlerocket, 18, 0},
		{"c5n.18xlarge", awsv1.AMIFamilyAL2023, 107, 0},
		{"t3.large", awsv1.AMIFamilyAL2023, 0, 0}, // not trunking-compatible
		{"m5.large", awsv1.AMIFamilyWindows2022, 9, 9},
		{"m5.xlarge", awsv1.AMIFamilyWindows2019, 18, 14},
		{"t3.large", awsv1.AMIFamilyWindows2025, 0, 11},
		{"no-such.type", awsv1.AMIFamilyWindows2022, 0, 0},
	} {
		t.Run(tc.typ+"/"+tc.family, func(t *testing.T) {
			nc := &awsv1.EC2NodeClass{}
			nc.Spec.AMIFamily = aws.String(tc.family)
			in := Instance(ec2types.InstanceTypeInfo{InstanceType: ec2types.InstanceType(tc.typ)}, nc)
			for name, want := range map[corev1.ResourceName]int64{ResourcePodENI: tc.podENI, ResourcePrivateIPv4Address: tc.windowsIP} {
				got, ok := in.Extended[name]
				if want == 0 {
					if ok {
						t.Errorf("%s = %s, want it absent", name, got.String())
					}
					continue
				}
				if got.Value() != want {
					t.Errorf("%s = %s, want %d", name, got.String(), want)
				}
			}
		})
	}
}
