package awssim

import (
	"bytes"
	"context"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"time"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/fault"
	"github.com/joistdev/terraform-provider-joist/internal/awssim/protocol"
)

// adminPrefix is where administration lives; no AWS API uses it.
const adminPrefix = "/_awssim/"

// targetServices map X-Amz-Target prefixes to signing names, for requests
// without a SigV4 Authorization header.
var targetServices = map[string]string{
	"AmazonSSM": "ssm", "AWSPriceListService": "pricing", "AmazonSQS": "sqs", "AWSEvents": "events",
}

// queryVersions map query-protocol API versions to signing names.
var queryVersions = map[string]string{"2016-11-15": "ec2", "2010-05-08": "iam", "2011-06-15": "sts"}

// serviceOf names the service a request is for: the credential scope of its
// signature, else (unsigned calls such as sts:AssumeRoleWithWebIdentity) its
// X-Amz-Target, query API version or REST path.
func serviceOf(r *http.Request, body []byte) (service, accessKey string) {
	if c, ok := protocol.ParseAuthorization(r.Header.Get("Authorization")); ok {
		return c.Service, c.AccessKeyID
	}
	if t := r.Header.Get("X-Amz-Target"); t != "" {
		prefix, _, _ := strings.Cut(t, ".")
		if s, ok := targetServices[prefix]; ok {
			return s, ""
		}
		if strings.HasPrefix(prefix, "AmazonSSM") {
			return "ssm", ""
		}
	}
	if strings.HasPrefix(r.URL.Path, "/clusters") {
		return "eks", ""
	}
	form, _ := url.ParseQuery(string(body))
	if v := form.Get("Version"); v != "" {
		return queryVersions[v], ""
	}
	return queryVersions[r.URL.Query().Get("Version")], ""
}

// statusWriter holds a response until the request is recorded, so a client
// that has its answer finds the call in the log; it remembers the status
// and the body for the error code.
type statusWriter struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.body.Write(b)
}

// send writes the held response.
func (w *statusWriter) send() {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	w.ResponseWriter.WriteHeader(w.status)
	_, _ = w.ResponseWriter.Write(w.body.Bytes())
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, adminPrefix) {
		s.admin.ServeHTTP(w, r)
		return
	}
	start := time.Now()
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, "reading the request body: "+err.Error(), http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	service, accessKey := serviceOf(r, body)
	handler, ok := s.services[service]
	family := protocol.FamilyOf(service)
	operation, params := protocol.Operation(family, r, body)
	rec := Request{Time: start.UTC(), Service: service, Operation: operation, Parameters: params, AccessKeyID: accessKey}
	sw := &statusWriter{ResponseWriter: w}
	defer func() {
		rec.Status, rec.Duration = sw.status, time.Since(start)
		if sw.status >= 400 {
			rec.ErrorCode = protocol.ErrorCode(family, sw.Header(), sw.body.Bytes())
		}
		s.recorder.add(rec)
		sw.send()
	}()
	if !ok {
		if service == "" {
			service = "ec2" // unroutable: answer in the most common shape
		}
		protocol.WriteError(sw, service, protocol.RequestID(), &protocol.Error{Status: http.StatusBadRequest, Code: "UnrecognizedClientException",
			Message: "no simulated service for this request; sign it with SigV4 for one of ec2, sqs, events, iam, sts, ssm, pricing, eks"})
		return
	}
	d := s.faults.Decide(service, operation)
	if d.Delay > 0 {
		if err := sleep(r.Context(), d.Delay); err != nil {
			return
		}
	}
	if f := d.Fail; f != nil {
		rec.Injected = true
		perr := &protocol.Error{Status: family.ThrottleStatus(), Code: family.ThrottleCode(), Message: "Rate exceeded"}
		if family == protocol.EC2Query {
			perr.Message = "Request limit exceeded."
		}
		if f.Kind == fault.Deny {
			code, status := family.AccessDenied()
			perr = &protocol.Error{Status: status, Code: code, Message: "User is not authorized to perform: " + service + ":" + operation}
		} else if f.Kind != fault.Throttle {
			perr = &protocol.Error{Status: f.Status, Code: f.Code, Message: "We encountered an internal error. Please try again."}
			if perr.Status == 0 {
				perr.Status = http.StatusInternalServerError
			}
			if perr.Code == "" {
				perr.Code = family.InternalErrorCode()
			}
		}
		protocol.WriteError(sw, service, protocol.RequestID(), perr)
		return
	}
	if d.ResponseDelay > 0 {
		held := httptest.NewRecorder()
		handler.ServeHTTP(held, r)
		// The work is done; the caller may be gone when the answer comes.
		_ = sleep(r.Context(), d.ResponseDelay)
		maps.Copy(sw.Header(), held.Header())
		sw.WriteHeader(held.Code)
		_, _ = sw.Write(held.Body.Bytes())
		return
	}
	handler.ServeHTTP(sw, r)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
