package awsquery

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

func TestIndexedParameters(t *testing.T) {
	form, _ := url.ParseQuery("Tags.member.2.Key=b&Tags.member.1.Key=a&Tags.member.1.Value=1&Tags.member.2.Value=2&TagKeys.member.1=x&TagKeys.member.2=y&TagKeys.member.4=skipped")
	tags := Structs(form, "Tags")
	if len(tags) != 2 || tags[0]["Key"] != "a" || tags[0]["Value"] != "1" || tags[1]["Key"] != "b" {
		t.Fatalf("Structs = %v", tags)
	}
	if keys := Strings(form, "TagKeys"); len(keys) != 2 || keys[0] != "x" || keys[1] != "y" {
		t.Fatalf("Strings = %v, want [x y] (stopping at the first gap)", keys)
	}
}

func TestWriteResultEnvelope(t *testing.T) {
	rec := httptest.NewRecorder()
	WriteResult(rec, "https://iam.amazonaws.com/doc/2010-05-08/", "GetRole", "req-1", struct {
		Role struct {
			RoleName string `xml:"RoleName"`
		} `xml:"Role"`
	}{Role: struct {
		RoleName string `xml:"RoleName"`
	}{"r"}})
	body := rec.Body.String()
	want := `<GetRoleResponse xmlns="https://iam.amazonaws.com/doc/2010-05-08/"><GetRoleResult><Role><RoleName>r</RoleName></Role></GetRoleResult><ResponseMetadata><RequestId>req-1</RequestId></ResponseMetadata></GetRoleResponse>`
	if rec.Code != http.StatusOK || !strings.Contains(body, want) {
		t.Fatalf("%d %s\nwant %s", rec.Code, body, want)
	}

	rec = httptest.NewRecorder()
	WriteResult(rec, "ns", "DeleteRole", "req-2", nil)
	if strings.Contains(rec.Body.String(), "DeleteRoleResult") {
		t.Fatalf("nil result wrote a Result element: %s", rec.Body.String())
	}
}

func TestWriteErrorShape(t *testing.T) {
	rec := httptest.NewRecorder()
	WriteError(rec, "ns", "req-3", &Error{Status: http.StatusNotFound, Code: "NoSuchEntity", Message: "The role with name x cannot be found.", Sender: true})
	want := `<ErrorResponse xmlns="ns"><Error><Type>Sender</Type><Code>NoSuchEntity</Code><Message>The role with name x cannot be found.</Message></Error><RequestId>req-3</RequestId></ErrorResponse>`
	if rec.Code != http.StatusNotFound || !strings.Contains(rec.Body.String(), want) {
		t.Fatalf("%d %s\nwant %s", rec.Code, rec.Body.String(), want)
	}
}
