package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	fwprovider "github.com/hashicorp/terraform-plugin-framework/provider"
	pschema "github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	fwresource "github.com/hashicorp/terraform-plugin-framework/resource"
	rschema "github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// manifestProvider stands in for the kubernetes provider's
// kubernetes_manifest: it applies `manifest` to the sandbox with
// server-side apply under the field manager that resource uses, and keeps
// manifest and object as dynamic values in its state, as that resource does.
type manifestProvider struct{}

func (manifestProvider) Metadata(_ context.Context, _ fwprovider.MetadataRequest, resp *fwprovider.MetadataResponse) {
	resp.TypeName = "kubernetes"
}
func (manifestProvider) Schema(_ context.Context, _ fwprovider.SchemaRequest, resp *fwprovider.SchemaResponse) {
	resp.Schema = pschema.Schema{}
}
func (manifestProvider) Configure(context.Context, fwprovider.ConfigureRequest, *fwprovider.ConfigureResponse) {
}
func (manifestProvider) Resources(context.Context) []func() fwresource.Resource {
	return []func() fwresource.Resource{func() fwresource.Resource { return manifestResourceStandIn{} }}
}
func (manifestProvider) DataSources(context.Context) []func() datasource.DataSource { return nil }

type manifestResourceStandIn struct{}

func (manifestResourceStandIn) Metadata(_ context.Context, _ fwresource.MetadataRequest, resp *fwresource.MetadataResponse) {
	resp.TypeName = "kubernetes_manifest"
}
func (manifestResourceStandIn) Schema(_ context.Context, _ fwresource.SchemaRequest, resp *fwresource.SchemaResponse) {
	resp.Schema = rschema.Schema{Attributes: map[string]rschema.Attribute{
		"manifest": rschema.DynamicAttribute{Required: true},
		"object":   rschema.DynamicAttribute{Computed: true},
	}}
}
func (manifestResourceStandIn) Create(ctx context.Context, req fwresource.CreateRequest, resp *fwresource.CreateResponse) {
	var manifest tftypes.Value
	raw := map[string]tftypes.Value{}
	if err := req.Plan.Raw.As(&raw); err != nil {
		resp.Diagnostics.AddError("plan", err.Error())
		return
	}
	manifest = raw["manifest"]
	obj, _ := goValue(manifest).(map[string]any)
	u := &unstructured.Unstructured{Object: obj}
	gvr := nodePoolGVK.GroupVersion().WithResource("nodepools")
	if _, err := testCluster.kube.Resource(gvr).Apply(ctx, u.GetName(), u, metav1.ApplyOptions{FieldManager: "Terraform"}); err != nil {
		resp.Diagnostics.AddError("apply", err.Error())
		return
	}
	raw["object"] = manifest
	resp.State.Raw = tftypes.NewValue(req.Plan.Raw.Type(), raw)
}
func (manifestResourceStandIn) Read(context.Context, fwresource.ReadRequest, *fwresource.ReadResponse) {
}
func (manifestResourceStandIn) Update(context.Context, fwresource.UpdateRequest, *fwresource.UpdateResponse) {
}
func (manifestResourceStandIn) Delete(context.Context, fwresource.DeleteRequest, *fwresource.DeleteResponse) {
}

// goValue converts a Terraform value to the JSON shapes of a manifest.
func goValue(v tftypes.Value) any {
	if v.IsNull() || !v.IsKnown() {
		return nil
	}
	switch v.Type().(type) {
	case tftypes.Object, tftypes.Map:
		m := map[string]tftypes.Value{}
		_ = v.As(&m)
		out := map[string]any{}
		for k, e := range m {
			out[k] = goValue(e)
		}
		return out
	case tftypes.Tuple, tftypes.List, tftypes.Set:
		var l []tftypes.Value
		_ = v.As(&l)
		out := []any{}
		for _, e := range l {
			out = append(out, goValue(e))
		}
		return out
	}
	switch {
	case v.Type().Is(tftypes.String):
		var s string
		_ = v.As(&s)
		return s
	case v.Type().Is(tftypes.Bool):
		var b bool
		_ = v.As(&b)
		return b
	case v.Type().Is(tftypes.Number):
		f := new(big.Float)
		_ = v.As(&f)
		if i, acc := f.Int64(); acc == big.Exact {
			return i
		}
		x, _ := f.Float64()
		return x
	}
	return nil
}

