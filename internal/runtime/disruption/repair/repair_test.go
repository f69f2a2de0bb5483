package repair

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud"
)

var t0 = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)

func dur(d time.Duration) *time.Duration { return &d }

// policies mirror the shape of a provider's set: Ready with a 30m
// toleration, a GPU condition split by reason, and one fallback.
func policies() []cloud.RepairPolicy {
	return []cloud.RepairPolicy{
		{ConditionType: corev1.NodeReady, ConditionStatus: corev1.ConditionFalse, ReasonRegex: ".*", TolerationDuration: 30 * time.Minute, TerminationGracePeriod: dur(10 * time.Minute), Action: cloud.ReplaceNode},
		{ConditionType: corev1.NodeReady, ConditionStatus: corev1.ConditionUnknown, ReasonRegex: ".*", TolerationDuration: 30 * time.Minute, TerminationGracePeriod: dur(10 * time.Minute), Action: cloud.ReplaceNode},
		{ConditionType: "AcceleratedHardwareReady", ConditionStatus: corev1.ConditionFalse, ReasonRegex: `.*XID(79|74).*`, TolerationDuration: 10 * time.Minute, TerminationGracePeriod: dur(5 * time.Minute), Action: cloud.ReplaceNode},
		{ConditionType: "AcceleratedHardwareReady", ConditionStatus: corev1.ConditionFalse, TolerationDuration: 30 * time.Minute, TerminationGracePeriod: dur(10 * time.Minute), Action: cloud.ReplaceNode},
		{ConditionType: "KernelReady", ConditionStatus: corev1.ConditionFalse, ReasonRegex: ".*", TolerationDuration: 30 * time.Minute, TerminationGracePeriod: dur(10 * time.Minute), Action: cloud.ReplaceNode},
	}
}

func matcher(t *testing.T) *Matcher {
	t.Helper()
	m, err := NewMatcher(policies())
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func node(created time.Time, conds ...corev1.NodeCondition) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", CreationTimestamp: metav1.NewTime(created)},
		Status: corev1.NodeStatus{Conditions: conds}}
}

func cond(t corev1.NodeConditionType, s corev1.ConditionStatus, reason string, since time.Time) corev1.NodeCondition {
	return corev1.NodeCondition{Type: t, Status: s, Reason: reason, LastTransitionTime: metav1.NewTime(since)}
}

func TestResolveWaitsForToleration(t *testing.T) {
	m := matcher(t)
	n := node(t0.Add(-time.Hour), cond(corev1.NodeReady, corev1.ConditionFalse, "KubeletNotReady", t0))
	for _, tc := range []struct {
		at   time.Duration
		want bool
	}{{0, false}, {29*time.Minute + 59*time.Second, false}, {30 * time.Minute, true}, {2 * time.Hour, true}} {
		r := m.Resolve(n, t0.Add(tc.at))
		if r.Eligible != tc.want {
			t.Errorf("Ready=False for %s: eligible %v, want %v", tc.at, r.Eligible, tc.want)
		}
		if r.Eligible && (r.Condition != corev1.NodeReady || r.Reason != "KubeletNotReady" || !r.EligibleAt.Equal(t0.Add(30*time.Minute)) || *r.TerminationGracePeriod != 10*time.Minute) {
			t.Errorf("result %+v", r)
		}
	}
	healthy := node(t0.Add(-time.Hour), cond(corev1.NodeReady, corev1.ConditionTrue, "KubeletReady", t0.Add(-time.Hour)),
		cond("KernelReady", corev1.ConditionTrue, "", t0.Add(-time.Hour)), cond("SomethingElse", corev1.ConditionFalse, "", t0.Add(-time.Hour)))
	if r := m.Resolve(healthy, t0.Add(time.Hour)); r.Eligible || m.Unhealthy(healthy) {
		t.Errorf("healthy node resolves to %+v (unhealthy %v)", r, m.Unhealthy(healthy))
	}
}

