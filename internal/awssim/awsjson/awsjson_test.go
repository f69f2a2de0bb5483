package awsjson

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestWriteErrorQueryCompatible(t *testing.T) {
	rec := httptest.NewRecorder()
	WriteError(rec, "application/x-amz-json-1.0", "req-1", &Error{
		Status: http.StatusBadRequest, Namespace: "com.amazonaws.sqs", Type: "QueueDoesNotExist",
		QueryCode: "AWS.SimpleQueueService.NonExistentQueue", Message: "The specified queue does not exist.", Sender: true,
	})
	if got := rec.Header().Get("x-amzn-query-error"); got != "AWS.SimpleQueueService.NonExistentQueue;Sender" {
		t.Fatalf("x-amzn-query-error = %q", got)
	}
	var body map[string]string
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatal(err)
	}
	if body["__type"] != "com.amazonaws.sqs#QueueDoesNotExist" || body["message"] != "The specified queue does not exist." {
		t.Fatalf("body = %v", body)
	}
	if rec.Code != http.StatusBadRequest || rec.Header().Get("x-amzn-RequestId") != "req-1" {
		t.Fatalf("status %d request ID %q", rec.Code, rec.Header().Get("x-amzn-RequestId"))
	}
}

func TestOperation(t *testing.T) {
	r := httptest.NewRequest(http.MethodPost, "/", nil)
	r.Header.Set("X-Amz-Target", "AWSEvents.PutRule")
	if op, ok := Operation(r, "AWSEvents"); !ok || op != "PutRule" {
		t.Fatalf("Operation = %q, %v", op, ok)
	}
	if _, ok := Operation(r, "AmazonSQS"); ok {
		t.Fatal("Operation accepted another service's target")
	}
}
