// Package instance launches instances with CreateFleet (instant, one
// instance over many type × zonal-subnet overrides), feeds capacity errors
// into the unavailable-offerings cache, and finds, lists and terminates the
// cluster's instances.
package instance

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"golang.org/x/sync/singleflight"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/awserr"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/cache"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/ownership"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/selector"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/ttlcache"
)

// Instance is what the runtime needs to know about an EC2 instance.
type Instance struct {
	ID               string
	Type             string
	Zone             string
	CapacityType     string
	ImageID          string
	SubnetID         string
	SecurityGroupIDs []string
	State            ec2types.InstanceStateName
	Architecture     string
	LaunchTime       time.Time
	Tags             map[string]string
	// InstanceProfileARN is the instance profile the instance runs with.
	InstanceProfileARN string
	// ReservationID is the capacity reservation the instance runs in
	// (CapacityType reserved), ReservationType its kind and Interruptible
	// whether its owner may reclaim it.
	ReservationID   string
	ReservationType awsv1.CapacityReservationType
	Interruptible   bool
	// PlacementGroupID is the placement group the instance runs in, and
	// PartitionNumber its partition in a partition group (0: none).
	PlacementGroupID string
	PartitionNumber  int32
	// Tenancy is the instance's tenancy: default or dedicated.
	Tenancy string
}

// ProviderID is the Kubernetes provider ID of the instance.
func (i *Instance) ProviderID() string { return fmt.Sprintf("aws:///%s/%s", i.Zone, i.ID) }

// ParseProviderID returns the instance ID of an aws:///<zone>/<id> provider ID.
func ParseProviderID(providerID string) (string, error) {
	rest, ok := strings.CutPrefix(providerID, "aws:///")
	if !ok {
		return "", fmt.Errorf("provider ID %q is not of the form aws:///<zone>/<instance-id>", providerID)
	}
	_, id, ok := strings.Cut(rest, "/")
	if !ok || !strings.HasPrefix(id, "i-") {
		return "", fmt.Errorf("provider ID %q is not of the form aws:///<zone>/<instance-id>", providerID)
	}
	return id, nil
}

// unfulfillable are the fleet error codes that mean a pool cannot launch now.
var unfulfillable = map[string]bool{
	"InsufficientInstanceCapacity":      true,
	"MaxSpotInstanceCountExceeded":      true,
	"VcpuLimitExceeded":                 true,
	"UnfulfillableCapacity":             true,
	"Unsupported":                       true,
	"InsufficientFreeAddressesInSubnet": true,
	"MaxFleetCountExceeded":             true,
	"ReservationCapacityExceeded":       true,
}

// IsUnfulfillableCode reports whether a fleet error code marks the pool unavailable.
func IsUnfulfillableCode(code string) bool { return unfulfillable[code] }

// liveStates are the states of instances that exist for the runtime.
var liveStates = []string{"pending", "running", "stopping", "stopped", "shutting-down"}

// Provider talks to EC2 about instances.
type Provider struct {
	ec2         *ec2.Client
	cluster     string
	unavailable *cache.UnavailableOfferings
	batcher     *batcher
	describer   *idBatcher[*Instance]
	terminator  *idBatcher[struct{}]
	// described holds recent descriptions for Recent.
	described *ttlcache.TTL[string, *Instance]
	// listing shares one List among concurrent Recent misses; listedAt is
	// when the last one finished.
	listing  singleflight.Group
	mu       sync.Mutex
	listedAt time.Time
}

// DescribedTTL is how old a description Recent may return. What drift
// compares (image, subnet) never changes on a running instance, and
// security groups rarely do; without it every pod event on a node would
// cost a DescribeInstances call.
const DescribedTTL = time.Minute

// relistAfter is how soon after a listing a Recent miss lists again rather
// than describing the one instance: a miss right after a listing is an
// instance the listing did not include (launched since, or terminated).
const relistAfter = 10 * time.Second

// New returns a provider for a cluster's instances; concurrent launches of
// the same configuration are batched into one fleet as BatchOptions say.
func New(client *ec2.Client, cluster string, unavailable *cache.UnavailableOfferings, batch BatchOptions) *Provider {
	p := &Provider{ec2: client, cluster: cluster, unavailable: unavailable, described: ttlcache.New[string, *Instance](DescribedTTL)}
	p.batcher = newBatcher(p, batch)
	p.describer = newIDBatcher(byIDBatch, func(ctx context.Context, ids []string) map[string]idResult[*Instance] {
		return splitCall(ctx, ids, p.describe)
	})
	p.terminator = newIDBatcher(byIDBatch, func(ctx context.Context, ids []string) map[string]idResult[struct{}] {
		return splitCall(ctx, ids, p.terminate)
	})
	return p
}

