// Package sqs is the simulated Amazon SQS: the awsJson1_0 protocol the
// current SDK speaks (X-Amz-Target AmazonSQS.<Op>), with standard-queue
// semantics: visibility timeouts, long polling, receipt handles, delays and
// retention. Other simulated services deliver into queues through the Go API.
package sqs

import (
	"net/http"
	"sync"
	"time"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/awsjson"
	"github.com/joistdev/terraform-provider-joist/internal/awssim/seqid"
)

const contentType = "application/x-amz-json-1.0"

// Service holds every queue of one account in one region. It is an
// http.Handler for requests already routed to SQS, and safe for concurrent use.
type Service struct {
	account string
	region  string

	messageIDs *seqid.Sequence
	dispatcher awsjson.Dispatcher

	mu        sync.Mutex
	queues    map[string]*queue // by name
	authorize Authorizer        // nil: every caller may use every key

	closed    chan struct{} // closed by Close to end long polls
	closeOnce sync.Once
}

// New returns an empty SQS for the account and region.
func New(account, region string) *Service {
	s := &Service{
		account:    account,
		region:     region,
		messageIDs: seqid.New("sqs-message/" + account + "/" + region),
		queues:     map[string]*queue{},
		closed:     make(chan struct{}),
	}
	s.dispatcher = awsjson.Dispatcher{
		Prefix:      "AmazonSQS",
		ContentType: contentType,
		RequestIDs:  seqid.New("sqs-request/" + account + "/" + region),
		Ops: map[string]awsjson.Op{
			"CreateQueue":                  s.createQueue,
			"GetQueueUrl":                  s.getQueueURL,
			"GetQueueAttributes":           s.getQueueAttributes,
			"SetQueueAttributes":           s.setQueueAttributes,
			"DeleteQueue":                  s.deleteQueue,
			"ListQueues":                   s.listQueues,
			"PurgeQueue":                   s.purgeQueue,
			"SendMessage":                  s.sendMessage,
			"ReceiveMessage":               s.receiveMessage,
			"DeleteMessage":                s.deleteMessage,
			"ChangeMessageVisibility":      s.changeMessageVisibility,
			"SendMessageBatch":             s.sendMessageBatch,
			"DeleteMessageBatch":           s.deleteMessageBatch,
			"ChangeMessageVisibilityBatch": s.changeMessageVisibilityBatch,
			"TagQueue":                     s.tagQueue,
			"UntagQueue":                   s.untagQueue,
			"ListQueueTags":                s.listQueueTags,
		},
		Rules:   constraints,
		Invalid: invalid,
	}
	return s
}

// Close ends every long poll in progress (they return no messages), so an
// HTTP server in front of the service can shut down without waiting up to
// 20 seconds. The service keeps working for short polls afterwards.
func (s *Service) Close() {
	s.closeOnce.Do(func() { close(s.closed) })
}

func (s *Service) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.dispatcher.ServeHTTP(w, r)
}

// now is the service clock; visibility, delays and retention are measured
// against it.
func (s *Service) now() time.Time { return time.Now() }
