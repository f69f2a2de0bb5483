package sqs

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/awsjson"
)

// attributeSpec describes one settable queue attribute.
type attributeSpec struct {
	def      string // value a new queue gets when the attribute is not given; "" for none
	valid    func(string) bool
	fifoOnly bool
	onCreate bool // may only be set by CreateQueue
}

func intBetween(lo, hi int) func(string) bool {
	return func(v string) bool {
		n, err := strconv.Atoi(v)
		return err == nil && n >= lo && n <= hi
	}
}

func oneOf(values ...string) func(string) bool {
	return func(v string) bool {
		for _, ok := range values {
			if v == ok {
				return true
			}
		}
		return false
	}
}

func jsonObject(v string) bool {
	var m map[string]any
	return json.Unmarshal([]byte(v), &m) == nil
}

func anyString(string) bool { return true }

// settableAttributes are the attributes CreateQueue and SetQueueAttributes
// accept, with the ranges and defaults real SQS applies.
var settableAttributes = map[string]attributeSpec{
	"DelaySeconds":                  {def: "0", valid: intBetween(0, 900)},
	"MaximumMessageSize":            {def: "1048576", valid: intBetween(1024, 1048576)},
	"MessageRetentionPeriod":        {def: "345600", valid: intBetween(60, 1209600)},
	"ReceiveMessageWaitTimeSeconds": {def: "0", valid: intBetween(0, 20)},
	"VisibilityTimeout":             {def: "30", valid: intBetween(0, 43200)},
	"Policy":                        {valid: jsonObject},
	"RedrivePolicy":                 {valid: jsonObject},
	"RedriveAllowPolicy":            {valid: jsonObject},
	"KmsMasterKeyId":                {valid: anyString},
	"KmsDataKeyReusePeriodSeconds":  {valid: intBetween(60, 86400)},
	"SqsManagedSseEnabled":          {valid: oneOf("true", "false")},
	"FifoQueue":                     {valid: oneOf("true", "false"), onCreate: true},
	"ContentBasedDeduplication":     {valid: oneOf("true", "false"), fifoOnly: true},
	"DeduplicationScope":            {valid: oneOf("messageGroup", "queue"), fifoOnly: true},
	"FifoThroughputLimit":           {valid: oneOf("perQueue", "perMessageGroupId"), fifoOnly: true},
}

// computedAttributes are the read-only attributes GetQueueAttributes reports.
var computedAttributes = []string{
	"QueueArn",
	"ApproximateNumberOfMessages",
	"ApproximateNumberOfMessagesNotVisible",
	"ApproximateNumberOfMessagesDelayed",
	"CreatedTimestamp",
	"LastModifiedTimestamp",
}

// validateAttributes checks names and values of attributes being set on a
// queue (fifo tells whether the queue is, or is being created as, FIFO).
func validateAttributes(attrs map[string]string, creating, fifo bool) *awsjson.Error {
	for name, value := range attrs {
		spec, ok := settableAttributes[name]
		if !ok || (spec.fifoOnly && !fifo) || (spec.onCreate && !creating) {
			return errInvalidAttributeName(name)
		}
		if !spec.valid(value) {
			return errInvalidAttributeValue(name)
		}
	}
	return nil
}

// defaultAttributes returns the attributes of a new queue: the defaults
// overlaid with what was given. Server-side encryption defaults to
// SQS-managed keys unless a KMS key is named.
func defaultAttributes(given map[string]string) map[string]string {
	attrs := map[string]string{}
	for name, spec := range settableAttributes {
		if spec.def != "" {
			attrs[name] = spec.def
		}
	}
	if _, kms := given["KmsMasterKeyId"]; kms {
		attrs["SqsManagedSseEnabled"] = "false"
		attrs["KmsDataKeyReusePeriodSeconds"] = "300"
	} else {
		attrs["SqsManagedSseEnabled"] = "true"
	}
	for name, value := range given {
		attrs[name] = value
	}
	return attrs
}

// isFIFO reports whether a queue name names a FIFO queue.
func isFIFO(name string) bool { return strings.HasSuffix(name, ".fifo") }

// intAttribute reads a numeric attribute stored on a queue; stored values
// were validated on the way in.
func intAttribute(attrs map[string]string, name string) int {
	n, _ := strconv.Atoi(attrs[name])
	return n
}