// Override is one pool a fleet may launch into.
type Override struct {
	InstanceType string
	SubnetID     string
	Zone         string
	Price        float64
}

// TemplateOverrides are a launch template and the pools it serves.
type TemplateOverrides struct {
	TemplateName string
	Overrides    []Override
}

// Request is one instant fleet for a single instance.
type Request struct {
	// CapacityType reserved launches on-demand into ReservationID, which
	// the request's launch templates target.
	CapacityType  string
	ReservationID string
	// ReservationType and Interruptible describe ReservationID: a capacity
	// block and an interruptible reservation each have their own fleet
	// target capacity type.
	ReservationType awsv1.CapacityReservationType
	Interruptible   bool
	Templates       []TemplateOverrides
	Tags            map[string]string
	Context         *string
	// PlacementGroupID is the placement group the templates launch into:
	// capacity errors mark pools unavailable for it alone.
	PlacementGroupID string
	// Prioritized ranks the pools by their Price (the fleet's priority)
	// instead of EC2's prices: a NodeOverlay changed some price, and EC2
	// does not know it.
	Prioritized bool
}

// ErrLaunchTemplateNotFound means a template the request named is gone.
var ErrLaunchTemplateNotFound = errors.New("launch template not found")

// fleetInput is the instant fleet request for n instances of req, and the
// zone of each subnet it offers.
func fleetInput(req Request, n int) (*ec2.CreateFleetInput, map[string]string) {
	zones := map[string]string{}
	var configs []ec2types.FleetLaunchTemplateConfigRequest
	for _, t := range req.Templates {
		cfg := ec2types.FleetLaunchTemplateConfigRequest{
			LaunchTemplateSpecification: &ec2types.FleetLaunchTemplateSpecificationRequest{
				LaunchTemplateName: aws.String(t.TemplateName), Version: aws.String("$Latest"),
			},
		}
		for _, o := range t.Overrides {
			zones[o.SubnetID] = o.Zone
			cfg.Overrides = append(cfg.Overrides, ec2types.FleetLaunchTemplateOverridesRequest{
				InstanceType: ec2types.InstanceType(o.InstanceType), SubnetId: aws.String(o.SubnetID),
				AvailabilityZone: aws.String(o.Zone), Priority: aws.Float64(o.Price),
			})
		}
		configs = append(configs, cfg)
	}
	target := targetCapacityType(req)
	in := &ec2.CreateFleetInput{
		Type:                  ec2types.FleetTypeInstant,
		Context:               req.Context,
		LaunchTemplateConfigs: configs,
		TargetCapacitySpecification: &ec2types.TargetCapacitySpecificationRequest{
			TotalTargetCapacity: aws.Int32(int32(n)), DefaultTargetCapacityType: target,
		},
		TagSpecifications: tagSpecs(req.Tags, req.CapacityType),
	}
	switch {
	case target == ec2types.DefaultTargetCapacityTypeCapacityBlock:
		// EC2 takes no allocation strategy for a capacity block.
	case target == ec2types.DefaultTargetCapacityTypeReservedCapacity:
		in.ReservedCapacityOptions = &ec2types.ReservedCapacityOptionsRequest{
			ReservationTypes: []ec2types.FleetReservationType{ec2types.FleetReservationTypeInterruptibleCapacityReservation},
		}
	case req.CapacityType == v1.CapacityTypeSpot && req.Prioritized:
		in.SpotOptions = &ec2types.SpotOptionsRequest{AllocationStrategy: ec2types.SpotAllocationStrategyCapacityOptimizedPrioritized}
	case req.CapacityType == v1.CapacityTypeSpot:
		in.SpotOptions = &ec2types.SpotOptionsRequest{AllocationStrategy: ec2types.SpotAllocationStrategyPriceCapacityOptimized}
	case req.Prioritized:
		in.OnDemandOptions = &ec2types.OnDemandOptionsRequest{AllocationStrategy: ec2types.FleetOnDemandAllocationStrategyPrioritized}
	default:
		in.OnDemandOptions = &ec2types.OnDemandOptionsRequest{AllocationStrategy: ec2types.FleetOnDemandAllocationStrategyLowestPrice}
	}
	return in, zones
}

