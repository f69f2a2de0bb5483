package aws

import (
	"context"
	"fmt"
	"slices"

	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/instance"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/instanceprofile"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/instancetype"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/ownership"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/disruption/drift"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
)

// Delete terminates the claim's instance; once it is gone (or was never
// launched) it returns a NodeClaimNotFoundError.
func (p *Provider) Delete(ctx context.Context, claim *v1.NodeClaim) error {
	if claim.Status.ProviderID == "" {
		return &cloud.NodeClaimNotFoundError{Err: fmt.Errorf("NodeClaim %s has no provider ID; nothing was launched", claim.Name)}
	}
	id, err := instance.ParseProviderID(claim.Status.ProviderID)
	if err != nil {
		return &cloud.NodeClaimNotFoundError{Err: err}
	}
	// The node's and the claim's finalizers delete at the same time: they
	// share one describe and one TerminateInstances.
	_, err, _ = p.deleting.Do(id, func() (any, error) { return nil, p.terminate(ctx, claim, id) })
	return err
}

// terminate terminates the instance id of claim unless it is not this
// cluster's or already shutting down.
func (p *Provider) terminate(ctx context.Context, claim *v1.NodeClaim, id string) error {
	inst, err := p.instances.Get(ctx, id)
	if err != nil {
		return err
	}
	if err := p.instances.Owned(inst); err != nil {
		// Not this cluster's: for this cluster it does not exist.
		log.FromContext(ctx).Info("not terminating an instance this cluster does not own", "provider-id", claim.Status.ProviderID, "reason", err.Error())
		if ownership.Marked(inst.Tags, p.settings.ClusterName, v1.NodePoolLabelKey) {
			err = &cloud.UnmanagedInstanceError{InstanceID: id, Err: err}
		}
		return &cloud.NodeClaimNotFoundError{Err: err}
	}
	if inst.State == ec2types.InstanceStateNameShuttingDown {
		return nil // already on its way; EC2 needs no second call
	}
	return p.instances.Terminate(ctx, id)
}

// TagRegistered gives the instance of a registered claim the tags
// Karpenter adds after registration: Name (the node's name),
// karpenter.sh/nodeclaim and eks:eks-cluster-name, each only where the
// instance has no such key yet, so a Name from the EC2NodeClass's tags stays
// and the tags of the launch are not written again. It writes only to an
// instance Owned accepts; one that is gone or not this cluster's is a
// NodeClaimNotFoundError. It returns the tags it wrote (none when nothing
// was missing).
func (p *Provider) TagRegistered(ctx context.Context, claim *v1.NodeClaim) (map[string]string, error) {
	id, err := instance.ParseProviderID(claim.Status.ProviderID)
	if err != nil {
		return nil, &cloud.NodeClaimNotFoundError{Err: err}
	}
	inst, err := p.instances.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := p.instances.Owned(inst); err != nil {
		// Not this cluster's: for this cluster it does not exist.
		log.FromContext(ctx).Info("not tagging an instance this cluster does not own", "provider-id", claim.Status.ProviderID, "reason", err.Error())
		return nil, &cloud.NodeClaimNotFoundError{Err: err}
	}
	missing := map[string]string{}
	for k, v := range map[string]string{
		instance.NameTag:            claim.Status.NodeName,
		instance.NodeClaimTag:       claim.Name,
		ownership.EKSClusterNameTag: p.settings.ClusterName,
	} {
		if _, ok := inst.Tags[k]; !ok {
			missing[k] = v
		}
	}
	if len(missing) == 0 {
		return nil, nil
	}
	if err := p.tagPace.Wait(ctx); err != nil {
		return nil, err
	}
	return missing, p.instances.Tag(ctx, id, missing)
}

// TagsPerSecond paces TagRegistered's writes, as Karpenter does: CreateTags
// draws on the same EC2 request budget as CreateFleet, and a scale-out's
// registrations must not starve the next launches.
const TagsPerSecond = 1

// Get returns the claim reconstructed from the instance with providerID.
func (p *Provider) Get(ctx context.Context, providerID string) (*v1.NodeClaim, error) {
	id, err := instance.ParseProviderID(providerID)
	if err != nil {
		return nil, &cloud.NodeClaimNotFoundError{Err: err}
	}
	inst, err := p.instances.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	return p.toClaim(ctx, inst), nil
}

