package capacityreservation

import (
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
)

func filterMap(fs []ec2types.Filter) map[string]string {
	out := map[string]string{}
	for _, f := range fs {
		out[aws.ToString(f.Name)] = strings.Join(f.Values, ",")
	}
	return out
}

func TestQueries(t *testing.T) {
	qs, err := queries([]awsv1.CapacityReservationSelectorTerm{
		{ID: "cr-0123", OwnerID: "123456789012"},
		{Tags: map[string]string{"team": "ml", "any": "*"}, InstanceMatchCriteria: "targeted"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) != 2 {
		t.Fatalf("%d queries, want one per term", len(qs))
	}
	byID := qs[0].in
	if len(byID.CapacityReservationIds) != 1 || byID.CapacityReservationIds[0] != "cr-0123" {
		t.Errorf("ID term asks for %v, want [cr-0123]", byID.CapacityReservationIds)
	}
	if f := filterMap(byID.Filters); f["state"] != "active" || f["owner-id"] != "123456789012" {
		t.Errorf("ID term filters %v, want active and the owner", f)
	}
	f := filterMap(qs[1].in.Filters)
	for name, want := range map[string]string{"state": "active", "tag:team": "ml", "tag-key": "any", "instance-match-criteria": "targeted"} {
		if f[name] != want {
			t.Errorf("tags term filter %s = %q, want %q (all %v)", name, f[name], want, f)
		}
	}
	if _, err := queries([]awsv1.CapacityReservationSelectorTerm{{OwnerID: "123456789012"}}); err == nil || !strings.Contains(err.Error(), "spec.capacityReservationSelectorTerms[0]") {
		t.Errorf("owner-only term: %v, want an error naming the term", err)
	}
}

func TestStatus(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	base := ec2types.CapacityReservation{
		CapacityReservationId: aws.String("cr-1"), AvailabilityZone: aws.String("us-west-2a"), InstanceType: aws.String("m5.large"),
		OwnerId: aws.String("123456789012"), InstanceMatchCriteria: ec2types.InstanceMatchCriteriaTargeted,
		ReservationType: ec2types.CapacityReservationTypeDefault,
	}
	got, err := Status(base, now)
	if err != nil || got.ReservationType != awsv1.CapacityReservationTypeDefault || got.State != awsv1.CapacityReservationStateActive || got.EndTime != nil {
		t.Errorf("ODCR status %+v, %v; want default, active, no end", got, err)
	}
	block := base
	block.ReservationType = ec2types.CapacityReservationTypeCapacityBlock
	block.EndDate = aws.Time(now.Add(30 * time.Minute))
	if got, _ := Status(block, now); got.ReservationType != awsv1.CapacityReservationTypeCapacityBlock || got.State != awsv1.CapacityReservationStateExpiring {
		t.Errorf("capacity block ending in 30m: %+v, want capacity-block, expiring", got)
	}
	block.EndDate = aws.Time(now.Add(2 * time.Hour))
	if got, _ := Status(block, now); got.State != awsv1.CapacityReservationStateActive {
		t.Errorf("capacity block ending in 2h: state %s, want active", got.State)
	}
	// The window is Karpenter's: expiring from 40 minutes before the end.
	for left, want := range map[time.Duration]awsv1.CapacityReservationState{
		40*time.Minute + time.Second: awsv1.CapacityReservationStateActive,
		40 * time.Minute:             awsv1.CapacityReservationStateExpiring,
		time.Minute:                  awsv1.CapacityReservationStateExpiring,
	} {
		block.EndDate = aws.Time(now.Add(left))
		if got, _ := Status(block, now); got.State != want {
			t.Errorf("capacity block ending in %v: state %s, want %s", left, got.State, want)
		}
	}
	// An ODCR with an end date does not expire early; an interruptible
	// one says so.
	limited := base
	limited.EndDate, limited.Interruptible = aws.Time(now.Add(10*time.Minute)), aws.Bool(true)
	if got, _ := Status(limited, now); got.State != awsv1.CapacityReservationStateActive || !got.Interruptible {
		t.Errorf("interruptible ODCR ending in 10m: %+v, want active and interruptible", got)
	}
	odd := base
	odd.ReservationType = "something-new"
	if _, err := Status(odd, now); err == nil {
		t.Error("unknown reservation type accepted")
	}
}

func TestAvailableCounts(t *testing.T) {
	p := New(nil, time.Minute)
	if _, ok := p.Available("cr-1"); ok {
		t.Fatal("a reservation never listed has a count")
	}
	p.sync([]ec2types.CapacityReservation{{CapacityReservationId: aws.String("cr-1"), AvailableInstanceCount: aws.Int32(2)}})
	seq := p.SeqNum()
	p.MarkLaunched("cr-1")
	if n, _ := p.Available("cr-1"); n != 1 || p.SeqNum() == seq {
		t.Errorf("after a launch: %d left (seq %d -> %d), want 1 and a new seq", n, seq, p.SeqNum())
	}
	p.MarkFull("cr-1")
	p.MarkLaunched("cr-1")
	if n, _ := p.Available("cr-1"); n != 0 {
		t.Errorf("after EC2 said full: %d left, want 0", n)
	}
	p.sync([]ec2types.CapacityReservation{{CapacityReservationId: aws.String("cr-1"), AvailableInstanceCount: aws.Int32(3)}})
	if n, _ := p.Available("cr-1"); n != 3 {
		t.Errorf("after a listing: %d left, want EC2's 3", n)
	}
}
