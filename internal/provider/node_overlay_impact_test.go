package provider

import (
	"context"
	"math"
	"strings"
	"testing"

	fwresource "github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/joistdev/terraform-provider-joist/internal/controllerdeploy"
	"github.com/joistdev/terraform-provider-joist/internal/provider/crdschema"
)

// controllerWithGates deploys, with no replicas, a controller Deployment
// whose FEATURE_GATES are gates: the settings the prediction reads.
func controllerWithGates(t *testing.T, name, gates string) {
	t.Helper()
	d := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": name, "namespace": "default", "labels": map[string]any{"app.kubernetes.io/name": controllerdeploy.Name}},
		"spec": map[string]any{
			"replicas": int64(0),
			"selector": map[string]any{"matchLabels": map[string]any{"app": name}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": name}},
				"spec": map[string]any{"containers": []any{map[string]any{"name": controllerdeploy.Name, "image": "joist",
					"env": []any{map[string]any{"name": "FEATURE_GATES", "value": gates}}}}},
			},
		},
	}}
	if _, err := testCluster.kube.Resource(deploymentsGVR).Namespace("default").Create(context.Background(), d, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating Deployment %s: %v", name, err)
	}
	t.Cleanup(func() {
		_ = testCluster.kube.Resource(deploymentsGVR).Namespace("default").Delete(context.Background(), name, metav1.DeleteOptions{})
	})
}

// livePool creates NodePool name as the controller reads it (spot and
// on-demand m5.large or m5.xlarge from EC2NodeClass name).
func livePool(t *testing.T, name string) {
	t.Helper()
	np := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": map[string]any{"name": name},
		"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
			"nodeClassRef": map[string]any{"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": name},
			"requirements": []any{
				map[string]any{"key": "karpenter.sh/capacity-type", "operator": "In", "values": []any{"spot", "on-demand"}},
				map[string]any{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": []any{"m5.large", "m5.xlarge"}},
			},
		}}},
	}}
	if _, err := testCluster.kube.Resource(nodePoolKind().gvr()).Create(context.Background(), np, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating NodePool %s: %v", name, err)
	}
	t.Cleanup(func() {
		_ = testCluster.kube.Resource(nodePoolKind().gvr()).Delete(context.Background(), name, metav1.DeleteOptions{})
	})
}

// TestNodeOverlayImpact runs joist_node_overlay's ModifyPlan on a price
// adjustment raised from +10% to +50% over a pool of two spot nodes: with
// the NodeOverlay gate off it changes nothing, with it on the pool's cost
// rises by 50/10 of the base price.
func TestNodeOverlayImpact(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const pool = "overlay-impact"
	resolvedNodeClass(t, pool)
	livePool(t, pool)
	spotNodes(t, pool, 2)
	r := NewNodeOverlayResource().(*NodeOverlayResource)
	r.clients = &clients{kubeKnown: true, kube: &kubernetesModel{ConfigPath: types.StringValue(testCluster.kubeconfig)}, awsKnown: true}
	var schemaResp fwresource.SchemaResponse
	r.Schema(ctx, fwresource.SchemaRequest{}, &schemaResp)
	s := schemaResp.Schema
	spec := func(adjustment string) map[string]any {
		return map[string]any{
			"requirements": []any{
				map[string]any{"key": "karpenter.sh/nodepool", "operator": "In", "values": []any{pool}},
				map[string]any{"key": "karpenter.sh/capacity-type", "operator": "In", "values": []any{"spot"}},
			},
			"priceAdjustment": adjustment,
		}
	}
	values := func(adjustment string) tfsdk.Plan {
		attrs := crdschema.DecodeObject(r.kind.spec, spec(adjustment), nil)
		attrs["name"], attrs["id"] = types.StringValue(pool), types.StringValue(pool)
		attrs["status"] = types.ObjectNull(crdschema.ObjectType(r.kind.status).AttrTypes)
		attrs["ready"] = types.BoolValue(false)
		attrs["planned_impact"] = types.MapNull(plannedImpactType)
		raw, diags := rawOf(ctx, s.Type(), attrs)
		if diags.HasError() {
			t.Fatal(diags)
		}
		return tfsdk.Plan{Schema: s, Raw: raw}
	}
	live := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "karpenter.sh/v1alpha1", "kind": "NodeOverlay", "metadata": map[string]any{"name": pool}, "spec": spec("+10%"),
	}}
	if _, err := testCluster.kube.Resource(nodeOverlayKind().gvr()).Create(ctx, live, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating NodeOverlay: %v", err)
	}
	t.Cleanup(func() {
		_ = testCluster.kube.Resource(nodeOverlayKind().gvr()).Delete(context.Background(), pool, metav1.DeleteOptions{})
	})
	modify := func() (*fwresource.ModifyPlanResponse, string) {
		plan := values("+50%")
		resp := &fwresource.ModifyPlanResponse{Plan: plan}
		r.ModifyPlan(ctx, fwresource.ModifyPlanRequest{Plan: plan, State: tfsdk.State(values("+10%")), Config: tfsdk.Config(plan)}, resp)
		if resp.Diagnostics.HasError() {
			t.Fatal(resp.Diagnostics)
		}
		for _, d := range resp.Diagnostics.Warnings() {
			if d.Summary() == "Planned impact" {
				return resp, d.Detail()
			}
		}
		t.Fatalf("no Planned impact warning in %v", resp.Diagnostics)
		return nil, ""
	}

	if _, got := modify(); !strings.Contains(got, "NodeOverlay feature gate is off") {
		t.Errorf("gate off: warning %q, want it to say the overlay changes nothing", got)
	}

	controllerWithGates(t, "overlay-impact-controller", "NodeOverlay=true")
	resp, got := modify()
	t.Logf("gate on: %s", got)
	if !strings.HasPrefix(got, pool+": "+pool+": $") || !strings.Contains(got, "0 of 2 nodes replaced") {
		t.Errorf("gate on: warning %q, want the pool repriced with no node replaced", got)
	}
	var m types.Map
	resp.Plan.GetAttribute(ctx, pathOf("planned_impact"), &m)
	v, ok := m.Elements()[pool]
	if !ok || len(m.Elements()) != 1 {
		t.Fatalf("planned_impact %v, want the one pool %s", m, pool)
	}
	costs := v.(types.Object).Attributes()
	now, after := costs["cost_per_hour_now"].(types.Float64).ValueFloat64(), costs["cost_per_hour_after"].(types.Float64).ValueFloat64()
	if ratio := after / now; math.Abs(ratio-1.5/1.1) > 0.01 {
		t.Errorf("cost $%v/h → $%v/h, want a rise of 1.5/1.1", now, after)
	}
}
