package provider

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/joistdev/terraform-provider-joist/internal/awssim"
	"github.com/joistdev/terraform-provider-joist/internal/awssim/fault"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/instanceprofile"
)

// planWarnings serves the provider as testAccProtoV6ProviderFactories do
// and keeps the warnings its plans return, which Terraform prints but
// terraform-plugin-testing does not hand to plan checks.
type planWarnings struct {
	mu       sync.Mutex
	warnings []string
}

func (w *planWarnings) factories() map[string]func() (tfprotov6.ProviderServer, error) {
	return map[string]func() (tfprotov6.ProviderServer, error){"joist": func() (tfprotov6.ProviderServer, error) {
		server, err := providerserver.NewProtocol6WithError(New("test")())()
		return &warningServer{ProviderServer: server, w: w}, err
	}}
}

// has reports whether a plan warned with text in its summary or detail.
func (w *planWarnings) has(text string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, s := range w.warnings {
		if strings.Contains(s, text) {
			return true
		}
	}
	return false
}

type warningServer struct {
	tfprotov6.ProviderServer
	w *planWarnings
}

func (s *warningServer) PlanResourceChange(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	resp, err := s.ProviderServer.PlanResourceChange(ctx, req)
	if resp != nil {
		s.w.mu.Lock()
		for _, d := range resp.Diagnostics {
			if d.Severity == tfprotov6.DiagnosticSeverityWarning {
				s.w.warnings = append(s.w.warnings, d.Summary+": "+d.Detail)
			}
		}
		s.w.mu.Unlock()
	}
	return resp, err
}

// runWithRole starts what a running node of the controller is: the
// instance profile the runtime makes for a node class naming role (made by
// the runtime's own code), an instance of the cluster launched with it, and
// a NodeClaim of pool annotated with the profile at launch. It returns the
// profile and the instance.
func runWithRole(t *testing.T, cfg aws.Config, role, pool string) (string, string) {
	t.Helper()
	ctx := context.Background()
	profiles := instanceprofile.New(iam.NewFromConfig(cfg), testAWSCluster, cfg.Region)
	nc := &awsv1.EC2NodeClass{ObjectMeta: metav1.ObjectMeta{Name: pool, UID: k8stypes.UID(pool + "-uid")}, Spec: awsv1.EC2NodeClassSpec{Role: role}}
	profile, err := profiles.Resolve(ctx, nc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = profiles.Delete(context.Background(), profile) })
	got, err := iam.NewFromConfig(cfg).GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: aws.String(profile)})
	if err != nil {
		t.Fatal(err)
	}
	ec2c := ec2.NewFromConfig(cfg)
	images, err := ec2c.DescribeImages(ctx, &ec2.DescribeImagesInput{Owners: []string{"amazon"}})
	if err != nil || len(images.Images) == 0 {
		t.Fatalf("no AMI in awssim: %v", err)
	}
	out, err := ec2c.RunInstances(ctx, &ec2.RunInstancesInput{
		ImageId: images.Images[0].ImageId, InstanceType: ec2types.InstanceTypeM5Large, MinCount: aws.Int32(1), MaxCount: aws.Int32(1),
		IamInstanceProfile: &ec2types.IamInstanceProfileSpecification{Arn: got.InstanceProfile.Arn},
		TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeInstance, Tags: []ec2types.Tag{
			{Key: aws.String("kubernetes.io/cluster/" + testAWSCluster), Value: aws.String("owned")},
			{Key: aws.String(v1.NodePoolLabelKey), Value: aws.String(pool)},
		}}},
	})
	if err != nil {
		t.Fatalf("RunInstances: %v", err)
	}
	instance := aws.ToString(out.Instances[0].InstanceId)
	t.Cleanup(func() {
		_, _ = ec2c.TerminateInstances(context.Background(), &ec2.TerminateInstancesInput{InstanceIds: []string{instance}})
	})
	claim := createClaims(t, pool, 1)[0]
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, v1.InstanceProfileNameAnnotationKey, profile)
	if _, err := testCluster.kube.Resource(nodeClaimGVR).Patch(ctx, claim, k8stypes.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	return profile, instance
}

// untouched names each request since mark that deleted role's access
// entry or took a role out of profile.
func untouched(sim *awssim.Server, mark int, role, profile string) error {
	var errs []error
	for _, r := range sim.Requests().Requests("", "")[mark:] {
		switch {
		case r.Operation == "DeleteAccessEntry" && strings.Contains(fmt.Sprint(r.Parameters["path"]), "role/"+role):
			errs = append(errs, fmt.Errorf("the access entry of role %s was deleted while nodes run with it: %v", role, r.Parameters))
		case r.Operation == "RemoveRoleFromInstanceProfile" && r.Parameters["InstanceProfileName"] == profile:
			errs = append(errs, fmt.Errorf("role %v was taken out of instance profile %s, which a live instance runs with", r.Parameters["RoleName"], profile))
		}
	}
	return errors.Join(errs...)
}

