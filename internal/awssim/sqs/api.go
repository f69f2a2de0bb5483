package sqs

import (
	"fmt"
	"strings"
)

// QueueARN returns the ARN a queue with the name has (or would have).
func (s *Service) QueueARN(name string) string { return s.queueARN(name) }

// SendToARN enqueues body on the queue with the ARN, as another AWS service
// does when it delivers to SQS (EventBridge targets). It returns the message
// ID.
func (s *Service) SendToARN(arn, body string) (string, error) {
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
