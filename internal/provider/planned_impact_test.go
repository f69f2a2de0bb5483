package provider

import (
	"context"
	"fmt"
	"maps"
	"regexp"
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
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/joistdev/terraform-provider-joist/internal/provider/crdschema"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/sandbox"
	"github.com/joistdev/terraform-provider-joist/internal/testenv"
)

const impactZone = "us-west-2a"

// resolvedNodeClass creates an EC2NodeClass as the controller leaves it
// once resolved (see resolveNodeClass).
func resolvedNodeClass(t *testing.T, name string) {
	t.Helper()
	ctx := context.Background()
	nc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", "metadata": map[string]any{"name": name},
		"spec": map[string]any{
			"role":                       "acc-node-role",
			"amiSelectorTerms":           []any{map[string]any{"alias": "al2023@latest"}},
			"subnetSelectorTerms":        []any{map[string]any{"tags": map[string]any{"acc": name}}},
			"securityGroupSelectorTerms": []any{map[string]any{"tags": map[string]any{"acc": name}}},
		},
	}}
	if _, err := testCluster.kube.Resource(ec2NodeClassGVR).Create(ctx, nc, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating EC2NodeClass %s: %v", name, err)
	}
	t.Cleanup(func() {
		_ = testCluster.kube.Resource(ec2NodeClassGVR).Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	resolveNodeClass(t, name)
}

// resolveNodeClass writes the status the controller leaves on EC2NodeClass
// name once resolved: one subnet in impactZone and the al2023 amd64 AMI
// ami-acc.
func resolveNodeClass(t *testing.T, name string) {
	t.Helper()
	ctx := context.Background()
	created, err := testCluster.kube.Resource(ec2NodeClassGVR).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	status := fmt.Sprintf(`{"status":{
		"subnets":[{"id":"subnet-acc","zone":%q}],
		"amis":[{"id":"ami-acc","name":"al2023","requirements":[{"key":"kubernetes.io/arch","operator":"In","values":["amd64"]}]}],
		"conditions":[{"type":"Ready","status":"True","reason":"Ready","message":"","observedGeneration":%d,"lastTransitionTime":"2026-01-01T00:00:00Z"}]}}`,
		impactZone, created.GetGeneration())
	if _, err := testCluster.kube.Resource(ec2NodeClassGVR).Patch(ctx, name, k8stypes.MergePatchType, []byte(status), metav1.PatchOptions{}, "status"); err != nil {
		t.Fatalf("resolving EC2NodeClass %s: %v", name, err)
	}
}

// spotNodes makes n running m5.large spot nodes of pool, each a kwok Node
// with its launched NodeClaim and one 1-vCPU pod, as the controller would
// have left them.
func spotNodes(t *testing.T, pool string, n int) {
	t.Helper()
	ctx := context.Background()
	for i := range n {
		name := fmt.Sprintf("%s-node-%d", pool, i)
		providerID := fmt.Sprintf("aws:///%s/i-%s%d", impactZone, pool, i)
		labels := map[string]any{
			v1.NodePoolLabelKey: pool, v1.CapacityTypeLabelKey: v1.CapacityTypeSpot, v1.NodeInitializedLabelKey: "true",
			"node.kubernetes.io/instance-type": "m5.large", "topology.kubernetes.io/zone": impactZone,
			"kubernetes.io/arch": "amd64", "kubernetes.io/os": "linux", "kubernetes.io/hostname": name,
		}
		node := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Node",
			"metadata": map[string]any{"name": name, "labels": labels, "annotations": map[string]any{sandbox.KwokNodeAnnotation: sandbox.KwokNodeAnnotationValue}},
			"spec":     map[string]any{"providerID": providerID},
		}}
		if _, err := testCluster.kube.Resource(nodesGVR).Create(ctx, node, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating Node %s: %v", name, err)
		}
		// kwok keeps the node Ready; its size is the instance type's.
		alloc := map[string]any{"cpu": "1930m", "memory": "7Gi", "pods": "29"}
		patch := `{"status":{"allocatable":{"cpu":"1930m","memory":"7Gi","pods":"29"},"capacity":{"cpu":"1930m","memory":"7Gi","pods":"29"}}}`
		if _, err := testCluster.kube.Resource(nodesGVR).Patch(ctx, name, k8stypes.MergePatchType, []byte(patch), metav1.PatchOptions{}, "status"); err != nil {
			t.Fatalf("Node %s status: %v", name, err)
		}
		// A node not Ready yet counts against the disruption budget.
		wait, cancel := context.WithTimeout(ctx, time.Minute)
		testenv.Eventually(t, wait, "Node "+name+" Ready", func() error {
			got, err := testCluster.kube.Resource(nodesGVR).Get(wait, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
			for _, c := range conds {
				if m, _ := c.(map[string]any); m["type"] == "Ready" && m["status"] == "True" {
					return nil
				}
			}
			return fmt.Errorf("not Ready: %v", conds)
		})
		cancel()
		claim := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
			"metadata": map[string]any{"name": name, "labels": labels},
			"spec": map[string]any{
				"nodeClassRef": map[string]any{"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": pool},
				"requirements": []any{map[string]any{"key": "kubernetes.io/arch", "operator": "In", "values": []any{"amd64"}}},
			},
		}}
		c, err := testCluster.kube.Resource(nodeClaimGVR).Create(ctx, claim, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("creating NodeClaim %s: %v", name, err)
		}
		now := time.Now().UTC().Format(time.RFC3339)
		cond := func(typ string) any {
			return map[string]any{"type": typ, "status": "True", "reason": typ, "message": "", "lastTransitionTime": now}
		}
		c.Object["status"] = map[string]any{"providerID": providerID, "nodeName": name, "capacity": alloc, "allocatable": alloc,
			"conditions": []any{cond(v1.ConditionTypeLaunched), cond(v1.ConditionTypeRegistered), cond(v1.ConditionTypeInitialized)}}
		if _, err := testCluster.kube.Resource(nodeClaimGVR).UpdateStatus(ctx, c, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("NodeClaim %s status: %v", name, err)
		}
		pod := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Pod",
			"metadata": map[string]any{"name": name + "-web", "namespace": "default", "labels": map[string]any{"app": pool}},
			// Held to the pool, so that other tests' pools sharing the
			// cluster never change where its pods would go between a
			// plan and the plan inside its apply.
			"spec": map[string]any{"nodeName": name, "nodeSelector": map[string]any{v1.NodePoolLabelKey: pool}, "containers": []any{map[string]any{"name": "web", "image": "web",
				"resources": map[string]any{"requests": map[string]any{"cpu": "1", "memory": "1Gi"}}}}},
		}}
		if _, err := testCluster.kube.Resource(podsGVR).Namespace("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating Pod %s: %v", name, err)
		}
	}
	t.Cleanup(func() { removeSpotNodes(pool, n) })
}

