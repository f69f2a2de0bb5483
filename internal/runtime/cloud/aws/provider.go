package aws

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	awspricing "github.com/aws/aws-sdk-go-v2/service/pricing"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	"golang.org/x/sync/singleflight"
	"k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/flowcontrol"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/ami"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/cache"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/capacityreservation"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/instance"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/instanceprofile"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/instancetype"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/launchtemplate"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/placementgroup"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/pricing"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/securitygroup"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/subnet"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/ttlcache"
)

// Provider is the EC2 implementation of cloud.Provider.
type Provider struct {
	kube     client.Client
	settings Settings
	region   string

	unavailable      *cache.UnavailableOfferings
	pricing          *pricing.Provider
	instanceTypes    *instancetype.Provider
	subnets          *subnet.Provider
	securityGroups   *securitygroup.Provider
	reservations     *capacityreservation.Provider
	placementGroups  *placementgroup.Provider
	amis             *ami.Provider
	instanceProfiles *instanceprofile.Provider
	launchTemplates  *launchtemplate.Provider
	instances        *instance.Provider
	ec2              *ec2.Client
	network          clusterNetwork
	validations      *ttlcache.TTL[string, validation]
	deleting         singleflight.Group // by instance ID
	// tagPace spaces the tag writes after registration (TagRegistered).
	tagPace flowcontrol.RateLimiter
	// overlay, when set (the NodeOverlay gate), adjusts every pool's
	// instance types (poolInstanceTypes).
	overlay cloud.InstanceTypeOverlay
}

var _ cloud.Provider = (*Provider)(nil)

// New builds the provider from an SDK config (load it with
// config.LoadDefaultConfig, which honours AWS_ENDPOINT_URL and the other
// standard variables), a client that can read EC2NodeClasses, and settings.
// Nothing is called until the first use; call Start to warm prices.
func New(cfg aws.Config, kube client.Client, settings Settings) (*Provider, error) {
	settings = settings.withDefaults()
	if err := settings.validate(); err != nil {
		return nil, fmt.Errorf("cloud provider settings: %w", err)
	}
	if cfg.Region == "" {
		return nil, fmt.Errorf("cloud provider: the AWS region is not set; set AWS_REGION")
	}
	cfg = tune(cfg)
	ec2Client := ec2.NewFromConfig(cfg)
	var pricingClient *awspricing.Client
	if !settings.IsolatedVPC {
		pricingClient = awspricing.NewFromConfig(cfg, func(o *awspricing.Options) { o.Region = pricing.Region(cfg.Region) })
	}
	version := settings.KubernetesVersionFunc
	if settings.KubernetesVersion != "" {
		version = func() (string, error) { return settings.KubernetesVersion, nil }
	}
	p := &Provider{
		kube: kube, settings: settings, region: cfg.Region, ec2: ec2Client,
		unavailable: cache.NewUnavailableOfferings(), validations: ttlcache.New[string, validation](ValidationTTL),
		tagPace: flowcontrol.NewTokenBucketRateLimiter(TagsPerSecond, 1),
		network: clusterNetwork{eks: eks.NewFromConfig(cfg), cluster: settings.ClusterName},
	}
	p.pricing = pricing.New(ec2Client, pricingClient, cfg.Region)
	p.reservations = capacityreservation.New(ec2Client, settings.CapacityReservationRefresh)
	var reservations instancetype.Reservations
	if !settings.DisableReservedCapacity {
		reservations = p.reservations
	}
	p.placementGroups = placementgroup.New(ec2Client, placementgroup.TTL)
	p.instanceTypes = instancetype.New(ec2Client, p.pricing, p.unavailable, instancetype.Options{
		Region: cfg.Region, VMMemoryOverheadPercent: settings.VMMemoryOverheadPercent,
		ReservedENIs: settings.ReservedENIs, Refresh: settings.InstanceTypeRefresh, Reservations: reservations,
		PlacementGroups: p.placementGroups,
	})
	p.subnets = subnet.New(ec2Client, settings.SubnetRefresh)
	p.securityGroups = securitygroup.New(ec2Client, settings.SecurityGroupRefresh)
	p.amis = ami.New(ec2Client, ssm.NewFromConfig(cfg), func(context.Context) (string, error) { return version() }, settings.AMIRefresh)
	p.instanceProfiles = instanceprofile.New(iam.NewFromConfig(cfg), settings.ClusterName, cfg.Region)
	p.launchTemplates = launchtemplate.New(ec2Client, settings.ClusterName)
	p.instances = instance.New(ec2Client, settings.ClusterName, p.unavailable, instance.BatchOptions{})
	return p, nil
}

