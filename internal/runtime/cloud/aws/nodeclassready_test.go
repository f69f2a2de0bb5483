package aws_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	awsprovider "github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/nodeclaim/lifecycle"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/state/nodepoolhealth"
	"github.com/joistdev/terraform-provider-joist/internal/testenv"
)

// TestStandaloneClaimWaitsForItsNodeClass: a NodeClaim of no NodePool is
// created with its EC2NodeClass, which has not resolved yet (no Ready
// condition), then reports Ready=Unknown. The lifecycle keeps the claim,
// its Launched condition Unknown with reason NodeClassReadinessUnknown,
// and launches it once the node class is Ready. A node class that is
// Ready=False gets its claim deleted, as before.
func TestStandaloneClaimWaitsForItsNodeClass(t *testing.T) {
	ctx := testContext(t)
	lc := lifecycle.NewController(kube.Client, prov, nil, clock.RealClock{}, nodepoolhealth.New())
	reconcileClaim := func(claim *v1.NodeClaim) error {
		_, err := lc.Reconcile(ctx, reconcile.Request{NamespacedName: types.NamespacedName{Name: claim.Name}})
		return err
	}

	nc := testenv.NodeClass("standalone-resolving", cluster, "al2023@latest")
	if err := kube.Client.Create(ctx, nc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kube.Client.Delete(context.Background(), nc) })
	claim := standaloneClaim(t, "standalone-resolving", nc.Name)

	waits := func(when string) {
		t.Helper()
		if err := reconcileClaim(claim); err == nil {
			t.Errorf("%s: the launch reported no error, want one so that it is retried", when)
		}
		got := &v1.NodeClaim{}
		if err := kube.Client.Get(ctx, client.ObjectKeyFromObject(claim), got); err != nil {
			t.Fatalf("%s: the claim is gone (%v), want it kept until the node class resolves", when, err)
		}
		if got.DeletionTimestamp != nil {
			t.Fatalf("%s: the claim is being deleted, want it kept until the node class resolves", when)
		}
		launched := meta.FindStatusCondition(got.Status.Conditions, v1.ConditionTypeLaunched)
		if launched == nil || launched.Status != metav1.ConditionUnknown || launched.Reason != awsprovider.ReasonNodeClassReadinessUnknown {
			t.Errorf("%s: Launched is %+v, want Unknown with reason %s", when, launched, awsprovider.ReasonNodeClassReadinessUnknown)
		}
	}
	waits("node class just created")

	setReady(t, nc, metav1.ConditionUnknown, "AwaitingReconciliation", "object is awaiting reconciliation")
	waits("node class Ready=Unknown")

	resolve(t, prov, nc)
	// Registration, the next step, errs here: the apiserver alone cannot
	// look Nodes up by providerID. The launch is what this checks.
	_ = reconcileClaim(claim)
	got := &v1.NodeClaim{}
	if err := kube.Client.Get(ctx, client.ObjectKeyFromObject(claim), got); err != nil {
		t.Fatal(err)
	}
	if !meta.IsStatusConditionTrue(got.Status.Conditions, v1.ConditionTypeLaunched) || got.Status.ProviderID == "" {
		t.Fatalf("the claim is not launched once its node class is Ready: providerID %q, conditions %+v", got.Status.ProviderID, got.Status.Conditions)
	}
	t.Cleanup(func() { _ = prov.Delete(context.Background(), got) })

	broken := testenv.NodeClass("standalone-broken", cluster, "al2023@latest")
	if err := kube.Client.Create(ctx, broken); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kube.Client.Delete(context.Background(), broken) })
	setReady(t, broken, metav1.ConditionFalse, "SubnetsNotReady", "no subnets matched")
	doomed := standaloneClaim(t, "standalone-broken", broken.Name)
	_ = reconcileClaim(doomed)
	err := kube.Client.Get(ctx, client.ObjectKeyFromObject(doomed), &v1.NodeClaim{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("a claim of a Ready=False node class: get = %v, want it deleted", err)
	}
}

// standaloneClaim creates a NodeClaim of no NodePool for one m5.large.
func standaloneClaim(t *testing.T, name, nodeClass string) *v1.NodeClaim {
	t.Helper()
	claim := testenv.NodeClaim(name, "", nodeClass, testenv.In(corev1.LabelInstanceTypeStable, "m5.large"), testenv.In(v1.CapacityTypeLabelKey, v1.CapacityTypeOnDemand))
	claim.Labels = nil
	if err := kube.Client.Create(context.Background(), claim); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		stored := &v1.NodeClaim{}
		if err := kube.Client.Get(ctx, client.ObjectKeyFromObject(claim), stored); err != nil {
			return
		}
		patch := client.MergeFrom(stored.DeepCopy())
		stored.Finalizers = nil
		_ = kube.Client.Patch(ctx, stored, patch)
		_ = kube.Client.Delete(ctx, stored)
	})
	return claim
}

// setReady sets the node class's Ready condition as its controller would.
func setReady(t *testing.T, nc *awsv1.EC2NodeClass, status metav1.ConditionStatus, reason, message string) {
	t.Helper()
	ctx := context.Background()
	if err := kube.Client.Get(ctx, client.ObjectKeyFromObject(nc), nc); err != nil {
		t.Fatal(err)
	}
	meta.SetStatusCondition(&nc.Status.Conditions, metav1.Condition{Type: v1.ConditionTypeReady, Status: status, Reason: reason, Message: message,
		ObservedGeneration: nc.Generation, LastTransitionTime: metav1.NewTime(time.Now())})
	if err := kube.Client.Status().Update(ctx, nc); err != nil {
		t.Fatal(err)
	}
}