func TestTolerationNeverStartsBeforeTheNode(t *testing.T) {
	m := matcher(t)
	// A transition time before the Node existed (or none at all) counts
	// from the Node's creation.
	n := node(t0, cond(corev1.NodeReady, corev1.ConditionUnknown, "NodeStatusUnknown", t0.Add(-time.Hour)))
	if r := m.Resolve(n, t0.Add(29*time.Minute)); r.Eligible {
		t.Fatalf("eligible %s after creation: %+v", 29*time.Minute, r)
	}
	if r := m.Resolve(n, t0.Add(30*time.Minute)); !r.Eligible {
		t.Fatal("not eligible 30m after creation")
	}
	unset := node(t0, corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionFalse})
	if r := m.Resolve(unset, t0.Add(time.Minute)); r.Eligible {
		t.Fatal("a condition without a transition time is eligible at once")
	}
}

func TestReasonPatternsAndFallback(t *testing.T) {
	m := matcher(t)
	created := t0.Add(-time.Hour)
	fatal := node(created, cond("AcceleratedHardwareReady", corev1.ConditionFalse, "NvidiaXID79Error", t0))
	if r := m.Resolve(fatal, t0.Add(10*time.Minute)); !r.Eligible || *r.TerminationGracePeriod != 5*time.Minute {
		t.Errorf("XID79 after 10m: %+v, want eligible with a 5m drain", r)
	}
	unknown := node(created, cond("AcceleratedHardwareReady", corev1.ConditionFalse, "NvidiaXID13Error", t0))
	if r := m.Resolve(unknown, t0.Add(10*time.Minute)); r.Eligible {
		t.Errorf("an unknown XID uses the 30m fallback, got eligible at 10m: %+v", r)
	}
	if r := m.Resolve(unknown, t0.Add(30*time.Minute)); !r.Eligible || *r.TerminationGracePeriod != 10*time.Minute {
		t.Errorf("unknown XID after 30m: %+v", r)
	}
}

func TestSelectionAndDrainBound(t *testing.T) {
	m := matcher(t)
	// Two conditions eligible: the earlier-eligible one is selected, the
	// shortest drain bound of both applies.
	n := node(t0.Add(-2*time.Hour),
		cond("KernelReady", corev1.ConditionFalse, "KernelBug", t0.Add(-time.Hour)),
		cond("AcceleratedHardwareReady", corev1.ConditionFalse, "XID74", t0.Add(-20*time.Minute)))
	r := m.Resolve(n, t0)
	if !r.Eligible || r.Condition != "KernelReady" || *r.TerminationGracePeriod != 5*time.Minute {
		t.Fatalf("result %+v, want KernelReady selected with the 5m GPU drain bound", r)
	}
	if got := DrainBound(r, nil); *got != 5*time.Minute {
		t.Errorf("drain bound without claim TGP = %s", *got)
	}
	if got := DrainBound(r, dur(time.Minute)); *got != time.Minute {
		t.Errorf("drain bound with a 1m claim TGP = %s", *got)
	}
	if got := DrainBound(Result{Eligible: true}, dur(time.Minute)); got != nil {
		t.Errorf("a policy without a bound keeps the claim's own, got %s", *got)
	}
	// Older faults score higher: they are repaired first.
	older := node(t0.Add(-2*time.Hour), cond(corev1.NodeReady, corev1.ConditionFalse, "", t0.Add(-90*time.Minute)))
	newer := node(t0.Add(-2*time.Hour), cond(corev1.NodeReady, corev1.ConditionFalse, "", t0.Add(-40*time.Minute)))
	if so, sn := m.Resolve(older, t0).Score(t0), m.Resolve(newer, t0).Score(t0); so <= sn {
		t.Errorf("score of the older fault %f <= newer %f", so, sn)
	}
}

