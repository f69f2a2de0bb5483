package provider

import (
	"context"
	"fmt"
	"maps"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

func nodePoolControlsConfig(name, controls string) string {
	return providerBlock() + fmt.Sprintf(`
resource "joist_node_pool" "test" {
  name = %q
  template = {
    spec = {
      node_class_ref = { group = "karpenter.k8s.aws", kind = "EC2NodeClass", name = "default" }
      requirements = [{ key = "kubernetes.io/arch", operator = "In", values = ["amd64"] }]
    }
  }
  %s
}
`, name, controls)
}

// checkJoistAnnotations asserts the live NodePool's joist.dev annotations
// are want exactly.
func checkJoistAnnotations(name string, want map[string]string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		obj, err := testCluster.kube.Resource(nodePoolGVKResource).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		got := map[string]string{}
		for k, v := range obj.GetAnnotations() {
			if len(k) > len("joist.dev/") && k[:len("joist.dev/")] == "joist.dev/" {
				got[k] = v
			}
		}
		if !maps.Equal(got, want) {
			return fmt.Errorf("live NodePool %s has joist.dev annotations %v, want %v", name, got, want)
		}
		return nil
	}
}

// TestAccNodePoolDisruptionControls: the typed attributes are written as
// the NodePool's joist.dev annotations, and removing them removes the
// annotations (the pool then means what it means to Karpenter).
func TestAccNodePoolDisruptionControls(t *testing.T) {
	t.Parallel()
	const name = "controls"
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkGone(nodePoolGVKResource, name),
		Steps: []resource.TestStep{
			{
				Config: nodePoolControlsConfig(name, `
  disruption_paused  = true
  disruption_breaker = "2/30m"
  rollout = { canary = "10%", bake = "15m", mode = "observe" }`),
				Check: checkJoistAnnotations(name, map[string]string{
					v1.DisruptionPausedAnnotationKey: "true", v1.DisruptionBreakerAnnotationKey: "2/30m",
					v1.DriftRolloutAnnotationKey: "canary=10%,bake=15m", v1.DriftModeAnnotationKey: "observe",
				}),
			},
			{
				Config: nodePoolControlsConfig(name, ""),
				Check:  checkJoistAnnotations(name, map[string]string{}),
			},
		},
	})
}
