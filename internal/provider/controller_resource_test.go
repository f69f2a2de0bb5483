package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	k8sresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/joistdev/terraform-provider-joist/internal/controllerdeploy"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/crds"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/sandbox"
)

const controllerAddr = "joist_controller.test"

var crdGVR = k8sschema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

func controllerTestConfig(extra string) string {
	return awsProviderBlock() + fmt.Sprintf(`
resource "joist_controller" "test" {
  interruption_queue  = "acc"
  batch_idle_duration = "2s"
  wait_timeout        = "3m"
  feature_gates       = { SpotToSpotConsolidation = true }
  %s
}
`, extra)
}

// controllerNodes registers kwok Nodes, outside any NodePool, in two zones
// for the controller's two replicas.
func controllerNodes(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	for i, zone := range []string{"us-west-2a", "us-west-2b"} {
		name := fmt.Sprintf("acc-controller-%d", i+1)
		res := corev1.ResourceList{corev1.ResourceCPU: k8sresource.MustParse("4"), corev1.ResourceMemory: k8sresource.MustParse("16Gi"), corev1.ResourcePods: k8sresource.MustParse("58")}
		node := &corev1.Node{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
			ObjectMeta: metav1.ObjectMeta{
				Name:        name,
				Annotations: map[string]string{sandbox.KwokNodeAnnotation: sandbox.KwokNodeAnnotationValue},
				Labels:      map[string]string{corev1.LabelHostname: name, corev1.LabelTopologyZone: zone, corev1.LabelOSStable: "linux"},
			},
			Status: corev1.NodeStatus{Capacity: res, Allocatable: res},
		}
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(node)
		if err != nil {
			t.Fatal(err)
		}
		nodes := testCluster.kube.Resource(k8sschema.GroupVersionResource{Version: "v1", Resource: "nodes"})
		if _, err := nodes.Create(ctx, &unstructured.Unstructured{Object: u}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = nodes.Delete(context.Background(), name, metav1.DeleteOptions{}) })
	}
}

// bumpedCRDs are the embedded CRDs with a new printer column on NodePool,
// as a release with a changed CRD would ship.
func bumpedCRDs() (map[string][]byte, error) {
	m, err := crds.Manifests()
	if err != nil {
		return nil, err
	}
	const file = "karpenter.sh_nodepools.yaml"
	obj := map[string]any{}
	if err := yaml.Unmarshal(m[file], &obj); err != nil {
		return nil, err
	}
	versions, _, _ := unstructured.NestedSlice(obj, "spec", "versions")
	v0 := versions[0].(map[string]any)
	cols, _ := v0["additionalPrinterColumns"].([]any)
	v0["additionalPrinterColumns"] = append(cols, map[string]any{"name": "Fixture", "type": "string", "jsonPath": ".metadata.uid", "priority": int64(1)})
	if err := unstructured.SetNestedSlice(obj, versions, "spec", "versions"); err != nil {
		return nil, err
	}
	if m[file], err = yaml.Marshal(obj); err != nil {
		return nil, err
	}
	return m, nil
}

