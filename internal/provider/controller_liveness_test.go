package provider

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8stypes "k8s.io/apimachinery/pkg/types"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

func TestLeaseFresh(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	lease := func(holder, renew string, seconds int64) *unstructured.Unstructured {
		spec := map[string]any{"leaseDurationSeconds": seconds}
		if holder != "" {
			spec["holderIdentity"] = holder
		}
		if renew != "" {
			spec["renewTime"] = renew
		}
		return &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": leaderLeaseName, "namespace": "joist"}, "spec": spec}}
	}
	for _, c := range []struct {
		l    *unstructured.Unstructured
		want bool
	}{
		{lease("pod-a", "2026-01-01T11:59:50.000000Z", 15), true},
		{lease("pod-a", "2026-01-01T11:59:40.000000Z", 15), false}, // expired 5s ago
		{lease("", "2026-01-01T11:59:50.000000Z", 15), false},      // released
		{lease("pod-a", "", 15), false},                            // never renewed
	} {
		if got, why := leaseFresh(c.l, now); got != c.want {
			t.Errorf("lease %v: fresh = %v (%s), want %v", c.l.Object["spec"], got, why, c.want)
		}
	}
}

// holdLease plays a running controller's leader election until the test ends.
func holdLease(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	leases := testCluster.kube.Resource(leaseGVR).Namespace("kube-system")
	renew := func() error {
		l := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
			"metadata": map[string]any{"name": leaderLeaseName, "namespace": "kube-system"},
			"spec": map[string]any{
				"holderIdentity": "controller-0", "leaseDurationSeconds": int64(15),
				"renewTime": time.Now().UTC().Format("2006-01-02T15:04:05.000000Z07:00"),
			},
		}}
		_, err := leases.Apply(ctx, leaderLeaseName, l, metav1.ApplyOptions{FieldManager: "controller-0", Force: true})
		return err
	}
	if err := renew(); err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(3 * time.Second):
				_ = renew()
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		_ = leases.Delete(context.Background(), leaderLeaseName, metav1.DeleteOptions{})
	})
}

// finishTerminations plays the controller's termination: a NodeClaim being
// deleted loses its finalizer after a while. It counts the claims it released.
func finishTerminations(t *testing.T, pool string, after time.Duration) *atomic.Int64 {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	var released atomic.Int64
	go func() {
		for ctx.Err() == nil {
			claims, _ := poolClaims(ctx, testCluster.kube, pool)
			for _, c := range claims {
				if ts := c.GetDeletionTimestamp(); ts != nil && time.Since(ts.Time) > after {
					if _, err := testCluster.kube.Resource(nodeClaimGVR).Patch(ctx, c.GetName(), k8stypes.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err == nil {
						released.Add(1)
					}
				}
			}
			time.Sleep(time.Second)
		}
	}()
	return &released
}

// TestAccNodePoolDestroyWaitsForController destroys a pool with NodeClaims
// while a controller holds its Lease: destroy deletes the claims and waits
// until the controller has terminated them. Not parallel: the Lease would
// tell the other destroy tests a controller is running.
func TestAccNodePoolDestroyWaitsForController(t *testing.T) {
	const pool = "drained"
	holdLease(t)
	var released *atomic.Int64
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: doomedPoolConfig(pool, false)},
			{
				PreConfig: func() {
					createClaims(t, pool, 2, v1.TerminationFinalizer)
					released = finishTerminations(t, pool, 4*time.Second)
				},
				Config:  doomedPoolConfig(pool, false),
				Destroy: true,
				Check: func(*terraform.State) error {
					if claims, err := poolClaims(context.Background(), testCluster.kube, pool); err != nil || len(claims) != 0 {
						return fmt.Errorf("%d NodeClaims left after destroy (%v)", len(claims), err)
					}
					// The claims went through the controller's termination,
					// which destroy waited for; it removed no finalizer itself.
					if n := released.Load(); n != 2 {
						return fmt.Errorf("the controller released %d of 2 NodeClaims", n)
					}
					return nil
				},
			},
		},
	})
}
