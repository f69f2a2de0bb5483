package interruption

import (
	"slices"
	"testing"
)

func TestParse(t *testing.T) {
	cases := []struct {
		name, body string
		kind       Kind
		ids        []string
		drains     bool
	}{
		{"spot warning", `{"id":"1","source":"aws.ec2","detail-type":"EC2 Spot Instance Interruption Warning","time":"2026-01-02T03:04:05Z","detail":{"instance-id":"i-1","instance-action":"terminate"}}`, SpotInterrupted, []string{"i-1"}, true},
		{"rebalance", `{"id":"2","source":"aws.ec2","detail-type":"EC2 Instance Rebalance Recommendation","detail":{"instance-id":"i-2"}}`, RebalanceRecommendation, []string{"i-2"}, false},
		{"stopping", `{"id":"3","source":"aws.ec2","detail-type":"EC2 Instance State-change Notification","detail":{"instance-id":"i-3","state":"stopping"}}`, InstanceStopped, []string{"i-3"}, true},
		{"stopped", `{"id":"3","source":"aws.ec2","detail-type":"EC2 Instance State-change Notification","detail":{"instance-id":"i-3","state":"stopped"}}`, InstanceStopped, []string{"i-3"}, true},
		{"shutting down", `{"id":"4","source":"aws.ec2","detail-type":"EC2 Instance State-change Notification","detail":{"instance-id":"i-4","state":"shutting-down"}}`, InstanceTerminated, []string{"i-4"}, true},
		{"terminated", `{"id":"4","source":"aws.ec2","detail-type":"EC2 Instance State-change Notification","detail":{"instance-id":"i-4","state":"terminated"}}`, InstanceTerminated, []string{"i-4"}, true},
		{"running", `{"id":"5","source":"aws.ec2","detail-type":"EC2 Instance State-change Notification","detail":{"instance-id":"i-5","state":"running"}}`, NoOp, []string{"i-5"}, false},
		{"health scheduled change", `{"id":"6","source":"aws.health","detail-type":"AWS Health Event","detail":{"service":"EC2","eventTypeCategory":"scheduledChange","affectedEntities":[{"entityValue":"i-6"},{"entityValue":"i-7"}]}}`, ScheduledChange, []string{"i-6", "i-7"}, true},
		{"health issue", `{"id":"7","source":"aws.health","detail-type":"AWS Health Event","detail":{"service":"EC2","eventTypeCategory":"issue","affectedEntities":[{"entityValue":"i-6"}]}}`, NoOp, nil, false},
		{"health other service", `{"id":"8","source":"aws.health","detail-type":"AWS Health Event","detail":{"service":"RDS","eventTypeCategory":"scheduledChange"}}`, NoOp, nil, false},
		{"reservation from resources", `{"id":"9","source":"aws.ec2","detail-type":"EC2 Capacity Reservation Instance Interruption Warning","resources":["arn:aws:ec2:us-west-2:1:instance/i-9"],"detail":{"capacity-reservation-id":"cr-1"}}`, CapacityReservationInterrupted, []string{"i-9"}, true},
	}
	for _, c := range cases {
		m, err := Parse(c.body)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if m.Kind != c.kind || !slices.Equal(m.InstanceIDs, c.ids) || m.Drains() != c.drains {
			t.Errorf("%s: got kind %s ids %v drains %v, want %s %v %v", c.name, m.Kind, m.InstanceIDs, m.Drains(), c.kind, c.ids, c.drains)
		}
	}
	for _, bad := range []string{`not json`, `{"source":"aws.s3","detail-type":"Object Created","detail":{}}`, `{"source":"aws.ec2","detail-type":"EC2 Spot Instance Interruption Warning","detail":{}}`, `{"source":"aws.ec2","detail-type":"Something New","detail":{"instance-id":"i-1"}}`} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%s) succeeded", bad)
		}
	}
}

func TestRuleNamesFitEventBridge(t *testing.T) {
	long := "a-very-long-queue-name-that-goes-on-and-on-and-on-for-a-while-longer"
	seen := map[string]bool{}
	for _, r := range Rules {
		n := r.RuleName(long)
		if len(n) > 64 || seen[n] {
			t.Errorf("rule name %q: length %d, duplicate %v", n, len(n), seen[n])
		}
		seen[n] = true
	}
}

// Two queues whose names share the first 40 characters or more (two
// clusters' queues, say ...-payments-blue and ...-payments-green) never get
// the same rule name, however much of the name must be cut.
func TestRuleNamesOfQueuesSharingAPrefixDiffer(t *testing.T) {
	prefix := "platform-prod-eu-west-1-payments-cluster-"
	for _, pair := range [][2]string{
		{prefix + "blue", prefix + "green"},
		{prefix + "blue-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1", prefix + "blue-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa2"},
	} {
		for _, r := range Rules {
			a, b := r.RuleName(pair[0]), r.RuleName(pair[1])
			if a == b || len(a) > 64 || len(b) > 64 {
				t.Errorf("%s: queues %q and %q get rule names %q (%d) and %q (%d)", r.Key, pair[0], pair[1], a, len(a), b, len(b))
			}
		}
	}
	// A name that fits keeps its readable form.
	if got := Rules[0].RuleName("demo"); got != "demo-scheduled-change" {
		t.Errorf("short queue name: rule %q, want demo-scheduled-change", got)
	}
}