func removeSpotNodes(pool string, n int) {
	ctx := context.Background()
	zero := int64(0)
	for i := range n {
		name := fmt.Sprintf("%s-node-%d", pool, i)
		_ = testCluster.kube.Resource(podsGVR).Namespace("default").Delete(ctx, name+"-web", metav1.DeleteOptions{GracePeriodSeconds: &zero})
		_ = testCluster.kube.Resource(nodesGVR).Delete(ctx, name, metav1.DeleteOptions{})
	}
	releaseClaims(pool)
}

func impactPoolConfig(provider, pool, capacityTypes string) string {
	return provider + fmt.Sprintf(`
resource "joist_node_pool" "test" {
  name = %q
  template = {
    spec = {
      node_class_ref = { group = "karpenter.k8s.aws", kind = "EC2NodeClass", name = %q }
      requirements = [
        { key = "karpenter.sh/capacity-type", operator = "In", values = [%s] },
        { key = "node.kubernetes.io/instance-type", operator = "In", values = ["m5.large", "m5.xlarge"] },
      ]
    }
  }
}
`, pool, pool, capacityTypes)
}

func impactAttr(path string) tfjsonpath.Path {
	return tfjsonpath.New("planned_impact").AtMapKey(path)
}

func positive() knownvalue.Check {
	return knownvalue.Float64Func(func(v float64) error {
		if v <= 0 {
			return fmt.Errorf("%v is not a price", v)
		}
		return nil
	})
}

