package sqs

import (
	"testing"
	"time"
)

func TestQueueExpiresMessagesPastRetention(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	q := newQueue("q", "arn", defaultAttributes(map[string]string{"MessageRetentionPeriod": "300"}), nil, start)
	q.messages = []*message{
		{id: "old", sent: start, visibleAt: start},
		{id: "new", sent: start.Add(200 * time.Second), visibleAt: start.Add(200 * time.Second)},
	}
	got := q.receive(start.Add(301*time.Second), 10, time.Minute)
	if len(got) != 1 || got[0].id != "new" {
		t.Fatalf("received %v, want only the message within the 300 s retention", got)
	}
	if visible, inflight, _ := q.counts(start.Add(501 * time.Second)); visible+inflight != 0 {
		t.Fatalf("counts after both expired = %d visible, %d in flight", visible, inflight)
	}
}

func TestQueueDelayedMessageIsNotReceived(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	q := newQueue("q", "arn", defaultAttributes(nil), nil, start)
	q.messages = []*message{{id: "later", sent: start, visibleAt: start.Add(10 * time.Second)}}
	if got := q.receive(start.Add(5*time.Second), 10, time.Minute); len(got) != 0 {
		t.Fatalf("delayed message received early: %v", got)
	}
	if _, _, delayed := q.counts(start.Add(5 * time.Second)); delayed != 1 {
		t.Fatalf("delayed count = %d, want 1", delayed)
	}
	if next := q.nextVisible(start); !next.Equal(start.Add(10 * time.Second)) {
		t.Fatalf("nextVisible = %v", next)
	}
	if got := q.receive(start.Add(10*time.Second), 10, time.Minute); len(got) != 1 || got[0].receiveCount != 1 {
		t.Fatalf("delayed message not received once due: %v", got)
	}
}
