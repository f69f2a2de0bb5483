package awsjson

import (
	"net/http"

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

// Dispatcher serves an awsJson service: it picks the Op named by X-Amz-Target
// and writes its result or error with a request ID.
type Dispatcher struct {
	Prefix      string // X-Amz-Target prefix, e.g. "AmazonSQS"
	ContentType string // "application/x-amz-json-1.0" or "application/x-amz-json-1.1"
	RequestIDs  *seqid.Sequence
	Ops         map[string]Op
}

func (d *Dispatcher) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	requestID := d.RequestIDs.UUID()
	name, ok := Operation(r, d.Prefix)
	op := d.Ops[name]
	if !ok || op == nil {
		WriteError(w, d.ContentType, requestID, UnknownOperation(r.Header.Get("X-Amz-Target")))
		return
	}
	result, err := op(&Call{Request: r})
	if err != nil {
		WriteError(w, d.ContentType, requestID, err)
		return
	}
	WriteResult(w, d.ContentType, requestID, result)
}
