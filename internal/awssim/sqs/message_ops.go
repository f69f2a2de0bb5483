package sqs

import (
	"time"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/awsjson"
	"github.com/joistdev/terraform-provider-joist/internal/awssim/protocol"
)

// sendEntry is one message to send: SendMessage's input, or one entry of
// SendMessageBatch.
type sendEntry struct {
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
	var in struct {
		queueRef
		sendEntry
	}
	return s.onQueue(c, &in, func(q *queue) (any, *awsjson.Error) {
		return s.sendOne(c, q, in.sendEntry)
	})
}

// sendOne enqueues one entry on q. The caller holds s.mu.
func (s *Service) sendOne(c *awsjson.Call, q *queue, e sendEntry) (sendMessageOutput, *awsjson.Error) {
	if err := s.checkKMS(c, q, "kms:GenerateDataKey"); err != nil {
		return sendMessageOutput{}, err
	}
	m, err := s.enqueue(q, outgoing{
		body:          e.MessageBody,
		attributes:    e.MessageAttributes,
		delay:         e.DelaySeconds,
		senderID:      callerAccessKey(c),
		groupID:       e.MessageGroupId,
		deduplication: e.MessageDeduplicationId,
	})
	if err != nil {
		return sendMessageOutput{}, err
	}
	return sendMessageOutput{
		MessageId:              m.id,
		MD5OfMessageBody:       m.md5OfBody,
		MD5OfMessageAttributes: m.md5OfAttrs,
		SequenceNumber:         m.sequenceNumber,
	}, nil
}

// callerAccessKey is the access key ID in the request's SigV4 credential
// scope; SQS reports the sender's identity as SenderId.
func callerAccessKey(c *awsjson.Call) string {
	cred, _ := protocol.ParseAuthorization(c.Request.Header.Get("Authorization"))
	return cred.AccessKeyID
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
		return nil, deleteOne(q, in.ReceiptHandle)
	})
}

// deleteOne deletes the message a receipt handle names from q.
func deleteOne(q *queue, handle string) *awsjson.Error {
	id, err := resolveReceipt(q, handle)
	if err != nil {
		return err
	}
	q.remove(id)
	return nil
}

func (s *Service) changeMessageVisibility(c *awsjson.Call) (any, *awsjson.Error) {
	var in struct {
		queueRef
		ReceiptHandle     string
		VisibilityTimeout *int
	}
	return s.onQueue(c, &in, func(q *queue) (any, *awsjson.Error) {
		return nil, s.changeVisibilityOne(q, in.ReceiptHandle, in.VisibilityTimeout)
	})
}

// changeVisibilityOne sets the visibility timeout of an in-flight message.
// The caller holds s.mu.
func (s *Service) changeVisibilityOne(q *queue, handle string, seconds *int) *awsjson.Error {
	if seconds == nil {
		return errMissingParameter("VisibilityTimeout")
	}
	visibility, err := visibilityTimeout(*seconds)
	if err != nil {
		return err
	}
	id, err := resolveReceipt(q, handle)
	if err != nil {
		return err
	}
	now := s.now()
	_, m := q.find(id)
	if m == nil || m.receiveCount == 0 || !m.visibleAt.After(now) {
		return errMessageNotInflight()
	}
	m.visibleAt = now.Add(visibility)
	if visibility == 0 {
		q.wake()
	}
	return nil
}

// visibilityTimeout validates a requested visibility timeout in seconds.
func visibilityTimeout(seconds int) (time.Duration, *awsjson.Error) {
	if seconds < 0 || seconds > 43200 {
		return 0, errInvalidParameterValue("Value %d for parameter VisibilityTimeout is invalid. Reason: Must be between 0 and 43200, if provided.", seconds)
	}
	return time.Duration(seconds) * time.Second, nil
}
