package eks

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"time"
)

// restError is an EKS error: the shape name travels in X-Amzn-ErrorType and
// the body carries "message" plus any members of the shape.
type restError struct {
	Status  int
	Type    string
	Message string
	Fields  map[string]string // extra members, e.g. clusterName
}

func writeError(w http.ResponseWriter, requestID string, e *restError) {
	body := map[string]string{"message": e.Message}
	for k, v := range e.Fields {
		body[k] = v
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Amzn-RequestId", requestID)
	h.Set("X-Amzn-ErrorType", e.Type)
	w.WriteHeader(e.Status)
	_ = json.NewEncoder(w).Encode(body)
}

func writeResult(w http.ResponseWriter, requestID string, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		writeError(w, requestID, &restError{Status: http.StatusInternalServerError, Type: "ServerException", Message: err.Error()})
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Amzn-RequestId", requestID)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// call is one request with its path labels.
type call struct {
	Request *http.Request
	Args    []string // path labels, unescaped, in order
}

// decode reads the JSON body into v.
func (c *call) decode(v any) *restError {
	body, err := io.ReadAll(c.Request.Body)
	if err != nil || len(strings.TrimSpace(string(body))) == 0 {
		return nil
	}
	if err := json.Unmarshal(body, v); err != nil {
		return errInvalidRequest("the request body is not valid JSON for this operation: " + err.Error())
	}
	return nil
}

// epoch is a timestamp as restJson1 sends it: seconds since the epoch.
func epoch(t time.Time) float64 { return float64(t.UnixMilli()) / 1000 }

func errNotFound(message string, fields map[string]string) *restError {
	return &restError{Status: http.StatusNotFound, Type: "ResourceNotFoundException", Message: message, Fields: fields}
}

func errInUse(message string, fields map[string]string) *restError {
	return &restError{Status: http.StatusConflict, Type: "ResourceInUseException", Message: message, Fields: fields}
}

func errInvalidParameter(message string, fields map[string]string) *restError {
	return &restError{Status: http.StatusBadRequest, Type: "InvalidParameterException", Message: message, Fields: fields}
}

func errInvalidRequest(message string) *restError {
	return &restError{Status: http.StatusBadRequest, Type: "InvalidRequestException", Message: message}
}
