package settings

import (
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func lease(namespace, name, holder string, renewed time.Time, seconds int32) coordinationv1.Lease {
	l := coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	if holder != "" {
		l.Spec.HolderIdentity = ptr.To(holder)
	}
	if !renewed.IsZero() {
		l.Spec.RenewTime = &metav1.MicroTime{Time: renewed}
	}
	if seconds != 0 {
		l.Spec.LeaseDurationSeconds = ptr.To(seconds)
	}
	return l
}

func TestForeignLeader(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	const name = "karpenter-leader-election"
	for _, tc := range []struct {
		desc  string
		lease coordinationv1.Lease
		want  bool
	}{
		{"held in another namespace", lease("karpenter", name, "karpenter-abc", now.Add(-10*time.Second), 15), true},
		{"within the slack past its duration", lease("karpenter", name, "karpenter-abc", now.Add(-15*time.Second-LeaseSlack+time.Second), 15), true},
		{"renewed in the future (clock skew)", lease("karpenter", name, "karpenter-abc", now.Add(3*time.Second), 15), true},
		{"no duration: the default", lease("karpenter", name, "karpenter-abc", now.Add(-10*time.Second), 0), true},
		{"a longer duration", lease("karpenter", name, "karpenter-abc", now.Add(-50*time.Second), 60), true},
		{"expired", lease("karpenter", name, "karpenter-abc", now.Add(-15*time.Second-LeaseSlack), 15), false},
		{"released: no holder", lease("karpenter", name, "", now, 15), false},
		{"never renewed", lease("karpenter", name, "karpenter-abc", time.Time{}, 15), false},
		{"our own namespace", lease("joist", name, "joist-abc", now, 15), false},
		{"another name", lease("karpenter", "something-else", "x", now, 15), false},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			got := ForeignLeader([]coordinationv1.Lease{tc.lease}, "joist", name, now)
			if (got != nil) != tc.want {
				t.Fatalf("ForeignLeader = %v, want a conflict: %v", got, tc.want)
			}
		})
	}
}

func TestForeignLeaderPicksTheLiveOne(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	leases := []coordinationv1.Lease{
		lease("joist", "karpenter-leader-election", "joist-1", now, 15),
		lease("old", "karpenter-leader-election", "gone", now.Add(-time.Hour), 15),
		lease("karpenter", "karpenter-leader-election", "karpenter-7d9f", now, 15),
	}
	got := ForeignLeader(leases, "joist", "karpenter-leader-election", now)
	if got == nil || got.Namespace != "karpenter" {
		t.Fatalf("ForeignLeader = %v, want karpenter's", got)
	}
	msg := ForeignLeaderError(got).Error()
	for _, want := range []string{"karpenter/karpenter-leader-election", `"karpenter-7d9f"`, "Stop the other controller", MigrationGuide} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q does not name %q", msg, want)
		}
	}
}
