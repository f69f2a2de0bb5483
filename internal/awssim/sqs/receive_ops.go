package sqs

import (
	"strings"
	"time"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/awsjson"
)

type receiveMessageInput struct {
	queueRef
	AttributeNames              []string
	MessageSystemAttributeNames []string
	MessageAttributeNames       []string
	MaxNumberOfMessages         *int
	VisibilityTimeout           *int
	WaitTimeSeconds             *int
}

type receivedMessage struct {
	MessageId              string
	ReceiptHandle          string
	MD5OfBody              string
	Body                   string
	Attributes             map[string]string                `json:",omitempty"`
	MD5OfMessageAttributes string                           `json:",omitempty"`
	MessageAttributes      map[string]MessageAttributeValue `json:",omitempty"`
}

type receiveMessageOutput struct {
	Messages []receivedMessage `json:",omitempty"`
}

// receiveParams are ReceiveMessage's limits after defaults and validation.
type receiveParams struct {
	max        int
	visibility time.Duration
	wait       time.Duration
}

func (s *Service) receiveParams(q *queue, in receiveMessageInput) (receiveParams, *awsjson.Error) {
	p := receiveParams{
		max:        1,
		visibility: time.Duration(intAttribute(q.attributes, "VisibilityTimeout")) * time.Second,
		wait:       time.Duration(intAttribute(q.attributes, "ReceiveMessageWaitTimeSeconds")) * time.Second,
	}
	if n := in.MaxNumberOfMessages; n != nil {
		if *n < 1 || *n > 10 {
			return p, errInvalidParameterValue("Value %d for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 and 10, if provided.", *n)
		}
		p.max = *n
	}
	if n := in.VisibilityTimeout; n != nil {
		v, err := visibilityTimeout(*n)
		if err != nil {
			return p, err
		}
		p.visibility = v
	}
	if n := in.WaitTimeSeconds; n != nil {
		if *n < 0 || *n > 20 {
			return p, errInvalidParameterValue("Value %d for parameter WaitTimeSeconds is invalid. Reason: Must be >= 0 and <= 20, if provided.", *n)
		}
		p.wait = time.Duration(*n) * time.Second
	}
	return p, nil
}

// receiveMessage long-polls: it returns as soon as any message is visible,
// or empty when the wait time passes, the caller goes away or the service is
// closed.
func (s *Service) receiveMessage(c *awsjson.Call) (any, *awsjson.Error) {
	var in receiveMessageInput
	if err := c.Decode(&in); err != nil {
		return nil, err
	}
	ctx := c.Request.Context()
	var deadline time.Time
	for {
		s.mu.Lock()
		q, err := s.lookup(in.queueURL())
		if err != nil {
			s.mu.Unlock()
			return nil, err
		}
		p, err := s.receiveParams(q, in)
		if err != nil {
			s.mu.Unlock()
			return nil, err
		}
		now := s.now()
		if deadline.IsZero() {
			deadline = now.Add(p.wait)
		}
		// Messages are decrypted for the caller: with none to return SQS
		// needs no key, so an empty poll succeeds whatever the grant.
		if visible, _, _ := q.counts(now); visible > 0 {
			if err := s.checkKMS(c, q, "kms:Decrypt"); err != nil {
				s.mu.Unlock()
				return nil, err
			}
		}
		if got := q.receive(now, p.max, p.visibility); len(got) > 0 || !now.Before(deadline) {
			out := receiveMessageOutput{Messages: render(got, in)}
			s.mu.Unlock()
			return out, nil
		}
		arrived := q.arrived
		wake := deadline
		if next := q.nextVisible(now); !next.IsZero() && next.Before(wake) {
			wake = next
		}
		s.mu.Unlock()

		timer := time.NewTimer(wake.Sub(now))
		select {
		case <-arrived:
		case <-timer.C:
		case <-s.closed:
			timer.Stop()
			return receiveMessageOutput{}, nil
		case <-ctx.Done():
			timer.Stop()
			return receiveMessageOutput{}, nil
		}
		timer.Stop()
	}
}

// render shapes received messages for the response, with the system and
// message attributes the request asked for.
func render(msgs []*message, in receiveMessageInput) []receivedMessage {
	systemNames := append(append([]string{}, in.AttributeNames...), in.MessageSystemAttributeNames...)
	out := make([]receivedMessage, 0, len(msgs))
	for _, m := range msgs {
		r := receivedMessage{
			MessageId:     m.id,
			ReceiptHandle: m.receipt,
			MD5OfBody:     m.md5OfBody,
			Body:          m.body,
			Attributes:    selectNames(m.systemAttributes(), systemNames),
		}
		r.MessageAttributes = selectNames(m.attributes, in.MessageAttributeNames)
		r.MD5OfMessageAttributes = md5OfAttributes(r.MessageAttributes)
		out = append(out, r)
	}
	return out
}

// selectNames returns the entries of all named by names, where "All" and
// ".*" select everything and "prefix.*" selects by prefix.
func selectNames[V any](all map[string]V, names []string) map[string]V {
	out := map[string]V{}
	for _, want := range names {
		for name, v := range all {
			prefix, wildcard := strings.CutSuffix(want, ".*")
			if want == "All" || want == ".*" || name == want || (wildcard && strings.HasPrefix(name, prefix+".")) {
				out[name] = v
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
