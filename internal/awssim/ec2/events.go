package ec2

import (
	"sync"
	"time"

	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

// Event is an EventBridge event EC2 (or AWS Health, about EC2 instances)
// emits: the envelope fields EventBridge needs, with the detail document.
type Event struct {
	Source     string // "aws.ec2" or "aws.health"
	DetailType string // e.g. "EC2 Instance State-change Notification"
	Resources  []string
	Detail     map[string]any
	Time       time.Time
}

// EventSink receives EC2's events in the order they happen, e.g. the default
// EventBridge bus.
type EventSink interface {
	PutEC2Event(Event) error
}

// Observer is told about every instance state change, after the change;
// the instance is a copy. The kubelet stand-in uses it to register and
// remove Nodes.
type Observer func(instance ec2types.Instance, userData string)

// notifier delivers events and observations on one goroutine so that
// receivers see them in the order they happened, without holding the
// service's lock.
type notifier struct {
	sink EventSink

	mu        sync.Mutex
	observers []Observer
	queue     chan func()
	done      chan struct{}
	closeOnce sync.Once
}

func newNotifier(sink EventSink) *notifier {
	n := &notifier{sink: sink, queue: make(chan func(), 4096), done: make(chan struct{})}
	go func() {
		defer close(n.done)
		for f := range n.queue {
			f()
		}
	}()
	return n
}

func (n *notifier) event(e Event) {
	if n.sink == nil {
		return
	}
	n.enqueue(func() { _ = n.sink.PutEC2Event(e) })
}

func (n *notifier) observe(in ec2types.Instance, userData string) {
	n.mu.Lock()
	obs := append([]Observer(nil), n.observers...)
	n.mu.Unlock()
	if len(obs) == 0 {
		return
	}
	n.enqueue(func() {
		for _, o := range obs {
			o(in, userData)
		}
	})
}

func (n *notifier) enqueue(f func()) {
	defer func() { _ = recover() }() // the queue is closed: the service is shutting down
	n.queue <- f
}

func (n *notifier) close() {
	n.closeOnce.Do(func() { close(n.queue) })
	<-n.done
}

// Observe registers o for every later instance state change.
func (s *Service) Observe(o Observer) {
	s.events.mu.Lock()
	s.events.observers = append(s.events.observers, o)
	s.events.mu.Unlock()
}

func (s *Service) instanceARN(id string) string {
	return "arn:aws:ec2:" + s.opts.Region + ":" + s.opts.AccountID + ":instance/" + id
}
