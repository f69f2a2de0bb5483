// Package instanceprofile manages the IAM instance profiles nodes launch
// with: for a node class naming a role, a profile owned by the runtime
// (created, tagged, kept pointing at the role, deleted with the node class);
// for a node class naming an instance profile, only an existence check.
package instanceprofile

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"
	corev1 "k8s.io/api/core/v1"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/ttlcache"
)

// CacheTTL is how long a profile known to exist with the right role is
// trusted without asking IAM.
const CacheTTL = 15 * time.Minute

// Provider creates and deletes managed instance profiles.
type Provider struct {
	iam     *iam.Client
	cluster string
	region  string
	known   *ttlcache.TTL[string, string] // profile name -> role
}

// New returns a provider for a cluster in a region.
func New(client *iam.Client, cluster, region string) *Provider {
	return &Provider{iam: client, cluster: cluster, region: region, known: ttlcache.New[string, string](CacheTTL)}
}

// Name is the deterministic name of the profile managed for a node class:
// the cluster name and a hash of region and node class name, so it stays
// within IAM's 128 characters and differs per cluster and region.
func (p *Provider) Name(nc *awsv1.EC2NodeClass) string {
	h := fnv.New64a()
	_, _ = h.Write([]byte(p.region + "/" + nc.Name))
	return fmt.Sprintf("%s_%s", p.cluster, strconv.FormatUint(h.Sum64(), 10))
}

// path scopes managed profiles by cluster and node class.
func (p *Provider) path(nc *awsv1.EC2NodeClass) string {
	return fmt.Sprintf("/karpenter/%s/%s/%s/", p.region, p.cluster, nc.UID)
}

// Tags are put on managed profiles so the controller policy can scope its
// IAM permissions to them.
func (p *Provider) Tags(nc *awsv1.EC2NodeClass) map[string]string {
	return map[string]string{
		"kubernetes.io/cluster/" + p.cluster: "owned",
		"eks:eks-cluster-name":               p.cluster,
		corev1.LabelTopologyRegion:           p.region,
		v1.LabelNodeClass:                    nc.Name,
	}
}

// Resolve returns the profile nodes of the node class launch with, creating
// or repairing the managed profile when the node class names a role.
func (p *Provider) Resolve(ctx context.Context, nc *awsv1.EC2NodeClass) (string, error) {
	if nc.Spec.InstanceProfile != nil {
		name := *nc.Spec.InstanceProfile
		if _, ok := p.known.Get(name); ok {
			return name, nil
		}
		if _, err := p.iam.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: aws.String(name)}); err != nil {
			return "", fmt.Errorf("spec.instanceProfile %q: %w", name, err)
		}
		p.known.Set(name, "")
		return name, nil
	}
	if nc.Spec.Role == "" {
		return "", errors.New("set spec.role or spec.instanceProfile")
	}
	name := p.Name(nc)
	if role, ok := p.known.Get(name); ok && role == nc.Spec.Role {
		return name, nil
	}
	profile, err := p.ensure(ctx, nc, name)
	if err != nil {
		return "", err
	}
	for _, r := range profile.Roles {
		if aws.ToString(r.RoleName) == nc.Spec.Role {
			p.known.Set(name, nc.Spec.Role)
			return name, nil
		}
		// A profile holds one role: swap the old one out.
		if _, err := p.iam.RemoveRoleFromInstanceProfile(ctx, &iam.RemoveRoleFromInstanceProfileInput{
			InstanceProfileName: aws.String(name), RoleName: r.RoleName,
		}); err != nil && !isNotFound(err) {
			return "", fmt.Errorf("removing role %s from instance profile %s: %w", aws.ToString(r.RoleName), name, err)
		}
	}
	if _, err := p.iam.AddRoleToInstanceProfile(ctx, &iam.AddRoleToInstanceProfileInput{
		InstanceProfileName: aws.String(name), RoleName: aws.String(nc.Spec.Role),
	}); err != nil {
		return "", fmt.Errorf("adding spec.role %s to instance profile %s (does the role exist?): %w", nc.Spec.Role, name, err)
	}
	p.known.Set(name, nc.Spec.Role)
	return name, nil
}

func (p *Provider) ensure(ctx context.Context, nc *awsv1.EC2NodeClass, name string) (*iamtypes.InstanceProfile, error) {
	got, err := p.iam.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: aws.String(name)})
	if err == nil {
		return got.InstanceProfile, nil
	}
	if !isNotFound(err) {
		return nil, fmt.Errorf("getting instance profile %s: %w", name, err)
	}
	var tags []iamtypes.Tag
	for k, v := range p.Tags(nc) {
		tags = append(tags, iamtypes.Tag{Key: aws.String(k), Value: aws.String(v)})
	}
	created, err := p.iam.CreateInstanceProfile(ctx, &iam.CreateInstanceProfileInput{
		InstanceProfileName: aws.String(name), Path: aws.String(p.path(nc)), Tags: tags,
	})
	if err != nil {
		return nil, fmt.Errorf("creating instance profile %s: %w", name, err)
	}
	return created.InstanceProfile, nil
}

// Delete removes the managed profile of a node class (roles first); a
// profile that is already gone is not an error. Node classes that name an
// instance profile own nothing, so nothing is deleted.
func (p *Provider) Delete(ctx context.Context, nc *awsv1.EC2NodeClass) error {
	if nc.Spec.Role == "" {
		return nil
	}
	name := p.Name(nc)
	p.known.Delete(name)
	got, err := p.iam.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: aws.String(name)})
	if err != nil {
		if isNotFound(err) {
			return nil
		}
		return fmt.Errorf("getting instance profile %s: %w", name, err)
	}
	for _, r := range got.InstanceProfile.Roles {
		if _, err := p.iam.RemoveRoleFromInstanceProfile(ctx, &iam.RemoveRoleFromInstanceProfileInput{
			InstanceProfileName: aws.String(name), RoleName: r.RoleName,
		}); err != nil && !isNotFound(err) {
			return fmt.Errorf("removing role %s from instance profile %s: %w", aws.ToString(r.RoleName), name, err)
		}
	}
	if _, err := p.iam.DeleteInstanceProfile(ctx, &iam.DeleteInstanceProfileInput{InstanceProfileName: aws.String(name)}); err != nil && !isNotFound(err) {
		return fmt.Errorf("deleting instance profile %s: %w", name, err)
	}
	return nil
}

func isNotFound(err error) bool {
	var nf *iamtypes.NoSuchEntityException
	return errors.As(err, &nf)
}