// TestAccNodePoolPlannedImpact: narrowing a pool of three spot nodes to
// on-demand shows, in a real plan, every node replaced one at a time (the
// default budget is 10 %, rounded up to 1), no pod left without a pool, and
// prices for both sides.
func TestAccNodePoolPlannedImpact(t *testing.T) {
	t.Parallel()
	const pool = "impact"
	resolvedNodeClass(t, pool)
	spot := `"spot", "on-demand"`
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: impactPoolConfig(providerBlock(), pool, spot),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(nodePoolAddr, plancheck.ResourceActionCreate),
					plancheck.ExpectKnownValue(nodePoolAddr, impactAttr("nodes_now"), knownvalue.Int64Exact(0)),
					plancheck.ExpectKnownValue(nodePoolAddr, impactAttr("cost_per_hour_now"), knownvalue.Float64Exact(0)),
				}},
			},
			{
				PreConfig: func() { spotNodes(t, pool, 3) },
				Config:    impactPoolConfig(providerBlock(), pool, `"on-demand"`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(nodePoolAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(nodePoolAddr, tfjsonpath.New("planned_impact"), knownvalue.ObjectPartial(map[string]knownvalue.Check{
						"nodes_now":           knownvalue.Int64Exact(3),
						"drifted_nodes":       knownvalue.Int64Exact(3),
						"replaced_nodes":      knownvalue.Int64Exact(3),
						"nodes_removed":       knownvalue.Int64Exact(3),
						"allowed_at_once":     knownvalue.Int64Exact(1),
						"disruption_waves":    knownvalue.Int64Exact(3),
						"pods_without_pool":   knownvalue.Int64Exact(0),
						"cost_per_hour_now":   positive(),
						"cost_per_hour_after": positive(),
					})),
				}},
			},
			{
				// Without a controller, destroy would refuse while claims exist.
				PreConfig: func() { removeSpotNodes(pool, 3) },
				Config:    impactPoolConfig(providerBlock(), pool, `"on-demand"`),
			},
		},
	})
}

// TestAccNodePoolPlannedImpactUnknownWithoutCluster: with no cluster to
// ask, the plan still succeeds and planned_impact is unknown.
func TestAccNodePoolPlannedImpactUnknownWithoutCluster(t *testing.T) {
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
			Config:             impactPoolConfig(unreachable, "impact-unknown", `"on-demand"`),
			PlanOnly:           true,
			ExpectNonEmptyPlan: true,
			ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPreRefresh: []plancheck.PlanCheck{
				plancheck.ExpectUnknownValue(nodePoolAddr, tfjsonpath.New("planned_impact")),
			}},
		}},
	})
}

