package sqs

import (
	"net/http"
	"net/url"
	"strings"
)

// queueURL is the URL of a queue as seen by the caller: the host the request
// came to, then /<account>/<name>, so URLs work through whatever address the
// caller reached the simulator at.
func (s *Service) queueURL(r *http.Request, name string) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + "/" + s.account + "/" + name
}

// queueNameFromURL returns the queue name a QueueUrl points at, or "" when the
// URL is not one of this account's queue URLs. The host is not checked: real
// SQS accepts any of its endpoints.
func (s *Service) queueNameFromURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	account, name, ok := strings.Cut(strings.TrimPrefix(u.Path, "/"), "/")
	if !ok || account != s.account || name == "" || strings.Contains(name, "/") {
		return ""
	}
	return name
}

// queueARN is the ARN of the named queue.
func (s *Service) queueARN(name string) string {
	return "arn:aws:sqs:" + s.region + ":" + s.account + ":" + name
}