// List returns a claim for every live instance the runtime launched in the cluster.
func (p *Provider) List(ctx context.Context) ([]*v1.NodeClaim, error) {
	insts, err := p.instances.List(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*v1.NodeClaim, 0, len(insts))
	for _, inst := range insts {
		out = append(out, p.toClaim(ctx, inst))
	}
	return out, nil
}

// toClaim reconstructs a claim from an instance: name and node class from
// its tags, the rest as instanceToClaim says, with capacity when its node
// class still exists.
func (p *Provider) toClaim(ctx context.Context, inst *instance.Instance) *v1.NodeClaim {
	base := &v1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{
			Name:              inst.Tags[instance.NodeClaimTag],
			Annotations:       map[string]string{},
			CreationTimestamp: metav1.NewTime(inst.LaunchTime),
		},
	}
	var nc *awsv1.EC2NodeClass
	if ncName := inst.Tags[v1.LabelNodeClass]; ncName != "" {
		base.Spec.NodeClassRef = &v1.NodeClassReference{Group: v1.AWSGroup, Kind: awsv1.EC2NodeClassKind, Name: ncName}
		got := &awsv1.EC2NodeClass{}
		if err := p.kube.Get(ctx, client.ObjectKey{Name: ncName}, got); err == nil {
			nc = got
		}
	}
	return instanceToClaim(base, inst, nc, p.instanceType(inst.Type, nc))
}

// instanceType is what the catalog says of a launched type for nodes of
// nc: its labels, and its resources when nc is known. Nil when the type is
// not in the catalog.
func (p *Provider) instanceType(name string, nc *awsv1.EC2NodeClass) *scheduling.InstanceType {
	info, ok := p.instanceTypes.Info(name)
	if !ok {
		return nil
	}
	family := awsv1.AMIFamilyAL2023
	if nc != nil {
		family = nc.AMIFamily()
	}
	it := &scheduling.InstanceType{Name: name, Labels: instancetype.LabelsFor(info, p.region, family)}
	if nc != nil {
		if res, err := instancetype.Resources(info, nc, p.settings.VMMemoryOverheadPercent, p.settings.ReservedENIs); err == nil {
			it.Capacity, it.Allocatable = res.Capacity, res.Allocatable
		}
	}
	return it
}

// GetInstanceTypes returns every type the pool's node class can launch,
// with unavailable offerings marked and the NodeOverlays applied.
func (p *Provider) GetInstanceTypes(ctx context.Context, pool *v1.NodePool) ([]*scheduling.InstanceType, error) {
	nc, err := p.nodeClass(ctx, pool.Spec.Template.Spec.NodeClassRef)
	if err != nil {
		return nil, err
	}
	names, _ := zones(nc)
	return p.poolInstanceTypes(ctx, nc, names, pool.Name)
}

// BaseInstanceTypes are GetInstanceTypes before any NodeOverlay: what the
// overlays are evaluated against.
func (p *Provider) BaseInstanceTypes(ctx context.Context, pool *v1.NodePool) ([]*scheduling.InstanceType, error) {
	nc, err := p.nodeClass(ctx, pool.Spec.Template.Spec.NodeClassRef)
	if err != nil {
		return nil, err
	}
	names, _ := zones(nc)
	return p.instanceTypes.List(ctx, nc, names)
}

// poolInstanceTypes is the one place a pool's instance types get their
// NodeOverlays: listing them for the controllers and launching. A claim of
// no pool ("" here) gets none, as in Karpenter.
func (p *Provider) poolInstanceTypes(ctx context.Context, nc *awsv1.EC2NodeClass, zones []string, pool string) ([]*scheduling.InstanceType, error) {
	its, err := p.instanceTypes.List(ctx, nc, zones)
	if err != nil || p.overlay == nil || pool == "" {
		return its, err
	}
	return p.overlay.Apply(pool, its)
}

// Drift reasons.
const (
	DriftAMI           cloud.DriftReason = drift.AMIDrift
	DriftSubnet        cloud.DriftReason = "SubnetDrift"
	DriftSecurityGroup cloud.DriftReason = "SecurityGroupDrift"
	DriftNodeClass     cloud.DriftReason = drift.NodeClassDrift
	// DriftCapacityReservation: the instance runs in a reservation the
	// node class no longer selects.
	DriftCapacityReservation cloud.DriftReason = "CapacityReservationDrift"
	// DriftPlacementGroup: the claim's placement group is not the one the
	// node class resolves to now.
	DriftPlacementGroup cloud.DriftReason = "PlacementGroupDrift"
)

