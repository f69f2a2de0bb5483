package termination_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

// TestUnmanagedInstanceIsReported: a NodeClaim whose instance carries the
// cluster's and a NodePool's tags but fails the ownership check (its
// EC2NodeClass tag was removed) is released without terminating the
// instance, and the user is told: a warning event on the claim and the
// joist_cloudprovider_unmanaged_instances_total counter.
func TestUnmanagedInstanceIsReported(t *testing.T) {
	ctx := testContext(t)
	const pool = "unmanaged-pool"
	providerID, instance := launchTagged(t, map[string]string{
		"kubernetes.io/cluster/" + cluster: "owned", "eks:eks-cluster-name": cluster, "karpenter.sh/nodepool": pool,
	})
	before := unmanagedCount(t, pool)
	claim := &v1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "unmanaged", Finalizers: []string{v1.TerminationFinalizer}, Labels: map[string]string{v1.NodePoolLabelKey: pool}},
		Spec: v1.NodeClaimSpec{
			Requirements: v1.Requirements{{Key: corev1.LabelInstanceTypeStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"m5.large"}}},
			NodeClassRef: &v1.NodeClassReference{Group: v1.AWSGroup, Kind: "EC2NodeClass", Name: "default"},
		},
	}
	if err := kube.Create(ctx, claim); err != nil {
		t.Fatal(err)
	}
	claim.Status.ProviderID = providerID
	if err := kube.Status().Update(ctx, claim); err != nil {
		t.Fatal(err)
	}
	if err := kube.Delete(ctx, claim); err != nil {
		t.Fatal(err)
	}
	eventually(t, "nodeclaim released", func(ctx context.Context) bool { return isGone(ctx, claim) })
	if s := instanceState(t, instance); s != "pending" && s != "running" {
		t.Errorf("the instance failing the ownership check is %s; it must be left alone", s)
	}
	if got := unmanagedCount(t, pool) - before; got < 1 {
		t.Fatalf("joist_cloudprovider_unmanaged_instances_total{nodepool=%q} rose by %v, want at least 1", pool, got)
	}
	expectEvent(t, claim.Name, "UnmanagedInstance")
}

// unmanagedCount reads the counter from the registry the controller
// exports.
func unmanagedCount(t *testing.T, pool string) float64 {
	t.Helper()
	families, err := crmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "joist_cloudprovider_unmanaged_instances_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "nodepool" && l.GetValue() == pool {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}
