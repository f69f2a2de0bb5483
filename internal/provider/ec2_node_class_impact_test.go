package provider

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"testing"

	fwresource "github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/joistdev/terraform-provider-joist/internal/provider/crdschema"
)

func impactClassConfig(provider, name, alias string) string {
	return provider + fmt.Sprintf(`
resource "joist_ec2_node_class" "test" {
  name                          = %q
  role                          = "acc-node-role"
  ami_selector_terms            = [{ alias = %q }]
  subnet_selector_terms         = [{ tags = { acc = %q } }]
  security_group_selector_terms = [{ tags = { acc = %q } }]
  wait_for_ready                = false
  force_destroy                 = true
}
`, name, alias, name, name)
}

// seededAL2023 is the release version of the al2023 x86_64 image awssim
// seeds (what al2023@latest resolves to).
func seededAL2023(t *testing.T) string {
	for _, r := range testCluster.aws.EC2.Images() {
		if r.Family == "al2023" && r.Architecture == "x86_64" && r.Variant == "standard" {
			return r.Version
		}
	}
	t.Fatal("awssim seeds no al2023 x86_64 image")
	return ""
}

// poolOnClass makes the NodePool name on EC2NodeClass name with three spot
// nodes whose instances run ami-acc, the image the class resolved to before.
func poolOnClass(t *testing.T, name string) {
	t.Helper()
	ctx := context.Background()
	pool := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": map[string]any{"name": name},
		"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
			"nodeClassRef": map[string]any{"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": name},
			"requirements": []any{map[string]any{"key": "karpenter.sh/capacity-type", "operator": "In", "values": []any{"spot", "on-demand"}}},
		}}},
	}}
	if _, err := testCluster.kube.Resource(nodePoolGVKResource).Create(ctx, pool, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = testCluster.kube.Resource(nodePoolGVKResource).Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	spotNodes(t, name, 3)
	for i := range 3 {
		patch := `{"status":{"imageID":"ami-acc"}}`
		if _, err := testCluster.kube.Resource(nodeClaimGVR).Patch(ctx, fmt.Sprintf("%s-node-%d", name, i), k8stypes.MergePatchType, []byte(patch), metav1.PatchOptions{}, "status"); err != nil {
			t.Fatal(err)
		}
	}
}

// TestAccEC2NodeClassPlannedImpact: in a real plan, creating a class
// predicts nothing (no node runs on it), and pinning the AMI alias of a
// class whose pool's nodes run another image drifts and replaces them in
// the budget's waves, the AMIs resolved through awssim's SSM and EC2 as
// the controller resolves them.
func TestAccEC2NodeClassPlannedImpact(t *testing.T) {
	t.Parallel()
	const name = "class-impact"
	pinned := "al2023@" + seededAL2023(t)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: impactClassConfig(providerBlock(), name, "al2023@latest"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectKnownValue(nodeClassAddr, tfjsonpath.New("planned_impact"), knownvalue.MapExact(map[string]knownvalue.Check{})),
				}},
			},
			{
				PreConfig: func() {
					resolveNodeClass(t, name)
					poolOnClass(t, name)
				},
				Config: impactClassConfig(providerBlock(), name, pinned),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(nodeClassAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(nodeClassAddr, tfjsonpath.New("planned_impact").AtMapKey(name), knownvalue.ObjectPartial(map[string]knownvalue.Check{
						"nodes_now":         knownvalue.Int64Exact(3),
						"drifted_nodes":     knownvalue.Int64Exact(3),
						"replaced_nodes":    knownvalue.Int64Exact(3),
						"allowed_at_once":   knownvalue.Int64Exact(1),
						"disruption_waves":  knownvalue.Int64Exact(3),
						"pods_without_pool": knownvalue.Int64Exact(0),
						"cost_per_hour_now": positive(),
					})),
				}},
			},
			{
				PreConfig: func() { removeSpotNodes(name, 3) },
				Config:    impactClassConfig(providerBlock(), name, pinned),
			},
		},
	})
}

// TestAccEC2NodeClassPlannedImpactUnknownWithoutCluster: with no cluster
// to ask, the plan succeeds and planned_impact is unknown.
func TestAccEC2NodeClassPlannedImpactUnknownWithoutCluster(t *testing.T) {
	t.Parallel()
	unreachable := `
provider "joist" {
  kubernetes = {
    host  = "https://127.0.0.1:1"
    token = "x"
  }
}
`
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:             impactClassConfig(unreachable, "class-impact-unknown", "al2023@latest"),
			PlanOnly:           true,
			ExpectNonEmptyPlan: true,
			ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPreRefresh: []plancheck.PlanCheck{
				plancheck.ExpectUnknownValue(nodeClassAddr, tfjsonpath.New("planned_impact")),
			}},
		}},
	})
}

// TestEC2NodeClassImpactWarning runs ModifyPlan on the same AMI pin and
// checks what a reviewer reads: per pool, the nodes drifted and replaced
// and in how many waves.
func TestEC2NodeClassImpactWarning(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const name = "class-warning"
	resolvedNodeClass(t, name)
	poolOnClass(t, name)
	r := NewEC2NodeClassResource().(*EC2NodeClassResource)
	r.clients = &clients{kubeKnown: true, kube: &kubernetesModel{ConfigPath: types.StringValue(testCluster.kubeconfig)}, awsKnown: true}
	var schemaResp fwresource.SchemaResponse
	r.Schema(ctx, fwresource.SchemaRequest{}, &schemaResp)
	s := schemaResp.Schema
	live, err := r.get(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	values := func(alias string) tftypes.Value {
		spec, _ := live.Object["spec"].(map[string]any)
		spec = maps.Clone(spec)
		spec["amiSelectorTerms"] = []any{map[string]any{"alias": alias}}
		attrs := crdschema.DecodeObject(r.kind.spec, spec, nil)
		maps.Copy(attrs, r.extras)
		attrs["name"], attrs["id"], attrs["ready"] = types.StringValue(name), types.StringValue(name), types.BoolValue(true)
		raw, diags := rawOf(ctx, s.Type(), attrs)
		if diags.HasError() {
			t.Fatal(diags)
		}
		return raw
	}
	plan := tfsdk.Plan{Schema: s, Raw: values("al2023@" + seededAL2023(t))}
	resp := &fwresource.ModifyPlanResponse{Plan: plan}
	r.ModifyPlan(ctx, fwresource.ModifyPlanRequest{Plan: plan, State: tfsdk.State{Schema: s, Raw: values("al2023@latest")}, Config: tfsdk.Config(plan)}, resp)
	if resp.Diagnostics.HasError() {
		t.Fatal(resp.Diagnostics)
	}
	var got string
	for _, d := range resp.Diagnostics.Warnings() {
		if d.Summary() == "Planned impact" {
			got = d.Detail()
		}
	}
	t.Logf("warning: %s", got)
	want := regexp.MustCompile(`^class-warning: class-warning: \$\d+\.\d\d/h → \$\d+\.\d\d/h, 3 of 3 nodes replaced in 3 waves of ≤ 1, \d+ added and 3 removed, 0 pods left without a pool\.$`)
	if !want.MatchString(got) {
		t.Errorf("warning %q, want it to match %s", got, want)
	}
}
