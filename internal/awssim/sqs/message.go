package sqs

import (
	"strconv"
	"time"
)

// MessageAttributeValue is a message attribute as SendMessage carries it.
type MessageAttributeValue struct {
	DataType    string `json:"DataType"`
	StringValue string `json:"StringValue,omitempty"`
	BinaryValue []byte `json:"BinaryValue,omitempty"`
}

// message is one message in a queue.
type message struct {
	id             string
	body           string
	md5OfBody      string
	attributes     map[string]MessageAttributeValue
	md5OfAttrs     string
	senderID       string
	sent           time.Time
	visibleAt      time.Time
	receiveCount   int
	firstReceive   time.Time
	receipt        string
	groupID        string
	deduplication  string
	sequenceNumber string
}

// systemAttributes returns the message system attributes ReceiveMessage
// reports, as of the receive that just happened.
func (m *message) systemAttributes() map[string]string {
	attrs := map[string]string{
		"SenderId":                         m.senderID,
		"SentTimestamp":                    millis(m.sent),
		"ApproximateReceiveCount":          strconv.Itoa(m.receiveCount),
		"ApproximateFirstReceiveTimestamp": millis(m.firstReceive),
	}
	if m.groupID != "" {
		attrs["MessageGroupId"] = m.groupID
		attrs["MessageDeduplicationId"] = m.deduplication
		attrs["SequenceNumber"] = m.sequenceNumber
	}
	return attrs
}

func millis(t time.Time) string { return strconv.FormatInt(t.UnixMilli(), 10) }
