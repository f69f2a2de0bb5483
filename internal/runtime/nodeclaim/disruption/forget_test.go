package disruption

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/testenv"
)

// TestReconcileForgetsDeletedClaims: once a claim is gone, its reconcile
// drops the instance type check the controller remembered for it.
func TestReconcileForgetsDeletedClaims(t *testing.T) {
	kube := testenv.KubeFor(t).Client
	ctx := context.Background()
	claim := &v1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "gone", Labels: map[string]string{v1.NodePoolLabelKey: "default"}},
		Spec: v1.NodeClaimSpec{
			Requirements: v1.Requirements{{Key: corev1.LabelInstanceTypeStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"m5.large"}}},
			NodeClassRef: &v1.NodeClassReference{Group: v1.AWSGroup, Kind: "EC2NodeClass", Name: "default"},
		},
	}
	if err := kube.Create(ctx, claim); err != nil {
		t.Fatal(err)
	}
	c := NewController(kube, nil, clock.RealClock{})
	c.typeChecked[claim.Name] = typeCheck{uid: claim.UID, at: time.Now()}
	if err := kube.Delete(ctx, claim); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Reconcile(ctx, reconcile.Request{NamespacedName: types.NamespacedName{Name: claim.Name}}); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.typeChecked[claim.Name]; ok {
		t.Error("the controller still remembers the instance type check of a deleted claim")
	}
}
