package provider

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/instanceprofile"
)

// This file answers who runs with a role: the instance profiles holding it,
// the instances launched with those profiles and the NodeClaims that name
// them. Nodes authenticate to the cluster as the role of their instance
// profile, through the role's access entry: a role taken out of a profile,
// or its entry deleted, takes every such node out of the cluster at once.

// liveInstanceStates are the states of an instance that can still use its
// profile's role.
var liveInstanceStates = []string{"pending", "running", "stopping", "stopped"}

// roleProfiles are the instance profiles holding role, with their tags
// (IAM lists profiles without them).
func roleProfiles(ctx context.Context, c *iam.Client, role string) ([]iamtypes.InstanceProfile, error) {
	var out []iamtypes.InstanceProfile
	pager := iam.NewListInstanceProfilesForRolePaginator(c, &iam.ListInstanceProfilesForRoleInput{RoleName: aws.String(role)})
	for pager.HasMorePages() {
		page, err := pager.NextPage(ctx)
		if isAWSCode(err, "NoSuchEntity") {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("iam:ListInstanceProfilesForRole %s: %w", role, err)
		}
		for _, p := range page.InstanceProfiles {
			got, err := c.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: p.InstanceProfileName})
			if isAWSCode(err, "NoSuchEntity") {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("iam:GetInstanceProfile %s: %w", aws.ToString(p.InstanceProfileName), err)
			}
			out = append(out, *got.InstanceProfile)
		}
	}
	return out, nil
}

// profileInstances counts the live instances of the region launched with
// the profile, whichever cluster they are in: a role is kept for any of
// them.
func profileInstances(ctx context.Context, c *ec2.Client, profileARN string) (int, error) {
	n := 0
	pager := ec2.NewDescribeInstancesPaginator(c, &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{
		{Name: aws.String("iam-instance-profile.arn"), Values: []string{profileARN}},
		{Name: aws.String("instance-state-name"), Values: liveInstanceStates},
	}})
	for pager.HasMorePages() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return 0, fmt.Errorf("ec2:DescribeInstances with instance profile %s: %w", profileARN, err)
		}
		for _, r := range page.Reservations {
			n += len(r.Instances)
		}
	}
	return n, nil
}

// checkRoleUnused returns an error naming a profile of profiles (those
// holding role) that a live instance runs with: neither the role nor its
// access entry may go while one does.
func checkRoleUnused(ctx context.Context, c *ec2.Client, role string, profiles []iamtypes.InstanceProfile) error {
	for _, p := range profiles {
		n, err := profileInstances(ctx, c, aws.ToString(p.Arn))
		if err != nil {
			return err
		}
		if n > 0 {
			return fmt.Errorf("role %s is in instance profile %s, which %d live instances run with: the role and its access entry are kept, "+
				"since deleting either takes those nodes out of the cluster. Once no instance uses the role (the controller replaces the nodes "+
				"of a node class whose role changed), apply again", role, aws.ToString(p.InstanceProfileName), n)
		}
	}
	return nil
}

// releasableProfiles returns the names of profiles (those holding role)
// that deleting the role takes it out of: each must be one the runtime of
// cluster made in region, by its tags. A profile that is not is someone
// else's to change: the error names it and nothing is changed.
func releasableProfiles(profiles []iamtypes.InstanceProfile, role, cluster, region string) ([]string, error) {
	var names []string
	for _, p := range profiles {
		if err := instanceprofile.Owned(&p, cluster, region, ""); err != nil {
			return nil, fmt.Errorf("role %s is in an instance profile Joist did not make for cluster %s in %s (%w): "+
				"it is left alone, so take the role out of it, or delete it, before deleting the role", role, cluster, region, err)
		}
		names = append(names, aws.ToString(p.InstanceProfileName))
	}
	return names, nil
}

// roleRelease is what deleting a role may take away without taking nodes
// out of the cluster: the role's access entry, and the role from the
// profiles listed.
type roleRelease struct{ profiles []string }

