// Package launchtemplate keeps one EC2 launch template per distinct launch
// configuration (AMI, user data, security groups, block devices, metadata
// options, instance profile, tags, monitoring, public IP, IPv4 prefixes,
// network interfaces, connection tracking, enclave and CPU options) of each
// EC2NodeClass. Templates are named after a hash of the cluster, the node
// class and the configuration, so equal configurations share a template
// across restarts and no two owners share a name; they are created on
// first use, and deleted once unused (see Collect).
package launchtemplate

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"golang.org/x/sync/singleflight"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/structhash"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/awserr"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/ownership"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/selector"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/ttlcache"
)

// NamePrefix starts the name of every managed launch template.
const NamePrefix = "karpenter.k8s.aws/"

// CacheTTL is how long a template known to exist is used without asking
// EC2, and how long an unused template is kept (Karpenter's 1 minute).
const CacheTTL = time.Minute

// MaxPerNodeClass bounds the templates kept for one EC2NodeClass: past it
// the least recently used ones are deleted even within CacheTTL (never one
// a launch is using; a later launch recreates what it needs).
const MaxPerNodeClass = 50

// Config is one resolved launch configuration.
type Config struct {
	// NodeClass is the EC2NodeClass the template serves.
	NodeClass           string
	AMIID               string
	UserData            string // plain text; encoded when the template is written
	SecurityGroupIDs    []string
	BlockDeviceMappings []*awsv1.BlockDeviceMapping
	MetadataOptions     *awsv1.MetadataOptions
	InstanceProfile     string
	// Tags go on the template itself; the fleet request tags the instances.
	Tags               map[string]string
	DetailedMonitoring bool
	AssociatePublicIP  *bool
	// CapacityReservationID targets the launch at one reservation, and
	// only it. Otherwise, when ReservationsSelected, the launch stays out
	// of open reservations, which the node class's selected reservations
	// are counted for.
	CapacityReservationID string
	ReservationsSelected  bool
	// CapacityReservationType and Interruptible describe the targeted
	// reservation: EC2 takes launches into a capacity block or an
	// interruptible reservation only with their market type.
	CapacityReservationType awsv1.CapacityReservationType
	Interruptible           bool
	// IPPrefixCount is the IPv4 prefixes of the primary interface.
	IPPrefixCount *int32
	// NetworkInterfaces are the node class's; without them, EFACount > 0
	// declares that many EFA interfaces, one per network card, for types
	// launched for pods that request EFA.
	NetworkInterfaces []awsv1.NetworkInterface
	EFACount          int
	// ConnectionTracking, EnclaveOptions and CPUOptions are the node class's.
	ConnectionTracking *awsv1.ConnectionTracking
	EnclaveOptions     *awsv1.EnclaveOptions
	CPUOptions         *awsv1.CPUOptions
	// IPv6 launches into an IPv6 cluster: the primary interface gets an
	// IPv6 address and makes it the instance's primary one, which the VPC
	// CNI in IPv6 mode and the node's registration use.
	IPv6 bool
	// PlacementGroupID is the placement group instances launch into, and
	// PlacementPartition the partition of a partition group (0: EC2
	// spreads them over the partitions).
	PlacementGroupID   string
	PlacementPartition int32
	// Tenancy is the instances' tenancy when not default (dedicated).
	Tenancy string
}

// use is what the provider knows of a template's use.
type use struct {
	nodeClass string
	id        string
	last      time.Time // last handed to a launch (or first seen)
	launches  int       // launches holding it now
}

// Provider ensures templates exist and deletes unused ones.
type Provider struct {
	ec2     *ec2.Client
	cluster string
	known   *ttlcache.TTL[string, string] // name -> id
	now     func() time.Time
	// ensuring shares one describe-and-create among concurrent Ensures.
	ensuring singleflight.Group

	mu   sync.Mutex
	uses map[string]*use // by name
	// deleting holds the templates being deleted; Ensure waits for
	// the deletion to finish, then recreates the template.
	deleting map[string]*deletion
}

// deletion is a template being deleted.
type deletion struct {
	nodeClass string
	done      chan struct{}
}

