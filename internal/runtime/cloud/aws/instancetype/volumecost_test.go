package instancetype_test

import (
	"math"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/instancetype"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/pricing"
)

// Without mappings a node pays for its AMI family's default volumes; with
// them, for each sized volume; a snapshot-sized volume (no size) and Custom's
// empty default count as nothing.
func TestVolumeCostFollowsTheNodeClassMappings(t *testing.T) {
	prices := pricing.New(nil, nil, "us-west-2")
	gp3, _ := prices.VolumePrice("gp3")
	per := func(gib float64) float64 { return gib * gp3.GBMonth / pricing.HoursPerMonth }
	family := func(f string) *awsv1.EC2NodeClass {
		nc := nodeClass("volumes", "amd64")
		nc.Spec.AMIFamily = aws.String(f)
		return nc
	}
	snapshot := family(awsv1.AMIFamilyAL2023)
	size := resource.MustParse("30Gi")
	snapshot.Spec.BlockDeviceMappings = []*awsv1.BlockDeviceMapping{
		{DeviceName: aws.String("/dev/xvda"), EBS: &awsv1.BlockDevice{VolumeSize: &size, VolumeType: aws.String("gp3")}},
		{DeviceName: aws.String("/dev/xvdb"), EBS: &awsv1.BlockDevice{SnapshotID: aws.String("snap-0123456789abcdef0")}},
	}
	for _, tc := range []struct {
		name string
		nc   *awsv1.EC2NodeClass
		want float64
	}{
		{"AL2023 default root", family(awsv1.AMIFamilyAL2023), per(20)},
		{"Bottlerocket default root and data", family(awsv1.AMIFamilyBottlerocket), per(4) + per(20)},
		{"Custom has no default volumes", family(awsv1.AMIFamilyCustom), 0},
		{"own mappings, snapshot volume unsized", snapshot, per(30)},
	} {
		if got := instancetype.VolumeCost(tc.nc, prices); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: %v/h, want %v/h", tc.name, got, tc.want)
		}
	}
}