// fleet creates an instant fleet for n instances and returns those
// launched. Capacity errors mark their pools unavailable; when nothing
// launched and every error was a capacity error, the error is an
// InsufficientCapacityError.
func (p *Provider) fleet(ctx context.Context, req Request, n int) ([]*Instance, error) {
	in, zones := fleetInput(req, n)
	out, err := p.ec2.CreateFleet(ctx, in)
	if err != nil {
		return nil, fmt.Errorf("creating fleet: %w", err)
	}
	templateMissing := false
	var other []string
	for _, e := range out.Errors {
		code := aws.ToString(e.ErrorCode)
		switch {
		case unfulfillable[code] && req.ReservationID != "":
			// The reservation is full, not the on-demand pool: the caller
			// records it against the reservation.
		case unfulfillable[code]:
			if o := e.LaunchTemplateAndOverrides; o != nil && o.Overrides != nil {
				zone := aws.ToString(o.Overrides.AvailabilityZone)
				if zone == "" {
					zone = zones[aws.ToString(o.Overrides.SubnetId)]
				}
				p.markUnavailable(req, e, zone)
			}
		case strings.HasPrefix(code, "InvalidLaunchTemplateName.NotFound") || strings.HasPrefix(code, "InvalidLaunchTemplateId.NotFound"):
			templateMissing = true
		default:
			other = append(other, fmt.Sprintf("%s: %s", code, aws.ToString(e.ErrorMessage)))
		}
	}
	var launched []*Instance
	for _, fi := range out.Instances {
		for _, id := range fi.InstanceIds {
			inst := &Instance{
				ID: id, Type: string(fi.InstanceType), CapacityType: req.CapacityType, ReservationID: req.ReservationID,
				ReservationType: req.ReservationType, Interruptible: req.Interruptible,
				State: ec2types.InstanceStateNamePending, LaunchTime: time.Now(), Tags: req.Tags,
			}
			if o := fi.LaunchTemplateAndOverrides; o != nil && o.Overrides != nil {
				inst.SubnetID = aws.ToString(o.Overrides.SubnetId)
				inst.Zone = aws.ToString(o.Overrides.AvailabilityZone)
				if inst.Zone == "" {
					inst.Zone = zones[inst.SubnetID]
				}
				inst.ImageID = aws.ToString(o.Overrides.ImageId)
			}
			launched = append(launched, inst)
		}
	}
	if len(launched) > 0 {
		return launched, nil
	}
	switch {
	case templateMissing:
		return nil, ErrLaunchTemplateNotFound
	case len(other) > 0:
		sort.Strings(other)
		return nil, &cloud.CreateError{Reason: "FleetError", Err: fmt.Errorf("creating fleet %s: %s", aws.ToString(out.FleetId), strings.Join(other, "; "))}
	}
	return nil, &cloud.InsufficientCapacityError{Err: fmt.Errorf("no %s capacity in any of the %d pools offered to fleet %s", req.CapacityType, countOverrides(req), aws.ToString(out.FleetId))}
}

// targetCapacityType is the fleet's default target capacity type: an
// on-demand capacity reservation is consumed by on-demand launches that
// target it, a capacity block by capacity-block ones, an interruptible
// reservation by reserved-capacity ones.
func targetCapacityType(req Request) ec2types.DefaultTargetCapacityType {
	if req.CapacityType != v1.CapacityTypeReserved {
		return ec2types.DefaultTargetCapacityType(req.CapacityType)
	}
	switch {
	case req.ReservationType == awsv1.CapacityReservationTypeCapacityBlock:
		return ec2types.DefaultTargetCapacityTypeCapacityBlock
	case req.Interruptible:
		return ec2types.DefaultTargetCapacityTypeReservedCapacity
	}
	return ec2types.DefaultTargetCapacityTypeOnDemand
}

// spreadLimit is how EC2's message for a spread placement group's
// seven-instances-per-zone limit starts.
const spreadLimit = "You've reached the limit of instances in this spread placement group"

// markUnavailable marks the pool a capacity error names: for every launch,
// or only for the placement group's launches. A spread group's limit is
// per zone, not per type, so it marks every type offered in the zone.
func (p *Provider) markUnavailable(req Request, e ec2types.CreateFleetError, zone string) {
	ct := string(e.Lifecycle)
	if req.PlacementGroupID == "" {
		p.unavailable.MarkUnavailable(string(e.LaunchTemplateAndOverrides.Overrides.InstanceType), zone, ct)
		return
	}
	if !strings.HasPrefix(aws.ToString(e.ErrorMessage), spreadLimit) {
		p.unavailable.MarkUnavailableIn(req.PlacementGroupID, string(e.LaunchTemplateAndOverrides.Overrides.InstanceType), zone, ct)
		return
	}
	for _, t := range req.Templates {
		for _, o := range t.Overrides {
			if o.Zone == zone {
				p.unavailable.MarkUnavailableIn(req.PlacementGroupID, o.InstanceType, zone, ct)
			}
		}
	}
}

