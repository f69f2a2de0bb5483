package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
)

// roleNamed finds the one live role whose name begins with prefix.
func roleNamed(ctx context.Context, c *iam.Client, prefix string) (*liveRole, error) {
	out, err := c.ListRoles(ctx, &iam.ListRolesInput{})
	if err != nil {
		return nil, err
	}
	var names []string
	for _, r := range out.Roles {
		if strings.HasPrefix(aws.ToString(r.RoleName), prefix) {
			names = append(names, aws.ToString(r.RoleName))
		}
	}
	if len(names) != 1 {
		return nil, fmt.Errorf("roles named %s*: %v, want one", prefix, names)
	}
	if namePrefixOf(names[0]) != prefix {
		return nil, fmt.Errorf("role %s is not %s followed by a unique suffix", names[0], prefix)
	}
	return readRole(ctx, c, names[0])
}

func controllerRoleModuleInputs(maxSession int, actions, attached string) string {
	return awsProviderBlock() + fmt.Sprintf(`
resource "joist_node_iam_role" "node" {
  name = "acc-mod-node"
}

resource "joist_controller_iam_role" "test" {
  name_prefix                     = "acc-ctl-"
  node_role_arn                   = joist_node_iam_role.node.arn
  create_pod_identity_association = false
  max_session_duration            = %d
  ssm_parameter_arns              = ["arn:aws:ssm:us-west-2:123456789012:parameter/golden/ami"]
  additional_policy_arns          = %s
  trust_policy_statements = [{
    sid        = "Ops"
    actions    = ["sts:AssumeRole"]
    principals = [{ type = "AWS", identifiers = ["arn:aws:iam::123456789012:role/ops"] }]
    conditions = [{ test = "StringEquals", variable = "aws:PrincipalTag/team", values = ["platform"] }]
  }]
  policy_statements = [{
    sid       = "ReadGoldenImages"
    actions   = %s
    resources = ["arn:aws:s3:::golden/*"]
  }]
}
`, maxSession, attached, actions)
}

// TestAccControllerIAMRoleModuleInputs: the EKS module's controller role
// inputs reach the role (name prefix, session length, trust and
// permission statements, attached policies, SSM parameters), change in
// place, and import.
func TestAccControllerIAMRoleModuleInputs(t *testing.T) {
	sim := awsSim(t)
	iamc := iam.NewFromConfig(sim.AWSConfig())
	ctx := context.Background()
	// A policy of the account's, attached beside the controller's own.
	out, err := iamc.CreatePolicy(ctx, &iam.CreatePolicyInput{PolicyName: aws.String("acc-ops-read"),
		PolicyDocument: aws.String(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["s3:ListAllMyBuckets"],"Resource":"*"}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	readOnly := aws.ToString(out.Policy.Arn)
	t.Cleanup(func() { _ = deletePolicy(context.Background(), iamc, readOnly) })
	check := func(maxSession int64, action string, attached bool) resource.TestCheckFunc {
		return func(*terraform.State) error {
			live, err := roleNamed(ctx, iamc, "acc-ctl-")
			if err != nil {
				return err
			}
			var problems []string
			expect := func(ok bool, format string, args ...any) {
				if !ok {
					problems = append(problems, fmt.Sprintf(format, args...))
				}
			}
			expect(live.MaxSessionDuration == maxSession, "max session %d, want %d", live.MaxSessionDuration, maxSession)
			trust := documentStatements(live.Trust)
			expect(len(trust) == 2 && trust[1]["Sid"] == "Ops" && strings.Contains(live.Trust, "role/ops") && strings.Contains(live.Trust, "aws:PrincipalTag/team"),
				"trust policy %s lacks the Ops statement after Pod Identity's", live.Trust)
			expect(strings.Contains(live.Inline[inlinePolicyName], "parameter/golden/ami") && strings.Contains(live.Inline[inlinePolicyName], "parameter/aws/service/*"),
				"the SSM statement lacks the custom parameter or /aws/service/*: %s", live.Inline[inlinePolicyName])
			expect(strings.Contains(live.Inline[additionalPolicyName], action) && strings.Contains(live.Inline[additionalPolicyName], "ReadGoldenImages"),
				"inline %s = %q, want %s", additionalPolicyName, live.Inline[additionalPolicyName], action)
			expect(contains(live.Attached, readOnly) == attached, "attached %v, %s attached want %v", live.Attached, readOnly, attached)
			if len(problems) > 0 {
				return fmt.Errorf("%s", strings.Join(problems, "\n"))
			}
			return nil
		}
	}
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy: func(*terraform.State) error {
			if _, err := roleNamed(ctx, iamc, "acc-ctl-"); err == nil {
				return fmt.Errorf("the controller role remains")
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				Config: controllerRoleModuleInputs(7200, `["s3:GetObject"]`, fmt.Sprintf("[%q]", readOnly)),
				Check:  check(7200, "s3:GetObject", true),
			},
			{
				Config: controllerRoleModuleInputs(10800, `["s3:GetObject", "s3:ListBucket"]`, "null"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(controllerRoleAddr, plancheck.ResourceActionUpdate),
				}},
				Check: check(10800, "s3:ListBucket", false),
			},
			{
				ResourceName: controllerRoleAddr, ImportState: true, ImportStateVerify: true,
				ImportStateIdFunc: func(s *terraform.State) (string, error) {
					return s.RootModule().Resources[controllerRoleAddr].Primary.Attributes["name"], nil
				},
			},
		},
	})
}

