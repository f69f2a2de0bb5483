package sqs

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/awsjson"
)

// outgoing is a message about to be enqueued.
type outgoing struct {
	body          string
	attributes    map[string]MessageAttributeValue
	delay         *int // nil: the queue's DelaySeconds
	senderID      string
	groupID       string
	deduplication string
}

// enqueue validates and appends a message. The caller holds s.mu.
func (s *Service) enqueue(q *queue, o outgoing) (*message, *awsjson.Error) {
	if o.body == "" {
		return nil, errMissingParameter("MessageBody")
	}
	if err := validBody(o.body); err != nil {
		return nil, err
	}
	if max := intAttribute(q.attributes, "MaximumMessageSize"); len(o.body) > max {
		return nil, errInvalidParameterValue("One or more parameters are invalid. Reason: Message must be shorter than %d bytes.", max)
	}
	delay := intAttribute(q.attributes, "DelaySeconds")
	if o.delay != nil {
		if *o.delay < 0 || *o.delay > 900 {
			return nil, errInvalidParameterValue("Value %d for parameter DelaySeconds is invalid. Reason: DelaySeconds must be >= 0 and <= 900.", *o.delay)
		}
		delay = *o.delay
	}
	now := s.now()
	m := &message{
		id:         s.messageIDs.UUID(),
		body:       o.body,
		md5OfBody:  md5Hex(o.body),
		attributes: o.attributes,
		md5OfAttrs: md5OfAttributes(o.attributes),
		senderID:   o.senderID,
		sent:       now,
		visibleAt:  now.Add(time.Duration(delay) * time.Second),
	}
	if isFIFO(q.name) {
		if o.groupID == "" {
			return nil, errMissingParameter("MessageGroupId")
		}
		m.groupID = o.groupID
		m.deduplication = o.deduplication
		if m.deduplication == "" {
			if q.attributes["ContentBasedDeduplication"] != "true" {
				return nil, errInvalidParameterValue("The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly")
			}
			sum := sha256.Sum256([]byte(o.body))
			m.deduplication = hex.EncodeToString(sum[:])
		}
		q.sequence++
		m.sequenceNumber = fmt.Sprintf("%020d", q.sequence)
	}
	q.messages = append(q.messages, m)
	q.wake()
	return m, nil
}

// validBody rejects characters SQS does not accept in message bodies.
func validBody(body string) *awsjson.Error {
	if !utf8.ValidString(body) {
		return senderError("InvalidMessageContents", "InvalidMessageContents", "Invalid binary character in the message body: the body is not valid UTF-8.")
	}
	for _, r := range body {
		ok := r == 0x9 || r == 0xA || r == 0xD || (r >= 0x20 && r <= 0xD7FF) || (r >= 0xE000 && r <= 0xFFFD) || r >= 0x10000
		if !ok {
			return senderError("InvalidMessageContents", "InvalidMessageContents", fmt.Sprintf("Invalid binary character '#x%X' was found in the message body, the set of allowed characters is available at http://www.w3.org/TR/REC-xml/#charsets", r))
		}
	}
	return nil
}