// Name is "aws".
func (p *Provider) Name() string { return "aws" }

// SetOverlay installs the NodeOverlay adjustments; call it before the
// manager starts.
func (p *Provider) SetOverlay(o cloud.InstanceTypeOverlay) { p.overlay = o }

// NodeClasses is the one kind the provider serves, EC2NodeClass.
func (p *Provider) NodeClasses() []cloud.NodeClassKind {
	return []cloud.NodeClassKind{{
		Group: awsv1.SchemeGroupVersion.Group, Kind: awsv1.EC2NodeClassKind,
		New:             func() cloud.NodeClass { return &awsv1.EC2NodeClass{} },
		HashAnnotations: func(nc cloud.NodeClass) map[string]string { return p.HashAnnotations(nc.(*awsv1.EC2NodeClass)) },
		Release:         func(nc cloud.NodeClass) string { return nc.(*awsv1.EC2NodeClass).Release() },
	}}
}

// HashAnnotations are the static-drift hash annotations of nc, stamped on
// it and on the claims launched with it: the hash covers the cluster CA
// bundle the nodes' user data carries, as Karpenter's does.
func (p *Provider) HashAnnotations(nc *awsv1.EC2NodeClass) map[string]string {
	return nc.HashAnnotations(p.settings.ClusterCABundle)
}

// Region is the region the provider launches in.
func (p *Provider) Region() string { return p.region }

// Settings returns the provider's settings with defaults applied.
func (p *Provider) Settings() Settings { return p.settings }

// UnavailableOfferings is the cache launches feed; the interruption
// controller marks reclaimed spot pools in it too.
func (p *Provider) UnavailableOfferings() *cache.UnavailableOfferings { return p.unavailable }

// Pricing holds current prices; UpdateOnDemandPricing/UpdateSpotPricing
// refresh them (the runtime calls them at start and every 12h).
func (p *Provider) Pricing() *pricing.Provider { return p.pricing }

// InstanceTypes discovers instance types; Refresh re-reads them from EC2.
func (p *Provider) InstanceTypes() *instancetype.Provider { return p.instanceTypes }

// Subnets resolves subnet selector terms.
func (p *Provider) Subnets() *subnet.Provider { return p.subnets }

// SecurityGroups resolves security group selector terms.
func (p *Provider) SecurityGroups() *securitygroup.Provider { return p.securityGroups }

// CapacityReservations resolves capacity reservation selector terms and
// counts the instances left in each reservation.
func (p *Provider) CapacityReservations() *capacityreservation.Provider { return p.reservations }

// PlacementGroups resolves placement group selectors.
func (p *Provider) PlacementGroups() *placementgroup.Provider { return p.placementGroups }

// AMIs resolves AMI selector terms.
func (p *Provider) AMIs() *ami.Provider { return p.amis }

// InstanceProfiles manages the node classes' instance profiles.
func (p *Provider) InstanceProfiles() *instanceprofile.Provider { return p.instanceProfiles }

// IsolatedVPC reports ISOLATED_VPC: IAM, which has no VPC endpoint, is
// only called to create a role's instance profile, never to clean up.
func (p *Provider) IsolatedVPC() bool { return p.settings.IsolatedVPC }

// LaunchTemplates manages launch templates.
func (p *Provider) LaunchTemplates() *launchtemplate.Provider { return p.launchTemplates }

