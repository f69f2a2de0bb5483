package provider

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"
)

const nodePoolAddr = "joist_node_pool.test"

// nodePoolConfig is a small pool with the parts the update steps vary.
func nodePoolConfig(name, archs, team, limitCPU, budget, taintEffect string) string {
	return providerBlock() + fmt.Sprintf(`
resource "joist_node_pool" "test" {
  name = %q
  template = {
    metadata = {
      labels = { team = %q }
    }
    spec = {
      node_class_ref = { group = "karpenter.k8s.aws", kind = "EC2NodeClass", name = "default" }
      requirements = [
        { key = "kubernetes.io/arch", operator = "In", values = [%s] },
        { key = "karpenter.sh/capacity-type", operator = "In", values = ["on-demand"] },
      ]
      taints = [{ key = "example.com/dedicated", value = "batch", effect = %q }]
    }
  }
  limits = { cpu = %q }
  disruption = {
    consolidate_after = "30s"
    budgets           = [{ nodes = %q }]
  }
}
`, name, team, archs, taintEffect, limitCPU, budget)
}

func TestAccNodePoolLifecycle(t *testing.T) {
	t.Parallel()
	const name = "lifecycle"
	update := func(cfg string) resource.TestStep {
		return resource.TestStep{
			Config: cfg,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(nodePoolAddr, plancheck.ResourceActionUpdate),
			}},
		}
	}
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkGone(nodePoolGVKResource, name),
		Steps: []resource.TestStep{
			{
				Config: nodePoolConfig(name, `"amd64"`, "a", "100", "10%", "NoSchedule"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(nodePoolAddr, plancheck.ResourceActionCreate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(nodePoolAddr, tfjsonpath.New("id"), knownvalue.StringExact(name)),
					// Server defaults are in the state, so the next plan is empty.
					statecheck.ExpectKnownValue(nodePoolAddr, tfjsonpath.New("disruption").AtMapKey("consolidation_policy"), knownvalue.StringExact("WhenEmptyOrUnderutilized")),
					statecheck.ExpectKnownValue(nodePoolAddr, tfjsonpath.New("template").AtMapKey("spec").AtMapKey("expire_after"), knownvalue.StringExact("720h")),
				},
				Check: checkLive(nodePoolGVKResource, name, "spec.limits.cpu", "100"),
			},
			update(nodePoolConfig(name, `"amd64", "arm64"`, "a", "100", "10%", "NoSchedule")),
			update(nodePoolConfig(name, `"amd64", "arm64"`, "a", "200", "10%", "NoSchedule")),
			update(nodePoolConfig(name, `"amd64", "arm64"`, "a", "200", "3", "NoSchedule")),
			update(nodePoolConfig(name, `"amd64", "arm64"`, "b", "200", "3", "NoSchedule")),
			{
				Config: nodePoolConfig(name, `"amd64", "arm64"`, "b", "200", "3", "NoExecute"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(nodePoolAddr, plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeTestCheckFunc(
					checkLive(nodePoolGVKResource, name, "spec.template.spec.taints[0].effect", "NoExecute"),
					checkLive(nodePoolGVKResource, name, "spec.template.metadata.labels.team", "b"),
					checkLive(nodePoolGVKResource, name, "spec.disruption.budgets[0].nodes", "3"),
					checkLive(nodePoolGVKResource, name, "spec.template.spec.requirements[0].values[1]", "arm64"),
					checkFieldManager(nodePoolGVKResource, name),
				),
			},
			{
				ResourceName:      nodePoolAddr,
				ImportState:       true,
				ImportStateId:     name,
				ImportStateVerify: true,
				// A plan-time preview of the last change, not part of the object.
				ImportStateVerifyIgnore: []string{"planned_disruption", "planned_impact"},
			},
			{
				// An edit made outside Terraform shows as drift and is undone.
				PreConfig: func() {
					patchLive(t, nodePoolGVKResource, name, `{"spec":{"limits":{"cpu":"999"},"weight":7}}`)
				},
				Config:             nodePoolConfig(name, `"amd64", "arm64"`, "b", "200", "3", "NoExecute"),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
			{
				Config: nodePoolConfig(name, `"amd64", "arm64"`, "b", "200", "3", "NoExecute"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(nodePoolAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(nodePoolAddr, tfjsonpath.New("limits").AtMapKey("cpu"), knownvalue.StringExact("200")),
					plancheck.ExpectKnownValue(nodePoolAddr, tfjsonpath.New("weight"), knownvalue.Null()),
				}},
				Check: checkLive(nodePoolGVKResource, name, "spec.limits.cpu", "200"),
			},
		},
	})
}

var nodePoolGVKResource = nodePoolGVK.GroupVersion().WithResource("nodepools")

// checkLive compares a field of the live object (dotted path, [i] indexes).
func checkLive(gvr groupVersionResource, name, field, want string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		obj, err := testCluster.kube.Resource(gvr).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		got := fmt.Sprint(fieldAt(obj.Object, field))
		if got != want {
			return fmt.Errorf("live %s %s: %s = %q, want %q", gvr.Resource, name, field, got, want)
		}
		return nil
	}
}

// checkFieldManager asserts the spec was written by server-side apply under
// the provider's field manager.
func checkFieldManager(gvr groupVersionResource, name string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		obj, err := testCluster.kube.Resource(gvr).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, mf := range obj.GetManagedFields() {
			if mf.Manager == FieldManager && mf.Operation == metav1.ManagedFieldsOperationApply {
				return nil
			}
		}
		return fmt.Errorf("%s %s has no server-side apply entry of %s: %v", gvr.Resource, name, FieldManager, obj.GetManagedFields())
	}
}

func checkGone(gvr groupVersionResource, name string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		deadline := time.Now().Add(30 * time.Second)
		for {
			_, err := testCluster.kube.Resource(gvr).Get(context.Background(), name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%s %s still exists after destroy (err %v)", gvr.Resource, name, err)
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
}

func patchLive(t *testing.T, gvr groupVersionResource, name, patch string) {
	t.Helper()
	if _, err := testCluster.kube.Resource(gvr).Patch(context.Background(), name, k8stypes.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatalf("patching %s %s: %v", gvr.Resource, name, err)
	}
}

// Renaming a node pool replaces it, and deleting the old pool deletes all
// of its NodeClaims at once: the plan warns with their number.
func TestAccNodePoolRenameWarnsOfItsNodeClaims(t *testing.T) {
	t.Parallel()
	const pool, renamed = "rename-from", "rename-to"
	warnings := &planWarnings{}
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: warnings.factories(),
		CheckDestroy:             checkGone(nodePoolGVKResource, pool),
		Steps: []resource.TestStep{
			{Config: previewPoolConfig(pool, `"amd64"`, "a")},
			{
				PreConfig:          func() { createClaims(t, pool, 3) },
				Config:             previewPoolConfig(renamed, `"amd64"`, "a"),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
			{PreConfig: func() { releaseClaims(pool) }, Config: previewPoolConfig(pool, `"amd64"`, "a")},
		},
	})
	want := "Renaming node pool " + pool + " to " + renamed + " replaces it: deleting " + pool + " deletes its 3 NodeClaims at once"
	if !warnings.has(want) {
		t.Errorf("the plan did not warn %q; warnings: %q", want, warnings.warnings)
	}
}
