package aws

import (
	"errors"
	"slices"
	"testing"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/requirements"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
)

func reserved(zone, id string, room int) scheduling.Offering {
	return scheduling.Offering{Zone: zone, CapacityType: v1.CapacityTypeReserved, Price: 0.00001, Available: true, ReservationID: id, ReservationCapacity: room}
}

func TestChooseLaunch(t *testing.T) {
	zones := map[string]string{"a": "az1", "b": "az2", "c": "az3"}
	for _, tc := range []struct {
		name     string
		its      []*scheduling.InstanceType
		cluster  *clusterPlacement
		crs      []awsv1.CapacityReservation
		wantCT   string
		want     []string // candidate types, in order
		wantZone string   // when set, every offering kept is in it
		wantCR   string
		wantErr  bool
	}{{
		name: "spot before on-demand, cheapest first",
		its: []*scheduling.InstanceType{
			testType("m5.large", "m5", "2", false, od("a", 0.10), spot("a", 0.04)),
			testType("c5.large", "c5", "2", false, od("a", 0.09), spot("b", 0.03)),
		},
		wantCT: v1.CapacityTypeSpot, want: []string{"c5.large", "m5.large"},
	}, {
		name: "reserved first, narrowed to the reservation with most room at one price",
		its: []*scheduling.InstanceType{
			testType("m5.large", "m5", "2", false, od("a", 0.10), reserved("a", "cr-1", 1), reserved("b", "cr-2", 3)),
			testType("c5.large", "c5", "2", false, spot("a", 0.03)),
		},
		crs:    []awsv1.CapacityReservation{{ID: "cr-1"}, {ID: "cr-2", AvailabilityZone: "b"}},
		wantCT: v1.CapacityTypeReserved, want: []string{"m5.large"}, wantZone: "b", wantCR: "cr-2",
	}, {
		name: "a reservation no longer in the node class's status is not launched into",
		its: []*scheduling.InstanceType{
			testType("m5.large", "m5", "2", false, reserved("a", "cr-gone", 1)),
		},
		wantErr: true,
	}, {
		name: "a cluster group already in a zone keeps the launch there",
		its: []*scheduling.InstanceType{
			testType("m5.large", "m5", "2", false, od("a", 0.10), od("b", 0.08)),
			testType("c5.large", "c5", "2", false, od("a", 0.09)),
		},
		cluster: &clusterPlacement{name: "pg", zone: "a"},
		wantCT:  v1.CapacityTypeOnDemand, want: []string{"c5.large", "m5.large"}, wantZone: "a",
	}, {
		name: "a new cluster group goes to the cheapest zone",
		its: []*scheduling.InstanceType{
			testType("m5.large", "m5", "2", false, od("a", 0.10), od("b", 0.08)),
			testType("c5.large", "c5", "2", false, od("a", 0.09)),
		},
		cluster: &clusterPlacement{name: "pg"},
		wantCT:  v1.CapacityTypeOnDemand, want: []string{"m5.large"}, wantZone: "b",
	}, {
		name:    "a cluster group in a zone with no offering",
		its:     []*scheduling.InstanceType{testType("m5.large", "m5", "2", false, od("a", 0.10))},
		cluster: &clusterPlacement{name: "pg", zone: "c"},
		wantErr: true,
	}, {
		name: "nothing available",
		its: []*scheduling.InstanceType{
			testType("m5.large", "m5", "2", false, od("d", 0.10)), // no subnet in d
		},
		wantErr: true,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := chooseLaunch(tc.its, launchRequest{claim: "c", nodeClass: "nc", reqs: requirements.NewRequirements(), zones: zones, cluster: tc.cluster, reservations: tc.crs})
			if tc.wantErr {
				var ice *cloud.InsufficientCapacityError
				if !errors.As(err, &ice) {
					t.Fatalf("chooseLaunch = %+v, %v; want an insufficient capacity error", got, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.capacityType != tc.wantCT || !slices.Equal(names(got.cands), tc.want) || got.reservation.ID != tc.wantCR {
				t.Errorf("chooseLaunch = %s %v %q, want %s %v %q", got.capacityType, names(got.cands), got.reservation.ID, tc.wantCT, tc.want, tc.wantCR)
			}
			for _, c := range got.cands {
				for _, o := range c.offerings {
					if o.CapacityType != tc.wantCT || (tc.wantZone != "" && o.Zone != tc.wantZone) {
						t.Errorf("%s keeps offering %+v, want only %s in %q", c.it.Name, o, tc.wantCT, tc.wantZone)
					}
				}
			}
		})
	}
}