// TestAccMoveFromKubernetesManifest moves a NodePool managed by
// kubernetes_manifest into joist_node_pool with a moved block: the plan has
// no changes and the live object is not written.
func TestAccMoveFromKubernetesManifest(t *testing.T) {
	t.Parallel()
	const name = "moved"
	var resourceVersion string
	factories := map[string]func() (tfprotov6.ProviderServer, error){
		"joist":      testAccProtoV6ProviderFactories["joist"],
		"kubernetes": providerserver.NewProtocol6WithError(manifestProvider{}),
	}
	manifest := `
resource "kubernetes_manifest" "pool" {
  manifest = {
    apiVersion = "karpenter.sh/v1"
    kind       = "NodePool"
    metadata   = { name = "moved" }
    spec = {
      template = {
        metadata = { labels = { team = "platform" } }
        spec = {
          nodeClassRef = { group = "karpenter.k8s.aws", kind = "EC2NodeClass", name = "default" }
          requirements = [{ key = "kubernetes.io/arch", operator = "In", values = ["amd64", "arm64"] }]
        }
      }
      limits = { cpu = "100" }
    }
  }
}
`
	joist := providerBlock() + `
moved {
  from = kubernetes_manifest.pool
  to   = joist_node_pool.pool
}

resource "joist_node_pool" "pool" {
  name = "moved"
  template = {
    metadata = { labels = { team = "platform" } }
    spec = {
      node_class_ref = { group = "karpenter.k8s.aws", kind = "EC2NodeClass", name = "default" }
      requirements   = [{ key = "kubernetes.io/arch", operator = "In", values = ["amd64", "arm64"] }]
    }
  }
  limits = { cpu = "100" }
}
`
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		CheckDestroy:             checkGone(nodePoolGVKResource, name),
		Steps: []resource.TestStep{
			{Config: manifest},
			{
				PreConfig: func() {
					obj, err := testCluster.kube.Resource(nodePoolGVKResource).Get(context.Background(), name, metav1.GetOptions{})
					if err != nil {
						t.Fatal(err)
					}
					resourceVersion = obj.GetResourceVersion()
				},
				Config: joist,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("joist_node_pool.pool", plancheck.ResourceActionNoop),
				}},
				Check: func(*terraform.State) error {
					obj, err := testCluster.kube.Resource(nodePoolGVKResource).Get(context.Background(), name, metav1.GetOptions{})
					if err != nil {
						return err
					}
					if obj.GetResourceVersion() != resourceVersion {
						return fmt.Errorf("the move wrote the live NodePool (resourceVersion %s -> %s)", resourceVersion, obj.GetResourceVersion())
					}
					return nil
				},
			},
		},
	})
}

// TestMoveFromKubectlManifest calls the provider's MoveResourceState as
// Terraform does for a kubectl_manifest, and for a manifest of another kind.
func TestMoveFromKubectlManifest(t *testing.T) {
	t.Parallel()
	server, err := testAccProtoV6ProviderFactories["joist"]()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := server.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{}); err != nil {
		t.Fatal(err)
	}
	move := func(target, yamlBody string) *tfprotov6.MoveResourceStateResponse {
		state, _ := json.Marshal(map[string]any{"yaml_body": yamlBody, "kind": "x", "name": "x"})
		resp, err := server.MoveResourceState(ctx, &tfprotov6.MoveResourceStateRequest{
			SourceProviderAddress: "registry.terraform.io/gavinbunney/kubectl",
			SourceTypeName:        "kubectl_manifest",
			SourceState:           &tfprotov6.RawState{JSON: state},
			TargetTypeName:        target,
		})
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	classYAML := `apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: from-kubectl
spec:
  role: KarpenterNodeRole-demo
  amiSelectorTerms: [{alias: al2023@latest}]
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
`
	resp := move("joist_ec2_node_class", classYAML)
	if len(resp.Diagnostics) != 0 {
		t.Fatalf("diagnostics: %v", resp.Diagnostics[0].Detail)
	}
	var schemaResp fwresource.SchemaResponse
	NewEC2NodeClassResource().Schema(ctx, fwresource.SchemaRequest{}, &schemaResp)
	v, err := resp.TargetState.Unmarshal(schemaResp.Schema.Type().TerraformType(ctx))
	if err != nil {
		t.Fatal(err)
	}
	got := goValue(v).(map[string]any)
	if got["name"] != "from-kubectl" || got["role"] != "KarpenterNodeRole-demo" {
		t.Errorf("moved state: name %v role %v", got["name"], got["role"])
	}
	terms, _ := got["ami_selector_terms"].([]any)
	if len(terms) != 1 || terms[0].(map[string]any)["alias"] != "al2023@latest" {
		t.Errorf("moved ami_selector_terms = %v", got["ami_selector_terms"])
	}

	resp = move("joist_node_pool", classYAML)
	if len(resp.Diagnostics) == 0 || !strings.Contains(resp.Diagnostics[0].Detail, "move it to the matching joist resource") {
		t.Errorf("moving an EC2NodeClass into joist_node_pool: diagnostics %v, want a refusal naming the mismatch", resp.Diagnostics)
	}
}
