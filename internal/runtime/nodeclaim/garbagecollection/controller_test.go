package garbagecollection

import (
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

var now = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// instance is a listed instance: its nodeclaim tag as name, launched age ago.
func instance(providerID, claimTag string, age time.Duration, shuttingDown bool) *v1.NodeClaim {
	c := &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: claimTag, CreationTimestamp: metav1.NewTime(now.Add(-age))}}
	c.Status.ProviderID = providerID
	if shuttingDown {
		t := metav1.NewTime(now)
		c.DeletionTimestamp = &t
	}
	return c
}

// claim has a providerID and was registered registeredAgo ago (never when
// negative).
func claim(name, providerID string, registeredAgo time.Duration, deleting bool) v1.NodeClaim {
	c := v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: name}}
	c.Status.ProviderID = providerID
	if registeredAgo >= 0 {
		c.Status.Conditions = []metav1.Condition{{Type: v1.ConditionTypeRegistered, Status: metav1.ConditionTrue, LastTransitionTime: metav1.NewTime(now.Add(-registeredAgo))}}
	} else {
		c.Status.Conditions = []metav1.Condition{{Type: v1.ConditionTypeLaunched, Status: metav1.ConditionTrue, LastTransitionTime: metav1.NewTime(now.Add(-time.Hour))}}
	}
	if deleting {
		t := metav1.NewTime(now)
		c.DeletionTimestamp = &t
	}
	return c
}

func ids(cs []*v1.NodeClaim) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Status.ProviderID)
	}
	slices.Sort(out)
	return out
}

func TestOrphans(t *testing.T) {
	instances := []*v1.NodeClaim{
		instance("aws:///a/i-known", "pool-known", time.Hour, false),
		instance("aws:///a/i-young", "", 10*time.Second, false),                // launched 10s ago: its claim may not know it yet
		instance("aws:///a/i-orphan", "gone-claim", time.Minute, false),        // its claim is gone
		instance("aws:///a/i-stopped", "", time.Hour, false),                   // stopped instances are listed as live
		instance("aws:///a/i-shutting", "", time.Hour, true),                   // already going
		instance("aws:///a/i-inflight", "pool-launching", time.Minute, false),  // its claim's CreateFleet has not returned
		instance("aws:///a/i-replaced", "pool-relaunched", time.Minute, false), // its claim launched another instance
		instance("aws:///a/i-deleting-claim", "pool-deleting", time.Hour, false),
	}
	claims := []v1.NodeClaim{
		claim("pool-known", "aws:///a/i-known", time.Hour, false),
		claim("pool-launching", "", -1, false),
		claim("pool-relaunched", "aws:///a/i-new", -1, false),
		claim("pool-deleting", "aws:///a/i-deleting-claim", time.Hour, true),
	}
	got := ids(Orphans(instances, claims, now))
	want := []string{"aws:///a/i-orphan", "aws:///a/i-replaced", "aws:///a/i-stopped"}
	if !slices.Equal(got, want) {
		t.Errorf("orphans = %v, want %v", got, want)
	}
}

func TestLost(t *testing.T) {
	instances := []*v1.NodeClaim{
		instance("aws:///a/i-live", "", time.Hour, false),
		instance("aws:///a/i-shutting", "", time.Hour, true),
	}
	claims := []v1.NodeClaim{
		claim("live", "aws:///a/i-live", time.Hour, false),
		claim("gone", "aws:///a/i-gone", time.Hour, false),
		claim("shutting", "aws:///a/i-shutting", time.Hour, false),                  // a shutting-down instance is gone for the claim
		claim("launched-only", "aws:///a/i-invisible", -1, false),                   // not registered: registration's timeout decides
		claim("just-registered", "aws:///a/i-not-listed-yet", 5*time.Second, false), // listings lag launches
		claim("deleting", "aws:///a/i-gone2", time.Hour, true),
		claim("not-launched", "", -1, false),
	}
	got := ids(Lost(claims, instances, now))
	want := []string{"aws:///a/i-gone", "aws:///a/i-shutting"}
	if !slices.Equal(got, want) {
		t.Errorf("lost = %v, want %v", got, want)
	}
}
