package sqs

import (
	"time"
)

// queue is one queue's state. Every field is guarded by Service.mu.
type queue struct {
	name       string
	arn        string
	attributes map[string]string // settable attributes, as given or defaulted
	tags       map[string]string
	created    time.Time
	modified   time.Time
	messages   []*message // in send order
	receives   uint64     // receipt handle counter
	sequence   uint64     // FIFO sequence number counter

	// arrived is closed (and replaced) whenever a message is sent, waking
	// long polls.
	arrived chan struct{}
}

func newQueue(name, arn string, attrs, tags map[string]string, now time.Time) *queue {
	if tags == nil {
		tags = map[string]string{}
	}
	return &queue{
		name:       name,
		arn:        arn,
		attributes: attrs,
		tags:       tags,
		created:    now,
		modified:   now,
		arrived:    make(chan struct{}),
	}
}

// wake releases every long poll waiting on the queue.
func (q *queue) wake() {
	close(q.arrived)
	q.arrived = make(chan struct{})
}

// expire drops messages older than the retention period.
func (q *queue) expire(now time.Time) {
	retention := time.Duration(intAttribute(q.attributes, "MessageRetentionPeriod")) * time.Second
	kept := q.messages[:0]
	for _, m := range q.messages {
		if now.Sub(m.sent) < retention {
			kept = append(kept, m)
		}
	}
	clear(q.messages[len(kept):])
	q.messages = kept
}

// counts returns the approximate visible, in-flight and delayed message
// counts.
func (q *queue) counts(now time.Time) (visible, inflight, delayed int) {
	q.expire(now)
	for _, m := range q.messages {
		switch {
		case !m.visibleAt.After(now):
			visible++
		case m.receiveCount == 0:
			delayed++
		default:
			inflight++
		}
	}
	return visible, inflight, delayed
}

// receive hides up to max visible messages for the visibility timeout and
// returns them with fresh receipt handles.
func (q *queue) receive(now time.Time, max int, visibility time.Duration) []*message {
	q.expire(now)
	var out []*message
	for _, m := range q.messages {
		if len(out) == max {
			break
		}
		if m.visibleAt.After(now) {
			continue
		}
		q.receives++
		m.receiveCount++
		if m.receiveCount == 1 {
			m.firstReceive = now
		}
		m.visibleAt = now.Add(visibility)
		m.receipt = encodeReceipt(q.name, m.id, q.receives)
		out = append(out, m)
	}
	return out
}

// nextVisible returns when the earliest hidden message becomes visible, or
// the zero time when none is hidden.
func (q *queue) nextVisible(now time.Time) time.Time {
	var next time.Time
	for _, m := range q.messages {
		if m.visibleAt.After(now) && (next.IsZero() || m.visibleAt.Before(next)) {
			next = m.visibleAt
		}
	}
	return next
}

// find returns the message with the ID, if still in the queue.
func (q *queue) find(id string) (int, *message) {
	for i, m := range q.messages {
		if m.id == id {
			return i, m
		}
	}
	return -1, nil
}

// remove deletes the message with the ID; deleting a message that is already
// gone succeeds, as in SQS.
func (q *queue) remove(id string) {
	if i, _ := q.find(id); i >= 0 {
		q.messages = append(q.messages[:i], q.messages[i+1:]...)
	}
}
