package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	fwresource "github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/joistdev/terraform-provider-joist/internal/provider/crdschema"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

func previewPoolConfig(name, archs, team string) string {
	return providerBlock() + fmt.Sprintf(`
resource "joist_node_pool" "test" {
  name = %q
  template = {
    metadata = { labels = { team = %q } }
    spec = {
      node_class_ref = { group = "karpenter.k8s.aws", kind = "EC2NodeClass", name = "default" }
      requirements   = [{ key = "kubernetes.io/arch", operator = "In", values = [%s] }]
    }
  }
  disruption = { consolidate_after = "1m" }
}
`, name, team, archs)
}

// createClaims makes NodeClaims of pool directly (no controller runs), as
// launched from its current template on amd64 instances.
func createClaims(t *testing.T, pool string, n int, finalizers ...string) []string {
	t.Helper()
	var names []string
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("%s-claim-%d", pool, i)
		claim := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "karpenter.sh/v1",
			"kind":       "NodeClaim",
			"metadata": map[string]any{
				"name": name,
				"labels": map[string]any{
					v1.NodePoolLabelKey:  pool,
					"kubernetes.io/arch": "amd64",
					"team":               "a",
				},
			},
			"spec": map[string]any{
				"nodeClassRef": map[string]any{"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
				"requirements": []any{map[string]any{"key": "kubernetes.io/arch", "operator": "In", "values": []any{"amd64"}}},
			},
		}}
		if len(finalizers) > 0 {
			claim.SetFinalizers(finalizers)
		}
		created, err := testCluster.kube.Resource(nodeClaimGVR).Create(context.Background(), claim, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("creating NodeClaim %s: %v", name, err)
		}
		markLaunched(t, created)
		names = append(names, name)
	}
	t.Cleanup(func() { releaseClaims(pool) })
	return names
}

// markLaunched gives the claim the Launched condition its instance's
// launch would: drift judges launched claims only.
func markLaunched(t *testing.T, claim *unstructured.Unstructured) {
	t.Helper()
	conditions := []any{map[string]any{
		"type": v1.ConditionTypeLaunched, "status": "True", "reason": v1.ConditionTypeLaunched, "message": "",
		"lastTransitionTime": time.Now().UTC().Format(time.RFC3339),
	}}
	if err := unstructured.SetNestedSlice(claim.Object, conditions, "status", "conditions"); err != nil {
		t.Fatal(err)
	}
	if _, err := testCluster.kube.Resource(nodeClaimGVR).UpdateStatus(context.Background(), claim, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("marking NodeClaim %s launched: %v", claim.GetName(), err)
	}
}

// releaseClaims removes whatever is left of a pool's claims.
func releaseClaims(pool string) {
	ctx := context.Background()
	claims, _ := poolClaims(ctx, testCluster.kube, pool)
	for _, c := range claims {
		_, _ = testCluster.kube.Resource(nodeClaimGVR).Patch(ctx, c.GetName(), "application/merge-patch+json", []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
		_ = testCluster.kube.Resource(nodeClaimGVR).Delete(ctx, c.GetName(), metav1.DeleteOptions{})
	}
}

func expectPreview(drifted, total, allowed int64) plancheck.PlanCheck {
	return plancheck.ExpectKnownValue(nodePoolAddr, tfjsonpath.New("planned_disruption"), knownvalue.ObjectExact(map[string]knownvalue.Check{
		"drifted_nodes":   knownvalue.Int64Exact(drifted),
		"total_nodes":     knownvalue.Int64Exact(total),
		"allowed_at_once": knownvalue.Int64Exact(allowed),
	}))
}

func TestAccNodePoolDisruptionPreview(t *testing.T) {
	t.Parallel()
	const pool = "preview"
	step := func(archs, team string, drifted int64) resource.TestStep {
		return resource.TestStep{
			Config: previewPoolConfig(pool, archs, team),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(nodePoolAddr, plancheck.ResourceActionUpdate),
				// The default budget is 10%: of 5 nodes, 1 at a time (rounded up).
				expectPreview(drifted, 5, 1),
			}},
		}
	}
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: previewPoolConfig(pool, `"amd64"`, "a")},
			func() resource.TestStep {
				s := step(`"amd64"`, "b", 5) // a template label: every node drifts
				s.PreConfig = func() { createClaims(t, pool, 5) }
				return s
			}(),
			step(`"amd64", "arm64"`, "b", 0), // widening requirements drifts none
			step(`"arm64"`, "b", 5),          // narrowing away from amd64 drifts all
			{
				// Without a controller, destroy would refuse while claims exist.
				PreConfig: func() { releaseClaims(pool) },
				Config:    previewPoolConfig(pool, `"arm64"`, "b"),
			},
		},
	})
}

