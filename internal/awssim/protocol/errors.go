package protocol

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/awsjson"
	"github.com/joistdev/terraform-provider-joist/internal/awssim/awsquery"
)

// Error is an AWS API error: the code the SDK's deserializers match on, a
// message for people, and the HTTP status that carries it.
type Error struct {
	Status  int
	Code    string
	Message string
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Errorf builds an Error with a client-fault status (400).
func Errorf(code, format string, args ...any) *Error {
	return &Error{Status: http.StatusBadRequest, Code: code, Message: fmt.Sprintf(format, args...)}
}

// queryNamespaces are the XML namespaces of the awsQuery services.
var queryNamespaces = map[string]string{
	"iam": "https://iam.amazonaws.com/doc/2010-05-08/",
	"sts": "https://sts.amazonaws.com/doc/2011-06-15/",
}

// WriteError writes err in the error shape of the service's protocol family.
func WriteError(w http.ResponseWriter, service, requestID string, err *Error) {
	sender := err.Status < 500
	switch FamilyOf(service) {
	case EC2Query:
		WriteEC2Error(w, requestID, err)
	case AWSQuery:
		awsquery.WriteError(w, queryNamespaces[service], requestID,
			&awsquery.Error{Status: err.Status, Code: err.Code, Message: err.Message, Sender: sender})
	case JSON:
		awsjson.WriteError(w, "application/x-amz-json-1.1", requestID,
			&awsjson.Error{Status: err.Status, Type: err.Code, Message: err.Message, QueryCode: queryCode(service, err.Code), Sender: sender})
	case RESTJSON:
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("X-Amzn-Requestid", requestID)
		h.Set("X-Amzn-Errortype", err.Code)
		b, _ := json.Marshal(map[string]string{"message": err.Message})
		writeBody(w, err.Status, b)
	}
}

// queryCode is the legacy query error code SQS (a query-compatible JSON
// service) sends in x-amzn-query-error; the SDK reports it as the code.
func queryCode(service, code string) string {
	if service == "sqs" {
		return code
	}
	return ""
}

// WriteEC2Error writes err as EC2 does:
// <Response><Errors><Error><Code/><Message/></Error></Errors><RequestID/></Response>.
func WriteEC2Error(w http.ResponseWriter, requestID string, err *Error) {
	w.Header().Set("Content-Type", "text/xml;charset=UTF-8")
	body := fmt.Sprintf(`<?xml version="1.0" encoding="UTF-8"?>
<Response><Errors><Error><Code>%s</Code><Message>%s</Message></Error></Errors><RequestID>%s</RequestID></Response>`,
		Escape(err.Code), Escape(err.Message), Escape(requestID))
	writeBody(w, err.Status, []byte(body))
}

func writeBody(w http.ResponseWriter, status int, b []byte) {
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// Escape returns s with XML special characters escaped.
func Escape(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}
