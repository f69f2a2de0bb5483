package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/policy"
)

const controllerRoleAddr = "joist_controller_iam_role.test"

func controllerRoleConfig(extra string) string {
	return awsProviderBlock() + fmt.Sprintf(`
resource "joist_node_iam_role" "node" {
  name = "acc-ctl-node"
}

resource "joist_interruption_queue" "q" {
  name = "acc-ctl"
}

resource "joist_controller_iam_role" "test" {
  node_role_arn           = joist_node_iam_role.node.arn
  interruption_queue_name = joist_interruption_queue.q.name
  %s
}

data "joist_controller_policy" "p" {
  node_role_arn           = joist_node_iam_role.node.arn
  interruption_queue_name = joist_interruption_queue.q.name
}
`, extra)
}

const controllerRoleName = "JoistController-" + testAWSCluster

// checkControllerRole asserts the live role's trust principal, that its
// permissions are exactly the rendered policy, and the association.
func checkControllerRole(iamc *iam.Client, eksc *eks.Client, trustHas string, managed, association bool) resource.TestCheckFunc {
	return func(*terraform.State) error {
		ctx := context.Background()
		live, err := readRole(ctx, iamc, controllerRoleName)
		if err != nil || live == nil {
			return fmt.Errorf("role %s: %v", controllerRoleName, err)
		}
		if !strings.Contains(live.Trust, trustHas) {
			return fmt.Errorf("trust policy %s lacks %s", live.Trust, trustHas)
		}
		want, err := policy.Render(policy.Params{Region: "us-west-2", AccountID: "123456789012", ClusterName: testAWSCluster,
			NodeRoleARN: "arn:aws:iam::123456789012:role/acc-ctl-node", QueueName: "acc-ctl"})
		if err != nil {
			return err
		}
		parts, err := policy.Split(want, policy.ManagedPolicyMaxSize)
		if err != nil {
			return err
		}
		var statements int
		if !managed {
			if len(live.Inline) != 1 || !sameJSON(live.Inline[inlinePolicyName], want.JSON()) {
				return fmt.Errorf("inline policies %v, want the rendered policy", live.Inline)
			}
			statements = len(want.Statement)
		} else {
			if len(live.Inline) != 0 || len(live.Attached) != len(parts) {
				return fmt.Errorf("%d inline and %d managed policies, want 0 and %d", len(live.Inline), len(live.Attached), len(parts))
			}
			for _, a := range live.Attached {
				doc, err := defaultPolicyDocument(ctx, iamc, a)
				if err != nil {
					return err
				}
				if len(doc) > policy.ManagedPolicyMaxSize {
					return fmt.Errorf("managed policy %s is %d characters", a, len(doc))
				}
				statements += strings.Count(doc, `"Sid"`)
			}
		}
		if statements != len(want.Statement) {
			return fmt.Errorf("the role's policies hold %d statements, want %d", statements, len(want.Statement))
		}
		out, err := eksc.ListPodIdentityAssociations(ctx, &eks.ListPodIdentityAssociationsInput{ClusterName: aws.String(testAWSCluster), Namespace: aws.String("kube-system"), ServiceAccount: aws.String("joist")})
		if err != nil {
			return err
		}
		if got := len(out.Associations) == 1; got != association {
			return fmt.Errorf("%d pod identity associations for kube-system/joist, want association %v", len(out.Associations), association)
		}
		return nil
	}
}

// roleAndPoliciesGone fails when the role or a managed policy named after
// it is left in IAM.
func roleAndPoliciesGone(ctx context.Context, c *iam.Client, role string) error {
	if live, err := readRole(ctx, c, role); err != nil || live != nil {
		return fmt.Errorf("role %s remains (err %v)", role, err)
	}
	pols, err := c.ListPolicies(ctx, &iam.ListPoliciesInput{Scope: "Local"})
	if err != nil {
		return err
	}
	for _, p := range pols.Policies {
		if strings.HasPrefix(aws.ToString(p.PolicyName), role) {
			return fmt.Errorf("policy %s remains", aws.ToString(p.PolicyName))
		}
	}
	return nil
}

func TestAccControllerIAMRoleLifecycle(t *testing.T) {
	sim := awsSim(t)
	iamc, eksc := iam.NewFromConfig(sim.AWSConfig()), eks.NewFromConfig(sim.AWSConfig())
	ctx := context.Background()
	managedCfg := controllerRoleConfig(`policy_type = "managed"
  tags = { team = "a" }`)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy: func(*terraform.State) error {
			if err := roleAndPoliciesGone(ctx, iamc, controllerRoleName); err != nil {
				return err
			}
			out, err := eksc.ListPodIdentityAssociations(ctx, &eks.ListPodIdentityAssociationsInput{ClusterName: aws.String(testAWSCluster)})
			if err != nil {
				return err
			}
			if len(out.Associations) != 0 {
				return fmt.Errorf("%d pod identity associations remain", len(out.Associations))
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				Config: controllerRoleConfig(""),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(controllerRoleAddr, tfjsonpath.New("name"), knownvalue.StringExact(controllerRoleName)),
					statecheck.ExpectKnownValue(controllerRoleAddr, tfjsonpath.New("managed_policy_arns"), knownvalue.ListSizeExact(0)),
				},
				Check: resource.ComposeTestCheckFunc(
					checkControllerRole(iamc, eksc, "pods.eks.amazonaws.com", false, true),
					resource.TestCheckResourceAttrPair("data.joist_controller_policy.p", "json", controllerRoleAddr, "policy_documents.0"),
				),
			},
			{
				Config: managedCfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(controllerRoleAddr, plancheck.ResourceActionUpdate),
				}},
				Check: checkControllerRole(iamc, eksc, "pods.eks.amazonaws.com", true, true),
			},
			{
				// Out of band: a policy widened and the association removed.
				PreConfig: func() {
					arn := "arn:aws:iam::123456789012:policy/" + controllerRoleName + "-1"
					if err := setPolicyDocument(ctx, iamc, arn, `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"*","Resource":"*"}]}`); err != nil {
						t.Fatal(err)
					}
					out, err := eksc.ListPodIdentityAssociations(ctx, &eks.ListPodIdentityAssociationsInput{ClusterName: aws.String(testAWSCluster)})
					if err != nil || len(out.Associations) != 1 {
						t.Fatalf("associations: %v %v", out, err)
					}
					if _, err := eksc.DeletePodIdentityAssociation(ctx, &eks.DeletePodIdentityAssociationInput{ClusterName: aws.String(testAWSCluster), AssociationId: out.Associations[0].AssociationId}); err != nil {
						t.Fatal(err)
					}
				},
				Config: managedCfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(controllerRoleAddr, plancheck.ResourceActionUpdate),
				}},
				Check: checkControllerRole(iamc, eksc, "pods.eks.amazonaws.com", true, true),
			},
			{ResourceName: controllerRoleAddr, ImportState: true, ImportStateId: controllerRoleName, ImportStateVerify: true},
			{
				Config: controllerRoleConfig(`policy_type = "managed"
  tags = { team = "a" }
  oidc_provider_arn = "arn:aws:iam::123456789012:oidc-provider/oidc.eks.us-west-2.amazonaws.com/id/ABC"`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(controllerRoleAddr, plancheck.ResourceActionUpdate),
				}},
				Check: checkControllerRole(iamc, eksc, "oidc.eks.us-west-2.amazonaws.com/id/ABC:sub", true, false),
			},
		},
	})
}
