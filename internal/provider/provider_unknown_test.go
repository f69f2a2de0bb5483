package provider

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"k8s.io/client-go/tools/clientcmd"
)

// TestAccProviderHostUnknownUntilApply configures the provider with a
// kubernetes.host that only apply learns (as with a cluster created in the
// same run): planning the pool must work, and apply must then reach the
// cluster with the value.
func TestAccProviderHostUnknownUntilApply(t *testing.T) {
	t.Parallel()
	cfg, err := clientcmd.BuildConfigFromFlags("", testCluster.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	config := fmt.Sprintf(`
resource "terraform_data" "cluster" {
  input = %q
}

provider "joist" {
  kubernetes = {
    host                   = terraform_data.cluster.output
    cluster_ca_certificate = %q
    client_certificate     = %q
    client_key             = %q
  }
}

resource "joist_node_pool" "test" {
  name = "unknown-host"
  template = {
    spec = {
      node_class_ref = { group = "karpenter.k8s.aws", kind = "EC2NodeClass", name = "default" }
      requirements   = [{ key = "kubernetes.io/arch", operator = "In", values = ["amd64"] }]
    }
  }
}
`, cfg.Host, cfg.CAData, cfg.CertData, cfg.KeyData)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkGone(nodePoolGVKResource, "unknown-host"),
		Steps: []resource.TestStep{{
			Config: config,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectUnknownValue("terraform_data.cluster", tfjsonpath.New("output")),
				plancheck.ExpectResourceAction(nodePoolAddr, plancheck.ResourceActionCreate),
			}},
			Check: checkLive(nodePoolGVKResource, "unknown-host", "spec.template.spec.requirements[0].values[0]", "amd64"),
		}},
	})
}
