// Package instanceprofile manages the IAM instance profiles nodes launch
// with. For a node class naming a role the runtime owns one profile per
// (node class, role): a role change creates a new profile for new nodes and
// leaves the running nodes' profile, and its role, untouched until garbage
// collection finds it unused. For a node class naming an instance profile
// it only checks that the profile exists.
package instanceprofile

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"
	corev1 "k8s.io/api/core/v1"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/ownership"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/ttlcache"
)

// CacheTTL is how long a profile known to exist with the right role is
// trusted without asking IAM.
const CacheTTL = 15 * time.Minute

// LaunchCheckTTL is how long a launch trusts that the profile it launches
// into still holds the node class's role. A role can be taken out of a
// profile under the runtime (the role deleted, or replaced under its name);
// an instance launched into a profile without a role never joins, so
// launches read the profile again at most this long after the last read.
const LaunchCheckTTL = time.Minute

// maxNameLength is IAM's limit on instance profile names.
const maxNameLength = 128

// Provider creates and deletes managed instance profiles.
type Provider struct {
	iam     *iam.Client
	cluster string
	region  string
	known   *ttlcache.TTL[string, string] // profile name -> role
	// launchable holds the profiles a launch proved to hold their role.
	launchable *ttlcache.TTL[string, struct{}]
}

// New returns a provider for a cluster in a region.
func New(client *iam.Client, cluster, region string) *Provider {
	return &Provider{
		iam: client, cluster: cluster, region: region,
		known: ttlcache.New[string, string](CacheTTL), launchable: ttlcache.New[string, struct{}](LaunchCheckTTL),
	}
}

// Name is the deterministic name of the profile managed for the node
// class's current role: the cluster name (cut to fit) and a hash of region,
// node class (name and UID) and role, so it stays within IAM's 128
// characters, differs per cluster, region, node class and role, and a
// retry after a partial failure finds the profile it began.
func (p *Provider) Name(nc *awsv1.EC2NodeClass) string {
	h := fnv.New64a()
	_, _ = h.Write([]byte(p.region + "/" + nc.Name + "/" + string(nc.UID) + "/" + nc.Spec.Role))
	suffix := "_" + strconv.FormatUint(h.Sum64(), 10)
	prefix := p.cluster
	if len(prefix)+len(suffix) > maxNameLength {
		prefix = prefix[:maxNameLength-len(suffix)]
	}
	return prefix + suffix
}

// ClusterPath is the IAM path prefix of every profile the runtime manages
// for the cluster in its region; each node class's profiles sit under
// ClusterPath + <node class UID>/.
func (p *Provider) ClusterPath() string {
	return fmt.Sprintf("/karpenter/%s/%s/", p.region, p.cluster)
}

func (p *Provider) path(nc *awsv1.EC2NodeClass) string { return p.ClusterPath() + string(nc.UID) + "/" }

// Tags are put on managed profiles so the controller policy can scope its
// IAM permissions to them.
func (p *Provider) Tags(nc *awsv1.EC2NodeClass) map[string]string {
	tags := ownership.ClusterTags(p.cluster)
	tags[corev1.LabelTopologyRegion] = p.region
	tags[v1.LabelNodeClass] = nc.Name
	return tags
}

// owned returns nil when a profile carries the tags of one this cluster's
// runtime made in this region (for a given node class, when not empty).
func (p *Provider) owned(profile *iamtypes.InstanceProfile, nodeClass string) error {
	return Owned(profile, p.cluster, p.region, nodeClass)
}