// Start loads prices (on-demand and EBS from the Pricing API, spot from EC2) and
// the instance type catalog; failures leave the static prices in place and
// are returned for logging.
func (p *Provider) Start(ctx context.Context) error {
	var errs []error
	if err := p.pricing.UpdateOnDemandPricing(ctx); err != nil {
		errs = append(errs, err)
	}
	if err := p.pricing.UpdateSpotPricing(ctx); err != nil {
		errs = append(errs, err)
	}
	if err := p.pricing.UpdateVolumePricing(ctx); err != nil {
		errs = append(errs, err)
	}
	if err := p.instanceTypes.Refresh(ctx); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return fmt.Errorf("warming the cloud provider: %v", errs)
	}
	return nil
}

// ReasonNodeClassReadinessUnknown is the Launched condition's reason while
// a claim waits for its node class to resolve.
const ReasonNodeClassReadinessUnknown = "NodeClassReadinessUnknown"

// nodeClass reads a claim's or pool's EC2NodeClass and checks it is Ready;
// any other state is a NodeClassNotReadyError (see readiness for a launch).
func (p *Provider) nodeClass(ctx context.Context, ref *v1.NodeClassReference) (*awsv1.EC2NodeClass, error) {
	nc, err := p.resolveNodeClass(ctx, ref)
	if err != nil {
		return nil, err
	}
	if err := readiness(nc); err != nil {
		if !cloud.IsNodeClassNotReady(err) {
			err = &cloud.NodeClassNotReadyError{Err: err}
		}
		return nil, err
	}
	return nc, nil
}

// resolveNodeClass reads the EC2NodeClass ref names, one that exists and
// is not being deleted.
func (p *Provider) resolveNodeClass(ctx context.Context, ref *v1.NodeClassReference) (*awsv1.EC2NodeClass, error) {
	if ref == nil || ref.Name == "" {
		return nil, &cloud.NodeClassNotReadyError{Err: fmt.Errorf("nodeClassRef is not set")}
	}
	if ref.Kind != "" && ref.Kind != awsv1.EC2NodeClassKind {
		return nil, &cloud.NodeClassNotReadyError{Err: fmt.Errorf("nodeClassRef kind %q is not supported; use %s", ref.Kind, awsv1.EC2NodeClassKind)}
	}
	nc := &awsv1.EC2NodeClass{}
	if err := p.kube.Get(ctx, client.ObjectKey{Name: ref.Name}, nc); err != nil {
		if errors.IsNotFound(err) {
			return nil, &cloud.NodeClassNotReadyError{Err: fmt.Errorf("EC2NodeClass %s does not exist", ref.Name)}
		}
		return nil, fmt.Errorf("getting EC2NodeClass %s: %w", ref.Name, err)
	}
	if !nc.DeletionTimestamp.IsZero() {
		return nil, &cloud.NodeClassNotReadyError{Err: fmt.Errorf("EC2NodeClass %s is being deleted", nc.Name)}
	}
	return nc, nil
}

// readiness is what the node class's Ready condition means for a launch,
// as in Karpenter: True launches; False is a NodeClassNotReadyError (the
// claim is deleted); Unknown, or no condition yet (the node class was just
// created and is still resolving), is a CreateError the launch retries,
// keeping the claim.
func readiness(nc *awsv1.EC2NodeClass) error {
	ready := meta.FindStatusCondition(nc.Status.Conditions, v1.ConditionTypeReady)
	switch {
	case ready == nil:
		return &cloud.CreateError{Reason: ReasonNodeClassReadinessUnknown, Err: fmt.Errorf("EC2NodeClass %s is in Ready=Unknown: not resolved yet", nc.Name)}
	case ready.Status == metav1.ConditionTrue:
		return nil
	case ready.Status == metav1.ConditionFalse:
		return &cloud.NodeClassNotReadyError{Err: fmt.Errorf("EC2NodeClass %s: %s", nc.Name, ready.Message)}
	}
	return &cloud.CreateError{Reason: ReasonNodeClassReadinessUnknown, Err: fmt.Errorf("EC2NodeClass %s is in Ready=Unknown: %s", nc.Name, ready.Message)}
}

// zones are the zones of the node class's resolved subnets, with their IDs.
func zones(nc *awsv1.EC2NodeClass) (names []string, ids map[string]string) {
	return instancetype.Zones(nc)
}
