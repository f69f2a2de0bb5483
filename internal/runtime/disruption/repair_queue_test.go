package disruption

import (
	"context"
	"fmt"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/disruption/repair"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/state"
)

// TestQueueRepairStampsDrainBound runs repair commands through the queue
// against a real apiserver: the NodeClaim gets its termination deadline
// (now + the drain bound, never later than one it already has) before it
// is deleted, and the repair is counted by condition.
func TestQueueRepairStampsDrainBound(t *testing.T) {
	kube, pool, it := queueWorld(t)
	ctx := context.Background()
	for i, tc := range []struct {
		name     string
		existing *time.Time
		want     time.Time
	}{
		{"bounded", nil, now.Add(10 * time.Minute)},
		{"earlier deadline kept", new(now.Add(time.Minute)), now.Add(time.Minute)},
		{"later deadline tightened", new(now.Add(time.Hour)), now.Add(10 * time.Minute)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := clocktesting.NewFakeClock(now)
			q := NewQueue(kube, kube, state.NewCluster(kube, clk), nil, clk)
			cand := candidateIn(t, kube, pool, it, fmt.Sprintf("repair-%d", i))
			// A finalizer keeps the deleted claim readable, as termination's does.
			claim := &v1.NodeClaim{}
			if err := kube.Get(ctx, client.ObjectKeyFromObject(cand.NodeClaim), claim); err != nil {
				t.Fatal(err)
			}
			stored := claim.DeepCopy()
			claim.Finalizers = []string{"test.joist.dev/hold"}
			if tc.existing != nil {
				metav1.SetMetaDataAnnotation(&claim.ObjectMeta, v1.NodeClaimTerminationTimestampAnnotationKey, tc.existing.Format(time.RFC3339))
			}
			if err := kube.Patch(ctx, claim, client.MergeFrom(stored)); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { removeFinalizers(kube, claim) })
			cand.NodeClaim = claim
			bound := 10 * time.Minute
			cand.DrainBound = &bound
			cand.Repair = repair.Result{Eligible: true, Condition: corev1.NodeReady}
			before := repairedCount(t, pool.Name)

			cmd := &Command{Method: MethodRepair, Reason: v1.DisruptionReasonUnhealthy, Candidates: []*Candidate{cand}}
			if err := q.Execute(ctx, cmd, []*v1.NodePool{pool}); err != nil {
				t.Fatal(err)
			}
			// Without replacements the command deletes at once.
			got := &v1.NodeClaim{}
			for deadline := time.Now().Add(30 * time.Second); got.DeletionTimestamp == nil || repairedCount(t, pool.Name) == before; time.Sleep(20 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("the repaired NodeClaim was not deleted, or not counted")
				}
				if err := kube.Get(ctx, client.ObjectKeyFromObject(claim), got); err != nil {
					t.Fatal(err)
				}
			}
			if s := got.Annotations[v1.NodeClaimTerminationTimestampAnnotationKey]; s != tc.want.Format(time.RFC3339) {
				t.Errorf("termination deadline %q, want %s", s, tc.want.Format(time.RFC3339))
			}
			if n := repairedCount(t, pool.Name) - before; n != 1 {
				t.Errorf("karpenter_nodeclaims_unhealthy_disrupted_total rose by %v, want 1", n)
			}
		})
	}
}

func repairedCount(t *testing.T, pool string) float64 {
	t.Helper()
	m := &dto.Metric{}
	if err := unhealthyDisrupted.WithLabelValues("ready", pool, v1.CapacityTypeOnDemand, "", "eventual").Write(m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}
