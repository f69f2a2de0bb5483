package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/joistdev/terraform-provider-joist/internal/awssim"
	awseks "github.com/joistdev/terraform-provider-joist/internal/awssim/eks"
	"github.com/joistdev/terraform-provider-joist/internal/awssim/fault"
)

// partialCase is one AWS resource whose create is made to fail at each of
// the calls after its first write.
type partialCase struct {
	name   string
	config string
	// calls are service/operation pairs that the create makes after it has
	// created something.
	calls []string
	// gone checks that nothing of the resource is left in awssim.
	gone func(sim *awssim.Server) error
}

func partialCases() []partialCase {
	const queue, nodeRole, ctlRole, ctlManaged = "acc-partial-q", "acc-partial-node", "acc-partial-ctl", "acc-partial-ctl-m"
	ctx := context.Background()
	roleGone := func(name string) func(*awssim.Server) error {
		return func(sim *awssim.Server) error {
			if err := roleAndPoliciesGone(ctx, iam.NewFromConfig(sim.AWSConfig()), name); err != nil {
				return err
			}
			e := eks.NewFromConfig(sim.AWSConfig())
			assoc, err := e.ListPodIdentityAssociations(ctx, &eks.ListPodIdentityAssociationsInput{ClusterName: aws.String(testAWSCluster), Namespace: aws.String("partial")})
			if err != nil {
				return err
			}
			if len(assoc.Associations) > 0 {
				return fmt.Errorf("%d pod identity associations in namespace partial left behind", len(assoc.Associations))
			}
			entries, err := e.ListAccessEntries(ctx, &eks.ListAccessEntriesInput{ClusterName: aws.String(testAWSCluster)})
			if err != nil {
				return err
			}
			for _, a := range entries.AccessEntries {
				if strings.HasSuffix(a, "/"+name) {
					return fmt.Errorf("access entry %s left behind", a)
				}
			}
			return nil
		}
	}
	ctl := func(role, extra string) string {
		return awsProviderBlock() + fmt.Sprintf(`
resource "joist_controller_iam_role" "test" {
  name          = %q
  node_role_arn = "arn:aws:iam::123456789012:role/some-node-role"
  namespace     = "partial"
  %s
}
`, role, extra)
	}
	return []partialCase{
		{
			name:   "interruption queue",
			config: queueConfig(queue, ""),
			calls:  []string{"sqs/GetQueueAttributes", "sqs/SetQueueAttributes", "events/PutRule", "events/PutTargets"},
			gone: func(sim *awssim.Server) error {
				if _, ok := sim.SQS.Attributes(queue); ok {
					return fmt.Errorf("queue %s left behind", queue)
				}
				rules, err := eventbridge.NewFromConfig(sim.AWSConfig()).ListRules(ctx, &eventbridge.ListRulesInput{NamePrefix: aws.String(queue)})
				if err != nil {
					return err
				}
				if len(rules.Rules) != 0 {
					return fmt.Errorf("%d rules of queue %s left behind", len(rules.Rules), queue)
				}
				return nil
			},
		},
		{
			name: "node role",
			config: awsProviderBlock() + fmt.Sprintf(`
resource "joist_node_iam_role" "test" {
  name = %q
}
`, nodeRole),
			calls: []string{"iam/AttachRolePolicy", "eks/CreateAccessEntry"},
			gone:  roleGone(nodeRole),
		},
		{
			name:   "controller role, inline policy",
			config: ctl(ctlRole, ""),
			calls:  []string{"iam/PutRolePolicy", "eks/CreatePodIdentityAssociation"},
			gone:   roleGone(ctlRole),
		},
		{
			name:   "controller role, managed policies",
			config: ctl(ctlManaged, `policy_type = "managed"`),
			calls:  []string{"iam/CreatePolicy", "iam/AttachRolePolicy", "eks/CreatePodIdentityAssociation"},
			gone:   roleGone(ctlManaged),
		},
	}
}

// Each AWS resource's create fails at each call after its first write (a
// server error that outlasts the SDK's retries). The failed apply reports
// the failing call, never "Provider returned invalid result object"; the
// next apply converges to an empty plan; destroy leaves nothing.
func TestAccAWSResourcesRecoverFromPartialCreate(t *testing.T) {
	sim := awsSim(t)
	for _, c := range partialCases() {
		for _, call := range c.calls {
			service, op, _ := strings.Cut(call, "/")
			t.Run(c.name+"/"+op, func(t *testing.T) {
				var injected fault.Fault
				failed := ""
				resource.UnitTest(t, resource.TestCase{
					ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
					ErrorCheck: func(err error) error {
						if failed != "" || injected.ID == 0 {
							return err
						}
						failed = err.Error()
						if strings.Contains(failed, "invalid result object") {
							return fmt.Errorf("a failed create left unknown values in state: %w", err)
						}
						if !strings.Contains(failed, service+":"+op) && !strings.Contains(failed, op) {
							return fmt.Errorf("the error does not name the failing call %s:%s: %w", service, op, err)
						}
						return nil
					},
					CheckDestroy: func(*terraform.State) error { return c.gone(sim) },
					Steps: []resource.TestStep{
						{
							PreConfig: func() {
								var err error
								if injected, err = sim.Faults().Add(fault.Fault{Service: service, Operation: op, Kind: fault.ServerError}); err != nil {
									t.Fatal(err)
								}
							},
							Config: c.config,
						},
						{
							PreConfig: func() {
								sim.Faults().Remove(injected.ID)
								if failed == "" {
									t.Fatalf("the create succeeded although every %s:%s call failed", service, op)
								}
							},
							Config: c.config,
						},
					},
				})
			})
		}
	}
}

// The EKS cluster is deleted before the roles that reference it: destroy
// still succeeds (an access entry or association of a cluster that is gone
// is gone) and leaves no role behind.
func TestAccAWSResourcesDestroyAfterClusterDeleted(t *testing.T) {
	sim := awsSim(t)
	const cluster = "acc-gone-cluster"
	ctx := context.Background()
	if _, err := sim.EKS.RegisterCluster(awseks.Cluster{Name: cluster, Endpoint: "https://127.0.0.1:6443", CertificateAuthorityPEM: []byte("ca")}); err != nil {
		t.Fatal(err)
	}
	config := awsProviderBlock() + fmt.Sprintf(`
resource "joist_node_iam_role" "test" {
  name         = "acc-gone-node"
  cluster_name = %[1]q
}
resource "joist_controller_iam_role" "test" {
  name          = "acc-gone-ctl"
  cluster_name  = %[1]q
  namespace     = "gone"
  node_role_arn = joist_node_iam_role.test.arn
}
`, cluster)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy: func(*terraform.State) error {
			c := iam.NewFromConfig(sim.AWSConfig())
			for _, role := range []string{"acc-gone-node", "acc-gone-ctl"} {
				if err := roleAndPoliciesGone(ctx, c, role); err != nil {
					return err
				}
			}
			return nil
		},
		Steps: []resource.TestStep{
			{Config: config},
			{
				PreConfig: func() {
					if _, err := eks.NewFromConfig(sim.AWSConfig()).DeleteCluster(ctx, &eks.DeleteClusterInput{Name: aws.String(cluster)}); err != nil {
						t.Fatal(err)
					}
				},
				Config:  config,
				Destroy: true,
			},
		},
	})
}
