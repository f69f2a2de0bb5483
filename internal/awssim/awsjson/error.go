package awsjson

import (
	"encoding/json"
	"net/http"
)

// Error is a service error as the awsJson protocols carry it: the shape name
// in "__type" (with the service's namespace when it has one), a "message",
// and for query-compatible services (SQS) the legacy query error code in the
// x-amzn-query-error header, which the SDK reports as the error code.
type Error struct {
	Status    int
	Namespace string // e.g. "com.amazonaws.sqs"; empty for services that send bare names
	Type      string // the error shape name, e.g. "QueueDoesNotExist"
	Message   string
	QueryCode string // legacy query code, e.g. "AWS.SimpleQueueService.NonExistentQueue"
	Sender    bool   // fault: true for client errors, false for server errors
}

func (e *Error) Error() string { return e.Type + ": " + e.Message }

// typeName is the value of "__type".
func (e *Error) typeName() string {
	if e.Namespace == "" {
		return e.Type
	}
	return e.Namespace + "#" + e.Type
}

// WriteError writes e as the response.
func WriteError(w http.ResponseWriter, contentType, requestID string, e *Error) {
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("x-amzn-RequestId", requestID)
	if e.QueryCode != "" {
		fault := "Receiver"
		if e.Sender {
			fault = "Sender"
		}
		h.Set("x-amzn-query-error", e.QueryCode+";"+fault)
	}
	w.WriteHeader(e.Status)
	_ = json.NewEncoder(w).Encode(map[string]string{"__type": e.typeName(), "message": e.Message})
}

// SerializationError reports a request the service could not parse.
func SerializationError(message string) *Error {
	return &Error{Status: http.StatusBadRequest, Type: "SerializationException", Message: message, Sender: true}
}

// UnknownOperation reports an X-Amz-Target the service does not implement.
func UnknownOperation(target string) *Error {
	return &Error{
		Status:    http.StatusBadRequest,
		Namespace: "com.amazon.coral.service",
		Type:      "UnknownOperationException",
		Message:   "the operation " + target + " is not supported by this service",
		Sender:    true,
	}
}
