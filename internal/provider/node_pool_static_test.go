package provider

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

// staticNodePoolConfig is a static pool of replicas nodes.
func staticNodePoolConfig(name string, replicas int) string {
	return providerBlock() + fmt.Sprintf(`
resource "joist_node_pool" "test" {
  name     = %q
  replicas = %d
  template = {
    spec = {
      node_class_ref = { group = "karpenter.k8s.aws", kind = "EC2NodeClass", name = "default" }
      requirements = [
        { key = "karpenter.sh/capacity-type", operator = "In", values = ["on-demand"] },
      ]
    }
  }
  limits = { nodes = "10" }
}
`, name, replicas)
}

// TestAccNodePoolStatic: replicas is planned, applied, updated in place,
// imported, and a change made through the scale subresource shows as
// drift that the next apply undoes.
func TestAccNodePoolStatic(t *testing.T) {
	t.Parallel()
	const name = "static"
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkGone(nodePoolGVKResource, name),
		Steps: []resource.TestStep{
			{
				Config: staticNodePoolConfig(name, 3),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(nodePoolAddr, plancheck.ResourceActionCreate),
					plancheck.ExpectKnownValue(nodePoolAddr, tfjsonpath.New("replicas"), knownvalue.Int64Exact(3)),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(nodePoolAddr, tfjsonpath.New("replicas"), knownvalue.Int64Exact(3)),
				},
				Check: checkLive(nodePoolGVKResource, name, "spec.replicas", "3"),
			},
			{
				Config: staticNodePoolConfig(name, 5),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(nodePoolAddr, plancheck.ResourceActionUpdate),
				}},
				Check: checkLive(nodePoolGVKResource, name, "spec.replicas", "5"),
			},
			{
				ResourceName:            nodePoolAddr,
				ImportState:             true,
				ImportStateId:           name,
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"planned_disruption"},
			},
			{
				// kubectl scale nodepool static --replicas=7
				PreConfig:          func() { patchLive(t, nodePoolGVKResource, name, `{"spec":{"replicas":7}}`) },
				Config:             staticNodePoolConfig(name, 5),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
			{
				Config: staticNodePoolConfig(name, 5),
				Check:  checkLive(nodePoolGVKResource, name, "spec.replicas", "5"),
			},
		},
	})
}