// New returns a provider for a cluster.
func New(client *ec2.Client, cluster string) *Provider {
	return &Provider{ec2: client, cluster: cluster, known: ttlcache.New[string, string](CacheTTL), now: time.Now, uses: map[string]*use{}, deleting: map[string]*deletion{}}
}

// Name is the deterministic template name of a configuration: unique per
// cluster and node class, and 38 characters at most.
func (p *Provider) Name(cfg Config) string {
	return NamePrefix + structhash.Hash(struct {
		Cluster string
		Config  Config
	}{p.cluster, cfg})
}

// Tags are the configuration's template tags with the ownership tags the
// controller policy and Collect rely on.
func (p *Provider) tags(cfg Config) map[string]string {
	out := map[string]string{}
	for k, v := range cfg.Tags {
		out[k] = v
	}
	for k, v := range ownership.ClusterTags(p.cluster) {
		out[k] = v
	}
	out[v1.LabelNodeClass] = cfg.NodeClass
	out[CreatorTag] = CreatorValue
	return out
}

// CreatorTag marks the templates this runtime created. Karpenter tags its
// templates with the same cluster, NodePool and EC2NodeClass tags and the
// same name prefix, so only this tag tells a template the collector may
// delete. Templates created before the tag existed carry no proof of who
// made them and are left alone.
const (
	CreatorTag   = "joist.dev/launch-template-creator"
	CreatorValue = "joist"
)

// owned returns nil when a template carries this cluster's tags for a node
// class (any when nodeClass is empty) and a NodePool tag.
func (p *Provider) owned(tags map[string]string, nodeClass string) error {
	return ownership.Check(tags, p.cluster, map[string]string{v1.LabelNodeClass: nodeClass, v1.NodePoolLabelKey: ""})
}

// collectable returns nil when a template is owned and was created by this
// runtime: the only templates Collect and DeleteAll delete.
func (p *Provider) collectable(tags map[string]string, nodeClass string) error {
	return ownership.Check(tags, p.cluster, map[string]string{v1.LabelNodeClass: nodeClass, v1.NodePoolLabelKey: "", CreatorTag: CreatorValue})
}

// Ensure returns the name of the template for cfg, creating it if needed,
// and holds it for a launch until Release: a held template is not deleted.
// Concurrent Ensures of one template share one describe-and-create (claims
// launched together would otherwise each describe it and race to create it).
func (p *Provider) Ensure(ctx context.Context, cfg Config) (string, error) {
	name := p.Name(cfg)
	p.hold(name, cfg.NodeClass)
	if _, ok := p.known.Get(name); ok {
		return name, nil
	}
	if _, err, _ := p.ensuring.Do(name, func() (any, error) { return nil, p.ensure(ctx, name, cfg) }); err != nil {
		p.Release(name)
		return "", err
	}
	return name, nil
}

// ensure finds the template named name, or creates it.
func (p *Provider) ensure(ctx context.Context, name string, cfg Config) error {
	out, err := p.ec2.DescribeLaunchTemplates(ctx, &ec2.DescribeLaunchTemplatesInput{LaunchTemplateNames: []string{name}})
	if err == nil && len(out.LaunchTemplates) == 1 {
		lt := out.LaunchTemplates[0]
		if err := p.owned(selector.TagMap(lt.Tags), cfg.NodeClass); err != nil {
			return fmt.Errorf("launch template %s exists but is not used: %w", name, err)
		}
		p.remember(name, aws.ToString(lt.LaunchTemplateId))
		return nil
	}
	if err != nil && !awserr.IsCode(err, "InvalidLaunchTemplateName.NotFoundException", "InvalidLaunchTemplateId.NotFound") {
		return fmt.Errorf("describing launch template %s: %w", name, err)
	}
	// Keep the node class within its bound before adding to it, and let
	// deletions under way finish: until then EC2 still counts them.
	victims, pending := p.markOverCap(cfg.NodeClass)
	if _, err := p.deleteMarked(ctx, victims); err != nil {
		log.FromContext(ctx).Info("deleting least recently used launch templates", "error", err.Error())
	}
	for _, done := range pending {
		<-done
	}
	created, err := p.ec2.CreateLaunchTemplate(ctx, &ec2.CreateLaunchTemplateInput{
		LaunchTemplateName: aws.String(name),
		LaunchTemplateData: data(cfg),
		TagSpecifications: []ec2types.TagSpecification{{
			ResourceType: ec2types.ResourceTypeLaunchTemplate, Tags: selector.Tags(p.tags(cfg)),
		}},
	})
	if err != nil {
		if awserr.IsCode(err, "InvalidLaunchTemplateName.AlreadyExistsException") {
			return nil // created by another process; the next Ensure checks its tags
		}
		return fmt.Errorf("creating launch template %s: %w", name, err)
	}
	p.remember(name, aws.ToString(created.LaunchTemplate.LaunchTemplateId))
	return nil
}

