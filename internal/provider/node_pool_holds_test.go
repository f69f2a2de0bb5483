package provider

import (
	"context"
	"maps"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	fwresource "github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/joistdev/terraform-provider-joist/internal/provider/crdschema"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

const breakerMessage = "nodepool disruption breaker opened at 2026-11-28T09:00:00Z after 3 failed replacements"

// holdPool sets conditions (type → reason) True on the live NodePool's
// status, as the disruption controller leaves a held pool.
func holdPool(t *testing.T, pool string, conds map[string]string) {
	t.Helper()
	var list []any
	for typ, reason := range conds {
		msg := breakerMessage
		if typ == v1.ConditionTypeDisruptionPaused {
			msg = "voluntary disruption is paused for the whole cluster (ConfigMap joist-disruption)"
		}
		list = append(list, map[string]any{"type": typ, "status": "True", "reason": reason, "message": msg,
			"lastTransitionTime": "2026-11-28T09:00:00Z"})
	}
	patch := map[string]any{"status": map[string]any{"conditions": list}}
	if _, err := testCluster.kube.Resource(nodePoolGVKResource).Patch(context.Background(), pool, k8stypes.MergePatchType, []byte(mustJSON(patch)), metav1.PatchOptions{}, "status"); err != nil {
		t.Fatalf("setting the conditions of NodePool %s: %v", pool, err)
	}
}

// TestNodePoolHoldWarnings runs ModifyPlan on a change that drifts the three
// spot nodes of a pool whose live NodePool is halted by its breaker and
// paused for the whole cluster: the plan warns of both, with the condition's
// reason and message and how to lift it, and predicts no replacement; a new
// disruption_breaker_reset lifts the breaker but not the cluster's pause.
func TestNodePoolHoldWarnings(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const pool = "holds-warning"
	resolvedNodeClass(t, pool)
	spotNodes(t, pool, 3)
	r := NewNodePoolResource().(*NodePoolResource)
	r.clients = &clients{kubeKnown: true, kube: &kubernetesModel{ConfigPath: types.StringValue(testCluster.kubeconfig)}, awsKnown: true}
	var schemaResp fwresource.SchemaResponse
	r.Schema(ctx, fwresource.SchemaRequest{}, &schemaResp)
	s := schemaResp.Schema
	attrsFor := func(capacityTypes []any, reset string) map[string]attr.Value {
		spec := map[string]any{"template": map[string]any{"spec": map[string]any{
			"nodeClassRef": map[string]any{"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": pool},
			"requirements": []any{
				map[string]any{"key": "karpenter.sh/capacity-type", "operator": "In", "values": capacityTypes},
				map[string]any{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": []any{"m5.large", "m5.xlarge"}},
			},
		}}}
		attrs := crdschema.DecodeObject(r.kind.spec, spec, nil)
		attrs["name"], attrs["id"] = types.StringValue(pool), types.StringValue(pool)
		attrs["status"] = types.ObjectNull(crdschema.ObjectType(r.kind.status).AttrTypes)
		attrs["ready"] = types.BoolValue(false)
		attrs["planned_disruption"] = types.ObjectNull(plannedDisruptionType.AttrTypes)
		attrs["planned_impact"] = types.ObjectNull(plannedImpactType.AttrTypes)
		attrs["force_destroy"] = types.BoolValue(false)
		attrs["delete_timeout"] = types.StringValue(defaultDeleteTimeout)
		maps.Copy(attrs, controlExtras())
		if reset != "" {
			attrs["disruption_breaker_reset"] = types.StringValue(reset)
		}
		return attrs
	}
	both := []any{"spot", "on-demand"}
	applied := attrsFor(both, "")
	if _, err := r.apply(ctx, applied); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = testCluster.kube.Resource(nodePoolGVKResource).Delete(context.Background(), pool, metav1.DeleteOptions{})
	})
	holdPool(t, pool, map[string]string{
		v1.ConditionTypeDisruptionHalted: v1.DisruptionHaltedReasonNodePool,
		v1.ConditionTypeDisruptionPaused: v1.DisruptionPausedReasonCluster,
	})
	// The state as a refresh leaves it: the live status included.
	live, err := r.get(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	stateRaw, diags := rawOf(ctx, s.Type(), r.withLive(applied, live, true))
	if diags.HasError() {
		t.Fatal(diags)
	}
	modify := func(attrs map[string]attr.Value) (map[string]string, map[string]attr.Value) {
		raw, diags := rawOf(ctx, s.Type(), attrs)
		if diags.HasError() {
			t.Fatal(diags)
		}
		plan := tfsdk.Plan{Schema: s, Raw: raw}
		resp := &fwresource.ModifyPlanResponse{Plan: plan}
		r.ModifyPlan(ctx, fwresource.ModifyPlanRequest{Plan: plan, State: tfsdk.State{Schema: s, Raw: stateRaw}, Config: tfsdk.Config(plan)}, resp)
		if resp.Diagnostics.HasError() {
			t.Fatal(resp.Diagnostics)
		}
		warnings := map[string]string{}
		for _, d := range resp.Diagnostics.Warnings() {
			warnings[d.Summary()] = d.Detail()
		}
		var impact types.Object
		resp.Diagnostics.Append(resp.Plan.GetAttribute(ctx, path.Root("planned_impact"), &impact)...)
		return warnings, impact.Attributes()
	}
	contains := func(what, got string, parts ...string) {
		t.Helper()
		for _, p := range parts {
			if !strings.Contains(got, p) {
				t.Errorf("%s %q lacks %q", what, got, p)
			}
		}
	}

	onDemand := []any{"on-demand"}
	warnings, impact := modify(attrsFor(onDemand, ""))
	t.Logf("held: %v", warnings)
	contains("halted warning", warnings["Node pool disruption halted"], "Node pool holds-warning: DisruptionHalted (NodePoolBreakerOpen): "+breakerMessage,
		"replaces none of the pool's drifted nodes", "set disruption_breaker_reset to a new value")
	contains("paused warning", warnings["Node pool disruption paused"], "DisruptionPaused (ClusterPaused)", "joist_controller's disruption_paused = false")
	contains("impact warning", warnings["Planned impact"], "0 of 3 nodes replaced (3 drifted nodes kept while voluntary disruption is paused for the whole cluster", breakerMessage)
	contains("preview", warnings["Disruption preview"], "drifts 3 of 3 nodes of node pool holds-warning; none is replaced while")
	if got := impact["drift_held_by"]; got != types.StringValue("ClusterPaused,NodePoolBreakerOpen") {
		t.Errorf("drift_held_by %v, want ClusterPaused,NodePoolBreakerOpen", got)
	}
	if impact["replaced_nodes"] != types.Int64Value(0) || impact["disruption_waves"] != types.Int64Value(0) {
		t.Errorf("held: replaced %v in %v waves, want none", impact["replaced_nodes"], impact["disruption_waves"])
	}

	// A new reset token closes the pool's breaker; the cluster's pause stays.
	warnings, impact = modify(attrsFor(onDemand, "2026-11-28"))
	t.Logf("reset: %v", warnings)
	contains("halted warning", warnings["Node pool disruption halted"], "NodePoolBreakerOpen", "This plan lifts it.")
	contains("paused warning", warnings["Node pool disruption paused"], "replaces none of the pool's drifted nodes")
	if got := impact["drift_held_by"]; got != types.StringValue("ClusterPaused") {
		t.Errorf("drift_held_by %v after the reset, want ClusterPaused", got)
	}
}

// TestAccNodePoolPlannedImpactHeld: in a real plan, a change that drifts
// every node of a pool whose breaker is open (its DisruptionHalted
// condition) predicts none replaced, no waves, and says what holds them.
func TestAccNodePoolPlannedImpactHeld(t *testing.T) {
	t.Parallel()
	const pool = "impact-held"
	resolvedNodeClass(t, pool)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: impactPoolConfig(providerBlock(), pool, `"spot", "on-demand"`)},
			{
				PreConfig: func() {
					spotNodes(t, pool, 3)
					holdPool(t, pool, map[string]string{v1.ConditionTypeDisruptionHalted: v1.DisruptionHaltedReasonNodePool})
				},
				Config: impactPoolConfig(providerBlock(), pool, `"on-demand"`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectKnownValue(nodePoolAddr, tfjsonpath.New("planned_impact"), knownvalue.ObjectPartial(map[string]knownvalue.Check{
						"drifted_nodes":    knownvalue.Int64Exact(3),
						"replaced_nodes":   knownvalue.Int64Exact(0),
						"nodes_removed":    knownvalue.Int64Exact(0),
						"disruption_waves": knownvalue.Int64Exact(0),
						"drift_held_by":    knownvalue.StringExact(v1.DisruptionHaltedReasonNodePool),
					})),
				}},
			},
			{
				PreConfig: func() { removeSpotNodes(pool, 3) },
				Config:    impactPoolConfig(providerBlock(), pool, `"on-demand"`),
			},
		},
	})
}
