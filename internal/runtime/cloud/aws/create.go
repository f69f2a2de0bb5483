package aws

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sort"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/requirements"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/instance"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/instancetype"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/launchtemplate"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/placementgroup"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/userdata"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
)

// ClaimRequirements parses a NodeClaim's requirements with their minValues.
func ClaimRequirements(claim *v1.NodeClaim) (requirements.Requirements, error) {
	reqs, err := claim.Spec.Requirements.Parse()
	if err != nil {
		return nil, fmt.Errorf("NodeClaim %s requirements: %w", claim.Name, err)
	}
	return reqs, nil
}

// Create launches one instance for the claim: the cheapest compatible
// offerings of the preferred capacity type, one fleet over them.
func (p *Provider) Create(ctx context.Context, claim *v1.NodeClaim) (*v1.NodeClaim, error) {
	nc, err := p.resolveNodeClass(ctx, claim.Spec.NodeClassRef)
	if err != nil {
		return nil, err
	}
	if err := readiness(nc); err != nil {
		return nil, err
	}
	reqs, err := ClaimRequirements(claim)
	if err != nil {
		return nil, &cloud.CreateError{Reason: "InvalidRequirements", Err: err}
	}
	zoneNames, zoneIDs := zones(nc)
	its, err := p.poolInstanceTypes(ctx, nc, zoneNames, claim.Labels[v1.NodePoolLabelKey])
	if err != nil {
		return nil, err
	}
	subnets, err := p.subnets.ZonalSubnets(ctx, nc)
	if err != nil {
		return nil, err
	}
	usable := map[string]string{}
	for zone := range subnets {
		usable[zone] = zoneIDs[zone]
	}
	pg, err := p.placement(ctx, nc)
	if err != nil {
		return nil, err
	}
	in := launchRequest{claim: claim.Name, nodeClass: nc.Name, reqs: reqs, requests: claim.Spec.Resources.Requests, zones: usable, reservations: nc.Status.CapacityReservations}
	if pg != nil && pg.Strategy == placementgroup.StrategyCluster {
		zone, err := p.clusterZone(ctx, pg)
		if err != nil {
			return nil, err
		}
		in.cluster = &clusterPlacement{name: pg.Name, zone: zone}
	}
	choice, err := chooseLaunch(its, in)
	if err != nil {
		return nil, err
	}
	ct, cands, cr := choice.capacityType, choice.cands, choice.reservation
	reservationID := cr.ID
	if ct == v1.CapacityTypeOnDemand && reqs.Get(v1.CapacityTypeLabelKey).Has(v1.CapacityTypeSpot) && len(cands) < 5 {
		log.FromContext(ctx).Info("launching on-demand although spot is allowed, with few instance types to choose from; widen the NodePool's requirements for more flexibility",
			"nodeclaim", claim.Name, "instanceTypes", len(cands))
	}
	partition, err := partitionFor(reqs, pg)
	if err != nil {
		return nil, err
	}
	place := placementOpts{pg: pg, partition: partition, tenancy: tenancyFor(reqs)}
	if err := p.instanceProfiles.CheckLaunch(ctx, nc); err != nil {
		return nil, err
	}
	inst, images, err := p.launch(ctx, claim, nc, ct, cr, place, cands, subnets)
	if err != nil {
		if reservationID != "" && cloud.IsInsufficientCapacity(err) {
			p.reservations.MarkFull(reservationID)
		}
		return nil, err
	}
	if reservationID != "" {
		p.reservations.MarkLaunched(reservationID)
	}
	p.subnets.Consume(inst.SubnetID)
	var launched *scheduling.InstanceType
	for _, c := range cands {
		if c.it.Name == inst.Type {
			launched = c.it
		}
	}
	inst.ImageID = images[inst.Type]
	inst.Tenancy = place.tenancy
	if pg != nil {
		inst.PlacementGroupID = pg.ID
		if pg.Strategy == placementgroup.StrategyPartition {
			inst.PartitionNumber = p.launchedPartition(ctx, inst.ID, place.partition)
		}
	}
	return p.hydrate(claim, nc, inst, launched), nil
}

// placementOpts is where a launch is placed: the placement group, the
// partition of a partition group (0: EC2 picks) and the tenancy.
type placementOpts struct {
	pg        *placementgroup.PlacementGroup
	partition int32
	tenancy   string
}

