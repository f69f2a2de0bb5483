package v1

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func ptr[T any](v T) *T { return &v }

func window(schedule string, d time.Duration) Budget {
	return Budget{Nodes: "0", Schedule: &schedule, Duration: &metav1.Duration{Duration: d}}
}

func TestBudgetNodesRoundsPercentagesUp(t *testing.T) {
	for _, tc := range []struct {
		nodes    string
		numNodes int
		want     int
	}{
		{"10%", 10, 1},
		{"10%", 15, 2}, // 1.5 rounds up
		{"10%", 1, 1},  // a small pool still makes progress
		{"10%", 0, 0},
		{"0%", 50, 0},
		{"100%", 7, 7},
		{"33%", 10, 4},
		{"5", 3, 5}, // counts are not capped by the pool size
		{"0", 10, 0},
	} {
		b := Budget{Nodes: tc.nodes}
		got, err := b.AllowedDisruptions(time.Now(), tc.numNodes)
		if err != nil || got != tc.want {
			t.Errorf("nodes %q of %d: got %d, %v; want %d", tc.nodes, tc.numNodes, got, err, tc.want)
		}
	}
}

func TestBudgetScheduleWindowInUTC(t *testing.T) {
	daily := window("@daily", time.Hour)
	weekdays := window("0 9 * * 1-5", 8*time.Hour)
	monday := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC) // a Monday
	for _, tc := range []struct {
		name   string
		budget Budget
		now    time.Time
		want   bool
	}{
		{"at the firing instant", daily, monday, true},
		{"inside the window", daily, monday.Add(30 * time.Minute), true},
		{"the window is half open", daily, monday.Add(time.Hour), false},
		{"after the window", daily, monday.Add(90 * time.Minute), false},
		{"just before the next firing", daily, monday.Add(24*time.Hour - time.Second), false},
		{"a local time is read as UTC", daily, monday.Add(30 * time.Minute).In(time.FixedZone("UTC+5", 5*3600)), true},
		{"weekday working hours", weekdays, monday.Add(10 * time.Hour), true},
		{"weekday evening", weekdays, monday.Add(18 * time.Hour), false},
		{"saturday", weekdays, monday.Add(5*24*time.Hour + 10*time.Hour), false},
		{"@hourly with minutes", window("@hourly", 15*time.Minute), monday.Add(3*time.Hour + 10*time.Minute), true},
	} {
		got, err := tc.budget.IsActive(tc.now)
		if err != nil || got != tc.want {
			t.Errorf("%s: IsActive(%s) = %v, %v; want %v", tc.name, tc.now, got, err, tc.want)
		}
	}
}

func TestInactiveBudgetIsUnlimited(t *testing.T) {
	b := window("@daily", time.Hour)
	noon := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	if got, err := b.AllowedDisruptions(noon, 10); err != nil || got != Unlimited {
		t.Fatalf("got %d, %v; want Unlimited", got, err)
	}
}

func TestBadScheduleFailsClosed(t *testing.T) {
	b := window("not a cron", time.Hour)
	got, err := b.AllowedDisruptions(time.Now(), 10)
	if err == nil || got != 0 {
		t.Fatalf("got %d, %v; want 0 and an error", got, err)
	}
}

func TestAllowedDisruptionsByReason(t *testing.T) {
	noon := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	np := &NodePool{Spec: NodePoolSpec{Disruption: Disruption{Budgets: []Budget{
		{Nodes: "50%"},
		{Nodes: "0", Reasons: []DisruptionReason{DisruptionReasonDrifted}},
		{Nodes: "3", Reasons: []DisruptionReason{DisruptionReasonEmpty, DisruptionReasonUnderutilized}},
		// Blocks everything at midnight only: inactive at noon.
		{Nodes: "0", Schedule: ptr("@daily"), Duration: &metav1.Duration{Duration: time.Hour}},
	}}}}
	for reason, want := range map[DisruptionReason]int{
		DisruptionReasonDrifted:       0,
		DisruptionReasonEmpty:         3,
		DisruptionReasonUnderutilized: 3,
	} {
		got, err := np.AllowedDisruptionsByReason(noon, 20, reason)
		if err != nil || got != want {
			t.Errorf("%s at noon: got %d, %v; want %d", reason, got, err, want)
		}
	}
	midnight := noon.Add(-12 * time.Hour)
	if got, _ := np.AllowedDisruptionsByReason(midnight, 20, DisruptionReasonEmpty); got != 0 {
		t.Errorf("Empty at midnight: got %d, want 0 from the scheduled budget", got)
	}

	none := &NodePool{}
	if got, err := none.AllowedDisruptionsByReason(noon, 20, DisruptionReasonEmpty); err != nil || got != Unlimited {
		t.Errorf("no budgets: got %d, %v; want Unlimited", got, err)
	}

	bad := &NodePool{ObjectMeta: metav1.ObjectMeta{Name: "bad"}, Spec: NodePoolSpec{Disruption: Disruption{Budgets: []Budget{
		{Nodes: "5"},
		{Nodes: "5", Schedule: ptr("61 * * * *"), Duration: &metav1.Duration{Duration: time.Hour}},
	}}}}
	got, err := bad.AllowedDisruptionsByReason(noon, 20, DisruptionReasonEmpty)
	if got != 0 || err == nil || !strings.Contains(err.Error(), "spec.disruption.budgets[1]") {
		t.Errorf("bad schedule: got %d, %v; want 0 and an error naming budgets[1]", got, err)
	}
}
