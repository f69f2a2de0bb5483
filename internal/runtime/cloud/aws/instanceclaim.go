package aws

import (
	"maps"
	"strconv"

	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/instance"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
)

// instanceToClaim is the NodeClaim an instance is: the one rule for Create,
// Get and List, so a claim read back after a restart says what the launch
// said. Onto base (the claim as asked for, or one named by the instance's
// tags) go the type's labels and resources when it is known, then what the
// instance itself says: zone and zone ID (from nc's subnets, when nc is
// known), capacity type, reservation, placement, pool, provider ID and image.
func instanceToClaim(base *v1.NodeClaim, inst *instance.Instance, nc *awsv1.EC2NodeClass, it *scheduling.InstanceType) *v1.NodeClaim {
	out := base.DeepCopy()
	if out.Labels == nil {
		out.Labels = map[string]string{}
	}
	if it != nil {
		maps.Copy(out.Labels, it.Labels)
		if it.Capacity != nil {
			out.Status.Capacity = it.Capacity.DeepCopy()
			out.Status.Allocatable = it.Allocatable.DeepCopy()
		}
	}
	if inst.Architecture != "" {
		out.Labels[corev1.LabelArchStable] = inst.Architecture
	}
	out.Labels[corev1.LabelInstanceTypeStable] = inst.Type
	out.Labels[corev1.LabelTopologyZone] = inst.Zone
	out.Labels[v1.CapacityTypeLabelKey] = inst.CapacityType
	if inst.ReservationID != "" {
		out.Labels[v1.LabelCapacityReservationID] = inst.ReservationID
		out.Labels[v1.LabelCapacityReservationType] = string(inst.ReservationType)
		out.Labels[v1.LabelCapacityReservationInterruptible] = strconv.FormatBool(inst.Interruptible)
	}
	if inst.PlacementGroupID != "" {
		out.Labels[v1.LabelPlacementGroupID] = inst.PlacementGroupID
	}
	// Tenancy is the instance's, not the type's: every type takes either.
	out.Labels[v1.LabelInstanceTenancy] = string(ec2types.TenancyDefault)
	if inst.Tenancy != "" {
		out.Labels[v1.LabelInstanceTenancy] = inst.Tenancy
	}
	if inst.PartitionNumber != 0 {
		out.Labels[v1.LabelPlacementGroupPartition] = strconv.Itoa(int(inst.PartitionNumber))
	}
	if pool := inst.Tags[v1.NodePoolLabelKey]; pool != "" {
		out.Labels[v1.NodePoolLabelKey] = pool
	}
	ncName := inst.Tags[v1.LabelNodeClass]
	if nc != nil {
		ncName = nc.Name
		for _, s := range nc.Status.Subnets {
			if s.Zone == inst.Zone && s.ZoneID != "" {
				out.Labels[v1.LabelTopologyZoneID] = s.ZoneID
			}
		}
	}
	if ncName != "" {
		out.Labels[v1.LabelNodeClass] = ncName
	}
	// Stopping and stopped instances are live: nothing else will remove
	// them, so garbage collection must see them.
	if inst.State == ec2types.InstanceStateNameShuttingDown || inst.State == ec2types.InstanceStateNameTerminated {
		now := metav1.Now()
		out.DeletionTimestamp = &now
	}
	out.Status.ProviderID = inst.ProviderID()
	out.Status.ImageID = inst.ImageID
	return out
}
