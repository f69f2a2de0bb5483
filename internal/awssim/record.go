package awssim

import (
	"sync"
	"time"
)

// Request is one recorded API call.
type Request struct {
	Time        time.Time      `json:"time"`
	Service     string         `json:"service"`   // SigV4 signing name: ec2, sqs, events, iam, sts, ssm, pricing, eks
	Operation   string         `json:"operation"` // e.g. CreateFleet
	Parameters  map[string]any `json:"parameters"`
	AccessKeyID string         `json:"accessKeyId,omitempty"`
	Status      int            `json:"status"`
	ErrorCode   string         `json:"errorCode,omitempty"`
	Injected    bool           `json:"injected,omitempty"` // failed by an injected fault
	Duration    time.Duration  `json:"duration"`
}

// maxRecorded bounds the request log; the oldest requests are dropped first.
const maxRecorded = 100_000

// Recorder keeps the request log. It is safe for concurrent use.
type Recorder struct {
	mu       sync.Mutex
	requests []Request
}

func (r *Recorder) add(req Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.requests) >= maxRecorded {
		r.requests = append(r.requests[:0], r.requests[len(r.requests)-maxRecorded/2:]...)
	}
	r.requests = append(r.requests, req)
}

// Requests returns the recorded requests of a service and operation, oldest
// first; an empty service or operation matches all.
func (r *Recorder) Requests(service, operation string) []Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Request
	for _, q := range r.requests {
		if (service == "" || q.Service == service) && (operation == "" || q.Operation == operation) {
			out = append(out, q)
		}
	}
	return out
}

// Count is len(Requests(service, operation)).
func (r *Recorder) Count(service, operation string) int { return len(r.Requests(service, operation)) }

// Reset forgets every recorded request.
func (r *Recorder) Reset() {
	r.mu.Lock()
	r.requests = nil
	r.mu.Unlock()
}
