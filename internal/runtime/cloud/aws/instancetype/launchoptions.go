package instancetype

import (
	"slices"

	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
)

// FitsLaunchOptions reports whether a type can launch with the node class's
// enclave, CPU and connection tracking options, by Karpenter's checks:
// enclaves on need Nitro Enclaves support, nested virtualization on needs
// the processor feature, and connection tracking timeouts need the Nitro
// hypervisor. Types that cannot are not offered, rather than failing at
// launch.
func FitsLaunchOptions(info ec2types.InstanceTypeInfo, spec awsv1.EC2NodeClassSpec) bool {
	if e := spec.EnclaveOptions; e != nil && e.Enabled && info.NitroEnclavesSupport != ec2types.NitroEnclavesSupportSupported {
		return false
	}
	if c := spec.CPUOptions; c != nil && c.NestedVirtualization != nil && *c.NestedVirtualization == "enabled" &&
		(info.ProcessorInfo == nil || !slices.Contains(info.ProcessorInfo.SupportedFeatures, ec2types.SupportedAdditionalProcessorFeatureNestedVirtualization)) {
		return false
	}
	if spec.ConnectionTracking != nil && info.Hypervisor != ec2types.InstanceTypeHypervisorNitro {
		return false
	}
	return true
}
