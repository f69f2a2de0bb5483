package provider

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
)

// TestAccInstanceTypesDataSource resolves requirements against awssim's
// catalog through the provider's AWS configuration (the SDK environment).
func TestAccInstanceTypesDataSource(t *testing.T) {
	t.Parallel()
	config := providerBlock() + `
data "joist_instance_types" "small_arm" {
  requirements = [
    { key = "karpenter.k8s.aws/instance-category", operator = "In", values = ["c", "m"] },
    { key = "kubernetes.io/arch", operator = "In", values = ["arm64"] },
    { key = "karpenter.k8s.aws/instance-cpu", operator = "Lte", values = ["4"] },
    { key = "karpenter.sh/capacity-type", operator = "In", values = ["on-demand"] },
  ]
}
`
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: config,
			Check: func(s *terraform.State) error {
				res := s.RootModule().Resources["data.joist_instance_types.small_arm"]
				if res == nil {
					return fmt.Errorf("data source missing from state")
				}
				a := res.Primary.Attributes
				n, _ := strconv.Atoi(a["instance_types.#"])
				if n == 0 {
					return fmt.Errorf("no instance types admitted")
				}
				prev := -1.0
				for i := 0; i < n; i++ {
					at := func(k string) string { return a[fmt.Sprintf("instance_types.%d.%s", i, k)] }
					name := at("name")
					if !strings.HasPrefix(name, "c") && !strings.HasPrefix(name, "m") {
						return fmt.Errorf("%s is not in category c or m", name)
					}
					if at("architecture") != "arm64" {
						return fmt.Errorf("%s is %s, not arm64", name, at("architecture"))
					}
					if v, _ := strconv.Atoi(at("vcpus")); v > 4 || v == 0 {
						return fmt.Errorf("%s has %d vCPUs", name, v)
					}
					if at("capacity_types.#") != "1" || at("capacity_types.0") != "on-demand" {
						return fmt.Errorf("%s offers %s capacity types, want on-demand only", name, at("capacity_types.#"))
					}
					price, err := strconv.ParseFloat(at("price"), 64)
					if err != nil || price <= 0 || price < prev {
						return fmt.Errorf("%s: price %q not positive or not sorted after %v", name, at("price"), prev)
					}
					if at("price") != at("on_demand_price") {
						return fmt.Errorf("%s: price %s is not its on-demand price %s", name, at("price"), at("on_demand_price"))
					}
					prev = price
				}
				return nil
			},
		}},
	})
}
