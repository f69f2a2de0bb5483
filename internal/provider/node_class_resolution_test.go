package provider

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8stypes "k8s.io/apimachinery/pkg/types"
)

func TestResolvedNeedsTheCurrentGeneration(t *testing.T) {
	class := func(generation, observed int64, status string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"conditions": []any{
			map[string]any{"type": "SubnetsReady", "status": "False", "message": "no subnet matches"},
			map[string]any{"type": "Ready", "status": status, "observedGeneration": observed},
		}}}}
		u.SetGeneration(generation)
		return u
	}
	for _, tc := range []struct {
		generation, observed int64
		status               string
		want                 bool
	}{
		{2, 2, "True", true}, {2, 2, "False", true}, {2, 1, "True", false}, {2, 2, "Unknown", false},
	} {
		if got := resolved(class(tc.generation, tc.observed, tc.status)); got != tc.want {
			t.Errorf("generation %d, Ready %s observed %d: resolved %v, want %v", tc.generation, tc.status, tc.observed, got, tc.want)
		}
	}
	unknown := class(2, 2, "Unknown")
	unknown.Object["status"].(map[string]any)["conditions"].([]any)[1].(map[string]any)["reason"] = "ReconcilingDependents"
	if !resolved(unknown) {
		t.Error("Ready=Unknown after a full pass (ReconcilingDependents) does not count as resolved")
	}
	if got := notReadyConditions(class(1, 1, "False").Object["status"].(map[string]any)); got != "SubnetsReady=False (no subnet matches)" {
		t.Errorf("notReadyConditions = %q", got)
	}
	if resolved(&unstructured.Unstructured{Object: map[string]any{}}) {
		t.Error("a class with no conditions counts as resolved")
	}
}

// fakeNodeClassController plays the controller for one EC2NodeClass: it
// holds the leader-election Lease and, a few seconds after each new
// generation, reports the class Ready for it.
func fakeNodeClassController(t *testing.T, name string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	leases := testCluster.kube.Resource(leaseGVR).Namespace("default")
	renew := func() {
		now := time.Now().UTC().Format("2006-01-02T15:04:05.000000Z")
		lease := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": map[string]any{"name": leaderLeaseName, "namespace": "default"},
			"spec": map[string]any{"holderIdentity": "acc-fake-controller", "leaseDurationSeconds": int64(15), "renewTime": now, "acquireTime": now},
		}}
		if _, err := leases.Apply(ctx, leaderLeaseName, lease, metav1.ApplyOptions{FieldManager: "acc-fake-controller", Force: true}); err != nil && ctx.Err() == nil {
			t.Errorf("renewing the lease: %v", err)
		}
	}
	renew()
	done := make(chan struct{})
	t.Cleanup(func() {
		cancel()
		<-done
		_ = leases.Delete(context.Background(), leaderLeaseName, metav1.DeleteOptions{})
	})
	go func() {
		defer close(done)
		seen := map[int64]time.Time{}
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
			renew()
			live, err := testCluster.kube.Resource(ec2NodeClassGVR).Get(ctx, name, metav1.GetOptions{})
			if err != nil || resolved(live) {
				continue
			}
			gen := live.GetGeneration()
			if _, ok := seen[gen]; !ok {
				seen[gen] = time.Now()
			}
			// Resolving takes the controller a moment: the apply waits.
			if time.Since(seen[gen]) < 3*time.Second {
				continue
			}
			status := fmt.Sprintf(`{"status":{"instanceProfile":"acc_profile","conditions":[{"type":"Ready","status":"True","reason":"Ready","message":"",`+
				`"observedGeneration":%d,"lastTransitionTime":"2026-01-01T00:00:00Z"}]}}`, gen)
			_, _ = testCluster.kube.Resource(ec2NodeClassGVR).Patch(ctx, name, k8stypes.MergePatchType, []byte(status), metav1.PatchOptions{}, "status")
		}
	}()
}

// TestAccEC2NodeClassWaitsForTheController: create and update return once
// the controller has resolved the class's new generation, with ready
// true, and the next plan is empty.
func TestAccEC2NodeClassWaitsForTheController(t *testing.T) {
	const name = "class-waited"
	fakeNodeClassController(t, name)
	config := func(team string) string {
		return providerBlock() + fmt.Sprintf(`
resource "joist_ec2_node_class" "test" {
  name                          = %q
  force_destroy                 = true
  role                          = "KarpenterNodeRole"
  ami_selector_terms            = [{ alias = "al2023@latest" }]
  subnet_selector_terms         = [{ id = "subnet-0abc" }]
  security_group_selector_terms = [{ id = "sg-0abc" }]
  tags                          = { team = %q }
}
`, name, team)
	}
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkGone(ec2NodeClassGVR, name),
		Steps: []resource.TestStep{
			{
				Config:            config("a"),
				ConfigStateChecks: []statecheck.StateCheck{statecheck.ExpectKnownValue(nodeClassAddr, tfjsonpath.New("ready"), knownvalue.Bool(true))},
			},
			{
				Config: config("b"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(nodeClassAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectUnknownValue(nodeClassAddr, tfjsonpath.New("ready")),
				}},
				ConfigStateChecks: []statecheck.StateCheck{statecheck.ExpectKnownValue(nodeClassAddr, tfjsonpath.New("ready"), knownvalue.Bool(true))},
				Check:             checkLive(ec2NodeClassGVR, name, "spec.tags.team", "b"),
			},
		},
	})
}
