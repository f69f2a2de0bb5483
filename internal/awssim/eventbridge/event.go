package eventbridge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Event is an event published on the default bus, as other AWS services emit
// them (EC2 instance state-change notifications, spot interruption warnings,
// rebalance recommendations, AWS Health events).
type Event struct {
	Source     string    // e.g. "aws.ec2"
	DetailType string    // e.g. "EC2 Spot Instance Interruption Warning"
	Detail     any       // a JSON object: a map, a struct, or json.RawMessage
	Resources  []string  // ARNs the event concerns
	Time       time.Time // zero: now
}

// envelope is the event as EventBridge delivers it to targets, with the
// fields in the order EventBridge writes them.
type envelope struct {
	Version    string          `json:"version"`
	ID         string          `json:"id"`
	DetailType string          `json:"detail-type"`
	Source     string          `json:"source"`
	Account    string          `json:"account"`
	Time       string          `json:"time"`
	Region     string          `json:"region"`
	Resources  []string        `json:"resources"`
	Detail     json.RawMessage `json:"detail"`
}

// delivery is one event payload bound for one target.
type delivery struct {
	arn     string
	rule    string // the rule's ARN, the delivery's aws:SourceArn
	payload string
}

// PutEvent publishes an event from an AWS service: every enabled rule whose
// pattern matches it delivers it to its targets. It returns the event ID.
// Delivery failures (a missing queue, a queue whose policy does not let
// EventBridge send, a target that is not an SQS queue) are not errors for the
// publisher, as in EventBridge; they are counted by
// FailedInvocations.
func (s *Service) PutEvent(e Event) (string, error) {
	detail, err := json.Marshal(e.Detail)
	if err != nil {
		return "", fmt.Errorf("event detail: %w", err)
	}
	if e.Detail == nil {
		detail = []byte("{}")
	}
	if !isObject(detail) {
		return "", fmt.Errorf("event detail must be a JSON object, got %s", detail)
	}
	if e.Source == "" || e.DetailType == "" {
		return "", fmt.Errorf("event needs a Source and a DetailType")
	}
	when := e.Time
	if when.IsZero() {
		when = s.now()
	}
	resources := e.Resources
	if resources == nil {
		resources = []string{}
	}
	env := envelope{
		Version:    "0",
		ID:         s.eventIDs.UUID(),
		DetailType: e.DetailType,
		Source:     e.Source,
		Account:    s.account,
		Time:       when.UTC().Format(time.RFC3339),
		Region:     s.region,
		Resources:  resources,
		Detail:     detail,
	}
	body, err := json.Marshal(env)
	if err != nil {
		return "", err
	}
	s.deliver(s.route(body))
	return env.ID, nil
}

// route returns the deliveries of an envelope to the targets of every
// enabled rule that matches it.
func (s *Service) route(body []byte) []delivery {
	doc := decodeJSON(body).(map[string]any)
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []delivery
	for _, r := range s.rules {
		if r.pattern == nil || r.state == "DISABLED" || !r.pattern.Match(doc) {
			continue
		}
		for _, t := range r.targets {
			out = append(out, delivery{arn: t.arn, rule: r.arn, payload: t.payload(body, doc)})
		}
	}
	return out
}

// payload is what a target receives: its constant Input, the part of the
// event its InputPath selects, or the whole envelope.
func (t *target) payload(body []byte, doc map[string]any) string {
	switch {
	case t.input != "":
		return t.input
	case t.inputPath != "" && t.inputPath != "$":
		var v any = doc
		for _, key := range strings.Split(strings.TrimPrefix(t.inputPath, "$."), ".") {
			obj, _ := v.(map[string]any)
			v = obj[key]
		}
		b, _ := json.Marshal(v)
		return string(b)
	default:
		return string(body)
	}
}

// servicePrincipal is who EventBridge delivers as; target queue policies
// must allow it to send.
const servicePrincipal = "events.amazonaws.com"

// deliver sends payloads to their targets outside s.mu; SQS is the only
// target type the simulator delivers to.
func (s *Service) deliver(ds []delivery) {
	for _, d := range ds {
		if !strings.HasPrefix(d.arn, "arn:aws:sqs:") || s.queues == nil {
			s.failed.Add(1)
			continue
		}
		if _, err := s.queues.Deliver(servicePrincipal, d.rule, d.arn, d.payload); err != nil {
			s.failed.Add(1)
		}
	}
}

// FailedInvocations is how many deliveries to targets have failed.
func (s *Service) FailedInvocations() int64 { return s.failed.Load() }

func decodeJSON(b []byte) any {
	var v any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	_ = dec.Decode(&v)
	return v
}

func isObject(b []byte) bool {
	_, ok := decodeJSON(b).(map[string]any)
	return ok
}