// hold marks a template used now and held by one more launch, after any
// deletion of it in progress.
func (p *Provider) hold(name, nodeClass string) {
	p.mu.Lock()
	for p.deleting[name] != nil {
		d := p.deleting[name]
		p.mu.Unlock()
		<-d.done
		p.known.Delete(name)
		p.mu.Lock()
	}
	defer p.mu.Unlock()
	u := p.uses[name]
	if u == nil {
		u = &use{nodeClass: nodeClass}
		p.uses[name] = u
	}
	u.last = p.now()
	u.launches++
}

func (p *Provider) remember(name, id string) {
	p.known.Set(name, id)
	p.mu.Lock()
	if u := p.uses[name]; u != nil {
		u.id = id
	}
	p.mu.Unlock()
}

// Release ends a launch's hold on a template (once per Ensure that
// returned its name).
func (p *Provider) Release(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if u := p.uses[name]; u != nil && u.launches > 0 {
		u.launches--
		u.last = p.now()
	}
}

// Invalidate forgets that a template exists (e.g. after EC2 said it does not).
func (p *Provider) Invalidate(name string) { p.known.Delete(name) }

// Collect deletes the cluster's templates that no launch holds and none
// used for CacheTTL, then, per node class, the least recently used beyond
// MaxPerNodeClass (Ensure keeps to that bound too, before it creates one).
// A template first seen here (made before this process started) counts as
// used now. Only templates carrying this cluster's tags, a NodePool tag,
// an EC2NodeClass tag and CreatorTag are ever deleted. It returns how many it deleted.
func (p *Provider) Collect(ctx context.Context) (int, error) {
	templates, err := p.list(ctx, "")
	if err != nil {
		return 0, err
	}
	now := p.now()
	p.mu.Lock()
	present := map[string]bool{}
	classes := map[string]bool{}
	var expired []string
	for _, lt := range templates {
		name, tags := aws.ToString(lt.LaunchTemplateName), selector.TagMap(lt.Tags)
		if p.collectable(tags, "") != nil || p.deleting[name] != nil {
			continue
		}
		present[name] = true
		u := p.uses[name]
		if u == nil {
			u = &use{nodeClass: tags[v1.LabelNodeClass], last: now}
			p.uses[name] = u
		}
		u.id = aws.ToString(lt.LaunchTemplateId)
		classes[u.nodeClass] = true
		if u.launches == 0 && now.Sub(u.last) >= CacheTTL {
			expired = append(expired, name)
		}
	}
	// Forget templates that are gone and not held.
	for name, u := range p.uses {
		if !present[name] && u.launches == 0 && now.Sub(u.last) >= CacheTTL {
			delete(p.uses, name)
		}
	}
	doomed := p.markLocked(expired)
	p.mu.Unlock()
	for nodeClass := range classes {
		over, _ := p.markOverCap(nodeClass)
		doomed = append(doomed, over...)
	}
	return p.deleteMarked(ctx, doomed)
}

// victim is a template marked for deletion.
type victim struct{ name, id string }

