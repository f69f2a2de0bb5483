package sandbox

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/instancetype"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/nodeoverlay/overlays"
)

// ControllerCost is what the controller takes instances launched from nc
// to cost per hour: each at the price it lists the offering at (EC2's spot
// or on-demand price, read from AWS as the controller reads it, plus the
// node class's EBS volumes), changed by priceAdjustment (a NodeOverlay's
// that selects them all; "" for none). The demo and the e2e tests compare
// the plan-time prediction with it.
func ControllerCost(ctx context.Context, cfg aws.Config, nc *awsv1.EC2NodeClass, insts []ec2types.Instance, priceAdjustment string) (float64, error) {
	prices := instancetype.NewFromConfig(cfg).Prices()
	for _, update := range []func(context.Context) error{prices.UpdateOnDemandPricing, prices.UpdateSpotPricing, prices.UpdateVolumePricing} {
		if err := update(ctx); err != nil {
			return 0, fmt.Errorf("reading prices: %w", err)
		}
	}
	volumes := instancetype.VolumeCost(nc, prices)
	var total float64
	for _, inst := range insts {
		price, ok := prices.OnDemandPrice(string(inst.InstanceType))
		if inst.InstanceLifecycle == ec2types.InstanceLifecycleTypeSpot {
			price, ok = prices.SpotPrice(string(inst.InstanceType), aws.ToString(inst.Placement.AvailabilityZone))
		}
		if !ok {
			return 0, fmt.Errorf("no %s price for %s", inst.InstanceLifecycle, inst.InstanceType)
		}
		total += overlays.AdjustedPrice(price+volumes, priceAdjustment)
	}
	return total, nil
}
