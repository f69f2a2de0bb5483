package instancetype

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/catalog"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

// TestEveryCatalogLabelIsAValidLabel guards against product names that are
// not label values (spaces, punctuation).
func TestEveryCatalogLabelIsAValidLabel(t *testing.T) {
	for _, info := range catalog.MustLoad().InstanceTypes() {
		if Arch(info) == "" {
			continue
		}
		for k, v := range Labels(info, "us-west-2", "linux") {
			if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
				t.Errorf("%s: label %s=%q: %v", info.InstanceType, k, v, errs)
			}
		}
	}
}

func TestProductNamesBecomeKebabCase(t *testing.T) {
	info := ec2types.InstanceTypeInfo{
		InstanceType:  "g4ad.xlarge",
		ProcessorInfo: &ec2types.ProcessorInfo{SupportedArchitectures: []ec2types.ArchitectureType{ec2types.ArchitectureTypeX8664}, Manufacturer: aws.String("AMD")},
		GpuInfo:       &ec2types.GpuInfo{Gpus: []ec2types.GpuDeviceInfo{{Name: aws.String("Radeon Pro V520"), Manufacturer: aws.String("AMD"), Count: aws.Int32(1)}}},
	}
	l := Labels(info, "us-west-2", "linux")
	if l[v1.LabelInstanceGPUName] != "radeon-pro-v520" || l[v1.LabelInstanceGPUManufacturer] != "amd" || l[v1.LabelInstanceCategory] != "g" || l[v1.LabelInstanceGeneration] != "4" {
		t.Errorf("labels = %v", l)
	}
}