// IsDrifted compares the claim's instance with its node class as resolved now.
func (p *Provider) IsDrifted(ctx context.Context, claim *v1.NodeClaim) (cloud.DriftReason, error) {
	nc, err := p.nodeClass(ctx, claim.Spec.NodeClassRef)
	if err != nil {
		if cloud.IsNodeClassNotReady(err) {
			return "", nil // drift is judged against a resolved node class only
		}
		return "", err
	}
	if reason := staticDrift(p.HashAnnotations(nc), claim); reason != "" {
		return reason, nil
	}
	id, err := instance.ParseProviderID(claim.Status.ProviderID)
	if err != nil {
		return "", nil
	}
	inst, err := p.instances.Recent(ctx, id)
	if err != nil {
		if cloud.IsNodeClaimNotFound(err) {
			return "", nil
		}
		return "", err
	}
	if reason := dynamicDrift(nc, inst, p.labelsFor(nc, inst)); reason != "" {
		return reason, nil
	}
	if !p.settings.DisableReservedCapacity && inst.ReservationID != "" &&
		!slices.ContainsFunc(nc.Status.CapacityReservations, func(cr awsv1.CapacityReservation) bool { return cr.ID == inst.ReservationID }) {
		return DriftCapacityReservation, nil
	}
	return p.placementGroupDrift(ctx, nc, claim), nil
}

// placementGroupDrift compares the claim's placement group label with the
// group the node class resolves to now, as Karpenter does: a group added,
// removed, or replaced under the same name drifts the node. A failed
// lookup judges nothing.
func (p *Provider) placementGroupDrift(ctx context.Context, nc *awsv1.EC2NodeClass, claim *v1.NodeClaim) cloud.DriftReason {
	pg, err := p.placementGroups.Get(ctx, nc)
	if err != nil {
		return ""
	}
	want := ""
	if pg != nil {
		want = pg.ID
	}
	if claim.Labels[v1.LabelPlacementGroupID] != want {
		return DriftPlacementGroup
	}
	return ""
}

// labelsFor are the labels of the instance's type, which pick its AMI.
func (p *Provider) labelsFor(nc *awsv1.EC2NodeClass, inst *instance.Instance) map[string]string {
	if info, ok := p.instanceTypes.Info(inst.Type); ok {
		return instancetype.LabelsFor(info, p.region, nc.AMIFamily())
	}
	return map[string]string{corev1.LabelArchStable: inst.Architecture}
}

// staticDrift compares the node class hash stamped on the claim at launch
// with the node class's (want): see drift.NodeClassHash.
func staticDrift(want map[string]string, claim *v1.NodeClaim) cloud.DriftReason {
	return cloud.DriftReason(drift.NodeClassHash(want, claim))
}

// dynamicDrift compares the instance with the node class's resolved values.
func dynamicDrift(nc *awsv1.EC2NodeClass, inst *instance.Instance, labels map[string]string) cloud.DriftReason {
	if reason := drift.AMI(inst.ImageID, nc.Status.AMIs, labels); reason != "" {
		return cloud.DriftReason(reason)
	}
	if len(nc.Status.Subnets) > 0 && !slices.ContainsFunc(nc.Status.Subnets, func(s awsv1.Subnet) bool { return s.ID == inst.SubnetID }) {
		return DriftSubnet
	}
	if len(nc.Status.SecurityGroups) > 0 {
		want := make([]string, 0, len(nc.Status.SecurityGroups))
		for _, sg := range nc.Status.SecurityGroups {
			want = append(want, sg.ID)
		}
		slices.Sort(want)
		if !slices.Equal(slices.Compact(want), inst.SecurityGroupIDs) {
			return DriftSecurityGroup
		}
	}
	return ""
}

// InstanceProfilesInUse names the instance profiles the cluster's live
// instances (stopped ones included) run with.
func (p *Provider) InstanceProfilesInUse(ctx context.Context) (map[string]bool, error) {
	insts, err := p.instances.List(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, inst := range insts {
		if inst.InstanceProfileARN != "" {
			out[instanceprofile.NameFromARN(inst.InstanceProfileARN)] = true
		}
	}
	return out, nil
}
