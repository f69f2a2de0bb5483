package provider

import (
	"context"
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"
)

const nodeClassData = "data.joist_ec2_node_class.read"

const nodeClassAddr = "joist_ec2_node_class.test"

var ec2NodeClassGVR = ec2NodeClassGVK.GroupVersion().WithResource("ec2nodeclasses")

func nodeClassConfig(name, team string, maxPods int, hopLimit int) string {
	return providerBlock() + fmt.Sprintf(`
resource "joist_ec2_node_class" "test" {
  name                          = %q
  role                          = "KarpenterNodeRole-demo"
  ami_selector_terms            = [{ alias = "al2023@latest" }]
  subnet_selector_terms         = [{ tags = { "karpenter.sh/discovery" = "demo" } }]
  security_group_selector_terms = [{ tags = { "karpenter.sh/discovery" = "demo" } }, { name = "eks-cluster-sg" }]
  tags                          = { team = %q }
  kubelet = {
    max_pods      = %d
    system_reserved = { cpu = "100m" }
  }
  block_device_mappings = [{
    device_name = "/dev/xvda"
    root_volume = true
    ebs         = { volume_size = "100Gi", volume_type = "gp3", encrypted = true }
  }]
  metadata_options = { http_put_response_hop_limit = %d }
}
`, name, team, maxPods, hopLimit)
}

func TestAccEC2NodeClassLifecycle(t *testing.T) {
	t.Parallel()
	const name = "class-lifecycle"
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkGone(ec2NodeClassGVR, name),
		Steps: []resource.TestStep{
			{
				Config: nodeClassConfig(name, "a", 110, 2),
				ConfigStateChecks: []statecheck.StateCheck{
					// The rest of metadata_options is the CRD's default.
					statecheck.ExpectKnownValue(nodeClassAddr, tfjsonpath.New("metadata_options").AtMapKey("http_tokens"), knownvalue.StringExact("required")),
					statecheck.ExpectKnownValue(nodeClassAddr, tfjsonpath.New("ready"), knownvalue.Bool(false)),
				},
				Check: resource.ComposeTestCheckFunc(
					checkLive(ec2NodeClassGVR, name, "spec.metadataOptions.httpPutResponseHopLimit", "2"),
					checkLive(ec2NodeClassGVR, name, "spec.blockDeviceMappings[0].ebs.volumeSize", "100Gi"),
					checkFieldManager(ec2NodeClassGVR, name),
				),
			},
			{
				Config: nodeClassConfig(name, "b", 58, 1),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(nodeClassAddr, plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeTestCheckFunc(
					checkLive(ec2NodeClassGVR, name, "spec.kubelet.maxPods", "58"),
					checkLive(ec2NodeClassGVR, name, "spec.tags.team", "b"),
				),
			},
			{
				ResourceName:      nodeClassAddr,
				ImportState:       true,
				ImportStateId:     name,
				ImportStateVerify: true,
			},
			{
				// What the controller reports shows in status after a refresh.
				PreConfig: func() {
					status := `{"status":{"subnets":[{"id":"subnet-0abc","zone":"us-west-2a","zoneID":"usw2-az1"}],` +
						`"securityGroups":[{"id":"sg-0123","name":"eks-cluster-sg"}],"instanceProfile":"demo_123",` +
						`"amis":[{"id":"ami-0123","name":"al2023","requirements":[{"key":"kubernetes.io/arch","operator":"In","values":["amd64"]}]}],` +
						`"conditions":[{"type":"Ready","status":"True","reason":"Ready","message":"","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}`
					if _, err := testCluster.kube.Resource(ec2NodeClassGVR).Patch(context.Background(), name, k8stypes.MergePatchType, []byte(status), metav1.PatchOptions{}, "status"); err != nil {
						t.Fatal(err)
					}
				},
				// The resource keeps ready; the data source reads the rest.
				Config: nodeClassConfig(name, "b", 58, 1) + fmt.Sprintf(`
data "joist_ec2_node_class" "read" {
  name = %q
}
`, name),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(nodeClassAddr, tfjsonpath.New("ready"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue(nodeClassData, tfjsonpath.New("ready"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue(nodeClassData, tfjsonpath.New("status").AtMapKey("subnets").AtSliceIndex(0).AtMapKey("zone_id"), knownvalue.StringExact("usw2-az1")),
					statecheck.ExpectKnownValue(nodeClassData, tfjsonpath.New("status").AtMapKey("instance_profile"), knownvalue.StringExact("demo_123")),
					statecheck.ExpectKnownValue(nodeClassData, tfjsonpath.New("status").AtMapKey("amis").AtSliceIndex(0).AtMapKey("requirements").AtSliceIndex(0).AtMapKey("values"), knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact("amd64")})),
					statecheck.ExpectKnownValue(nodeClassData, tfjsonpath.New("kubelet").AtMapKey("max_pods"), knownvalue.Int64Exact(58)),
				},
			},
			{
				PreConfig: func() {
					patchLive(t, ec2NodeClassGVR, name, `{"spec":{"userData":"echo edited","kubelet":{"maxPods":12}}}`)
				},
				Config: nodeClassConfig(name, "b", 58, 1),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(nodeClassAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(nodeClassAddr, tfjsonpath.New("user_data"), knownvalue.Null()),
				}},
				Check: resource.ComposeTestCheckFunc(
					checkLive(ec2NodeClassGVR, name, "spec.kubelet.maxPods", "58"),
					checkLive(ec2NodeClassGVR, name, "spec.userData", "<nil>"),
				),
			},
		},
	})
}

func TestAccEC2NodeClassDestroyWithoutController(t *testing.T) {
	t.Parallel()
	const name = "class-doomed"
	config := func(force bool) string {
		return providerBlock() + fmt.Sprintf(`
resource "joist_ec2_node_class" "test" {
  name                          = %q
  force_destroy                 = %t
  instance_profile              = "KarpenterNodeInstanceProfile"
  ami_family                    = "AL2023"
  ami_selector_terms            = [{ ssm_parameter = "/aws/service/eks/optimized-ami/1.36/amazon-linux-2023/x86_64/standard/recommended/image_id" }]
  subnet_selector_terms         = [{ id = "subnet-0abc" }]
  security_group_selector_terms = [{ id = "sg-0abc" }]
}
`, name, force)
	}
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkGone(ec2NodeClassGVR, name),
		Steps: []resource.TestStep{
			{Config: config(false)},
			{
				// The controller's finalizer and no controller to remove it.
				PreConfig: func() {
					patchLive(t, ec2NodeClassGVR, name, `{"metadata":{"finalizers":["karpenter.k8s.aws/termination"]}}`)
				},
				Config:      config(false),
				Destroy:     true,
				ExpectError: regexp.MustCompile(`EC2NodeClass class-doomed is held by finalizers[\s\S]*no\s+controller\s+is\s+running[\s\S]*force_destroy\s+=\s+true`),
			},
			{
				// The failed destroy left the object as it was.
				PreConfig: func() { checkNotDeleting(t, ec2NodeClassGVR, name) },
				Config:    config(true),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(nodeClassAddr, plancheck.ResourceActionUpdate),
				}},
			},
		},
	})
}

func checkNotDeleting(t *testing.T, gvr groupVersionResource, name string) {
	t.Helper()
	obj, err := testCluster.kube.Resource(gvr).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if obj.GetDeletionTimestamp() != nil {
		t.Errorf("%s %s is being deleted after a destroy that failed", gvr.Resource, name)
	}
}