// launchedPartition is the partition EC2 put an instance in: the one asked
// for, else read back from the instance (0 when it cannot be read now; the
// claim is then labelled when it is next listed).
func (p *Provider) launchedPartition(ctx context.Context, id string, asked int32) int32 {
	if asked != 0 {
		return asked
	}
	inst, err := p.instances.Get(ctx, id)
	if err != nil {
		log.FromContext(ctx).Error(err, "reading the partition of a new instance in a partition placement group", "instance", id)
		return 0
	}
	return inst.PartitionNumber
}

// launchGroup is the instance types that share a launch template.
type launchGroup struct {
	ami   awsv1.AMI
	pods  int64
	efa   int64 // EFA interfaces to declare
	cands []candidate
}

// launchGroups groups the candidates by launch template (AMI, max pods and
// EFA interfaces), in a stable order of their keys, and says which image
// each type launches with. Types with no AMI of the node class are left out.
func launchGroups(claim *v1.NodeClaim, nc *awsv1.EC2NodeClass, cands []candidate) (map[string]*launchGroup, []string, map[string]string) {
	groups := map[string]*launchGroup{}
	images := map[string]string{}
	for _, c := range cands {
		image, ok := awsv1.AMIForLabels(nc.Status.AMIs, c.it.Labels)
		if !ok {
			continue
		}
		images[c.it.Name] = image.ID
		pods := c.it.Capacity.Pods().Value()
		var efa int64
		if _, ok := claim.Spec.Resources.Requests[instancetype.ResourceEFA]; ok && len(nc.Spec.NetworkInterfaces) == 0 {
			// Pods asking for EFA get every EFA interface the type has.
			q := c.it.Capacity[instancetype.ResourceEFA]
			efa = q.Value()
		}
		key := fmt.Sprintf("%s/%d/%d", image.ID, pods, efa)
		if groups[key] == nil {
			groups[key] = &launchGroup{ami: image, pods: pods, efa: efa}
		}
		groups[key].cands = append(groups[key].cands, c)
	}
	keys := make([]string, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return groups, keys, images
}

// launch makes one fleet request over a launch template per group of the
// candidates and returns the instance, with the image each type would use.
func (p *Provider) launch(ctx context.Context, claim *v1.NodeClaim, nc *awsv1.EC2NodeClass, ct string, cr awsv1.CapacityReservation, place placementOpts, cands []candidate, subnets map[string]ec2types.Subnet) (*instance.Instance, map[string]string, error) {
	groups, keys, images := launchGroups(claim, nc, cands)
	tags := p.tags(nc, claim)
	req := instance.Request{
		CapacityType: ct, ReservationID: cr.ID, ReservationType: cr.ReservationType, Interruptible: cr.Interruptible,
		Tags: tags, Context: nc.Spec.Context,
	}
	if place.pg != nil {
		req.PlacementGroupID = place.pg.ID
	}
	// Every template Ensure returns is held until the fleet returns, so
	// garbage collection never deletes one a launch is using.
	var held []string
	defer func() {
		for _, name := range held {
			p.launchTemplates.Release(name)
		}
	}()
	var templates []string
	for _, k := range keys {
		g := groups[k]
		cfg, err := p.templateConfig(ctx, claim, nc, g, cr, place)
		if err != nil {
			return nil, nil, &cloud.CreateError{Reason: "LaunchTemplateConfigurationFailed", Err: err}
		}
		name, err := p.launchTemplates.Ensure(ctx, cfg)
		if err != nil {
			return nil, nil, &cloud.CreateError{Reason: "LaunchTemplateCreationFailed", Err: err}
		}
		held = append(held, name)
		templates = append(templates, name)
		to := instance.TemplateOverrides{TemplateName: name}
		for _, c := range g.cands {
			for _, o := range c.offerings {
				s, ok := subnets[o.Zone]
				if !ok {
					continue
				}
				to.Overrides = append(to.Overrides, instance.Override{InstanceType: c.it.Name, SubnetID: aws.ToString(s.SubnetId), Zone: o.Zone, Price: o.Price})
				req.Prioritized = req.Prioritized || o.PriceOverlaid
			}
		}
		if len(to.Overrides) > 0 {
			req.Templates = append(req.Templates, to)
		}
	}
	if len(req.Templates) == 0 {
		return nil, nil, &cloud.InsufficientCapacityError{Err: fmt.Errorf("no instance type for NodeClaim %s has an AMI and a subnet", claim.Name)}
	}
	inst, err := p.instances.Launch(ctx, req)
	if errors.Is(err, instance.ErrLaunchTemplateNotFound) {
		// Someone deleted a template we remembered: forget and recreate once.
		for _, name := range templates {
			p.launchTemplates.Invalidate(name)
		}
		for i, k := range keys {
			cfg, cfgErr := p.templateConfig(ctx, claim, nc, groups[k], cr, place)
			if cfgErr == nil {
				var name string
				if name, cfgErr = p.launchTemplates.Ensure(ctx, cfg); cfgErr == nil {
					held = append(held, name)
				}
			}
			if cfgErr != nil {
				return nil, nil, &cloud.CreateError{Reason: "LaunchTemplateCreationFailed", Err: fmt.Errorf("recreating launch template %s: %w", templates[i], cfgErr)}
			}
		}
		inst, err = p.instances.Launch(ctx, req)
	}
	if err != nil {
		if errors.Is(err, instance.ErrLaunchTemplateNotFound) {
			return nil, nil, &cloud.CreateError{Reason: "LaunchTemplateNotFound", Err: err}
		}
		return nil, nil, err
	}
	return inst, images, nil
}

// tags are put on the instance, its volumes and interfaces and the fleet.
func (p *Provider) tags(nc *awsv1.EC2NodeClass, claim *v1.NodeClaim) map[string]string {
	out := maps.Clone(nc.Spec.Tags)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, p.ownershipTags(nc, claim.Labels[v1.NodePoolLabelKey]))
	out[instance.NodeClaimTag] = claim.Name
	return out
}

