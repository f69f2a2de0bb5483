package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	fwresource "github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/joistdev/terraform-provider-joist/internal/provider/crdschema"
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
				ImportStateVerifyIgnore: []string{"planned_disruption", "planned_impact"},
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

// TestNodePoolStaticPlanChecks runs the resource's ValidateConfig: a
// negative limit fails the plan (the CRD's rule), and a static pool of more
// than largeStaticReplicas nodes without limits.nodes gets a warning.
func TestNodePoolStaticPlanChecks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := NewNodePoolResource().(*NodePoolResource)
	var schemaResp fwresource.SchemaResponse
	r.Schema(ctx, fwresource.SchemaRequest{}, &schemaResp)
	s := schemaResp.Schema
	validate := func(replicas *int64, limits map[string]any) diag.Diagnostics {
		spec := map[string]any{
			"template": map[string]any{"spec": map[string]any{
				"nodeClassRef": map[string]any{"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
				"requirements": []any{map[string]any{"key": "kubernetes.io/arch", "operator": "In", "values": []any{"amd64"}}},
			}},
		}
		if replicas != nil {
			spec["replicas"] = *replicas
		}
		if limits != nil {
			spec["limits"] = limits
		}
		attrs := crdschema.DecodeObject(r.kind.spec, spec, nil)
		attrs["name"], attrs["id"] = types.StringValue("static-checks"), types.StringNull()
		attrs["status"] = types.ObjectNull(crdschema.ObjectType(r.kind.status).AttrTypes)
		attrs["ready"] = types.BoolNull()
		attrs["planned_disruption"] = types.ObjectNull(plannedDisruptionType.AttrTypes)
		attrs["planned_impact"] = types.ObjectNull(plannedImpactType.AttrTypes)
		attrs["force_destroy"] = types.BoolNull()
		attrs["delete_timeout"] = types.StringNull()
		for k, v := range controlExtras() {
			attrs[k] = v
		}
		raw, diags := rawOf(ctx, s.Type(), attrs)
		if diags.HasError() {
			t.Fatal(diags)
		}
		resp := &fwresource.ValidateConfigResponse{}
		r.ValidateConfig(ctx, fwresource.ValidateConfigRequest{Config: tfsdk.Config{Schema: s, Raw: raw}}, resp)
		return resp.Diagnostics
	}
	details := func(ds []diag.Diagnostic) []string {
		var out []string
		for _, d := range ds {
			out = append(out, d.Detail())
		}
		return out
	}
	for _, c := range []struct {
		name     string
		replicas *int64
		limits   map[string]any
		err      string
		warning  string
	}{
		{"static, negative node limit", new(int64(3)), map[string]any{"nodes": "-1"}, "limits[\"nodes\"]: \"-1\" does not match", ""},
		{"dynamic, negative node limit", nil, map[string]any{"cpu": "100", "nodes": "-1"}, "limits[\"nodes\"]: \"-1\" does not match", ""},
		{"dynamic, negative memory limit", nil, map[string]any{"memory": "-1Gi"}, "limits[\"memory\"]: \"-1Gi\" does not match", ""},
		{"large static pool without a node limit", new(int64(1000)), nil, "", `limits = { nodes = "1000" }`},
		{"large static pool with a node limit", new(int64(1000)), map[string]any{"nodes": "1000"}, "", ""},
		{"static pool of largeStaticReplicas", new(int64(largeStaticReplicas)), nil, "", ""},
		{"zero node limit", new(int64(0)), map[string]any{"nodes": "0"}, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			ds := validate(c.replicas, c.limits)
			errs, warnings := details(ds.Errors()), details(ds.Warnings())
			if c.err == "" && len(errs) > 0 || c.err != "" && (len(errs) != 1 || !strings.Contains(errs[0], c.err)) {
				t.Errorf("errors %q, want one containing %q", errs, c.err)
			}
			if c.warning == "" && len(warnings) > 0 || c.warning != "" && (len(warnings) != 1 || !strings.Contains(warnings[0], c.warning)) {
				t.Errorf("warnings %q, want one containing %q", warnings, c.warning)
			}
		})
	}
}
