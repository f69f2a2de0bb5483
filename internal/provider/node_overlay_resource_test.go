package provider

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

const overlayAddr = "joist_node_overlay.test"

var nodeOverlayGVR = nodeOverlayGVK.GroupVersion().WithResource("nodeoverlays")

func nodeOverlayConfig(name, body string) string {
	return providerBlock() + fmt.Sprintf(`
resource "joist_node_overlay" "test" {
  name = %q
  requirements = [
    { key = "karpenter.sh/nodepool", operator = "In", values = ["default"] },
    { key = "node.kubernetes.io/instance-type", operator = "In", values = ["m5.large", "m5.xlarge"] },
  ]
%s
}
`, name, body)
}

func TestAccNodeOverlayLifecycle(t *testing.T) {
	t.Parallel()
	const name = "overlay-lifecycle"
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkGone(nodeOverlayGVR, name),
		Steps: []resource.TestStep{
			{
				Config: nodeOverlayConfig(name, `
  weight           = 10
  price_adjustment = "-10%"
  capacity         = { "example.com/device" = "2" }
`),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(overlayAddr, tfjsonpath.New("weight"), knownvalue.Int64Exact(10)),
					statecheck.ExpectKnownValue(overlayAddr, tfjsonpath.New("capacity").AtMapKey("example.com/device"), knownvalue.StringExact("2")),
					// No controller runs here: nothing reports the overlay Ready.
					statecheck.ExpectKnownValue(overlayAddr, tfjsonpath.New("ready"), knownvalue.Bool(false)),
				},
				Check: resource.ComposeTestCheckFunc(
					checkLive(nodeOverlayGVR, name, "spec.priceAdjustment", "-10%"),
					checkLive(nodeOverlayGVR, name, "spec.requirements[1].values[1]", "m5.xlarge"),
					checkFieldManager(nodeOverlayGVR, name),
				),
			},
			{
				// From an adjustment to a price: updated in place.
				Config: nodeOverlayConfig(name, `
  weight = 20
  price  = "0.05"
`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(overlayAddr, plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeTestCheckFunc(
					checkLive(nodeOverlayGVR, name, "spec.price", "0.05"),
					checkLive(nodeOverlayGVR, name, "spec.priceAdjustment", "<nil>"),
					checkLive(nodeOverlayGVR, name, "spec.weight", "20"),
				),
			},
			{
				ResourceName:      overlayAddr,
				ImportState:       true,
				ImportStateId:     name,
				ImportStateVerify: true,
				// A plan's prediction: an imported state has none.
				ImportStateVerifyIgnore: []string{"planned_impact"},
			},
		},
	})
}

// The CRD's rules refuse at plan what the apiserver would refuse at apply.
func TestAccNodeOverlayValidation(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, body string
		want       *regexp.Regexp
	}{
		{"both-prices", `  price = "1"
  price_adjustment = "+1"`, regexp.MustCompile(`cannot set both 'price' and 'priceAdjustment'`)},
		{"cpu-capacity", `  capacity = { cpu = "4" }`, regexp.MustCompile(`capacity may only add extended resources`)},
		{"weight-zero", `  weight = 0`, regexp.MustCompile(`(?s)weight.*greater than or equal to 1`)},
		{"decrease-beyond-100", `  price_adjustment = "-150%"`, regexp.MustCompile(`price_adjustment`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			resource.UnitTest(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps: []resource.TestStep{{
					Config: nodeOverlayConfig("overlay-"+tc.name, tc.body), PlanOnly: true, ExpectError: tc.want,
				}},
			})
		})
	}
}