// ownershipTags mark resources as the cluster's, for the controller
// policy's tag conditions.
func (p *Provider) ownershipTags(nc *awsv1.EC2NodeClass, nodePool string) map[string]string {
	return map[string]string{
		"kubernetes.io/cluster/" + p.settings.ClusterName: "owned",
		"eks:eks-cluster-name":                            p.settings.ClusterName,
		v1.NodePoolLabelKey:                               nodePool,
		v1.LabelNodeClass:                                 nc.Name,
	}
}

// templateConfig is the launch configuration of a group of types, into
// the capacity reservation cr when set, placed as place says.
func (p *Provider) templateConfig(ctx context.Context, claim *v1.NodeClaim, nc *awsv1.EC2NodeClass, g *launchGroup, cr awsv1.CapacityReservation, place placementOpts) (launchtemplate.Config, error) {
	family := nc.AMIFamily()
	kubelet := nc.Spec.Kubelet.DeepCopy()
	if kubelet == nil {
		kubelet = awsv1.KubeletConfiguration{}
	}
	if _, ok := kubelet["maxPods"]; !ok {
		// The pods the capacity model gave the group's types.
		kubelet["maxPods"] = apiextensionsv1.JSON{Raw: []byte(strconv.FormatInt(g.pods, 10))}
	}
	taints := append(append(append([]corev1.Taint{}, claim.Spec.Taints...), claim.Spec.StartupTaints...), v1.UnregisteredNoExecuteTaint)
	raid0 := nc.Spec.InstanceStorePolicy != nil && *nc.Spec.InstanceStorePolicy == awsv1.InstanceStorePolicyRAID0
	opts, err := p.BootstrapOptions(ctx, nc, kubelet)
	if err != nil {
		return launchtemplate.Config{}, fmt.Errorf("EC2NodeClass %s user data: %w", nc.Name, err)
	}
	opts.Labels, opts.Taints, opts.RAID0 = nodeLabels(claim), dedupTaints(taints), raid0
	ud, err := userdata.Generate(family, opts)
	if err != nil {
		return launchtemplate.Config{}, fmt.Errorf("EC2NodeClass %s user data: %w", nc.Name, err)
	}
	bdms := launchtemplate.BlockDeviceMappings(nc)
	groups := make([]string, 0, len(nc.Status.SecurityGroups))
	for _, sg := range nc.Status.SecurityGroups {
		groups = append(groups, sg.ID)
	}
	tags := maps.Clone(nc.Spec.Tags)
	if tags == nil {
		tags = map[string]string{}
	}
	maps.Copy(tags, p.ownershipTags(nc, claim.Labels[v1.NodePoolLabelKey]))
	cfg := launchtemplate.Config{
		NodeClass: nc.Name, AMIID: g.ami.ID, UserData: ud, SecurityGroupIDs: groups, BlockDeviceMappings: bdms,
		MetadataOptions: nc.Spec.MetadataOptions, InstanceProfile: nc.Status.InstanceProfile, Tags: tags,
		DetailedMonitoring: nc.Spec.DetailedMonitoring != nil && *nc.Spec.DetailedMonitoring,
		AssociatePublicIP:  nc.Spec.AssociatePublicIPAddress, IPPrefixCount: nc.Spec.IPPrefixCount,
		NetworkInterfaces: nc.Spec.NetworkInterfaces, EFACount: int(g.efa),
		CapacityReservationID: cr.ID, ReservationsSelected: len(nc.Spec.CapacityReservationSelectorTerms) > 0,
		CapacityReservationType: cr.ReservationType, Interruptible: cr.Interruptible,
		ConnectionTracking: nc.Spec.ConnectionTracking, EnclaveOptions: nc.Spec.EnclaveOptions, CPUOptions: nc.Spec.CPUOptions,
		IPv6: opts.IPv6,
	}
	if place.pg != nil {
		cfg.PlacementGroupID, cfg.PlacementPartition = place.pg.ID, place.partition
	}
	if place.tenancy != string(ec2types.TenancyDefault) {
		cfg.Tenancy = place.tenancy
	}
	return cfg, nil
}

