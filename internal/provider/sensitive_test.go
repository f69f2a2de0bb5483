package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The exec plugin's env of the provider's kubernetes block is sensitive:
// it often carries credentials (AWS keys, tokens).
func TestProviderSchemaMarksSecretsSensitive(t *testing.T) {
	resp := providerSchema(t)
	sensitive := map[string]bool{}
	var walk func(prefix string, attrs []*tfprotov6.SchemaAttribute)
	walk = func(prefix string, attrs []*tfprotov6.SchemaAttribute) {
		for _, a := range attrs {
			sensitive[prefix+a.Name] = a.Sensitive
			if a.NestedType != nil {
				walk(prefix+a.Name+".", a.NestedType.Attributes)
			}
		}
	}
	walk("", resp.Provider.Block.Attributes)
	for _, name := range []string{"kubernetes.exec.env", "kubernetes.token", "kubernetes.client_key"} {
		if !sensitive[name] {
			t.Errorf("provider attribute %s is not sensitive", name)
		}
	}
}

// expectSensitive asserts that the plan hides an attribute of a resource
// (after_sensitive in `terraform show -json`).
type expectSensitive struct{ address, attribute string }

func (e expectSensitive) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	for _, rc := range req.Plan.ResourceChanges {
		if rc.Address != e.address {
			continue
		}
		marks, _ := rc.Change.AfterSensitive.(map[string]any)
		if marks[e.attribute] != true {
			resp.Error = fmt.Errorf("%s.%s is not sensitive in the plan (after_sensitive: %v)", e.address, e.attribute, rc.Change.AfterSensitive)
		}
		return
	}
	resp.Error = fmt.Errorf("no change of %s in the plan", e.address)
}

// An EC2NodeClass's user_data is sensitive: bootstrap scripts carry tokens.
func TestAccEC2NodeClassUserDataIsSensitive(t *testing.T) {
	t.Parallel()
	const name = "class-secret-user-data"
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkGone(ec2NodeClassGVR, name),
		Steps: []resource.TestStep{{
			Config: providerBlock() + fmt.Sprintf(`
resource "joist_ec2_node_class" "test" {
  name                          = %q
  role                          = "KarpenterNodeRole-demo"
  ami_selector_terms            = [{ alias = "al2023@latest" }]
  subnet_selector_terms         = [{ tags = { "karpenter.sh/discovery" = "demo" } }]
  security_group_selector_terms = [{ tags = { "karpenter.sh/discovery" = "demo" } }]
  user_data                     = "export REGISTRY_TOKEN=s3cr3t"
}
`, name),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{expectSensitive{nodeClassAddr, "user_data"}}},
			Check:            checkLive(ec2NodeClassGVR, name, "spec.userData", "export REGISTRY_TOKEN=s3cr3t"),
		}},
	})
}

// joist_controller's extra_env is sensitive (proxy URLs with a password,
// tokens): hidden in the plan, and the configuration recorded on the
// Deployment keeps only its hash, so no annotation holds the secret. Import
// reads it back from the container's environment.
func TestAccControllerExtraEnvIsSensitive(t *testing.T) {
	awsSim(t)
	controllerNodes(t)
	const secret = "s3cr3t-proxy-password"
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:           controllerTestConfig(`extra_env = { HTTPS_PROXY = "http://joist:` + secret + `@proxy.internal:3128" }`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{expectSensitive{controllerAddr, "extra_env"}}},
				Check: resource.ComposeTestCheckFunc(
					checkController(t, map[string]string{"HTTPS_PROXY": "http://joist:" + secret + "@proxy.internal:3128"}),
					func(*terraform.State) error {
						d := deploymentOf(t)
						template, _, _ := unstructured.NestedStringMap(d.Object, "spec", "template", "metadata", "annotations")
						for _, annotations := range []map[string]string{d.GetAnnotations(), template} {
							for k, v := range annotations {
								if strings.Contains(v, secret) {
									return fmt.Errorf("Deployment annotation %s holds the secret: %s", k, v)
								}
							}
						}
						if !strings.Contains(d.GetAnnotations()[controllerConfigAnnotation], secretHashesKey) {
							return fmt.Errorf("the recorded configuration has no hash of extra_env: %s", d.GetAnnotations()[controllerConfigAnnotation])
						}
						return nil
					},
				),
			},
			{ResourceName: controllerAddr, ImportState: true, ImportStateId: "kube-system", ImportStateVerify: true, ImportStateVerifyIgnore: []string{"wait_timeout"}},
		},
	})
}
