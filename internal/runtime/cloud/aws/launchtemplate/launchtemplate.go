// Package launchtemplate keeps one EC2 launch template per distinct launch
// configuration (AMI, user data, security groups, block devices, metadata
// options, instance profile, tags, monitoring, public IP). Templates are
// named after a hash of the configuration, so equal configurations share a
// template across restarts, created on first use and remembered.
package launchtemplate

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/structhash"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/awserr"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/selector"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/ttlcache"
)

// NamePrefix starts the name of every managed launch template.
const NamePrefix = "karpenter.k8s.aws/"

// CacheTTL is how long a template known to exist is used without asking EC2.
const CacheTTL = time.Minute

// Config is one resolved launch configuration.
type Config struct {
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
}

// Name is the deterministic template name of a configuration.
func (c Config) Name() string { return NamePrefix + structhash.Hash(c) }

// Provider ensures templates exist.
type Provider struct {
	ec2     *ec2.Client
	cluster string
	known   *ttlcache.TTL[string, string] // name -> id
}

// New returns a provider for a cluster.
func New(client *ec2.Client, cluster string) *Provider {
	return &Provider{ec2: client, cluster: cluster, known: ttlcache.New[string, string](CacheTTL)}
}

// Ensure returns the name of the template for cfg, creating it if needed.
func (p *Provider) Ensure(ctx context.Context, cfg Config) (string, error) {
	name := cfg.Name()
	if _, ok := p.known.Get(name); ok {
		return name, nil
	}
	out, err := p.ec2.DescribeLaunchTemplates(ctx, &ec2.DescribeLaunchTemplatesInput{LaunchTemplateNames: []string{name}})
	if err == nil && len(out.LaunchTemplates) == 1 {
		p.known.Set(name, aws.ToString(out.LaunchTemplates[0].LaunchTemplateId))
		return name, nil
	}
	if err != nil && !awserr.IsCode(err, "InvalidLaunchTemplateName.NotFoundException", "InvalidLaunchTemplateId.NotFound") {
		return "", fmt.Errorf("describing launch template %s: %w", name, err)
	}
	created, err := p.ec2.CreateLaunchTemplate(ctx, &ec2.CreateLaunchTemplateInput{
		LaunchTemplateName: aws.String(name),
		LaunchTemplateData: data(cfg),
		TagSpecifications: []ec2types.TagSpecification{{
			ResourceType: ec2types.ResourceTypeLaunchTemplate, Tags: selector.Tags(cfg.Tags),
		}},
	})
	if err != nil {
		if awserr.IsCode(err, "InvalidLaunchTemplateName.AlreadyExistsException") {
			return name, nil // created concurrently
		}
		return "", fmt.Errorf("creating launch template %s: %w", name, err)
	}
	p.known.Set(name, aws.ToString(created.LaunchTemplate.LaunchTemplateId))
	return name, nil
}

// Invalidate forgets that a template exists (e.g. after EC2 said it does not).
func (p *Provider) Invalidate(name string) { p.known.Delete(name) }

// DeleteAll deletes the cluster's templates made for a node class.
func (p *Provider) DeleteAll(ctx context.Context, nodeClass string) error {
	pager := ec2.NewDescribeLaunchTemplatesPaginator(p.ec2, &ec2.DescribeLaunchTemplatesInput{Filters: []ec2types.Filter{
		selector.Filter("tag:kubernetes.io/cluster/"+p.cluster, "owned"),
		selector.Filter("tag:"+v1.LabelNodeClass, nodeClass),
	}})
	var errs []error
	for pager.HasMorePages() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("listing launch templates of EC2NodeClass %s: %w", nodeClass, err)
		}
		for _, lt := range page.LaunchTemplates {
			p.known.Delete(aws.ToString(lt.LaunchTemplateName))
			if _, err := p.ec2.DeleteLaunchTemplate(ctx, &ec2.DeleteLaunchTemplateInput{LaunchTemplateId: lt.LaunchTemplateId}); err != nil &&
				!awserr.IsCode(err, "InvalidLaunchTemplateId.NotFound", "InvalidLaunchTemplateName.NotFoundException") {
				errs = append(errs, fmt.Errorf("deleting launch template %s: %w", aws.ToString(lt.LaunchTemplateName), err))
			}
		}
	}
	return errors.Join(errs...)
}

func data(cfg Config) *ec2types.RequestLaunchTemplateData {
	d := &ec2types.RequestLaunchTemplateData{
		ImageId:             aws.String(cfg.AMIID),
		BlockDeviceMappings: blockDevices(cfg.BlockDeviceMappings),
		MetadataOptions:     metadata(cfg.MetadataOptions),
		Monitoring:          &ec2types.LaunchTemplatesMonitoringRequest{Enabled: aws.Bool(cfg.DetailedMonitoring)},
	}
	if cfg.UserData != "" {
		d.UserData = aws.String(base64.StdEncoding.EncodeToString([]byte(cfg.UserData)))
	}
	if cfg.InstanceProfile != "" {
		d.IamInstanceProfile = &ec2types.LaunchTemplateIamInstanceProfileSpecificationRequest{Name: aws.String(cfg.InstanceProfile)}
	}
	groups := append([]string{}, cfg.SecurityGroupIDs...)
	sort.Strings(groups)
	if cfg.AssociatePublicIP != nil {
		// The public IP choice lives on the primary interface, which must
		// then carry the security groups too.
		d.NetworkInterfaces = []ec2types.LaunchTemplateInstanceNetworkInterfaceSpecificationRequest{{
			DeviceIndex: aws.Int32(0), AssociatePublicIpAddress: cfg.AssociatePublicIP, Groups: groups,
		}}
	} else {
		d.SecurityGroupIds = groups
	}
	return d
}