func countOverrides(req Request) int {
	n := 0
	for _, t := range req.Templates {
		n += len(t.Overrides)
	}
	return n
}

func tagSpecs(tags map[string]string, capacityType string) []ec2types.TagSpecification {
	list := selector.Tags(tags)
	types := []ec2types.ResourceType{ec2types.ResourceTypeInstance, ec2types.ResourceTypeVolume, ec2types.ResourceTypeNetworkInterface, ec2types.ResourceTypeFleet}
	if capacityType == v1.CapacityTypeSpot {
		types = append(types, ec2types.ResourceTypeSpotInstancesRequest)
	}
	out := make([]ec2types.TagSpecification, 0, len(types))
	for _, rt := range types {
		out = append(out, ec2types.TagSpecification{ResourceType: rt, Tags: list})
	}
	return out
}

// Get returns a live instance, or a NodeClaimNotFoundError when it is
// absent or terminated. Gets in a short window share one DescribeInstances.
func (p *Provider) Get(ctx context.Context, id string) (*Instance, error) {
	inst, err := p.describer.do(ctx, id)
	switch {
	case err == nil:
		return inst, nil
	case awserr.IsCode(err, "InvalidInstanceID.NotFound", "InvalidInstanceID.Malformed"):
		return nil, &cloud.NodeClaimNotFoundError{Err: fmt.Errorf("instance %s does not exist", id)}
	case cloud.IsNodeClaimNotFound(err):
		return nil, err
	}
	return nil, fmt.Errorf("describing instance %s: %w", id, err)
}

// describe describes instances by ID: a terminated or absent one is a
// NodeClaimNotFoundError, and what is live is kept for Recent.
func (p *Provider) describe(ctx context.Context, ids []string) (map[string]idResult[*Instance], error) {
	out, err := p.ec2.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: ids})
	if err != nil {
		return nil, err
	}
	got := make(map[string]idResult[*Instance], len(ids))
	for _, r := range out.Reservations {
		for _, i := range r.Instances {
			inst := convert(i)
			if inst.State == ec2types.InstanceStateNameTerminated {
				p.described.Delete(inst.ID)
				got[inst.ID] = idResult[*Instance]{err: &cloud.NodeClaimNotFoundError{Err: fmt.Errorf("instance %s is terminated", inst.ID)}}
				continue
			}
			p.described.Set(inst.ID, inst)
			got[inst.ID] = idResult[*Instance]{val: inst}
		}
	}
	for _, id := range ids {
		if _, ok := got[id]; !ok {
			got[id] = idResult[*Instance]{err: &cloud.NodeClaimNotFoundError{Err: fmt.Errorf("instance %s does not exist", id)}}
		}
	}
	return got, nil
}

// Recent returns the instance as described at most DescribedTTL ago. On a
// miss it lists the cluster's live instances (one call per 1,000 of them)
// and keeps every description: drift checks visit each claim about once per
// TTL, so one listing serves them all where a call per instance would cost
// thousands a minute in a large cluster. An instance the listing does not
// include is described by ID. For callers that read what an instance was
// launched with, not its state.
func (p *Provider) Recent(ctx context.Context, id string) (*Instance, error) {
	if inst, ok := p.described.Get(id); ok {
		return inst, nil
	}
	p.mu.Lock()
	relist := time.Since(p.listedAt) >= relistAfter
	p.mu.Unlock()
	if relist {
		_, err, _ := p.listing.Do("", func() (any, error) {
			_, err := p.List(ctx)
			p.mu.Lock()
			p.listedAt = time.Now()
			p.mu.Unlock()
			return nil, err
		})
		if err != nil {
			return nil, err
		}
		if inst, ok := p.described.Get(id); ok {
			return inst, nil
		}
	}
	return p.Get(ctx, id)
}

// List returns the cluster's live instances launched for NodePools, and
// keeps their descriptions for Recent.
func (p *Provider) List(ctx context.Context) ([]*Instance, error) {
	pager := ec2.NewDescribeInstancesPaginator(p.ec2, &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{
		selector.Filter("tag:"+ownership.ClusterTag(p.cluster), "owned"),
		selector.Filter("tag:"+ownership.EKSClusterNameTag, p.cluster),
		{Name: aws.String("tag-key"), Values: []string{v1.NodePoolLabelKey}},
		{Name: aws.String("tag-key"), Values: []string{v1.LabelNodeClass}},
		{Name: aws.String("instance-state-name"), Values: liveStates},
	}})
	var out []*Instance
	for pager.HasMorePages() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("listing the cluster's instances: %w", err)
		}
		for _, r := range page.Reservations {
			for _, i := range r.Instances {
				inst := convert(i)
				p.described.Set(inst.ID, inst)
				out = append(out, inst)
			}
		}
	}
	return out, nil
}

