package provider

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/policy"
)

func TestAccControllerPolicyDataSourceScopesToItsInputs(t *testing.T) {
	awsSim(t)
	const addr = "data.joist_controller_policy.cn"
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			// Region, account and partition given: no AWS call decides them.
			Config: awsProviderBlock() + `
data "joist_controller_policy" "cn" {
  cluster_name  = "blue"
  node_role_arn = "arn:aws-cn:iam::210987654321:role/blue-nodes"
  region        = "cn-north-1"
  account_id    = "210987654321"
}
`,
			Check: resource.ComposeTestCheckFunc(
				resource.TestCheckResourceAttr(addr, "partition", "aws-cn"),
				func(s *terraform.State) error {
					attrs := s.RootModule().Resources[addr].Primary.Attributes
					var doc policy.Document
					if err := json.Unmarshal([]byte(attrs["json"]), &doc); err != nil {
						return err
					}
					ok, err := doc.Allows(policy.Request{Action: "eks:DescribeCluster", Resource: "arn:aws-cn:eks:cn-north-1:210987654321:cluster/blue"})
					if err != nil || !ok {
						return fmt.Errorf("the policy does not let the controller describe its cluster (err %v)", err)
					}
					for _, a := range doc.Actions() {
						if a == "sqs:ReceiveMessage" {
							return fmt.Errorf("without a queue the policy grants %s", a)
						}
					}
					n := attrs["managed_policy_documents.#"]
					if n == "" || n == "0" {
						return fmt.Errorf("no managed policy documents")
					}
					for i := 0; attrs[fmt.Sprintf("managed_policy_documents.%d", i)] != ""; i++ {
						if l := len(attrs[fmt.Sprintf("managed_policy_documents.%d", i)]); l > policy.ManagedPolicyMaxSize {
							return fmt.Errorf("managed document %d is %d characters", i, l)
						}
					}
					return nil
				},
			),
		}},
	})
}
