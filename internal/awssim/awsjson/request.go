package awsjson

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Operation returns the operation named by the X-Amz-Target header when it
// belongs to the service prefix (for example "AmazonSQS" or "AWSEvents").
func Operation(r *http.Request, prefix string) (string, bool) {
	target := r.Header.Get("X-Amz-Target")
	op, ok := strings.CutPrefix(target, prefix+".")
	return op, ok && op != ""
}

// Decode reads the JSON request body into v. An empty body decodes as {}.
func Decode(r *http.Request, v any) *Error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return SerializationError(fmt.Sprintf("reading the request body: %v", err))
	}
	if len(strings.TrimSpace(string(body))) == 0 {
		return nil
	}
	if err := json.Unmarshal(body, v); err != nil {
		return SerializationError(fmt.Sprintf("the request body is not valid JSON for this operation: %v", err))
	}
	return nil
}
