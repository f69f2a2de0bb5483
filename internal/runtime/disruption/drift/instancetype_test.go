package drift

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
)

func TestInstanceTypeNotFound(t *testing.T) {
	offering := func(zone, capacityType string, available bool) scheduling.Offering {
		return scheduling.Offering{Zone: zone, CapacityType: capacityType, Price: 0.1, Available: available}
	}
	catalog := func(name string, offerings ...scheduling.Offering) []*scheduling.InstanceType {
		return []*scheduling.InstanceType{
			{Name: "c5.large", Offerings: []scheduling.Offering{offering("us-west-2a", v1.CapacityTypeOnDemand, true)}},
			{Name: name, Offerings: offerings},
		}
	}
	claim := func(capacityType string) *v1.NodeClaim {
		c := claimOf(pool())
		c.Labels[v1.CapacityTypeLabelKey] = capacityType
		return c
	}
	for _, tc := range []struct {
		name    string
		claim   *v1.NodeClaim
		catalog []*scheduling.InstanceType
		want    string
	}{
		{"offered", claim(v1.CapacityTypeOnDemand),
			catalog("m5.large", offering("us-west-2a", v1.CapacityTypeOnDemand, true)), ""},
		{"offered but unavailable right now", claim(v1.CapacityTypeOnDemand),
			catalog("m5.large", offering("us-west-2a", v1.CapacityTypeOnDemand, false)), ""},
		{"type gone", claim(v1.CapacityTypeOnDemand),
			catalog("m5.xlarge", offering("us-west-2a", v1.CapacityTypeOnDemand, true)), InstanceTypeNotFound},
		{"no offering in the claim's zone", claim(v1.CapacityTypeOnDemand),
			catalog("m5.large", offering("us-west-2b", v1.CapacityTypeOnDemand, true)), InstanceTypeNotFound},
		{"no offering of the claim's capacity type", claim(v1.CapacityTypeSpot),
			catalog("m5.large", offering("us-west-2a", v1.CapacityTypeOnDemand, true)), InstanceTypeNotFound},
		{"reserved claim, on-demand offering", claim(v1.CapacityTypeReserved),
			catalog("m5.large", offering("us-west-2a", v1.CapacityTypeOnDemand, true)), ""},
		{"on-demand claim, reserved offering", claim(v1.CapacityTypeOnDemand),
			catalog("m5.large", offering("us-west-2a", v1.CapacityTypeReserved, true)), ""},
		{"reserved is not spot", claim(v1.CapacityTypeReserved),
			catalog("m5.large", offering("us-west-2a", v1.CapacityTypeSpot, true)), InstanceTypeNotFound},
		{"claim without an instance type label", func() *v1.NodeClaim {
			c := claim(v1.CapacityTypeOnDemand)
			delete(c.Labels, corev1.LabelInstanceTypeStable)
			return c
		}(), catalog("m5.large", offering("us-west-2a", v1.CapacityTypeOnDemand, true)), InstanceTypeNotFound},
	} {
		if got := InstanceType(tc.claim, tc.catalog); got != tc.want {
			t.Errorf("%s: drift %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestInstanceTypeCheckDue(t *testing.T) {
	now := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name       string
		age        time.Duration
		lastPassed time.Duration // before now; 0: never passed
		want       bool
	}{
		{"younger than an hour", 59 * time.Minute, 0, false},
		{"an hour old, never checked", time.Hour, 0, true},
		{"passed 29 minutes ago", 3 * time.Hour, 29 * time.Minute, false},
		{"passed 30 minutes ago", 3 * time.Hour, 30 * time.Minute, true},
	} {
		var last time.Time
		if tc.lastPassed > 0 {
			last = now.Add(-tc.lastPassed)
		}
		if got := InstanceTypeCheckDue(now.Add(-tc.age), last, now); got != tc.want {
			t.Errorf("%s: due %v, want %v", tc.name, got, tc.want)
		}
	}
}
