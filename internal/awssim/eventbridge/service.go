// Package eventbridge is the simulated Amazon EventBridge: the awsJson1_1
// protocol (X-Amz-Target AWSEvents.<Op>) for rules, targets and tags on the
// default event bus, event-pattern matching with EventBridge semantics, and
// delivery of matching events to SQS targets as the real event envelope.
// Other simulated services publish through PutEvent.
package eventbridge

import (
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/awsjson"
	"github.com/joistdev/terraform-provider-joist/internal/awssim/seqid"
	"github.com/joistdev/terraform-provider-joist/internal/awssim/sqs"
)

const (
	contentType = "application/x-amz-json-1.1"
	defaultBus  = "default"
)

// Service holds the rules of the default event bus of one account in one
// region. It is an http.Handler for requests already routed to EventBridge
// ("events"), and safe for concurrent use.
type Service struct {
	account string
	region  string
	queues  *sqs.Service

	eventIDs   *seqid.Sequence
	dispatcher awsjson.Dispatcher

	mu    sync.Mutex
	rules map[string]*rule // by name

	failed atomic.Int64 // deliveries that could not be made
}

// New returns an EventBridge with no rules that delivers to queues in the
// given SQS.
func New(account, region string, queues *sqs.Service) *Service {
	s := &Service{
		account:  account,
		region:   region,
		queues:   queues,
		eventIDs: seqid.New("events-event/" + account + "/" + region),
		rules:    map[string]*rule{},
	}
	s.dispatcher = awsjson.Dispatcher{
		Prefix:      "AWSEvents",
		ContentType: contentType,
		RequestIDs:  seqid.New("events-request/" + account + "/" + region),
		Ops: map[string]awsjson.Op{
			"PutRule":             s.putRule,
			"DescribeRule":        s.describeRule,
			"DeleteRule":          s.deleteRule,
			"ListRules":           s.listRules,
			"EnableRule":          s.enableRule,
			"DisableRule":         s.disableRule,
			"PutTargets":          s.putTargets,
			"RemoveTargets":       s.removeTargets,
			"ListTargetsByRule":   s.listTargetsByRule,
			"TagResource":         s.tagResource,
			"UntagResource":       s.untagResource,
			"ListTagsForResource": s.listTagsForResource,
			"PutEvents":           s.putEvents,
		},
		Rules: constraints,
	}
	return s
}

func (s *Service) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.dispatcher.ServeHTTP(w, r)
}

func (s *Service) now() time.Time { return time.Now() }
