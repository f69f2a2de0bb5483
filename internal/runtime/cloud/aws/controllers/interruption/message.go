package interruption

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/policy/queue"
)

// Forceful is true when the instance is already broken: its node is not
// drained gracefully (its termination deadline is now).
func (m Message) Forceful() bool { return m.Kind == InstanceStatus || m.Kind == SystemStatus }

// Kind is what a message says happens to its instances; the values are
// Karpenter's metric labels.
type Kind string

const (
	SpotInterrupted                Kind = "spot_interrupted"
	ScheduledChange                Kind = "scheduled_change"
	InstanceStopped                Kind = "instance_stopped"
	InstanceTerminated             Kind = "instance_terminated"
	CapacityReservationInterrupted Kind = "capacity_reservation_interrupted"
	RebalanceRecommendation        Kind = "rebalance_recommendation"
	// InstanceStatus, SystemStatus and EventStatus come from polling
	// DescribeInstanceStatus, not from the queue: a failed instance or
	// system status check, and a scheduled event (reboot, maintenance,
	// retirement, stop).
	InstanceStatus Kind = "instance_status"
	SystemStatus   Kind = "system_status"
	EventStatus    Kind = "event_status"
	// NoOp is a well-formed event that needs nothing (a state change to
	// running, a Health event about another service).
	NoOp Kind = "no_op"
)

const (
	detailSpotInterruption    = queue.DetailSpotInterruption
	detailRebalance           = queue.DetailRebalance
	detailStateChange         = queue.DetailStateChange
	detailCapacityReservation = queue.DetailCapacityReservation
	detailHealth              = queue.DetailHealth
)

// Message is a parsed event.
type Message struct {
	ID          string
	Kind        Kind
	InstanceIDs []string
	Time        time.Time
}

// Drains reports whether the message's instances must be drained now.
func (m Message) Drains() bool {
	switch m.Kind {
	case SpotInterrupted, ScheduledChange, InstanceStopped, InstanceTerminated, CapacityReservationInterrupted,
		InstanceStatus, SystemStatus, EventStatus:
		return true
	}
	return false
}

type envelope struct {
	ID         string          `json:"id"`
	Source     string          `json:"source"`
	DetailType string          `json:"detail-type"`
	Time       time.Time       `json:"time"`
	Resources  []string        `json:"resources"`
	Detail     json.RawMessage `json:"detail"`
}

type ec2Detail struct {
	InstanceID  string   `json:"instance-id"`
	InstanceIDs []string `json:"instance-ids"`
	State       string   `json:"state"`
}

type healthDetail struct {
	Service           string `json:"service"`
	EventTypeCategory string `json:"eventTypeCategory"`
	AffectedEntities  []struct {
		EntityValue string `json:"entityValue"`
	} `json:"affectedEntities"`
}

// Parse reads an EventBridge event as delivered to SQS. An error means the
// body is not an event this controller understands; such messages are
// deleted so they do not come back.
func Parse(body string) (Message, error) {
	var env envelope
	if err := json.Unmarshal([]byte(body), &env); err != nil {
		return Message{}, fmt.Errorf("not an EventBridge event: %w", err)
	}
	m := Message{ID: env.ID, Time: env.Time}
	switch {
	case env.Source == "aws.health" && env.DetailType == detailHealth:
		var d healthDetail
		if err := json.Unmarshal(env.Detail, &d); err != nil {
			return Message{}, fmt.Errorf("event %s: health detail: %w", env.ID, err)
		}
		m.Kind = NoOp
		if d.Service == "EC2" && d.EventTypeCategory == "scheduledChange" {
			m.Kind = ScheduledChange
			for _, e := range d.AffectedEntities {
				if strings.HasPrefix(e.EntityValue, "i-") {
					m.InstanceIDs = append(m.InstanceIDs, e.EntityValue)
				}
			}
		}
		return m, nil
	case env.Source == "aws.ec2":
		var d ec2Detail
		if err := json.Unmarshal(env.Detail, &d); err != nil {
			return Message{}, fmt.Errorf("event %s: EC2 detail: %w", env.ID, err)
		}
		m.InstanceIDs = instanceIDs(d, env.Resources)
		switch env.DetailType {
		case detailSpotInterruption:
			m.Kind = SpotInterrupted
		case detailRebalance:
			m.Kind = RebalanceRecommendation
		case detailCapacityReservation:
			m.Kind = CapacityReservationInterrupted
		case detailStateChange:
			switch {
			case slices.Contains(queue.StoppedStates, d.State):
				m.Kind = InstanceStopped
			case slices.Contains(queue.TerminatedStates, d.State):
				m.Kind = InstanceTerminated
			default:
				m.Kind = NoOp
			}
		default:
			return Message{}, fmt.Errorf("event %s: unknown EC2 detail-type %q", env.ID, env.DetailType)
		}
		if len(m.InstanceIDs) == 0 && m.Kind != NoOp {
			return Message{}, fmt.Errorf("event %s (%s) names no instance", env.ID, env.DetailType)
		}
		return m, nil
	}
	return Message{}, fmt.Errorf("event %s: unknown source %q, detail-type %q", env.ID, env.Source, env.DetailType)
}

// instanceIDs takes the detail's instance IDs, else the instance ARNs among
// the event's resources.
func instanceIDs(d ec2Detail, resources []string) []string {
	ids := append([]string{}, d.InstanceIDs...)
	if d.InstanceID != "" {
		ids = append(ids, d.InstanceID)
	}
	if len(ids) > 0 {
		return ids
	}
	for _, r := range resources {
		if _, id, ok := strings.Cut(r, ":instance/"); ok {
			ids = append(ids, id)
		}
	}
	return ids
}