func blockDevices(bdms []*awsv1.BlockDeviceMapping) []ec2types.LaunchTemplateBlockDeviceMappingRequest {
	var out []ec2types.LaunchTemplateBlockDeviceMappingRequest
	for _, b := range bdms {
		if b == nil {
			continue
		}
		r := ec2types.LaunchTemplateBlockDeviceMappingRequest{DeviceName: b.DeviceName}
		if e := b.EBS; e != nil {
			ebs := &ec2types.LaunchTemplateEbsBlockDeviceRequest{
				DeleteOnTermination: e.DeleteOnTermination, Encrypted: e.Encrypted, KmsKeyId: e.KMSKeyID,
				SnapshotId: e.SnapshotID, VolumeInitializationRate: e.VolumeInitializationRate,
			}
			if e.IOPS != nil {
				ebs.Iops = aws.Int32(int32(*e.IOPS))
			}
			if e.Throughput != nil {
				ebs.Throughput = aws.Int32(int32(*e.Throughput))
			}
			if e.VolumeSize != nil {
				ebs.VolumeSize = aws.Int32(int32(gib(*e.VolumeSize)))
			}
			if e.VolumeType != nil {
				ebs.VolumeType = ec2types.VolumeType(*e.VolumeType)
			}
			r.Ebs = ebs
		}
		out = append(out, r)
	}
	return out
}

// gib rounds a volume size up to whole GiB, the unit EC2 takes.
func gib(q resource.Quantity) int64 {
	const g = 1 << 30
	return (q.Value() + g - 1) / g
}

func metadata(m *awsv1.MetadataOptions) *ec2types.LaunchTemplateInstanceMetadataOptionsRequest {
	m = WithMetadataDefaults(m)
	return &ec2types.LaunchTemplateInstanceMetadataOptionsRequest{
		HttpEndpoint:            ec2types.LaunchTemplateInstanceMetadataEndpointState(*m.HTTPEndpoint),
		HttpProtocolIpv6:        ec2types.LaunchTemplateInstanceMetadataProtocolIpv6(*m.HTTPProtocolIPv6),
		HttpPutResponseHopLimit: aws.Int32(int32(*m.HTTPPutResponseHopLimit)),
		HttpTokens:              ec2types.LaunchTemplateHttpTokensState(*m.HTTPTokens),
	}
}

// WithMetadataDefaults fills unset IMDS options with the v1 defaults:
// endpoint enabled, IPv6 disabled, hop limit 1, tokens required.
func WithMetadataDefaults(m *awsv1.MetadataOptions) *awsv1.MetadataOptions {
	out := awsv1.MetadataOptions{}
	if m != nil {
		out = *m.DeepCopy()
	}
	if out.HTTPEndpoint == nil {
		out.HTTPEndpoint = aws.String("enabled")
	}
	if out.HTTPProtocolIPv6 == nil {
		out.HTTPProtocolIPv6 = aws.String("disabled")
	}
	if out.HTTPPutResponseHopLimit == nil {
		out.HTTPPutResponseHopLimit = aws.Int64(1)
	}
	if out.HTTPTokens == nil {
		out.HTTPTokens = aws.String("required")
	}
	return &out
}

// DefaultBlockDeviceMappings are the volumes of an AMI family when the node
// class maps none: a 20Gi encrypted gp3 root (AL2, AL2023), a 4Gi root and
// 20Gi data volume (Bottlerocket), a 50Gi root (Windows), none for Custom.
func DefaultBlockDeviceMappings(family string) []*awsv1.BlockDeviceMapping {
	vol := func(dev, size string, root bool) *awsv1.BlockDeviceMapping {
		q := resource.MustParse(size)
		return &awsv1.BlockDeviceMapping{DeviceName: aws.String(dev), RootVolume: root, EBS: &awsv1.BlockDevice{
			VolumeSize: &q, VolumeType: aws.String("gp3"), Encrypted: aws.Bool(true), DeleteOnTermination: aws.Bool(true),
		}}
	}
	switch family {
	case awsv1.AMIFamilyAL2, awsv1.AMIFamilyAL2023:
		return []*awsv1.BlockDeviceMapping{vol("/dev/xvda", "20Gi", true)}
	case awsv1.AMIFamilyBottlerocket:
		return []*awsv1.BlockDeviceMapping{vol("/dev/xvda", "4Gi", true), vol("/dev/xvdb", "20Gi", false)}
	case awsv1.AMIFamilyWindows2019, awsv1.AMIFamilyWindows2022, awsv1.AMIFamilyWindows2025:
		return []*awsv1.BlockDeviceMapping{vol("/dev/sda1", "50Gi", true)}
	}
	return nil
}
