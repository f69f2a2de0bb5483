package sqs

import (
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/awsjson"
)

var queueNamePattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,80}$`)

// queueRef is the QueueUrl member every per-queue input has.
type queueRef struct{ QueueUrl string }

func (r *queueRef) queueURL() string { return r.QueueUrl }

type queueInput interface{ queueURL() string }

// onQueue decodes the request into in and runs fn with s.mu held on the
// queue in's QueueUrl names.
func (s *Service) onQueue(c *awsjson.Call, in queueInput, fn func(q *queue) (any, *awsjson.Error)) (any, *awsjson.Error) {
	if err := c.Decode(in); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	q, err := s.lookup(in.queueURL())
	if err != nil {
		return nil, err
	}
	return fn(q)
}

// lookup returns the queue a QueueUrl names. The caller holds s.mu.
func (s *Service) lookup(queueURL string) (*queue, *awsjson.Error) {
	if queueURL == "" {
		return nil, errMissingParameter("QueueUrl")
	}
	q := s.queues[s.queueNameFromURL(queueURL)]
	if q == nil {
		return nil, errQueueDoesNotExist()
	}
	return q, nil
}

type createQueueInput struct {
	QueueName  string
	Attributes map[string]string
	Tags       map[string]string `json:"tags"`
}

type queueURLOutput struct {
	QueueUrl string
}

func (s *Service) createQueue(c *awsjson.Call) (any, *awsjson.Error) {
	var in createQueueInput
	if err := c.Decode(&in); err != nil {
		return nil, err
	}
	if in.QueueName == "" {
		return nil, errMissingParameter("QueueName")
	}
	fifo := in.Attributes["FifoQueue"] == "true"
	base, suffixed := strings.CutSuffix(in.QueueName, ".fifo")
	if !queueNamePattern.MatchString(base) || len(in.QueueName) > 80 || fifo != suffixed {
		return nil, errInvalidParameterValue("Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length. FIFO queue names end in .fifo and need the FifoQueue attribute set to true.")
	}
	if err := validateAttributes(in.Attributes, true, fifo); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if q := s.queues[in.QueueName]; q != nil {
		// CreateQueue is idempotent only when every given attribute matches.
		for name, value := range in.Attributes {
			if q.attributes[name] != value {
				return nil, errQueueNameExists(name)
			}
		}
		return queueURLOutput{QueueUrl: s.queueURL(c.Request, q.name)}, nil
	}
	s.queues[in.QueueName] = newQueue(in.QueueName, s.queueARN(in.QueueName), defaultAttributes(in.Attributes), in.Tags, s.now())
	return queueURLOutput{QueueUrl: s.queueURL(c.Request, in.QueueName)}, nil
}

func (s *Service) getQueueURL(c *awsjson.Call) (any, *awsjson.Error) {
	var in struct {
		QueueName              string
		QueueOwnerAWSAccountId string
	}
	if err := c.Decode(&in); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if in.QueueOwnerAWSAccountId != "" && in.QueueOwnerAWSAccountId != s.account {
		return nil, errQueueDoesNotExist()
	}
	if s.queues[in.QueueName] == nil {
		return nil, errQueueDoesNotExist()
	}
	return queueURLOutput{QueueUrl: s.queueURL(c.Request, in.QueueName)}, nil
}

func (s *Service) getQueueAttributes(c *awsjson.Call) (any, *awsjson.Error) {
	var in struct {
		queueRef
		AttributeNames []string
	}
	return s.onQueue(c, &in, func(q *queue) (any, *awsjson.Error) {
		return selectAttributes(s.allAttributes(q), in.AttributeNames)
	})
}

// selectAttributes returns the named attributes ("All" for every one);
// settable attributes the queue does not have are left out.
func selectAttributes(all map[string]string, names []string) (any, *awsjson.Error) {
	out := map[string]string{}
	for _, name := range names {
		if name == "All" {
			out = all
			break
		}
		_, settable := settableAttributes[name]
		if !settable && !isComputed(name) {
			return nil, errInvalidAttributeName(name)
		}
		if v, ok := all[name]; ok {
			out[name] = v
		}
	}
	if len(out) == 0 {
		return struct{}{}, nil
	}
	return struct{ Attributes map[string]string }{out}, nil
}

func isComputed(name string) bool {
	for _, c := range computedAttributes {
		if c == name {
			return true
		}
	}
	return false
}

// allAttributes returns the stored and computed attributes of q. The caller
// holds s.mu.
func (s *Service) allAttributes(q *queue) map[string]string {
	visible, inflight, delayed := q.counts(s.now())
	out := map[string]string{
		"QueueArn":                              q.arn,
		"ApproximateNumberOfMessages":           strconv.Itoa(visible),
		"ApproximateNumberOfMessagesNotVisible": strconv.Itoa(inflight),
		"ApproximateNumberOfMessagesDelayed":    strconv.Itoa(delayed),
		"CreatedTimestamp":                      strconv.FormatInt(q.created.Unix(), 10),
		"LastModifiedTimestamp":                 strconv.FormatInt(q.modified.Unix(), 10),
	}
	for name, value := range q.attributes {
		out[name] = value
	}
	return out
}

func (s *Service) setQueueAttributes(c *awsjson.Call) (any, *awsjson.Error) {
	var in struct {
		queueRef
		Attributes map[string]string
	}
	return s.onQueue(c, &in, func(q *queue) (any, *awsjson.Error) {
		if err := validateAttributes(in.Attributes, false, isFIFO(q.name)); err != nil {
			return nil, err
		}
		for name, value := range in.Attributes {
			q.attributes[name] = value
		}
		q.modified = s.now()
		return nil, nil
	})
}

func (s *Service) deleteQueue(c *awsjson.Call) (any, *awsjson.Error) {
	var in queueRef
	return s.onQueue(c, &in, func(q *queue) (any, *awsjson.Error) {
		delete(s.queues, q.name)
		q.wake()
		return nil, nil
	})
}

func (s *Service) listQueues(c *awsjson.Call) (any, *awsjson.Error) {
	var in struct{ QueueNamePrefix string }
	if err := c.Decode(&in); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var names []string
	for name := range s.queues {
		if strings.HasPrefix(name, in.QueueNamePrefix) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	urls := make([]string, len(names))
	for i, name := range names {
		urls[i] = s.queueURL(c.Request, name)
	}
	return struct {
		QueueUrls []string `json:",omitempty"`
	}{urls}, nil
}

func (s *Service) purgeQueue(c *awsjson.Call) (any, *awsjson.Error) {
	var in queueRef
	return s.onQueue(c, &in, func(q *queue) (any, *awsjson.Error) {
		q.messages = nil
		return nil, nil
	})
}
