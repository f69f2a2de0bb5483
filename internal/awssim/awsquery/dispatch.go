package awsquery

import (
	"net/http"
	"net/url"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/constraint"
	"github.com/joistdev/terraform-provider-joist/internal/awssim/seqid"
)

// Op handles one action. It returns the result whose fields form the
// <ActionResult> element (nil for none) or the service error to send.
type Op func(c *Call) (any, *Error)

// Call is one request being handled.
type Call struct {
	Request *http.Request
	Form    url.Values
}

// Dispatcher serves an awsQuery service: it picks the Op named by the Action
// parameter, checks the request against the operation's constraints, and
// writes its result or error with a request ID.
type Dispatcher struct {
	Namespace  string // XML namespace, e.g. "https://iam.amazonaws.com/doc/2010-05-08/"
	RequestIDs *seqid.Sequence
	Ops        map[string]Op
	// Rules are the operations' input constraints; a broken one is a
	// ValidationError in AWS's standard wording.
	Rules constraint.Operations
}

// Operations lists the operations served, each with its constraints.
func (d *Dispatcher) Operations() constraint.Operations { return constraint.Served(d.Ops, d.Rules) }

func (d *Dispatcher) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	requestID := d.RequestIDs.UUID()
	if err := r.ParseForm(); err != nil {
		WriteError(w, d.Namespace, requestID, &Error{Status: http.StatusBadRequest, Code: "MalformedQueryString", Message: err.Error(), Sender: true})
		return
	}
	action := r.Form.Get("Action")
	op := d.Ops[action]
	if op == nil {
		WriteError(w, d.Namespace, requestID, &Error{
			Status:  http.StatusBadRequest,
			Code:    "InvalidAction",
			Message: "The action " + action + " is not valid for this web service.",
			Sender:  true,
		})
		return
	}
	if v := constraint.Check(d.Rules[action], constraint.QueryForm(r.Form)); v != nil {
		WriteError(w, d.Namespace, requestID, &Error{Status: http.StatusBadRequest, Code: "ValidationError", Message: v.Standard(), Sender: true})
		return
	}
	result, err := op(&Call{Request: r, Form: r.Form})
	if err != nil {
		WriteError(w, d.Namespace, requestID, err)
		return
	}
	WriteResult(w, d.Namespace, action, requestID, result)
}
