// Package fault decides which simulated AWS requests fail or slow down:
// throttling, server errors and latency, per service and operation, at a
// rate, optionally a limited number of times.
package fault

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"time"
)

// Kind is what a fault does to a request.
type Kind string

const (
	// Throttle answers with the service's throttling error
	// (RequestLimitExceeded for EC2, Throttling for IAM/STS, ThrottlingException otherwise).
	Throttle Kind = "throttle"
	// ServerError answers with a 5xx error (the service's internal error unless Code is set).
	ServerError Kind = "error"
	// Latency delays the request by Latency before it is handled.
	Latency Kind = "latency"
	// ResponseLatency handles the request at once and holds its response
	// for Latency: the work is done even when the caller goes away while it
	// waits, as when a process dies inside a call that AWS completed.
	ResponseLatency Kind = "response-latency"
	// Deny answers as IAM does when the caller's policy lacks the action
	// (UnauthorizedOperation for EC2, AccessDenied for IAM/STS,
	// AccessDeniedException otherwise).
	Deny Kind = "deny"
)

// Fault is one injection rule.
type Fault struct {
	ID        int           `json:"id"`
	Service   string        `json:"service,omitempty"`   // SigV4 signing name (ec2, sqs, events, ...); empty: every service
	Operation string        `json:"operation,omitempty"` // e.g. CreateFleet; empty: every operation
	Kind      Kind          `json:"kind"`
	Rate      float64       `json:"rate,omitempty"`    // probability per matching request, 0 < Rate <= 1; 0 means 1
	Count     int           `json:"count,omitempty"`   // fire at most this many times; 0: no limit
	Latency   time.Duration `json:"latency,omitempty"` // for Latency
	Status    int           `json:"status,omitempty"`  // for ServerError; default 500
	Code      string        `json:"code,omitempty"`    // for ServerError; default the service's internal error code
	Fired     int           `json:"fired"`
}

func (f *Fault) validate() error {
	switch f.Kind {
	case Throttle, ServerError, Latency, ResponseLatency, Deny:
	default:
		return fmt.Errorf("fault kind %q: use throttle, error, latency, response-latency or deny", f.Kind)
	}
	if f.Rate < 0 || f.Rate > 1 {
		return fmt.Errorf("fault rate %v: use a probability in (0, 1]", f.Rate)
	}
	if (f.Kind == Latency || f.Kind == ResponseLatency) && f.Latency <= 0 {
		return fmt.Errorf("%s fault needs a positive latency", f.Kind)
	}
	if f.Kind == ServerError && f.Status != 0 && (f.Status < 500 || f.Status > 599) {
		return fmt.Errorf("fault status %d: server errors are 5xx", f.Status)
	}
	return nil
}

// Injector holds the active faults. It is safe for concurrent use.
type Injector struct {
	mu     sync.Mutex
	faults []*Fault
	nextID int
	rng    *rand.Rand
}

// NewInjector returns an injector whose rate decisions follow seed, so a
// run with the same requests fails the same ones.
func NewInjector(seed uint64) *Injector {
	return &Injector{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

// Add activates a fault and returns it with its ID.
func (in *Injector) Add(f Fault) (Fault, error) {
	if err := f.validate(); err != nil {
		return Fault{}, err
	}
	if f.Rate == 0 {
		f.Rate = 1
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	in.nextID++
	f.ID, f.Fired = in.nextID, 0
	in.faults = append(in.faults, &f)
	return f, nil
}

// Remove deactivates one fault.
func (in *Injector) Remove(id int) bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	for i, f := range in.faults {
		if f.ID == id {
			in.faults = append(in.faults[:i], in.faults[i+1:]...)
			return true
		}
	}
	return false
}

// Clear deactivates every fault.
func (in *Injector) Clear() {
	in.mu.Lock()
	in.faults = nil
	in.mu.Unlock()
}

// List returns the active faults with how often each fired.
func (in *Injector) List() []Fault {
	in.mu.Lock()
	defer in.mu.Unlock()
	out := make([]Fault, len(in.faults))
	for i, f := range in.faults {
		out[i] = *f
	}
	return out
}

// Decision is what the faults do to one request: a delay, then possibly a
// failure in place of the service's answer.
type Decision struct {
	Delay time.Duration
	// ResponseDelay holds the response of a handled request.
	ResponseDelay time.Duration
	Fail          *Fault // nil: handle the request
}

// Decide applies every matching fault to a request: latencies add up; the
// first throttle or error that fires fails it.
func (in *Injector) Decide(service, operation string) Decision {
	in.mu.Lock()
	defer in.mu.Unlock()
	var d Decision
	for _, f := range in.faults {
		if (f.Service != "" && f.Service != service) || (f.Operation != "" && f.Operation != operation) {
			continue
		}
		if f.Count > 0 && f.Fired >= f.Count {
			continue
		}
		delay := f.Kind == Latency || f.Kind == ResponseLatency
		if !delay && d.Fail != nil {
			continue
		}
		if f.Rate < 1 && in.rng.Float64() >= f.Rate {
			continue
		}
		f.Fired++
		switch f.Kind {
		case Latency:
			d.Delay += f.Latency
		case ResponseLatency:
			d.ResponseDelay += f.Latency
		default:
			c := *f
			d.Fail = &c
		}
	}
	return d
}