func TestPriorityOrdersRepairs(t *testing.T) {
	ps := policies()
	ps[4].Priority = 50 // KernelReady outranks the rest
	m, err := NewMatcher(ps)
	if err != nil {
		t.Fatal(err)
	}
	kernel := node(t0.Add(-2*time.Hour), cond("KernelReady", corev1.ConditionFalse, "", t0.Add(-30*time.Minute)))
	ready := node(t0.Add(-2*time.Hour), cond(corev1.NodeReady, corev1.ConditionFalse, "", t0.Add(-50*time.Minute)))
	if sk, sr := m.Resolve(kernel, t0).Score(t0), m.Resolve(ready, t0).Score(t0); sk <= sr {
		t.Errorf("higher priority scores %f <= %f", sk, sr)
	}
}

func TestNewMatcherRejectsBadSets(t *testing.T) {
	for name, mutate := range map[string]func([]cloud.RepairPolicy) []cloud.RepairPolicy{
		"no fallback":     func(p []cloud.RepairPolicy) []cloud.RepairPolicy { return p[:3] },
		"two fallbacks":   func(p []cloud.RepairPolicy) []cloud.RepairPolicy { p[0].ReasonRegex = ""; return p },
		"bad pattern":     func(p []cloud.RepairPolicy) []cloud.RepairPolicy { p[0].ReasonRegex = "("; return p },
		"bad status":      func(p []cloud.RepairPolicy) []cloud.RepairPolicy { p[0].ConditionStatus = "Maybe"; return p },
		"negative":        func(p []cloud.RepairPolicy) []cloud.RepairPolicy { p[0].TolerationDuration = -1; return p },
		"priority":        func(p []cloud.RepairPolicy) []cloud.RepairPolicy { p[0].Priority = 101; return p },
		"reboot":          func(p []cloud.RepairPolicy) []cloud.RepairPolicy { p[0].Action = "Reboot"; return p },
		"empty condition": func(p []cloud.RepairPolicy) []cloud.RepairPolicy { p[0].ConditionType = ""; return p },
	} {
		if _, err := NewMatcher(mutate(policies())); err == nil {
			t.Errorf("%s: accepted", name)
		} else if !strings.Contains(err.Error(), "repair polic") {
			t.Errorf("%s: error %q does not name the repair policy", name, err)
		}
	}
}

func TestSafetyLimit(t *testing.T) {
	for _, tc := range []struct {
		total, unhealthy int
		tripped          bool
	}{
		{1, 1, false}, // one node alone is repaired: ceil(0.2) = 1
		{3, 1, false},
		{3, 2, true},
		{5, 1, false},
		{5, 2, true},
		{10, 2, false},
		{10, 3, true},
		{35, 7, false}, // exactly 20 %
		{35, 8, true},
		{0, 0, false},
	} {
		if got := (PoolCount{Total: tc.total, Unhealthy: tc.unhealthy}).Tripped(); got != tc.tripped {
			t.Errorf("%d of %d unhealthy: tripped %v, want %v", tc.unhealthy, tc.total, got, tc.tripped)
		}
	}
	m := matcher(t)
	mk := func(pool string, c corev1.NodeCondition) *corev1.Node {
		n := node(t0, c)
		if pool != "" {
			n.Labels = map[string]string{"pool": pool}
		}
		return n
	}
	ok := cond(corev1.NodeReady, corev1.ConditionTrue, "", t0)
	bad := cond(corev1.NodeReady, corev1.ConditionFalse, "", t0) // counted at once, toleration aside
	counts := m.CountPools([]*corev1.Node{mk("a", ok), mk("a", bad), mk("a", bad), mk("b", ok), mk("b", bad), mk("b", ok), mk("b", ok), mk("b", ok), mk("", bad)}, "pool")
	if counts["a"] != (PoolCount{3, 2}) || counts["b"] != (PoolCount{5, 1}) || len(counts) != 2 {
		t.Fatalf("counts %+v", counts)
	}
	if !counts["a"].Tripped() || counts["b"].Tripped() {
		t.Errorf("pool a (2/3) should stop repair, pool b (1/5) should not")
	}
}
