package controllerdeploy

import (
	"reflect"
	"testing"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

// TestObjectsCarryTheClusterDisruptionControls: the cluster-wide pause and
// breaker go into the ConfigMap the controller reads on every pass (not
// the Deployment, whose change would restart it), in its namespace, where
// its Role lets it get that one ConfigMap.
func TestObjectsCarryTheClusterDisruptionControls(t *testing.T) {
	for _, tc := range []struct {
		spec Spec
		want map[string]any
	}{
		{Spec{}, map[string]any{v1.DisruptionSettingsPausedKey: "false"}},
		{Spec{DisruptionPaused: true, DisruptionBreaker: "5/30m"}, map[string]any{v1.DisruptionSettingsPausedKey: "true", v1.DisruptionSettingsBreakerKey: "5/30m"}},
	} {
		s := tc.spec
		s.Image, s.Namespace, s.Settings = "img:1", "karpenter", map[string]string{"CLUSTER_NAME": "demo"}
		objs, err := Objects(s)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, o := range objs {
			if o.GetKind() != "ConfigMap" {
				continue
			}
			found = true
			if o.GetName() != v1.DisruptionSettingsConfigMap || o.GetNamespace() != "karpenter" {
				t.Errorf("ConfigMap %s/%s, want karpenter/%s", o.GetNamespace(), o.GetName(), v1.DisruptionSettingsConfigMap)
			}
			if got := o.Object["data"]; !reflect.DeepEqual(got, tc.want) {
				t.Errorf("data %v, want %v", got, tc.want)
			}
		}
		if !found {
			t.Fatal("no ConfigMap rendered")
		}
	}
	if !allows(namespaceRules(LeaderElectionLease), "", "configmaps", "get") {
		t.Error("the Role does not let the controller get the ConfigMap")
	}
}
