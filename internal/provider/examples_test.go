package provider

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

// TestAccExamples applies the documentation's resource examples together
// against the sandbox: they must pass plan-time validation, apply, and plan
// empty afterwards.
func TestAccExamples(t *testing.T) {
	t.Parallel()
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..", "examples", "resources")
	config := providerBlock()
	for _, typ := range []string{"joist_ec2_node_class", "joist_node_pool", "joist_node_overlay"} {
		raw, err := os.ReadFile(filepath.Join(root, typ, "resource.tf"))
		if err != nil {
			t.Fatal(err)
		}
		config += string(raw)
	}
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkGone(nodePoolGVKResource, "default"),
		Steps: []resource.TestStep{{
			Config: config,
			Check: resource.ComposeTestCheckFunc(
				checkLive(nodePoolGVKResource, "default", "spec.disruption.budgets[1].schedule", "0 9 * * mon-fri"),
				checkLive(ec2NodeClassGVR, "default", "spec.kubelet.maxPods", "110"),
				checkLive(nodeOverlayGVR, "m5-savings-plan", "spec.priceAdjustment", "-30%"),
				checkLive(nodeOverlayGVR, "fuse-devices", "spec.requirements[0].values[0]", "default"),
			),
		}},
	})
}
