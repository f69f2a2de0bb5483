package awsjson

import (
	"encoding/json"
	"net/http"
)

// WriteResult writes v as a successful response. A nil v writes {}.
func WriteResult(w http.ResponseWriter, contentType, requestID string, v any) {
	if v == nil {
		v = struct{}{}
	}
	body, err := json.Marshal(v)
	if err != nil {
		WriteError(w, contentType, requestID, &Error{Status: http.StatusInternalServerError, Type: "InternalFailure", Message: err.Error()})
		return
	}
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("x-amzn-RequestId", requestID)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}
