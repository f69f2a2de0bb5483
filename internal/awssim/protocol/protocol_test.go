package protocol

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

func TestParseAuthorization(t *testing.T) {
	c, ok := ParseAuthorization("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20261122/us-west-2/ec2/aws4_request, SignedHeaders=host;x-amz-date, Signature=abc")
	if !ok || c != (Credential{AccessKeyID: "AKIDEXAMPLE", Date: "20261122", Region: "us-west-2", Service: "ec2"}) {
		t.Errorf("got %+v %v", c, ok)
	}
	if _, ok := ParseAuthorization("Bearer token"); ok {
		t.Error("a bearer token parsed as SigV4")
	}
}

func TestErrorShapesRoundTripTheirCodes(t *testing.T) {
	for _, service := range []string{"ec2", "iam", "ssm", "sqs", "eks"} {
		w := httptest.NewRecorder()
		WriteError(w, service, "rid", &Error{Status: 400, Code: "SomeCode", Message: "m"})
		if got := ErrorCode(FamilyOf(service), w.Header(), w.Body.Bytes()); got != "SomeCode" || w.Code != 400 {
			t.Errorf("%s: status %d code %q from %s", service, w.Code, got, w.Body.String())
		}
	}
	w := httptest.NewRecorder()
	WriteError(w, "ec2", "rid", &Error{Status: 503, Code: "RequestLimitExceeded", Message: "a < b"})
	if !strings.Contains(w.Body.String(), "<Response><Errors><Error><Code>RequestLimitExceeded</Code><Message>a &lt; b</Message></Error></Errors><RequestID>rid</RequestID></Response>") {
		t.Errorf("EC2 error body %s", w.Body.String())
	}
}

func TestOperationNames(t *testing.T) {
	r := httptest.NewRequest(http.MethodPost, "/", nil)
	if op, params := Operation(EC2Query, r, []byte("Action=DescribeInstances&Version=2016-11-15&MaxResults=5")); op != "DescribeInstances" || params["MaxResults"] != "5" || params["Action"] != nil {
		t.Errorf("query: %s %v", op, params)
	}
	r.Header.Set("X-Amz-Target", "AmazonSSM.GetParameter")
	if op, params := Operation(JSON, r, []byte(`{"Name":"/x"}`)); op != "GetParameter" || params["Name"] != "/x" {
		t.Errorf("json: %s %v", op, params)
	}
	if op, _ := Operation(RESTJSON, httptest.NewRequest(http.MethodGet, "/clusters/demo", nil), nil); op != "DescribeCluster" {
		t.Errorf("rest: %s", op)
	}
	// A role with a path: its ARN's slashes are escaped in the request path.
	entry := "/clusters/demo/access-entries/" + url.PathEscape("arn:aws:iam::123456789012:role/nodes/NodeRole")
	if op, params := Operation(RESTJSON, httptest.NewRequest(http.MethodDelete, entry, nil), nil); op != "DeleteAccessEntry" || !strings.Contains(params["path"].(string), "role/nodes/NodeRole") {
		t.Errorf("rest, principal with slashes: %s %v", op, params)
	}
}
