package instancetype

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/catalog"
)

func TestBaselineCPU(t *testing.T) {
	cat := catalog.MustLoad()
	for name, want := range map[string]float64{
		"t3.medium": 0.20, "t3a.large": 0.30, "t4g.2xlarge": 0.40, "t2.xlarge": 0.225, "t3.nano": 0.05,
		"m5.large": 0, "c6a.xlarge": 0,
	} {
		info, ok := cat.InstanceType(name)
		if !ok {
			t.Fatalf("%s not in the catalog", name)
		}
		if got := BaselineCPU(*info); got != want {
			t.Errorf("%s: baseline %v, want %v", name, got, want)
		}
	}
	odd := ec2types.InstanceTypeInfo{InstanceType: "t9.huge", BurstablePerformanceSupported: aws.Bool(true)}
	if got := BaselineCPU(odd); got != 0.05 {
		t.Errorf("unlisted burstable size: %v, want the smallest share 0.05", got)
	}
}