// TestNodePoolPreviewWarning runs the resource's ModifyPlan on a label
// change of a pool with 5 NodeClaims and checks the warning users see.
func TestNodePoolPreviewWarning(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const pool = "preview-warning"
	r := NewNodePoolResource().(*NodePoolResource)
	r.clients = &clients{kubeKnown: true, kube: &kubernetesModel{ConfigPath: types.StringValue(testCluster.kubeconfig)}}
	var schemaResp fwresource.SchemaResponse
	r.Schema(ctx, fwresource.SchemaRequest{}, &schemaResp)
	s := schemaResp.Schema

	spec := func(team string) map[string]any {
		return map[string]any{
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"team": team}},
				"spec": map[string]any{
					"nodeClassRef": map[string]any{"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
					"requirements": []any{map[string]any{"key": "kubernetes.io/arch", "operator": "In", "values": []any{"amd64"}}},
					"expireAfter":  "720h",
				},
			},
			"disruption": map[string]any{"consolidateAfter": "1m", "consolidationPolicy": "WhenEmpty", "budgets": []any{map[string]any{"nodes": "2"}}},
		}
	}
	values := func(team string) tfsdk.Plan {
		attrs := crdschema.DecodeObject(r.kind.spec, spec(team), nil)
		attrs["name"], attrs["id"] = types.StringValue(pool), types.StringValue(pool)
		attrs["status"] = types.ObjectNull(crdschema.ObjectType(r.kind.status).AttrTypes)
		attrs["ready"] = types.BoolValue(false)
		attrs["planned_disruption"] = types.ObjectNull(plannedDisruptionType.AttrTypes)
		attrs["planned_impact"] = types.ObjectNull(plannedImpactType.AttrTypes)
		attrs["force_destroy"] = types.BoolValue(false)
		for k, v := range controlExtras() {
			attrs[k] = v
		}
		attrs["delete_timeout"] = types.StringValue(defaultDeleteTimeout)
		raw, diags := rawOf(ctx, s.Type(), attrs)
		if diags.HasError() {
			t.Fatal(diags)
		}
		return tfsdk.Plan{Schema: s, Raw: raw}
	}
	createClaims(t, pool, 5)
	plan := values("b")
	req := fwresource.ModifyPlanRequest{Plan: plan, State: tfsdk.State(values("a")), Config: tfsdk.Config(plan)}
	resp := &fwresource.ModifyPlanResponse{Plan: plan}
	r.ModifyPlan(ctx, req, resp)
	if resp.Diagnostics.HasError() {
		t.Fatal(resp.Diagnostics)
	}
	want := "this change drifts 5 of 5 nodes of node pool preview-warning; budgets allow 2 at a time"
	var warnings []string
	for _, d := range resp.Diagnostics.Warnings() {
		if d.Summary() == "Disruption preview" {
			warnings = append(warnings, d.Detail())
		}
	}
	if len(warnings) != 1 || warnings[0] != want {
		t.Errorf("warnings %q, want [%q]", warnings, want)
	}

	// An unreachable cluster gives no preview and a note, not a failure.
	r.clients = &clients{kubeKnown: true, kube: &kubernetesModel{Host: types.StringValue("https://127.0.0.1:1"), Token: types.StringValue("x")}}
	resp = &fwresource.ModifyPlanResponse{Plan: plan}
	r.ModifyPlan(ctx, req, resp)
	if resp.Diagnostics.HasError() {
		t.Fatalf("unreachable cluster failed the plan: %v", resp.Diagnostics)
	}
	var notes []string
	for _, d := range resp.Diagnostics.Warnings() {
		if d.Summary() == "No disruption preview" {
			notes = append(notes, d.Detail())
		}
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "could not be asked") {
		t.Errorf("unreachable cluster: warnings %v, want one note that there is no preview", resp.Diagnostics.Warnings())
	}
	var pd types.Object
	resp.Plan.GetAttribute(ctx, pathOf("planned_disruption"), &pd)
	if !pd.IsNull() {
		t.Errorf("unreachable cluster: planned_disruption = %v, want null", pd)
	}
}