// markOverCap marks the node class's least recently used templates that
// no launch holds, beyond MaxPerNodeClass of them (held ones and ones being
// created count), and returns them with the node class's deletions already
// under way.
func (p *Provider) markOverCap(nodeClass string) (victims []victim, pending []chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, d := range p.deleting {
		if d.nodeClass == nodeClass {
			pending = append(pending, d.done)
		}
	}
	type entry struct {
		name string
		last time.Time
	}
	var free []entry
	count := 0
	for name, u := range p.uses {
		if u.nodeClass != nodeClass {
			continue
		}
		count++
		if u.launches == 0 && u.id != "" {
			free = append(free, entry{name, u.last})
		}
	}
	if count <= MaxPerNodeClass {
		return nil, pending
	}
	sort.Slice(free, func(i, j int) bool { return free[i].last.Before(free[j].last) })
	var names []string
	for _, e := range free[:min(len(free), count-MaxPerNodeClass)] {
		names = append(names, e.name)
	}
	return p.markLocked(names), pending
}

// markLocked moves templates from use to deleting: Ensure waits for their
// deletion before it uses the name again. Caller holds p.mu.
func (p *Provider) markLocked(names []string) []victim {
	out := make([]victim, 0, len(names))
	for _, name := range names {
		u := p.uses[name]
		if u == nil || u.launches > 0 || p.deleting[name] != nil {
			continue
		}
		out = append(out, victim{name, u.id})
		delete(p.uses, name)
		p.known.Delete(name)
		p.deleting[name] = &deletion{nodeClass: u.nodeClass, done: make(chan struct{})}
	}
	return out
}

// deleteMarked deletes marked templates and releases their names.
func (p *Provider) deleteMarked(ctx context.Context, victims []victim) (int, error) {
	var errs []error
	deleted := 0
	for _, v := range victims {
		err := p.delete(ctx, v.id, v.name)
		p.mu.Lock()
		close(p.deleting[v.name].done)
		delete(p.deleting, v.name)
		p.mu.Unlock()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		deleted++
	}
	return deleted, errors.Join(errs...)
}

// list returns the cluster's templates (of one node class when not empty).
func (p *Provider) list(ctx context.Context, nodeClass string) ([]ec2types.LaunchTemplate, error) {
	filters := []ec2types.Filter{
		selector.Filter("tag:"+ownership.ClusterTag(p.cluster), "owned"),
		selector.Filter("tag:"+ownership.EKSClusterNameTag, p.cluster),
	}
	if nodeClass != "" {
		filters = append(filters, selector.Filter("tag:"+v1.LabelNodeClass, nodeClass))
	}
	var out []ec2types.LaunchTemplate
	pager := ec2.NewDescribeLaunchTemplatesPaginator(p.ec2, &ec2.DescribeLaunchTemplatesInput{Filters: filters})
	for pager.HasMorePages() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("listing the cluster's launch templates: %w", err)
		}
		out = append(out, page.LaunchTemplates...)
	}
	return out, nil
}

// delete removes a template the caller has proved this cluster's. It names
// the template (owner-unique by its hash) rather than its ID, so a log of
// calls reads against the names and tags the templates were created with.
func (p *Provider) delete(ctx context.Context, id, name string) error {
	if _, err := p.ec2.DeleteLaunchTemplate(ctx, &ec2.DeleteLaunchTemplateInput{LaunchTemplateName: aws.String(name)}); err != nil &&
		!awserr.IsCode(err, "InvalidLaunchTemplateId.NotFound", "InvalidLaunchTemplateName.NotFoundException") {
		return fmt.Errorf("deleting launch template %s: %w", name, err)
	}
	return nil
}

// DeleteAll deletes the templates this runtime made for a node class.
func (p *Provider) DeleteAll(ctx context.Context, nodeClass string) error {
	templates, err := p.list(ctx, nodeClass)
	if err != nil {
		return fmt.Errorf("listing launch templates of EC2NodeClass %s: %w", nodeClass, err)
	}
	var errs []error
	for _, lt := range templates {
		name := aws.ToString(lt.LaunchTemplateName)
		if p.collectable(selector.TagMap(lt.Tags), nodeClass) != nil {
			continue
		}
		p.known.Delete(name)
		p.mu.Lock()
		delete(p.uses, name)
		p.mu.Unlock()
		if err := p.delete(ctx, aws.ToString(lt.LaunchTemplateId), name); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
