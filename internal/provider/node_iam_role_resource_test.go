package provider

import (
	"context"
	"fmt"
	"slices"
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
)

const nodeRoleAddr = "joist_node_iam_role.test"

func nodeRoleConfig(body string) string {
	return awsProviderBlock() + fmt.Sprintf(`
resource "joist_node_iam_role" "test" {
%s
}
`, body)
}

func managed(names ...string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = "arn:aws:iam::aws:policy/" + n
	}
	slices.Sort(out)
	return out
}

// checkNodeRole asserts the live role's attachments, trust and access entry.
func checkNodeRole(iamc *iam.Client, eksc *eks.Client, name string, attached []string, entryType string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		ctx := context.Background()
		live, err := readRole(ctx, iamc, name)
		if err != nil || live == nil {
			return fmt.Errorf("role %s: %v (exists: %v)", name, err, live != nil)
		}
		if !slices.Equal(live.Attached, attached) {
			return fmt.Errorf("role %s has %v attached, want %v", name, live.Attached, attached)
		}
		if !sameJSON(live.Trust, nodeTrustPolicy("aws")) {
			return fmt.Errorf("role %s trust = %s", name, live.Trust)
		}
		out, err := eksc.DescribeAccessEntry(ctx, &eks.DescribeAccessEntryInput{ClusterName: aws.String(testAWSCluster), PrincipalArn: aws.String(live.ARN)})
		if err != nil {
			return fmt.Errorf("access entry of %s: %w", name, err)
		}
		if got := aws.ToString(out.AccessEntry.Type); got != entryType {
			return fmt.Errorf("access entry type = %s, want %s", got, entryType)
		}
		return nil
	}
}

func TestAccNodeIAMRoleLifecycle(t *testing.T) {
	sim := awsSim(t)
	iamc, eksc := iam.NewFromConfig(sim.AWSConfig()), eks.NewFromConfig(sim.AWSConfig())
	const name = "JoistNodeRole-" + testAWSCluster
	all := managed("AmazonEKSWorkerNodePolicy", "AmazonEC2ContainerRegistryPullOnly", "AmazonEKS_CNI_Policy", "AmazonSSMManagedInstanceCore", "AmazonEC2ContainerRegistryReadOnly")
	noSSM := managed("AmazonEKSWorkerNodePolicy", "AmazonEC2ContainerRegistryPullOnly", "AmazonEKS_CNI_Policy", "AmazonEC2ContainerRegistryReadOnly")
	updated := nodeRoleConfig(`  attach_ssm_policy      = false
  additional_policy_arns = ["arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryReadOnly"]
  description            = "nodes of acc"
  tags                   = { team = "b" }`)
	ctx := context.Background()
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy: func(*terraform.State) error {
			if live, err := readRole(ctx, iamc, name); err != nil || live != nil {
				return fmt.Errorf("role %s remains after destroy (err %v)", name, err)
			}
			out, err := eksc.ListAccessEntries(ctx, &eks.ListAccessEntriesInput{ClusterName: aws.String(testAWSCluster)})
			if err != nil {
				return err
			}
			for _, e := range out.AccessEntries {
				if e == "arn:aws:iam::123456789012:role/"+name {
					return fmt.Errorf("access entry %s remains after destroy", e)
				}
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				Config: nodeRoleConfig(`  additional_policy_arns = ["arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryReadOnly"]
  tags                   = { team = "a" }`),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(nodeRoleAddr, tfjsonpath.New("name"), knownvalue.StringExact(name)),
					statecheck.ExpectKnownValue(nodeRoleAddr, tfjsonpath.New("arn"), knownvalue.StringExact("arn:aws:iam::123456789012:role/"+name)),
				},
				Check: checkNodeRole(iamc, eksc, name, all, "EC2_LINUX"),
			},
			{
				Config: updated,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(nodeRoleAddr, plancheck.ResourceActionUpdate),
				}},
				Check: checkNodeRole(iamc, eksc, name, noSSM, "EC2_LINUX"),
			},
			{
				// Out of band: a policy detached, another attached, the access entry deleted.
				PreConfig: func() {
					arn := "arn:aws:iam::123456789012:role/" + name
					for _, err := range []error{
						second(iamc.DetachRolePolicy(ctx, &iam.DetachRolePolicyInput{RoleName: aws.String(name), PolicyArn: aws.String(managed("AmazonEKSWorkerNodePolicy")[0])})),
						second(iamc.AttachRolePolicy(ctx, &iam.AttachRolePolicyInput{RoleName: aws.String(name), PolicyArn: aws.String(managed("AmazonEKSClusterPolicy")[0])})),
						second(eksc.DeleteAccessEntry(ctx, &eks.DeleteAccessEntryInput{ClusterName: aws.String(testAWSCluster), PrincipalArn: aws.String(arn)})),
					} {
						if err != nil {
							t.Fatal(err)
						}
					}
				},
				Config: updated,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(nodeRoleAddr, plancheck.ResourceActionUpdate),
				}},
				Check: checkNodeRole(iamc, eksc, name, noSSM, "EC2_LINUX"),
			},
			{ResourceName: nodeRoleAddr, ImportState: true, ImportStateId: name, ImportStateVerify: true},
			{
				Config: nodeRoleConfig(`  attach_ssm_policy      = false
  additional_policy_arns = ["arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryReadOnly"]
  description            = "nodes of acc"
  tags                   = { team = "b" }
  access_entry_type      = "EC2_WINDOWS"`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(nodeRoleAddr, plancheck.ResourceActionUpdate),
				}},
				Check: checkNodeRole(iamc, eksc, name, noSSM, "EC2_WINDOWS"),
			},
		},
	})
}

func TestAccNodeIAMRoleBringYourOwn(t *testing.T) {
	sim := awsSim(t)
	iamc, eksc := iam.NewFromConfig(sim.AWSConfig()), eks.NewFromConfig(sim.AWSConfig())
	ctx := context.Background()
	const name = "platform-node-role"
	arn, err := createRole(ctx, iamc, roleSpec{Name: name, Path: "/", Trust: nodeTrustPolicy("aws")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = deleteRole(ctx, iamc, name, &roleRelease{}) })
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy: func(*terraform.State) error {
			if live, err := readRole(ctx, iamc, name); err != nil || live == nil {
				return fmt.Errorf("destroy removed the role it did not create (err %v)", err)
			}
			if _, err := eksc.DescribeAccessEntry(ctx, &eks.DescribeAccessEntryInput{ClusterName: aws.String(testAWSCluster), PrincipalArn: aws.String(arn)}); err == nil {
				return fmt.Errorf("access entry of %s remains after destroy", name)
			}
			return nil
		},
		Steps: []resource.TestStep{{
			Config: nodeRoleConfig(`  name        = "` + name + `"
  create_role = false`),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(nodeRoleAddr, tfjsonpath.New("arn"), knownvalue.StringExact(arn)),
			},
			Check: checkNodeRole(iamc, eksc, name, nil, "EC2_LINUX"),
		}},
	})
}

// second drops an SDK call's output, keeping its error.
func second[T any](_ T, err error) error { return err }
