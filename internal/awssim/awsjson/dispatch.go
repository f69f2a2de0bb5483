package awsjson

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/constraint"
	"github.com/joistdev/terraform-provider-joist/internal/awssim/seqid"
)

// Op handles one operation. It returns the result to encode as JSON (nil for
// an empty result) or the service error to send.
type Op func(c *Call) (any, *Error)

// Call is one request being handled.
type Call struct {
	Request *http.Request
}

// Decode reads the request body into v.
func (c *Call) Decode(v any) *Error { return Decode(c.Request, v) }

// Dispatcher serves an awsJson service: it picks the Op named by X-Amz-Target,
// checks the request against the operation's constraints, and writes its
// result or error with a request ID.
type Dispatcher struct {
	Prefix      string // X-Amz-Target prefix, e.g. "AmazonSQS"
	ContentType string // "application/x-amz-json-1.0" or "application/x-amz-json-1.1"
	RequestIDs  *seqid.Sequence
	Ops         map[string]Op
	// Rules are the operations' input constraints.
	Rules constraint.Operations
	// Invalid is the error for a broken constraint; nil sends a
	// ValidationException with AWS's standard message.
	Invalid func(*constraint.Violation) *Error
}

func (d *Dispatcher) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	requestID := d.RequestIDs.UUID()
	name, ok := Operation(r, d.Prefix)
	op := d.Ops[name]
	if !ok || op == nil {
		WriteError(w, d.ContentType, requestID, UnknownOperation(r.Header.Get("X-Amz-Target")))
		return
	}
	if v := d.check(name, r); v != nil {
		e := ValidationError(v)
		if d.Invalid != nil {
			e = d.Invalid(v)
		}
		WriteError(w, d.ContentType, requestID, e)
		return
	}
	result, err := op(&Call{Request: r})
	if err != nil {
		WriteError(w, d.ContentType, requestID, err)
		return
	}
	WriteResult(w, d.ContentType, requestID, result)
}

// check applies the operation's constraints to the body and leaves the body
// for the operation to read; a body that is not a JSON object is the
// operation's to reject.
func (d *Dispatcher) check(name string, r *http.Request) *constraint.Violation {
	rules := d.Rules[name]
	if len(rules) == 0 {
		return nil
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	doc := constraint.JSON{}
	if len(bytes.TrimSpace(body)) > 0 && json.Unmarshal(body, &doc) != nil {
		return nil
	}
	return constraint.Check(rules, doc)
}

// Operations lists the operations served, each with its constraints.
func (d *Dispatcher) Operations() constraint.Operations { return constraint.Served(d.Ops, d.Rules) }

// ValidationError is a ValidationException in AWS's standard wording.
func ValidationError(v *constraint.Violation) *Error {
	return &Error{Status: http.StatusBadRequest, Type: "ValidationException", Message: v.Standard(), Sender: true}
}
