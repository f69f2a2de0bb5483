package aws_test

import (
	"slices"
	"testing"

	sdkaws "github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	"github.com/joistdev/terraform-provider-joist/internal/testenv"
)

// TestLaunchOptionsFilterInstanceTypes: as in Karpenter, a node class with
// enclaves on offers only types with Nitro Enclaves support, one with nested
// virtualization on only types whose processor has it, and one with
// connection tracking timeouts only Nitro types; without them such types
// are offered.
func TestLaunchOptionsFilterInstanceTypes(t *testing.T) {
	ctx := testContext(t)
	zones := []string{"us-west-2a", "us-west-2b", "us-west-2c"}
	base := readyNodeClass(t, prov, testenv.NodeClass("launch-opts-base", cluster, "al2023@latest"))
	all, err := prov.InstanceTypes().List(ctx, base, zones)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		set  func(*awsv1.EC2NodeClassSpec)
		fits func(ec2types.InstanceTypeInfo) bool
	}{
		{"enclaves", func(s *awsv1.EC2NodeClassSpec) { s.EnclaveOptions = &awsv1.EnclaveOptions{Enabled: true} },
			func(i ec2types.InstanceTypeInfo) bool {
				return i.NitroEnclavesSupport == ec2types.NitroEnclavesSupportSupported
			}},
		{"nested-virtualization", func(s *awsv1.EC2NodeClassSpec) {
			s.CPUOptions = &awsv1.CPUOptions{NestedVirtualization: sdkaws.String("enabled")}
		}, func(i ec2types.InstanceTypeInfo) bool {
			return i.ProcessorInfo != nil && slices.Contains(i.ProcessorInfo.SupportedFeatures, ec2types.SupportedAdditionalProcessorFeatureNestedVirtualization)
		}},
		{"connection-tracking", func(s *awsv1.EC2NodeClassSpec) {
			s.ConnectionTracking = &awsv1.ConnectionTracking{UDPTimeout: sdkaws.Int32(60)}
		}, func(i ec2types.InstanceTypeInfo) bool { return i.Hypervisor == ec2types.InstanceTypeHypervisorNitro }},
	} {
		nc := base.DeepCopy()
		tc.set(&nc.Spec)
		got, err := prov.InstanceTypes().List(ctx, nc, zones)
		if err != nil {
			t.Fatal(err)
		}
		var unfit []string
		for _, it := range all {
			if info, _ := prov.InstanceTypes().Info(it.Name); !tc.fits(info) {
				unfit = append(unfit, it.Name)
			}
		}
		if len(unfit) == 0 || len(got) == 0 {
			t.Fatalf("%s: %d types without the support, %d offered; the catalog cannot tell", tc.name, len(unfit), len(got))
		}
		for _, it := range got {
			if slices.Contains(unfit, it.Name) {
				t.Errorf("%s: %s offered without the support", tc.name, it.Name)
				break
			}
		}
		if len(got)+len(unfit) != len(all) {
			t.Errorf("%s: %d offered + %d without the support, of %d", tc.name, len(got), len(unfit), len(all))
		}
	}
}
