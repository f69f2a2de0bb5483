package protocol

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"net/http"
	"strconv"
	"strings"
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

// WriteError writes err in the error shape of family f.
func WriteError(w http.ResponseWriter, f Family, requestID string, err *Error) {
	switch f {
	case EC2Query:
		writeXML(w, err.Status, fmt.Sprintf(`<?xml version="1.0" encoding="UTF-8"?>
<Response><Errors><Error><Code>%s</Code><Message>%s</Message></Error></Errors><RequestID>%s</RequestID></Response>`,
			Escape(err.Code), Escape(err.Message), Escape(requestID)))
	case AWSQuery:
		kind := "Sender"
		if err.Status >= 500 {
			kind = "Receiver"
		}
		writeXML(w, err.Status, fmt.Sprintf(`<ErrorResponse xmlns="https://iam.amazonaws.com/doc/2010-05-08/"><Error><Type>%s</Type><Code>%s</Code><Message>%s</Message></Error><RequestId>%s</RequestId></ErrorResponse>`,
			kind, Escape(err.Code), Escape(err.Message), Escape(requestID)))
	case JSON:
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		w.Header().Set("X-Amzn-Requestid", requestID)
		w.Header().Set("X-Amzn-Query-Error", err.Code+";"+senderOrReceiver(err.Status))
		writeJSON(w, err.Status, map[string]string{"__type": err.Code, "message": err.Message})
	case RESTJSON:
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Amzn-Requestid", requestID)
		w.Header().Set("X-Amzn-Errortype", err.Code)
		writeJSON(w, err.Status, map[string]string{"message": err.Message})
	}
}

func senderOrReceiver(status int) string {
	if status >= 500 {
		return "Receiver"
	}
	return "Sender"
}

func writeXML(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "text/xml;charset=UTF-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
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
