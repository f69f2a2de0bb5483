package provider

import (
	"context"
	"fmt"
	"maps"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"

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

// TestAccNodePoolDisruptionControlsRead: importing a pool reads its
// joist.dev annotations into the attributes (the plan is empty), a change
// made outside Terraform shows as drift the next apply reverts, and a
// refresh keeps the configuration's spelling of a duration.
func TestAccNodePoolDisruptionControlsRead(t *testing.T) {
	t.Parallel()
	const name = "controls-read"
	const addr = "joist_node_pool.test"
	controls := `
  disruption_paused        = true
  disruption_breaker       = "2/30m"
  disruption_breaker_reset = "r1"
  rollout = { canary = "10%", bake = "15m", mode = "observe" }`
	want := map[string]string{
		v1.DisruptionPausedAnnotationKey: "true", v1.DisruptionBreakerAnnotationKey: "2/30m", v1.DisruptionBreakerResetAnnotationKey: "r1",
		v1.DriftRolloutAnnotationKey: "canary=10%,bake=15m", v1.DriftModeAnnotationKey: "observe",
	}
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkGone(nodePoolGVKResource, name),
		Steps: []resource.TestStep{
			{Config: nodePoolControlsConfig(name, controls), Check: checkJoistAnnotations(name, want)},
			{
				// The import plan must be a no-op: every control read back.
				Config: nodePoolControlsConfig(name, controls), ResourceName: addr,
				ImportState: true, ImportStateKind: resource.ImportBlockWithID, ImportStateId: name,
			},
			{
				PreConfig: func() {
					patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:null,%q:"5/1h"}}}`,
						v1.DisruptionPausedAnnotationKey, v1.DisruptionBreakerAnnotationKey)
					if _, err := testCluster.kube.Resource(nodePoolGVKResource).Patch(context.Background(), name,
						k8stypes.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: "someone-else"}); err != nil {
						t.Fatal(err)
					}
				},
				Config: nodePoolControlsConfig(name, controls),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
				}},
				Check: checkJoistAnnotations(name, want),
			},
			{
				// Applied, then refreshed and planned empty: "90m" is kept
				// though the controls read it as 1h30m.
				Config: nodePoolControlsConfig(name, `
  disruption_breaker = "2/90m"
  rollout = { canary = "1", bake = "90m" }`),
				Check: checkJoistAnnotations(name, map[string]string{
					v1.DisruptionBreakerAnnotationKey: "2/90m", v1.DriftRolloutAnnotationKey: "canary=1,bake=90m",
				}),
			},
		},
	})
}
