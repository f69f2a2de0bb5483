package cache

import (
	"testing"
	"time"
)

func TestUnavailableOfferingsExpireAndBumpSequence(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	u := NewUnavailableOfferings()
	u.now = func() time.Time { return now }

	s0 := u.SeqNum()
	u.MarkUnavailable("m5.large", "us-west-2a", "spot")
	s1 := u.SeqNum()
	if s1 == s0 {
		t.Fatal("marking an offering did not change the sequence number")
	}
	if !u.IsUnavailable("m5.large", "us-west-2a", "spot") {
		t.Fatal("marked offering is available")
	}
	for _, o := range []Offering{{"m5.large", "us-west-2b", "spot", ""}, {"m5.large", "us-west-2a", "on-demand", ""}, {"m5.xlarge", "us-west-2a", "spot", ""}} {
		if u.IsUnavailable(o.InstanceType, o.Zone, o.CapacityType) {
			t.Errorf("%+v is unavailable but was never marked", o)
		}
	}
	now = now.Add(UnavailableOfferingsTTL - time.Second)
	if !u.IsUnavailable("m5.large", "us-west-2a", "spot") || u.SeqNum() != s1 {
		t.Fatal("offering expired before the TTL")
	}
	now = now.Add(time.Second)
	if u.IsUnavailable("m5.large", "us-west-2a", "spot") {
		t.Fatal("offering still unavailable after the TTL")
	}
	if u.SeqNum() == s1 {
		t.Fatal("expiry did not change the sequence number")
	}
}

func TestUnavailableCapacityType(t *testing.T) {
	u := NewUnavailableOfferings()
	u.MarkCapacityTypeUnavailable("spot")
	if !u.IsUnavailable("c5.large", "us-west-2c", "spot") {
		t.Fatal("spot pool available after spot was switched off")
	}
	if u.IsUnavailable("c5.large", "us-west-2c", "on-demand") {
		t.Fatal("on-demand pool unavailable after spot was switched off")
	}
}

func TestUnavailableInAPlacementGroup(t *testing.T) {
	u := NewUnavailableOfferings()
	u.MarkUnavailableIn("pg-1", "m5.large", "us-west-2a", "on-demand")
	if !u.IsUnavailableIn("pg-1", "m5.large", "us-west-2a", "on-demand") {
		t.Error("the pool marked for pg-1 is available to pg-1's launches")
	}
	if u.IsUnavailable("m5.large", "us-west-2a", "on-demand") || u.IsUnavailableIn("", "m5.large", "us-west-2a", "on-demand") || u.IsUnavailableIn("pg-2", "m5.large", "us-west-2a", "on-demand") {
		t.Error("a pool full in pg-1 is unavailable outside it")
	}
	u.MarkUnavailable("c5.large", "us-west-2b", "spot")
	if !u.IsUnavailableIn("pg-1", "c5.large", "us-west-2b", "spot") {
		t.Error("a pool unavailable to every launch is available to a placement group's")
	}
}
