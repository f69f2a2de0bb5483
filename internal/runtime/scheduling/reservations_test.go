package scheduling_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	. "github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
)

// withReservation adds a reserved offering of it in zone from reservation
// id with room for n more instances, priced as the cloud provider prices
// reservations (a tiny fraction of on-demand).
func withReservation(it *InstanceType, zone, id string, n int) *InstanceType {
	it.Offerings = append(it.Offerings, Offering{
		Zone: zone, CapacityType: CapacityTypeReserved, Price: 0.40 / 10_000_000, Available: true,
		ReservationID: id, ReservationCapacity: n,
	})
	return it
}

const reservationLabel = "karpenter.k8s.aws/capacity-reservation-id"

func reservedClaims(plan *Plan) (reserved, other []*NewClaim) {
	for _, c := range plan.NewClaims {
		if c.Requirements.Get(labelCapacityType).Has(CapacityTypeReserved) && c.Requirements.Get(labelCapacityType).Len() == 1 {
			reserved = append(reserved, c)
		} else {
			other = append(other, c)
		}
	}
	return reserved, other
}

func TestReservedCapacity(t *testing.T) {
	allCTs := expr(labelCapacityType, corev1.NodeSelectorOpIn, CapacityTypeReserved, CapacityTypeSpot, CapacityTypeOnDemand)
	runCases(t, []tcase{
		{
			// Each pod fills a large.a: two go into the reservation, the rest
			// onto spot, the cheapest of what the pool allows beside it.
			name: "reservation first, then spot when it is full",
			in: func() Input {
				large := withReservation(withSpot(mkType("large.a", "amd64", 8, 16, 0.40), 0.12), "z1", "cr-1", 2)
				return Input{NodePools: []*NodePool{mkPool("default", []*InstanceType{large}, allCTs)}, Pods: pods(5, "p", "7", "8Gi")}
			},
			check: func(t *testing.T, r *result) {
				r.claims(t, 5)
				reserved, other := reservedClaims(r.plan)
				if len(reserved) != 2 {
					t.Fatalf("%d reserved claims, want 2 (the reservation's room)", len(reserved))
				}
				for _, c := range reserved {
					if got := c.Requirements.Get(reservationLabel).Values(); len(got) != 1 || got[0] != "cr-1" {
						t.Errorf("reserved claim requires reservation %v, want [cr-1]", got)
					}
					expectZone(t, c, "z1")
					if c.Price() > 0.001 || len(c.InstanceTypes) != 1 || len(c.InstanceTypes[0].Offerings) != 1 {
						t.Errorf("reserved claim options %v at $%v, want the reserved offering alone", optionNames(c), c.Price())
					}
				}
				for _, c := range other {
					if c.Requirements.Get(reservationLabel).Len() != 0 && c.Requirements.Get(reservationLabel).Operator() == corev1.NodeSelectorOpIn {
						t.Errorf("claim beyond the reservation requires a reservation: %v", c.Requirements)
					}
					if c.Price() != 0.12 {
						t.Errorf("claim beyond the reservation costs $%v, want spot's $0.12", c.Price())
					}
					if c.Requirements.Get(labelCapacityType).Has(CapacityTypeReserved) {
						t.Errorf("claim beyond the reservation still allows reserved capacity: %v", c.Requirements.Get(labelCapacityType))
					}
					for _, o := range c.InstanceTypes[0].Offerings {
						if o.CapacityType == CapacityTypeReserved {
							t.Errorf("claim beyond the reservation offers the full reservation: %+v", o)
						}
					}
				}
			},
		},
		{
			// A pool restricted to reserved capacity stops at the reservation:
			// what does not fit stays pending rather than going on-demand.
			name: "reserved-only pool stops at the reservation's room",
			in: func() Input {
				large := withReservation(mkType("large.a", "amd64", 8, 16, 0.40), "z2", "cr-2", 1)
				pool := mkPool("reserved", []*InstanceType{large}, expr(labelCapacityType, corev1.NodeSelectorOpIn, CapacityTypeReserved))
				return Input{NodePools: []*NodePool{pool}, Pods: pods(3, "p", "7", "8Gi")}
			},
			check: func(t *testing.T, r *result) {
				r.claims(t, 1)
				if len(r.plan.Errors) != 2 {
					t.Errorf("%d pods unplaced, want 2", len(r.plan.Errors))
				}
				expectZone(t, r.plan.NewClaims[0], "z2")
			},
		},
		{
			// Small pods share the reserved node before any other is bought.
			name: "pods share a reserved node",
			in: func() Input {
				large := withReservation(withSpot(mkType("large.a", "amd64", 8, 16, 0.40), 0.12), "z1", "cr-3", 1)
				return Input{NodePools: []*NodePool{mkPool("default", []*InstanceType{large, mkType("small.a", "amd64", 2, 4, 0.10)}, allCTs)},
					Pods: pods(40, "p", "300m", "256Mi")}
			},
			check: func(t *testing.T, r *result) {
				reserved, _ := reservedClaims(r.plan)
				if len(reserved) != 1 {
					t.Fatalf("%d reserved claims, want 1 (the reservation's room)", len(reserved))
				}
				if n := len(reserved[0].Pods); n < 20 {
					t.Errorf("reserved claim holds %d pods, want at least 20 (8 cpu / 300m)", n)
				}
			},
		},
		{
			// Two reservations of one type count together; past both, the
			// pool's on-demand capacity takes the rest.
			name: "two reservations, then on-demand",
			in: func() Input {
				large := withReservation(withReservation(mkType("large.a", "amd64", 8, 16, 0.40), "z1", "cr-5", 1), "z2", "cr-6", 2)
				pool := mkPool("default", []*InstanceType{large}, expr(labelCapacityType, corev1.NodeSelectorOpIn, CapacityTypeReserved, CapacityTypeOnDemand))
				return Input{NodePools: []*NodePool{pool}, Pods: pods(5, "p", "7", "8Gi")}
			},
			check: func(t *testing.T, r *result) {
				r.claims(t, 5)
				reserved, other := reservedClaims(r.plan)
				perID := map[string]int{}
				for _, c := range reserved {
					perID[c.Requirements.Get(reservationLabel).Values()[0]]++
				}
				if len(reserved) != 3 || perID["cr-5"] != 1 || perID["cr-6"] != 2 {
					t.Fatalf("reserved claims per reservation %v, want cr-5:1 cr-6:2", perID)
				}
				for _, c := range other {
					if c.Price() != 0.40 {
						t.Errorf("claim beyond the reservations costs $%v, want on-demand's $0.40", c.Price())
					}
				}
			},
		},
		{
			// A full reservation (no room) is no option at all.
			name: "full reservation is skipped",
			in: func() Input {
				large := withReservation(mkType("large.a", "amd64", 8, 16, 0.40), "z1", "cr-4", 0)
				return Input{NodePools: []*NodePool{mkPool("default", []*InstanceType{large}, allCTs)}, Pods: pods(1, "p", "7", "8Gi")}
			},
			check: func(t *testing.T, r *result) {
				r.claims(t, 1)
				if reserved, _ := reservedClaims(r.plan); len(reserved) != 0 || r.plan.NewClaims[0].Price() != 0.40 {
					t.Errorf("claim %v at $%v, want on-demand", r.plan.NewClaims[0].Requirements, r.plan.NewClaims[0].Price())
				}
			},
		},
	})
}