// nodeLabels are the labels the kubelet registers the node with: the
// claim's labels and single-valued requirements, limited to what kubelet
// may set on itself (the runtime adds the rest after registration).
func nodeLabels(claim *v1.NodeClaim) map[string]string {
	out := map[string]string{}
	for _, r := range claim.Spec.Requirements {
		if r.Operator == corev1.NodeSelectorOpIn && len(r.Values) == 1 {
			out[r.Key] = r.Values[0]
		}
	}
	maps.Copy(out, claim.Labels)
	for k := range out {
		if !kubeletMaySet(k) {
			delete(out, k)
		}
	}
	return out
}

// kubeletMaySet mirrors the NodeRestriction rule: kubelets may not set
// labels in the kubernetes.io and k8s.io domains except a known few.
func kubeletMaySet(key string) bool {
	domain, _, hasDomain := strings.Cut(key, "/")
	if !hasDomain {
		return true
	}
	switch key {
	case corev1.LabelHostname, corev1.LabelArchStable, corev1.LabelOSStable, corev1.LabelInstanceTypeStable,
		corev1.LabelTopologyRegion, corev1.LabelTopologyZone, corev1.LabelWindowsBuild,
		corev1.LabelFailureDomainBetaRegion, corev1.LabelFailureDomainBetaZone, corev1.LabelInstanceType:
		return true
	}
	restricted := func(d string) bool { return d == "kubernetes.io" || strings.HasSuffix(d, ".kubernetes.io") }
	if domain == "k8s.io" || strings.HasSuffix(domain, ".k8s.io") || restricted(domain) {
		return strings.HasSuffix(domain, "kubelet.kubernetes.io") || strings.HasSuffix(domain, "node.kubernetes.io") ||
			domain == "node-restriction.kubernetes.io"
	}
	return true
}

func dedupTaints(in []corev1.Taint) []corev1.Taint {
	seen := map[string]bool{}
	var out []corev1.Taint
	for _, t := range in {
		k := t.Key + "=" + t.Value + ":" + string(t.Effect)
		if !seen[k] {
			seen[k] = true
			out = append(out, t)
		}
	}
	return out
}

// hydrate returns the claim as launched: the claim the instance is, with
// the node class hash and the instance profile it runs with.
func (p *Provider) hydrate(claim *v1.NodeClaim, nc *awsv1.EC2NodeClass, inst *instance.Instance, it *scheduling.InstanceType) *v1.NodeClaim {
	out := instanceToClaim(claim, inst, nc, it)
	if out.Annotations == nil {
		out.Annotations = map[string]string{}
	}
	maps.Copy(out.Annotations, p.HashAnnotations(nc))
	// The profile the instance runs with, so its garbage collection can
	// tell it is in use.
	if nc.Status.InstanceProfile != "" {
		out.Annotations[v1.InstanceProfileNameAnnotationKey] = nc.Status.InstanceProfile
	}
	return out
}
