package crds_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

// TestRestrictedLabelsMatchGo checks that the CRD's CEL rules and
// v1.IsRestrictedLabel agree on every well-known key and on keys probing each
// restricted domain, both as requirement keys and as template labels.
func TestRestrictedLabelsMatchGo(t *testing.T) {
	keys := append([]string{
		"team", "example.com/team", "kubernetes.io/hostname", "kubernetes.io/foo",
		"topology.kubernetes.io/foo", "node.kubernetes.io/custom", "node-role.kubernetes.io/worker",
		"x.node-restriction.kubernetes.io/y", "k8s.io/foo", "cloud.k8s.io/foo", "kops.k8s.io/instancegroup",
		"karpenter.sh/foo", "sub.karpenter.sh/foo", "karpenter.k8s.aws/foo", "karpenter.k8s.aws/instance-pods",
		"beta.kubernetes.io/arch", "failure-domain.beta.kubernetes.io/zone", "topology.ebs.csi.aws.com/zone",
	}, v1.WellKnownLabels...)
	for _, key := range keys {
		goErr := v1.IsRestrictedLabel(key)
		for _, form := range []string{"requirement", "label"} {
			np := restrictedProbe(key, form)
			apiErr := kube.Create(testContext(t), np, client.DryRunAll)
			switch {
			case goErr == nil && apiErr != nil:
				t.Errorf("%s as a %s: Go allows it, the apiserver refuses: %v", key, form, apiErr)
			case goErr != nil && apiErr == nil:
				t.Errorf("%s as a %s: Go refuses it (%v), the apiserver allows it", key, form, goErr)
			case goErr != nil:
				// Each Go message must appear in the apiserver's answer.
				for _, line := range strings.Split(goErr.Error(), "\n") {
					if !strings.Contains(apiErr.Error(), line) {
						t.Errorf("%s as a %s: apiserver error %q lacks %q", key, form, apiErr, line)
					}
				}
			}
		}
	}
}

func restrictedProbe(key, form string) *unstructured.Unstructured {
	spec := map[string]interface{}{
		"nodeClassRef": map[string]interface{}{"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
		"requirements": []interface{}{},
	}
	template := map[string]interface{}{"spec": spec}
	if form == "requirement" {
		spec["requirements"] = []interface{}{map[string]interface{}{"key": key, "operator": "Exists"}}
	} else {
		template["metadata"] = map[string]interface{}{"labels": map[string]interface{}{key: "x"}}
	}
	u := &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "karpenter.sh/v1",
		"kind":       "NodePool",
		"metadata":   map[string]interface{}{"name": "restricted-probe"},
		"spec":       map[string]interface{}{"template": template},
	}}
	return u
}