// TestNodePoolImpactWarning runs ModifyPlan on changes of a pool of three
// spot nodes and checks what a reviewer reads: the sentence, and that
// fail_on_unplaceable_pods turns pods left without a pool into an error.
func TestNodePoolImpactWarning(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const pool = "impact-warning"
	resolvedNodeClass(t, pool)
	spotNodes(t, pool, 3)
	r := NewNodePoolResource().(*NodePoolResource)
	r.clients = &clients{kubeKnown: true, kube: &kubernetesModel{ConfigPath: types.StringValue(testCluster.kubeconfig)}, awsKnown: true}
	var schemaResp fwresource.SchemaResponse
	r.Schema(ctx, fwresource.SchemaRequest{}, &schemaResp)
	s := schemaResp.Schema
	values := func(capacityTypes []any, taints []any) tfsdk.Plan {
		spec := map[string]any{
			"template": map[string]any{"spec": map[string]any{
				"nodeClassRef": map[string]any{"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": pool},
				"requirements": []any{
					map[string]any{"key": "karpenter.sh/capacity-type", "operator": "In", "values": capacityTypes},
					map[string]any{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": []any{"m5.large", "m5.xlarge"}},
				},
				"taints": taints,
			}},
		}
		attrs := crdschema.DecodeObject(r.kind.spec, spec, nil)
		attrs["name"], attrs["id"] = types.StringValue(pool), types.StringValue(pool)
		attrs["status"] = types.ObjectNull(crdschema.ObjectType(r.kind.status).AttrTypes)
		attrs["ready"] = types.BoolValue(false)
		attrs["planned_disruption"] = types.ObjectNull(plannedDisruptionType.AttrTypes)
		attrs["planned_impact"] = types.ObjectNull(plannedImpactType.AttrTypes)
		attrs["force_destroy"] = types.BoolValue(false)
		attrs["delete_timeout"] = types.StringValue(defaultDeleteTimeout)
		maps.Copy(attrs, controlExtras())
		raw, diags := rawOf(ctx, s.Type(), attrs)
		if diags.HasError() {
			t.Fatal(diags)
		}
		return tfsdk.Plan{Schema: s, Raw: raw}
	}
	modify := func(plan tfsdk.Plan) *fwresource.ModifyPlanResponse {
		state := tfsdk.State(values([]any{"spot", "on-demand"}, nil))
		resp := &fwresource.ModifyPlanResponse{Plan: plan}
		r.ModifyPlan(ctx, fwresource.ModifyPlanRequest{Plan: plan, State: state, Config: tfsdk.Config(plan)}, resp)
		return resp
	}
	impactWarning := func(resp *fwresource.ModifyPlanResponse) string {
		for _, d := range resp.Diagnostics.Warnings() {
			if d.Summary() == "Planned impact" {
				return d.Detail()
			}
		}
		t.Fatalf("no Planned impact warning in %v", resp.Diagnostics)
		return ""
	}

	resp := modify(values([]any{"on-demand"}, nil))
	if resp.Diagnostics.HasError() {
		t.Fatal(resp.Diagnostics)
	}
	want := regexp.MustCompile(`^impact-warning: \$\d+\.\d\d/h → \$\d+\.\d\d/h, 3 of 3 nodes replaced in 3 waves of ≤ 1, \d+ added and 3 removed, 0 pods left without a pool\.$`)
	got := impactWarning(resp)
	t.Logf("on-demand only: %s", got)
	if !want.MatchString(got) {
		t.Errorf("warning %q, want it to match %s", got, want)
	}

	// A taint the pods do not tolerate: every node drifts, no pod has a
	// pool, so the controller keeps the nodes.
	tainted := values([]any{"spot", "on-demand"}, []any{map[string]any{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}})
	got = impactWarning(modify(tainted))
	t.Logf("tainted: %s", got)
	for _, part := range []string{"0 of 3 nodes replaced", "(3 drifted nodes kept: their pods would have nowhere to go)", "3 pods left without a pool",
		"default/Pod/impact-warning-node-0-web: 1 pod: ", "dedicated"} {
		if !strings.Contains(got, part) {
			t.Errorf("warning %q lacks %q", got, part)
		}
	}
	r.clients.failOnUnplaceablePods = true
	resp = modify(tainted)
	if errs := resp.Diagnostics.Errors(); len(errs) != 1 || errs[0].Summary() != "Pods left without a node pool" {
		t.Errorf("with fail_on_unplaceable_pods: errors %v, want one naming the pods left without a pool", errs)
	}
}
