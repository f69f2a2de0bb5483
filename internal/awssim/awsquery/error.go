package awsquery

import (
	"encoding/xml"
	"net/http"
)

// Error is a service error as awsQuery services send it.
type Error struct {
	Status  int
	Code    string // e.g. "NoSuchEntity"
	Message string
	Sender  bool // fault: true for client errors, false for server errors
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

type errorResponse struct {
	XMLName   xml.Name  `xml:"ErrorResponse"`
	Xmlns     string    `xml:"xmlns,attr"`
	Error     errorBody `xml:"Error"`
	RequestID string    `xml:"RequestId"`
}

type errorBody struct {
	Type    string `xml:"Type"`
	Code    string `xml:"Code"`
	Message string `xml:"Message"`
}

// WriteError writes e as <ErrorResponse><Error><Type/><Code/><Message/></Error><RequestId/>.
func WriteError(w http.ResponseWriter, namespace, requestID string, e *Error) {
	fault := "Receiver"
	if e.Sender {
		fault = "Sender"
	}
	body, _ := xml.Marshal(errorResponse{
		Xmlns:     namespace,
		Error:     errorBody{Type: fault, Code: e.Code, Message: e.Message},
		RequestID: requestID,
	})
	h := w.Header()
	h.Set("Content-Type", "text/xml")
	h.Set("x-amzn-RequestId", requestID)
	w.WriteHeader(e.Status)
	_, _ = w.Write([]byte(xml.Header))
	_, _ = w.Write(body)
}