// Owned returns nil when the instance carries this cluster's tags and the
// NodePool and EC2NodeClass tags every launch puts on it; only such an
// instance is ever terminated or tagged.
func (p *Provider) Owned(inst *Instance) error {
	if err := ownership.Check(inst.Tags, p.cluster, map[string]string{v1.NodePoolLabelKey: "", v1.LabelNodeClass: ""}); err != nil {
		return fmt.Errorf("instance %s: %w", inst.ID, err)
	}
	return nil
}

// Terminate starts terminating an instance; an absent instance is a
// NodeClaimNotFoundError. Callers pass an instance they launched or one
// Owned accepted. Terminations in a short window share one call.
func (p *Provider) Terminate(ctx context.Context, id string) error {
	p.described.Delete(id)
	_, err := p.terminator.do(ctx, id)
	switch {
	case err == nil:
		return nil
	case awserr.IsCode(err, "InvalidInstanceID.NotFound", "InvalidInstanceID.Malformed"):
		return &cloud.NodeClaimNotFoundError{Err: fmt.Errorf("instance %s does not exist", id)}
	}
	return fmt.Errorf("terminating instance %s: %w", id, err)
}

// terminate terminates instances by ID.
func (p *Provider) terminate(ctx context.Context, ids []string) (map[string]idResult[struct{}], error) {
	out, err := p.ec2.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: ids})
	if err != nil {
		return nil, err
	}
	got := make(map[string]idResult[struct{}], len(ids))
	for _, c := range out.TerminatingInstances {
		got[aws.ToString(c.InstanceId)] = idResult[struct{}]{}
	}
	return got, nil
}

// Tag adds tags to an instance.
func (p *Provider) Tag(ctx context.Context, id string, tags map[string]string) error {
	if _, err := p.ec2.CreateTags(ctx, &ec2.CreateTagsInput{Resources: []string{id}, Tags: selector.Tags(tags)}); err != nil {
		return fmt.Errorf("tagging instance %s: %w", id, err)
	}
	return nil
}

func convert(i ec2types.Instance) *Instance {
	out := &Instance{
		ID: aws.ToString(i.InstanceId), Type: string(i.InstanceType), ImageID: aws.ToString(i.ImageId),
		SubnetID: aws.ToString(i.SubnetId), Tags: selector.TagMap(i.Tags), LaunchTime: aws.ToTime(i.LaunchTime),
		CapacityType: v1.CapacityTypeOnDemand,
	}
	if i.Placement != nil {
		out.Zone = aws.ToString(i.Placement.AvailabilityZone)
		out.PlacementGroupID = aws.ToString(i.Placement.GroupId)
		out.PartitionNumber = aws.ToInt32(i.Placement.PartitionNumber)
		out.Tenancy = string(i.Placement.Tenancy)
	}
	if i.IamInstanceProfile != nil {
		out.InstanceProfileARN = aws.ToString(i.IamInstanceProfile.Arn)
	}
	if i.InstanceLifecycle == ec2types.InstanceLifecycleTypeSpot {
		out.CapacityType = v1.CapacityTypeSpot
	}
	if id := aws.ToString(i.CapacityReservationId); id != "" {
		out.CapacityType, out.ReservationID = v1.CapacityTypeReserved, id
		out.ReservationType = awsv1.CapacityReservationTypeDefault
		switch i.InstanceLifecycle {
		case ec2types.InstanceLifecycleTypeCapacityBlock:
			out.ReservationType = awsv1.CapacityReservationTypeCapacityBlock
		case ec2types.InstanceLifecycleTypeInterruptibleCapacityReservation:
			out.Interruptible = true
		}
	}
	if i.State != nil {
		out.State = i.State.Name
	}
	switch i.Architecture {
	case ec2types.ArchitectureValuesX8664:
		out.Architecture = v1.ArchitectureAmd64
	case ec2types.ArchitectureValuesArm64:
		out.Architecture = v1.ArchitectureArm64
	}
	for _, g := range i.SecurityGroups {
		out.SecurityGroupIDs = append(out.SecurityGroupIDs, aws.ToString(g.GroupId))
	}
	sort.Strings(out.SecurityGroupIDs)
	return out
}
