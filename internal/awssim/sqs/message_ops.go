package sqs

import (
	"strings"
	"time"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/awsjson"
)

type sendMessageInput struct {
	queueRef
	MessageBody            string
	DelaySeconds           *int
	MessageAttributes      map[string]MessageAttributeValue
	MessageDeduplicationId string
	MessageGroupId         string
}

type sendMessageOutput struct {
	MessageId              string
	MD5OfMessageBody       string
	MD5OfMessageAttributes string `json:",omitempty"`
	SequenceNumber         string `json:",omitempty"`
}

func (s *Service) sendMessage(c *awsjson.Call) (any, *awsjson.Error) {
	var in sendMessageInput
	return s.onQueue(c, &in, func(q *queue) (any, *awsjson.Error) {
		m, err := s.enqueue(q, outgoing{
			body:          in.MessageBody,
			attributes:    in.MessageAttributes,
			delay:         in.DelaySeconds,
			senderID:      callerAccessKey(c),
			groupID:       in.MessageGroupId,
			deduplication: in.MessageDeduplicationId,
		})
		if err != nil {
			return nil, err
		}
		return sendMessageOutput{
			MessageId:              m.id,
			MD5OfMessageBody:       m.md5OfBody,
			MD5OfMessageAttributes: m.md5OfAttrs,
			SequenceNumber:         m.sequenceNumber,
		}, nil
	})
}

// callerAccessKey is the access key ID in the request's SigV4 credential
// scope; SQS reports the sender's identity as SenderId.
func callerAccessKey(c *awsjson.Call) string {
	auth := c.Request.Header.Get("Authorization")
	_, cred, ok := strings.Cut(auth, "Credential=")
	if !ok {
		return ""
	}
	key, _, _ := strings.Cut(cred, "/")
	return key
}

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
// or empty when the wait time passes or the caller goes away.
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

// resolveReceipt returns the ID of the message a receipt handle was issued
// for in q.
func resolveReceipt(q *queue, handle string) (string, *awsjson.Error) {
	if handle == "" {
		return "", errMissingParameter("ReceiptHandle")
	}
	queueName, id, ok := decodeReceipt(handle)
	if !ok || queueName != q.name {
		return "", errReceiptHandleIsInvalid(handle)
	}
	return id, nil
}

func (s *Service) deleteMessage(c *awsjson.Call) (any, *awsjson.Error) {
	var in struct {
		queueRef
		ReceiptHandle string
	}
	return s.onQueue(c, &in, func(q *queue) (any, *awsjson.Error) {
		id, err := resolveReceipt(q, in.ReceiptHandle)
		if err != nil {
			return nil, err
		}
		q.remove(id)
		return nil, nil
	})
}

func (s *Service) changeMessageVisibility(c *awsjson.Call) (any, *awsjson.Error) {
	var in struct {
		queueRef
		ReceiptHandle     string
		VisibilityTimeout *int
	}
	return s.onQueue(c, &in, func(q *queue) (any, *awsjson.Error) {
		if in.VisibilityTimeout == nil {
			return nil, errMissingParameter("VisibilityTimeout")
		}
		visibility, err := visibilityTimeout(*in.VisibilityTimeout)
		if err != nil {
			return nil, err
		}
		id, err := resolveReceipt(q, in.ReceiptHandle)
		if err != nil {
			return nil, err
		}
		now := s.now()
		_, m := q.find(id)
		if m == nil || m.receiveCount == 0 || !m.visibleAt.After(now) {
			return nil, errMessageNotInflight()
		}
		m.visibleAt = now.Add(visibility)
		if visibility == 0 {
			q.wake()
		}
		return nil, nil
	})
}

// visibilityTimeout validates a requested visibility timeout in seconds.
func visibilityTimeout(seconds int) (time.Duration, *awsjson.Error) {
	if seconds < 0 || seconds > 43200 {
		return 0, errInvalidParameterValue("Value %d for parameter VisibilityTimeout is invalid. Reason: Must be between 0 and 43200, if provided.", seconds)
	}
	return time.Duration(seconds) * time.Second, nil
}