// withBlock adds a capacity-block offering, as withReservation does a
// default reservation.
func withBlock(it *InstanceType, zone, id string, n int) *InstanceType {
	it.Offerings = append(it.Offerings, Offering{
		Zone: zone, CapacityType: CapacityTypeReserved, Price: 0.40 / 10_000_000, Available: true,
		ReservationID: id, ReservationCapacity: n, ReservationType: "capacity-block",
	})
	return it
}

const (
	reservationTypeLabel          = "karpenter.k8s.aws/capacity-reservation-type"
	reservationInterruptibleLabel = "karpenter.k8s.aws/capacity-reservation-interruptible"
)

// reservationsOf lists, per claim, the reservation IDs its offerings launch
// into ("" for an offering outside any reservation).
func reservationsOf(plan *Plan) [][]string {
	var out [][]string
	for _, c := range plan.NewClaims {
		var ids []string
		for _, opt := range c.InstanceTypes {
			for _, o := range opt.Offerings {
				ids = append(ids, o.ReservationID)
			}
		}
		out = append(out, ids)
	}
	return out
}

// NodePools and pods may require a reservation's ID, type and
// interruptibility; only reserved offerings carry those labels, so In keeps
// a claim inside the reservations that match and NotIn keeps it out of them.
func TestReservationLabels(t *testing.T) {
	allCTs := expr(labelCapacityType, corev1.NodeSelectorOpIn, CapacityTypeReserved, CapacityTypeSpot, CapacityTypeOnDemand)
	// cr-d (default, room 5) in z1 and cb-1 (capacity block, room 1) in z2,
	// beside spot everywhere.
	large := func() *InstanceType {
		return withBlock(withReservation(withSpot(mkType("large.a", "amd64", 8, 16, 0.40), 0.12), "z1", "cr-d", 5), "z2", "cb-1", 1)
	}
	runCases(t, []tcase{
		{
			name: "pool requiring capacity blocks stops at the block",
			in: func() Input {
				pool := mkPool("blocks", []*InstanceType{large()}, allCTs, expr(reservationTypeLabel, corev1.NodeSelectorOpIn, "capacity-block"))
				return Input{NodePools: []*NodePool{pool}, Pods: pods(3, "p", "7", "8Gi")}
			},
			check: func(t *testing.T, r *result) {
				r.claims(t, 1)
				if len(r.plan.Errors) != 2 {
					t.Errorf("%d pods unplaced, want 2 (the block holds one node; nothing else is a capacity block)", len(r.plan.Errors))
				}
				if got := reservationsOf(r.plan); len(got) != 1 || len(got[0]) != 1 || got[0][0] != "cb-1" {
					t.Errorf("claims launch into %v, want [[cb-1]]", got)
				}
			},
		},
		{
			name: "pool excluding capacity blocks uses the default reservation, then spot",
			in: func() Input {
				pool := mkPool("no-blocks", []*InstanceType{large()}, allCTs, expr(reservationTypeLabel, corev1.NodeSelectorOpNotIn, "capacity-block"))
				return Input{NodePools: []*NodePool{pool}, Pods: pods(7, "p", "7", "8Gi")}
			},
			check: func(t *testing.T, r *result) {
				r.claims(t, 7)
				inDefault := 0
				for _, ids := range reservationsOf(r.plan) {
					for _, id := range ids {
						switch id {
						case "cb-1":
							t.Errorf("a claim may launch into the capacity block the pool excludes: %v", ids)
						case "cr-d":
							inDefault++
						}
					}
				}
				if inDefault != 5 {
					t.Errorf("%d claims launch into cr-d, want 5 (its room)", inDefault)
				}
			},
		},
		{
			// Both reservations in one zone: a claim takes the one with the
			// most room (cr-d) unless its pod names the other.
			name: "pod selecting a reservation ID lands in it",
			in: func() Input {
				sameZone := withBlock(withReservation(mkType("large.a", "amd64", 8, 16, 0.40), "z1", "cr-d", 5), "z1", "cb-1", 1)
				pool := mkPool("default", []*InstanceType{sameZone}, allCTs)
				return Input{NodePools: []*NodePool{pool}, Pods: pods(1, "p", "7", "8Gi", withNodeSelector(reservationLabel, "cb-1"))}
			},
			check: func(t *testing.T, r *result) {
				r.claims(t, 1)
				if got := reservationsOf(r.plan); len(got) != 1 || len(got[0]) != 1 || got[0][0] != "cb-1" {
					t.Errorf("claims launch into %v, want [[cb-1]]", got)
				}
			},
		},
		{
			name: "pod requiring an interruptible reservation finds none",
			in: func() Input {
				pool := mkPool("default", []*InstanceType{large()}, allCTs)
				return Input{NodePools: []*NodePool{pool}, Pods: pods(1, "p", "7", "8Gi", withNodeSelector(reservationInterruptibleLabel, "true"))}
			},
			check: func(t *testing.T, r *result) {
				r.claims(t, 0)
				if len(r.plan.Errors) != 1 {
					t.Errorf("%d pods unplaced, want 1", len(r.plan.Errors))
				}
			},
		},
	})
}
