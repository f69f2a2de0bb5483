package provider

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

func TestAccNodePoolDataSource(t *testing.T) {
	t.Parallel()
	config := previewPoolConfig("read-back", `"amd64"`, "a") + `
data "joist_node_pool" "read" {
  name = joist_node_pool.test.name
}
`
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: config,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("data.joist_node_pool.read", tfjsonpath.New("template").AtMapKey("metadata").AtMapKey("labels").AtMapKey("team"), knownvalue.StringExact("a")),
				// Defaults as the apiserver stored them.
				statecheck.ExpectKnownValue("data.joist_node_pool.read", tfjsonpath.New("disruption").AtMapKey("budgets").AtSliceIndex(0).AtMapKey("nodes"), knownvalue.StringExact("10%")),
				statecheck.ExpectKnownValue("data.joist_node_pool.read", tfjsonpath.New("ready"), knownvalue.Bool(false)),
			},
		}},
	})
}
