package instancetype

import (
	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/launchtemplate"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/pricing"
)

// defaultVolumeType is what EC2 creates for a mapping that names no type.
const defaultVolumeType = "gp2"

// VolumeCost is what a node of nc pays per hour for its EBS volumes (the
// node class's block device mappings, else its AMI family's), at prices'
// EBS prices. Every node of the class pays it whatever its instance type,
// so it is part of each offering's price: a plan of more, smaller nodes
// pays it more often. Mappings without a size (the snapshot's) or of a
// type without a price count as nothing.
func VolumeCost(nc *awsv1.EC2NodeClass, prices *pricing.Provider) float64 {
	var sum float64
	for _, bdm := range launchtemplate.BlockDeviceMappings(nc) {
		if bdm == nil || bdm.EBS == nil || bdm.EBS.VolumeSize == nil {
			continue
		}
		typ := aws.ToString(bdm.EBS.VolumeType)
		if typ == "" {
			typ = defaultVolumeType
		}
		vp, ok := prices.VolumePrice(typ)
		if !ok {
			continue
		}
		sum += vp.Hourly(float64(launchtemplate.VolumeGiB(*bdm.EBS.VolumeSize)), aws.ToInt64(bdm.EBS.IOPS), aws.ToInt64(bdm.EBS.Throughput))
	}
	return sum
}