func deploymentOf(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	d, err := testCluster.kube.Resource(deploymentsGVR).Namespace("kube-system").Get(context.Background(), controllerdeploy.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// checkController asserts the controller's environment and that the
// rollout completed with every replica ready on the kwok nodes.
func checkController(t *testing.T, env map[string]string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		d := deploymentOf(t)
		got, err := controllerdeploy.Env(d)
		if err != nil {
			return err
		}
		for k, v := range env {
			if got[k] != v {
				return fmt.Errorf("controller env %s = %q, want %q (all: %v)", k, got[k], v, got)
			}
		}
		ready, _, _ := unstructured.NestedInt64(d.Object, "status", "readyReplicas")
		if ready != 2 {
			return fmt.Errorf("%d ready replicas, want 2", ready)
		}
		for _, m := range d.GetManagedFields() {
			if m.Manager == controllerdeploy.FieldManager && m.Operation == metav1.ManagedFieldsOperationApply {
				return nil
			}
		}
		return fmt.Errorf("the Deployment has no fields applied by %s", controllerdeploy.FieldManager)
	}
}

// podTemplate is the controller Deployment's pod template as JSON.
func podTemplate(t *testing.T) string {
	t.Helper()
	tpl, _, _ := unstructured.NestedMap(deploymentOf(t).Object, "spec", "template")
	b, err := json.Marshal(tpl)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestAccControllerLifecycle(t *testing.T) {
	awsSim(t)
	controllerNodes(t)
	ctx := context.Background()
	t.Cleanup(func() { controllerCRDManifests = crds.Manifests })
	var generation int64
	var pausedTemplate string
	claim := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim", "metadata": map[string]any{"name": "acc-controller-claim"},
		"spec": map[string]any{
			"nodeClassRef": map[string]any{"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
			"requirements": []any{map[string]any{"key": "kubernetes.io/arch", "operator": "In", "values": []any{"amd64"}}},
		},
	}}
	claims := testCluster.kube.Resource(controllerdeploy.NodeClaims)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy: func(*terraform.State) error {
			if _, err := testCluster.kube.Resource(deploymentsGVR).Namespace("kube-system").Get(ctx, controllerdeploy.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("the Deployment remains after destroy (err %v)", err)
			}
			cr := k8sschema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}
			if _, err := testCluster.kube.Resource(cr).Get(ctx, controllerdeploy.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("the ClusterRole remains after destroy (err %v)", err)
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				Config: controllerTestConfig(`log_level = "debug"`),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(controllerAddr, tfjsonpath.New("image"), knownvalue.StringExact(ControllerImageRepository+":latest")),
					statecheck.ExpectKnownValue(controllerAddr, tfjsonpath.New("in_sync"), knownvalue.Bool(true)),
				},
				Check: checkController(t, map[string]string{
					"CLUSTER_NAME": testAWSCluster, "INTERRUPTION_QUEUE": "acc", "BATCH_IDLE_DURATION": "2s", "LOG_LEVEL": "debug",
					"FEATURE_GATES": "SpotToSpotConsolidation=true", "AWS_REGION": "us-west-2", "LEADER_ELECTION_NAMESPACE": "kube-system",
				}),
			},
			{
				Config: controllerTestConfig(`log_level = "info"`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(controllerAddr, plancheck.ResourceActionUpdate),
				}},
				Check: checkController(t, map[string]string{"LOG_LEVEL": "info"}),
			},
			{
				// Out of band: someone deletes the PDB and edits the ClusterRole.
				PreConfig: func() {
					pdb := k8sschema.GroupVersionResource{Group: "policy", Version: "v1", Resource: "poddisruptionbudgets"}
					if err := testCluster.kube.Resource(pdb).Namespace("kube-system").Delete(ctx, controllerdeploy.Name, metav1.DeleteOptions{}); err != nil {
						t.Fatal(err)
					}
				},
				Config: controllerTestConfig(`log_level = "info"`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(controllerAddr, plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(controllerAddr, tfjsonpath.New("in_sync"), knownvalue.Bool(true)),
				},
			},
			{
				// The cluster-wide pause goes to the ConfigMap the controller
				// reads every pass: the Deployment's pod template is
				// untouched, so no replica restarts.
				PreConfig: func() { pausedTemplate = podTemplate(t) },
				Config:    controllerTestConfig(`log_level = "info"` + "\n  disruption_paused = true\n  disruption_breaker = \"5/30m\""),
				Check: func(*terraform.State) error {
					cm, err := testCluster.kube.Resource(k8sschema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace("kube-system").
						Get(ctx, v1.DisruptionSettingsConfigMap, metav1.GetOptions{})
					if err != nil {
						return err
					}
					data, _, _ := unstructured.NestedStringMap(cm.Object, "data")
					if data[v1.DisruptionSettingsPausedKey] != "true" || data[v1.DisruptionSettingsBreakerKey] != "5/30m" {
						return fmt.Errorf("ConfigMap %s data %v, want paused true and breaker 5/30m", v1.DisruptionSettingsConfigMap, data)
					}
					if after := podTemplate(t); after != pausedTemplate {
						return fmt.Errorf("the pod template changed: the pause would restart the controller\n%s\n%s", pausedTemplate, after)
					}
					return nil
				},
			},
			{ResourceName: controllerAddr, ImportState: true, ImportStateId: "kube-system", ImportStateVerify: true, ImportStateVerifyIgnore: []string{"wait_timeout"}},
			{
				// A release with a changed CRD: the CRD is updated in place and
				// the Deployment rolls out.
				PreConfig: func() {
					generation = deploymentOf(t).GetGeneration()
					controllerCRDManifests = bumpedCRDs
				},
				Config: controllerTestConfig(`log_level = "info"`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(controllerAddr, plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeTestCheckFunc(
					checkController(t, map[string]string{"LOG_LEVEL": "info"}),
					func(*terraform.State) error {
						crd, err := testCluster.kube.Resource(crdGVR).Get(ctx, "nodepools.karpenter.sh", metav1.GetOptions{})
						if err != nil {
							return err
						}
						versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
						cols, _ := versions[0].(map[string]any)["additionalPrinterColumns"].([]any)
						last, _ := cols[len(cols)-1].(map[string]any)
						if last["name"] != "Fixture" {
							return fmt.Errorf("the NodePool CRD was not updated: printer columns %v", cols)
						}
						if g := deploymentOf(t).GetGeneration(); g <= generation {
							return fmt.Errorf("the Deployment did not roll out (generation %d, was %d)", g, generation)
						}
						return nil
					},
				),
			},
			{
				PreConfig: func() {
					if _, err := claims.Create(ctx, claim, metav1.CreateOptions{}); err != nil {
						t.Fatal(err)
					}
				},
				Config:      controllerTestConfig(`log_level = "info"`),
				Destroy:     true,
				ExpectError: regexp.MustCompile(`NodeClaims \(acc-controller-claim\) still exist`),
			},
			{
				PreConfig: func() {
					if err := claims.Delete(ctx, claim.GetName(), metav1.DeleteOptions{}); err != nil {
						t.Fatal(err)
					}
				},
				Config: controllerTestConfig(`log_level = "info"`),
			},
		},
	})
}