// Owned returns nil when a profile, as GetInstanceProfile returns it (with
// its tags), is one the runtime of cluster made in region (for nodeClass,
// when not empty).
func Owned(profile *iamtypes.InstanceProfile, cluster, region, nodeClass string) error {
	tags := map[string]string{}
	for _, t := range profile.Tags {
		tags[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	if err := ownership.Check(tags, cluster, map[string]string{corev1.LabelTopologyRegion: region, v1.LabelNodeClass: nodeClass}); err != nil {
		return fmt.Errorf("instance profile %s: %w", aws.ToString(profile.InstanceProfileName), err)
	}
	return nil
}

// Resolve returns the profile nodes of the node class launch with: the
// profile for its current role, created (or repaired) when it names a role.
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
	has := false
	for _, r := range profile.Roles {
		if aws.ToString(r.RoleName) == roleName(nc.Spec.Role) {
			has = true
			continue
		}
		// The name is this role's; another role in it was put there by
		// hand. The profile is proven ours, so it is repaired.
		if _, err := p.iam.RemoveRoleFromInstanceProfile(ctx, &iam.RemoveRoleFromInstanceProfileInput{
			InstanceProfileName: aws.String(name), RoleName: r.RoleName,
		}); err != nil && !isNotFound(err) {
			return "", fmt.Errorf("removing role %s from instance profile %s: %w", aws.ToString(r.RoleName), name, err)
		}
	}
	if !has {
		if _, err := p.iam.AddRoleToInstanceProfile(ctx, &iam.AddRoleToInstanceProfileInput{
			InstanceProfileName: aws.String(name), RoleName: aws.String(roleName(nc.Spec.Role)),
		}); err != nil {
			return "", fmt.Errorf("adding spec.role %s to instance profile %s (does the role exist?): %w", nc.Spec.Role, name, err)
		}
	}
	p.known.Set(name, nc.Spec.Role)
	return name, nil
}

// CheckLaunch proves, at most once per LaunchCheckTTL, that the managed
// profile a launch from nc uses (its status.instanceProfile) still holds
// the node class's role. When the role was taken out the profile is
// resolved again, which puts the role back, or fails when the role is gone,
// rather than launching an instance with no credentials.
func (p *Provider) CheckLaunch(ctx context.Context, nc *awsv1.EC2NodeClass) error {
	name := nc.Status.InstanceProfile
	// A profile named in the spec is the user's, and a status naming another
	// role's profile has not been resolved for the current role yet: both
	// launch as resolved.
	if nc.Spec.InstanceProfile != nil || nc.Spec.Role == "" || name != p.Name(nc) {
		return nil
	}
	if _, ok := p.launchable.Get(name); ok {
		return nil
	}
	p.known.Delete(name)
	if _, err := p.Resolve(ctx, nc); err != nil {
		return fmt.Errorf("instance profile %s of EC2NodeClass %s: %w", name, nc.Name, err)
	}
	p.launchable.Set(name, struct{}{})
	return nil
}

// roleName drops a role's path: AddRoleToInstanceProfile takes the name.
func roleName(role string) string { return role[strings.LastIndex(role, "/")+1:] }

// ensure returns the profile called name, creating it when absent. A
// profile of that name that is not this cluster's is an error: it is
// neither used nor changed.
func (p *Provider) ensure(ctx context.Context, nc *awsv1.EC2NodeClass, name string) (*iamtypes.InstanceProfile, error) {
	got, err := p.iam.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: aws.String(name)})
	if err == nil {
		if err := p.owned(got.InstanceProfile, nc.Name); err != nil {
			return nil, fmt.Errorf("%w; it is left alone: rename the EC2NodeClass or remove that profile", err)
		}
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

// Managed lists the profiles under the cluster's path (or, with a node
// class, under that node class's), as IAM lists them: without tags.
func (p *Provider) Managed(ctx context.Context, nc *awsv1.EC2NodeClass) ([]iamtypes.InstanceProfile, error) {
	prefix := p.ClusterPath()
	if nc != nil {
		prefix = p.path(nc)
	}
	var out []iamtypes.InstanceProfile
	pager := iam.NewListInstanceProfilesPaginator(p.iam, &iam.ListInstanceProfilesInput{PathPrefix: aws.String(prefix)})
	for pager.HasMorePages() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("listing instance profiles under %s: %w", prefix, err)
		}
		out = append(out, page.InstanceProfiles...)
	}
	return out, nil
}

// ErrNotOwned marks a profile that Delete left alone because its tags do
// not make it this cluster's.
var ErrNotOwned = errors.New("not this cluster's")

// Delete removes a managed profile by name, roles first, after reading its
// tags: one that is not this cluster's is left alone (ErrNotOwned). A
// profile that is already gone is not an error.
func (p *Provider) Delete(ctx context.Context, name string) error {
	p.known.Delete(name)
	p.launchable.Delete(name)
	got, err := p.iam.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: aws.String(name)})
	if err != nil {
		if isNotFound(err) {
			return nil
		}
		return fmt.Errorf("getting instance profile %s: %w", name, err)
	}
	if err := p.owned(got.InstanceProfile, ""); err != nil {
		return fmt.Errorf("%w: %w", ErrNotOwned, err)
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

// DeleteAll removes every profile the runtime made for a node class (all
// its roles'); node classes that name an instance profile own none.
func (p *Provider) DeleteAll(ctx context.Context, nc *awsv1.EC2NodeClass) error {
	profiles, err := p.Managed(ctx, nc)
	if err != nil {
		return err
	}
	var errs []error
	for _, ip := range profiles {
		if err := p.Delete(ctx, aws.ToString(ip.InstanceProfileName)); err != nil && !errors.Is(err, ErrNotOwned) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// NameFromARN is the profile name in an instance profile ARN
// (arn:aws:iam::<account>:instance-profile/<path><name>).
func NameFromARN(arn string) string { return arn[strings.LastIndex(arn, "/")+1:] }

func isNotFound(err error) bool {
	var nf *iamtypes.NoSuchEntityException
	return errors.As(err, &nf)
}
