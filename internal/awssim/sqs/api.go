package sqs

import (
	"fmt"
	"strings"
)

// QueueARN returns the ARN a queue with the name has (or would have).
func (s *Service) QueueARN(name string) string { return s.queueARN(name) }

// Deliver enqueues body on the queue with the ARN on behalf of an AWS
// service principal (e.g. "events.amazonaws.com" for EventBridge targets)
// acting for sourceARN (the EventBridge rule), as SQS accepts such
// deliveries only when the queue policy allows the service to
// sqs:SendMessage with that aws:SourceArn. It returns the message ID.
func (s *Service) Deliver(service, sourceARN, arn, body string) (string, error) {
	prefix := "arn:aws:sqs:" + s.region + ":" + s.account + ":"
	name, ok := strings.CutPrefix(arn, prefix)
	if !ok {
		return "", fmt.Errorf("queue ARN %q is not in this simulator's account %s and region %s", arn, s.account, s.region)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.queues[name]
	if q == nil {
		return "", fmt.Errorf("queue %q does not exist", arn)
	}
	if !allowsService(q.attributes["Policy"], service, sourceARN) {
		return "", fmt.Errorf("the Policy of queue %q does not allow %s to sqs:SendMessage for %s", arn, service, sourceARN)
	}
	m, err := s.enqueue(q, outgoing{body: body, senderID: s.account})
	if err != nil {
		return "", err
	}
	return m.id, nil
}

// Attributes returns the named queue's attributes, stored and computed, as
// GetQueueAttributes with All would.
func (s *Service) Attributes(name string) (map[string]string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.queues[name]
	if q == nil {
		return nil, false
	}
	return s.allAttributes(q), true
}
