// Package queue is what the interruption queue must hold: the EventBridge
// rules that route EC2 and AWS Health events to it, its access policy and
// its retention. The provider creates them; the interruption controller
// reads the events they route.
package queue

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Detail types of the events the rules route.
const (
	DetailSpotInterruption    = "EC2 Spot Instance Interruption Warning"
	DetailRebalance           = "EC2 Instance Rebalance Recommendation"
	DetailStateChange         = "EC2 Instance State-change Notification"
	DetailCapacityReservation = "EC2 Capacity Reservation Instance Interruption Warning"
	DetailHealth              = "AWS Health Event"
)

// The instance states the controller acts on: a stopping or stopped
// instance's node is drained like an interrupted one, a shutting-down or
// terminated instance's node is removed. Every other state change (pending,
// running) needs nothing.
var (
	StoppedStates    = []string{"stopping", "stopped"}
	TerminatedStates = []string{"shutting-down", "terminated"}
)

// Rule is one EventBridge rule that routes events to the interruption queue.
type Rule struct {
	// Key is the rule's stable short name; rule names are "<queue>-<key>".
	Key         string
	Description string
	Source      string
	DetailType  string
	// States, when set, routes only events whose detail.state is one of
	// them.
	States []string
}

// Rules are the five rules, in Karpenter's order.
var Rules = []Rule{
	{Key: "scheduled-change", Description: "AWS Health scheduled changes (instance retirement, maintenance)", Source: "aws.health", DetailType: DetailHealth},
	{Key: "spot-interruption", Description: "EC2 spot interruption warnings (two-minute notice)", Source: "aws.ec2", DetailType: DetailSpotInterruption},
	{Key: "rebalance", Description: "EC2 rebalance recommendations", Source: "aws.ec2", DetailType: DetailRebalance},
	// Only the states acted on: Karpenter's rule routes every state change,
	// so each launch queued two messages (pending, running) that the
	// controller received and deleted for nothing.
	{Key: "instance-state-change", Description: "EC2 instance state changes to stopping, stopped, shutting-down or terminated", Source: "aws.ec2", DetailType: DetailStateChange,
		States: slices.Concat(StoppedStates, TerminatedStates)},
	{Key: "capacity-reservation-interruption", Description: "EC2 capacity reservation interruption warnings", Source: "aws.ec2", DetailType: DetailCapacityReservation},
}

// Pattern is the rule's event pattern as EventBridge stores it.
func (r Rule) Pattern() string {
	p := map[string]any{"source": []string{r.Source}, "detail-type": []string{r.DetailType}}
	if len(r.States) > 0 {
		p["detail"] = map[string][]string{"state": r.States}
	}
	b, _ := json.Marshal(p)
	return string(b)
}

// RuleName is the rule's name for a queue, within EventBridge's 64
// characters: "<queue>-<key>" when it fits; otherwise the queue name is cut
// and a hash of the whole name keeps it apart from every other queue that
// shares the cut prefix ("<cut>-<hash>-<key>"). The key is never cut.
func (r Rule) RuleName(queue string) string {
	const max = 64
	room := max - len(r.Key) - 1
	if len(queue) <= room {
		return queue + "-" + r.Key
	}
	sum := sha256.Sum256([]byte(queue))
	hash := hex.EncodeToString(sum[:4])
	return queue[:room-len(hash)-1] + "-" + hash + "-" + r.Key
}

// RuleARN is the ARN of the rule's default-bus rule for a queue: its name
// from base (the queue's name or the rules' name prefix) in the queue's
// partition, region and account. Empty when queueARN is not an ARN.
func (r Rule) RuleARN(base, queueARN string) string {
	parts := strings.SplitN(queueARN, ":", 6)
	if len(parts) != 6 {
		return ""
	}
	return fmt.Sprintf("arn:%s:events:%s:%s:rule/%s", parts[1], parts[3], parts[4], r.RuleName(base))
}

// RuleARNs are the ARNs of every rule of a queue, in Rules' order.
func RuleARNs(base, queueARN string) []string {
	out := make([]string, len(Rules))
	for i, r := range Rules {
		out[i] = r.RuleARN(base, queueARN)
	}
	return out
}

// QueuePolicy lets the queue's own EventBridge rules (named from base, the
// queue's name or the rules' name prefix) send to it and refuses every
// request not made over TLS. The aws:SourceArn condition is AWS's guard
// against the confused deputy: without it any rule in any account could
// have EventBridge send to the queue, and a forged spot interruption
// drains a node.
func QueuePolicy(queueARN, base string) string {
	doc := map[string]any{
		"Version": "2012-10-17",
		"Id":      "EC2InterruptionPolicy",
		"Statement": []map[string]any{
			{
				"Sid": "AllowEventDelivery", "Effect": "Allow",
				"Principal": map[string]any{"Service": []string{"events.amazonaws.com", "sqs.amazonaws.com"}},
				"Action":    "sqs:SendMessage", "Resource": queueARN,
				"Condition": map[string]any{"ArnEquals": map[string]any{"aws:SourceArn": RuleARNs(base, queueARN)}},
			},
			{
				"Sid": "DenyHTTP", "Effect": "Deny", "Principal": "*",
				"Action": "sqs:*", "Resource": queueARN,
				"Condition": map[string]any{"Bool": map[string]any{"aws:SecureTransport": false}},
			},
		},
	}
	b, err := json.Marshal(doc)
	if err != nil {
		panic(fmt.Sprintf("queue policy: %v", err))
	}
	return string(b)
}

// MessageRetentionSeconds is how long events wait in the queue: an event
// older than five minutes is about an instance that is already gone.
const MessageRetentionSeconds = 300