// Changing the path replaces the role under the same name, which cannot
// exist twice: with a node running with the role through the controller's
// instance profile, the plan warns how many NodeClaims run with it and the
// apply stops before deleting the access entry or taking the role out of
// the profile. Once the node is gone the same change applies.
func TestAccNodeIAMRolePathChangeKeepsRunningNodes(t *testing.T) {
	sim := awsSim(t)
	cfg := testAWSConfig(t)
	iamc, eksc := iam.NewFromConfig(cfg), eks.NewFromConfig(cfg)
	const role, pool = "JoistNodeRole-fleet", "fleet"
	warnings := &planWarnings{}
	var profile, instance string
	mark := 0
	ctx := context.Background()
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: warnings.factories(),
		Steps: []resource.TestStep{
			{Config: nodeRoleConfig(`  name = "` + role + `"`)},
			{
				PreConfig: func() {
					profile, instance = runWithRole(t, cfg, role, pool)
					mark = len(sim.Requests().Requests("", ""))
				},
				Config:      nodeRoleConfig(`  name = "` + role + `"` + "\n" + `  path = "/nodes/"`),
				ExpectError: regexp.MustCompile(`which\s+1\s+live\s+instances\s+run\s+with`),
			},
			{
				PreConfig: func() {
					if err := untouched(sim, mark, role, profile); err != nil {
						t.Error(err)
					}
					if !warnings.has("1 NodeClaim runs with role " + role + " (instance profiles " + profile + ")") {
						t.Errorf("the plan did not warn of the NodeClaim running with role %s; warnings: %q", role, warnings.warnings)
					}
					if live, err := readRole(ctx, iamc, role); err != nil || live == nil || live.Path != "/" {
						t.Errorf("role %s after the refused replacement: %+v, %v", role, live, err)
					}
					// The node goes; the role is then free to replace.
					if _, err := ec2.NewFromConfig(cfg).TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{instance}}); err != nil {
						t.Fatal(err)
					}
					releaseClaims(pool)
				},
				Config: nodeRoleConfig(`  name = "` + role + `"` + "\n" + `  path = "/nodes/"`),
				Check: func(*terraform.State) error {
					live, err := readRole(ctx, iamc, role)
					if err != nil || live == nil || live.Path != "/nodes/" {
						return fmt.Errorf("role %s after the replacement: %+v, %v", role, live, err)
					}
					_, err = eksc.DescribeAccessEntry(ctx, &eks.DescribeAccessEntryInput{ClusterName: aws.String(testAWSCluster), PrincipalArn: aws.String(live.ARN)})
					return err
				},
			},
		},
	})
}

// entryType is the type of the access entry of role, or "" when it has none.
func entryType(ctx context.Context, iamc *iam.Client, eksc *eks.Client, role string) (string, error) {
	live, err := readRole(ctx, iamc, role)
	if err != nil || live == nil {
		return "", fmt.Errorf("role %s: %v (exists: %v)", role, err, live != nil)
	}
	out, err := eksc.DescribeAccessEntry(ctx, &eks.DescribeAccessEntryInput{ClusterName: aws.String(testAWSCluster), PrincipalArn: aws.String(live.ARN)})
	if isAWSCode(err, "ResourceNotFoundException") {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return aws.ToString(out.AccessEntry.Type), nil
}

// With a node running with the role, access_entry_type = NONE is refused
// at plan (nothing else maps the role, so every node would leave the
// cluster), and a type change warns and, when EKS refuses the new entry
// after the old one was deleted, puts the old one back.
func TestAccNodeIAMRoleAccessEntryTypeKeepsRunningNodes(t *testing.T) {
	sim := awsSim(t)
	cfg := testAWSConfig(t)
	iamc, eksc := iam.NewFromConfig(cfg), eks.NewFromConfig(cfg)
	const role, pool = "JoistNodeRole-entry", "entry"
	warnings := &planWarnings{}
	var instance string
	ctx := context.Background()
	config := func(entry string) string {
		return nodeRoleConfig(`  name = "` + role + `"` + "\n" + `  access_entry_type = "` + entry + `"`)
	}
	expectEntry := func(want string) error {
		got, err := entryType(ctx, iamc, eksc, role)
		if err == nil && got != want {
			err = fmt.Errorf("access entry of role %s is %q, want %q", role, got, want)
		}
		return err
	}
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: warnings.factories(),
		Steps: []resource.TestStep{
			{Config: config("EC2_LINUX")},
			{
				PreConfig:   func() { _, instance = runWithRole(t, cfg, role, pool) },
				Config:      config("NONE"),
				ExpectError: regexp.MustCompile(`aws-auth\s+ConfigMap\s+does\s+not\s+map\s+the\s+role`),
			},
			{
				PreConfig: func() {
					if err := expectEntry("EC2_LINUX"); err != nil {
						t.Error(err)
					}
					if _, err := sim.Faults().Add(fault.Fault{Service: "eks", Operation: "CreateAccessEntry", Kind: fault.Deny, Count: 1}); err != nil {
						t.Fatal(err)
					}
				},
				Config:      config("EC2_WINDOWS"),
				ExpectError: regexp.MustCompile(`the\s+EC2_LINUX\s+entry\s+was\s+put\s+back`),
			},
			{
				PreConfig: func() {
					if err := expectEntry("EC2_LINUX"); err != nil {
						t.Errorf("after EKS refused the new entry: %v", err)
					}
					if !warnings.has("1 NodeClaim runs with role "+role) || !warnings.has("cannot change its type") {
						t.Errorf("the plan did not warn that the entry of a role nodes run with is replaced; warnings: %q", warnings.warnings)
					}
				},
				Config: config("EC2_WINDOWS"),
				Check:  func(*terraform.State) error { return expectEntry("EC2_WINDOWS") },
			},
			{
				// The node goes, so the role can be destroyed.
				PreConfig: func() {
					if _, err := ec2.NewFromConfig(cfg).TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{instance}}); err != nil {
						t.Fatal(err)
					}
					releaseClaims(pool)
				},
				Config: config("EC2_WINDOWS"),
			},
		},
	})
}