// TestAccNodeIAMRoleModuleInputs: the node role's name prefix, session
// length and IPv6 CNI policy reach the role, change in place, and import.
func TestAccNodeIAMRoleModuleInputs(t *testing.T) {
	sim := awsSim(t)
	iamc := iam.NewFromConfig(sim.AWSConfig())
	ctx := context.Background()
	// The account's own IPv6 CNI policy, as the EKS module creates it.
	out, err := iamc.CreatePolicy(ctx, &iam.CreatePolicyInput{PolicyName: aws.String(ipv6CNIPolicyName),
		PolicyDocument: aws.String(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["ec2:AssignIpv6Addresses"],"Resource":"*"}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	ipv6Policy := aws.ToString(out.Policy.Arn)
	t.Cleanup(func() { _ = deletePolicy(context.Background(), iamc, ipv6Policy) })
	config := func(maxSession int, family string) string {
		return awsProviderBlock() + fmt.Sprintf(`
resource "joist_node_iam_role" "test" {
  name_prefix          = "acc-node-"
  access_entry_type    = "NONE"
  max_session_duration = %d
  cluster_ip_family    = %q
}
`, maxSession, family)
	}
	const addr = "joist_node_iam_role.test"
	check := func(maxSession int64, ipv6 bool) resource.TestCheckFunc {
		return func(*terraform.State) error {
			live, err := roleNamed(ctx, iamc, "acc-node-")
			if err != nil {
				return err
			}
			v4 := contains(live.Attached, "arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy")
			if live.MaxSessionDuration != maxSession || contains(live.Attached, ipv6Policy) != ipv6 || v4 == ipv6 {
				return fmt.Errorf("max session %d (want %d), attached %v (IPv6 CNI policy wanted: %v)", live.MaxSessionDuration, maxSession, live.Attached, ipv6)
			}
			return nil
		}
	}
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: config(3600, "ipv6"), Check: check(3600, true)},
			{
				Config: config(14400, "ipv4"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
				}},
				Check: check(14400, false),
			},
			{Config: config(14400, "ipv6"), Check: check(14400, true)},
			{
				ResourceName: addr, ImportState: true, ImportStateVerify: true,
				ImportStateIdFunc: func(s *terraform.State) (string, error) {
					return s.RootModule().Resources[addr].Primary.Attributes["name"], nil
				},
			},
		},
	})
}
