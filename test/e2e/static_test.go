package e2e

import (
	"context"
	"fmt"
	"slices"
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

// testStatic: a static NodePool of 3 launches 3 nodes with no pod asking;
// pods that only it could take scale up and stay Pending (the provisioner
// says so on them) while the pool stays at the same 3 NodeClaims; the
// scale subresource, as kubectl scale uses it, takes it to 5 and back to 2;
// a deleted NodeClaim is replaced, and a template change replaces both.
func testStatic(t *testing.T) {
	nodeClass(t, "static")
	ns := scenarioNamespace(t, "e2e-static")
	np := consolidatingPool(t, "static", "0s", func(np *v1.NodePool) {
		np.Spec.Template.Spec.NodeClassRef.Name = "static"
		np.Spec.Replicas = new(int64(3))
	})
	launched := waitStaticClaims(t, np.Name, 3)
	waitScaleStatus(t, np, 3)

	create(t, deployment(ns, "pause", 40, podSpec(np.Name, requests("250m", "256Mi"))))
	eventually(t, "pods Running on the static nodes, and one they cannot fit reported unschedulable by the provisioner", func() (bool, string) {
		ps := pods(t, ns, map[string]string{"app": "pause"})
		n, _ := running(ps)
		for _, p := range ps {
			if n > 0 && p.Spec.NodeName == "" && len(runtimeEvents(t, ns, p.Name, "FailedScheduling")) > 0 {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d Running, no Pending pod with a FailedScheduling event from the runtime yet", n)
	})
	if now := claimNames(t, np.Name); !slices.Equal(now, launched) {
		t.Fatalf("static pool's NodeClaims changed with pod demand: %v, want the first %v", now, launched)
	}
	if n, _ := running(pods(t, ns, map[string]string{"app": "pause"})); n == 40 {
		t.Fatalf("all 40 pods Running on 3 static nodes: the scenario needs pods that do not fit")
	}

	scaleNodePool(t, np, 5)
	waitStaticClaims(t, np.Name, 5)
	waitScaleStatus(t, np, 5)
	scaleNodePool(t, np, 2)
	two := waitStaticClaims(t, np.Name, 2)
	waitScaleStatus(t, np, 2)

	// A NodeClaim deleted (as expiry deletes it) is replaced from the
	// template.
	if err := worldOf(t).kube.Delete(context.Background(), &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: two[0]}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the deleted NodeClaim replaced", func() (bool, string) {
		claims := claimsOf(t, np.Name)
		ok := len(claims) == 2
		for _, c := range claims {
			ok = ok && c.Name != two[0] && c.Status.ProviderID != ""
		}
		return ok, fmt.Sprintf("%d claims: %v", len(claims), claimNames(t, np.Name))
	})
	// A template change drifts both nodes; each is replaced from the new
	// template and the pool ends at 2 again.
	updatePool(t, np.Name, func(np *v1.NodePool) { np.Spec.Template.Labels = map[string]string{"example.com/revision": "2"} })
	eventually(t, "both nodes replaced from the changed template", func() (bool, string) {
		claims := claimsOf(t, np.Name)
		ok := len(claims) == 2
		for _, c := range claims {
			ok = ok && c.Status.ProviderID != "" && c.DeletionTimestamp == nil && c.Labels["example.com/revision"] == "2"
		}
		return ok, fmt.Sprintf("%d claims: %v", len(claims), claimNames(t, np.Name))
	})
}

// scaleNodePool sets the pool's replicas through its scale subresource.
func scaleNodePool(t *testing.T, np *v1.NodePool, replicas int32) {
	t.Helper()
	// The scale carries the NodePool's resourceVersion, and the controllers
	// write its status meanwhile: retry on conflict, as kubectl scale's
	// users do.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		s := &autoscalingv1.Scale{}
		if err := worldOf(t).kube.SubResource("scale").Get(context.Background(), np, s); err != nil {
			return err
		}
		s.Spec.Replicas = replicas
		return worldOf(t).kube.SubResource("scale").Update(context.Background(), np, client.WithSubResourceBody(s))
	})
	if err != nil {
		t.Fatalf("scaling NodePool %s to %d: %v", np.Name, replicas, err)
	}
}

// waitScaleStatus waits until the scale subresource reports want nodes
// (status.nodes).
func waitScaleStatus(t *testing.T, np *v1.NodePool, want int32) {
	t.Helper()
	eventually(t, fmt.Sprintf("scale of %s reports %d replicas", np.Name, want), func() (bool, string) {
		s := &autoscalingv1.Scale{}
		if err := worldOf(t).kube.SubResource("scale").Get(context.Background(), np, s); err != nil {
			return false, err.Error()
		}
		return s.Status.Replicas == want, fmt.Sprintf("status.replicas %d", s.Status.Replicas)
	})
}

// waitStaticClaims waits until the pool has exactly want NodeClaims, all
// launched and none deleting, and no more (deleted ones gone), and returns
// their names.
func waitStaticClaims(t *testing.T, pool string, want int) []string {
	t.Helper()
	eventually(t, fmt.Sprintf("%d launched NodeClaims in %s", want, pool), func() (bool, string) {
		claims := claimsOf(t, pool)
		ok := len(claims) == want
		for _, c := range claims {
			ok = ok && c.Status.ProviderID != "" && c.DeletionTimestamp == nil
		}
		return ok, fmt.Sprintf("%d claims: %v", len(claims), claimNames(t, pool))
	})
	return claimNames(t, pool)
}