// releaseRole proves that deleting role (and its access entry) takes no
// node out of the cluster: no live instance runs with a profile holding it
// and, when the role itself goes (deleteRole), each such profile is the
// runtime's for cluster. The error says what stops the delete; nothing has
// been changed then.
func releaseRole(ctx context.Context, cfg aws.Config, role, cluster string, deleteRole bool) (*roleRelease, error) {
	profiles, err := roleProfiles(ctx, iam.NewFromConfig(cfg), role)
	if err != nil {
		return nil, err
	}
	if err := checkRoleUnused(ctx, ec2.NewFromConfig(cfg), role, profiles); err != nil {
		return nil, err
	}
	if !deleteRole {
		return &roleRelease{}, nil
	}
	names, err := releasableProfiles(profiles, role, cluster, cfg.Region)
	if err != nil {
		return nil, err
	}
	return &roleRelease{profiles: names}, nil
}

// roleClaims is who runs with a role, as the cluster sees it: the
// NodeClaims launched with an instance profile holding it.
type roleClaims struct {
	Role     string
	Claims   int
	Profiles []string // the profiles those claims name, sorted
}

func (u *roleClaims) String() string {
	claims := "NodeClaims run"
	if u.Claims == 1 {
		claims = "NodeClaim runs"
	}
	return fmt.Sprintf("%d %s with role %s (instance profiles %s)", u.Claims, claims, u.Role, strings.Join(u.Profiles, ", "))
}

// claimsUsingRole counts the NodeClaims whose instance-profile annotation
// (written at launch) names a profile holding role.
func claimsUsingRole(ctx context.Context, iamc *iam.Client, kube dynamic.Interface, role string) (*roleClaims, error) {
	profiles, err := roleProfiles(ctx, iamc, role)
	if err != nil {
		return nil, err
	}
	holding := map[string]bool{}
	for _, p := range profiles {
		holding[aws.ToString(p.InstanceProfileName)] = true
	}
	use := &roleClaims{Role: role}
	if len(holding) == 0 {
		return use, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	claims, err := kube.Resource(nodeClaimGVR).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing NodeClaims: %w", err)
	}
	named := map[string]bool{}
	for _, c := range claims.Items {
		if p := c.GetAnnotations()[v1.InstanceProfileNameAnnotationKey]; holding[p] {
			use.Claims++
			named[p] = true
		}
	}
	for p := range named {
		use.Profiles = append(use.Profiles, p)
	}
	sort.Strings(use.Profiles)
	return use, nil
}

// awsAuthMaps reports whether the aws-auth ConfigMap maps roleARN, the
// other way nodes authenticate. Its entries name roles without their path.
func awsAuthMaps(ctx context.Context, c *clients, roleARN string) (bool, error) {
	kube, err := c.Kubernetes(ctx)
	if err != nil {
		return false, err
	}
	cm, err := kube.Resource(configMapGVR).Namespace("kube-system").Get(ctx, "aws-auth", metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading the aws-auth ConfigMap: %w", err)
	}
	text, _, _ := unstructured.NestedString(cm.Object, "data", "mapRoles")
	var roles []struct {
		RoleARN string `json:"rolearn"`
	}
	if err := yaml.Unmarshal([]byte(text), &roles); err != nil {
		return false, fmt.Errorf("reading mapRoles of the aws-auth ConfigMap: %w", err)
	}
	for _, m := range roles {
		if m.RoleARN == roleARN || m.RoleARN == withoutPath(roleARN) {
			return true, nil
		}
	}
	return false, nil
}

// withoutPath is a role ARN without the role's path, as aws-auth names it.
func withoutPath(roleARN string) string {
	head, name, ok := strings.Cut(roleARN, ":role/")
	if !ok {
		return roleARN
	}
	return head + ":role/" + name[strings.LastIndex(name, "/")+1:]
}

// errOr is err's text, or alt when err is nil.
func errOr(err error, alt string) string {
	if err != nil {
		return err.Error()
	}
	return alt
}
