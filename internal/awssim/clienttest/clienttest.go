// Package clienttest points real aws-sdk-go-v2 clients at one simulated
// service handler over HTTP, so each service package can be tested on its
// own, through the same wire protocol the runtime uses.
package clienttest

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/smithy-go"
)

// Region is the region the returned configs sign for.
const Region = "us-west-2"

// Config serves h on a loopback httptest.Server for the life of the test and
// returns an SDK config whose BaseEndpoint is that server, with static
// credentials and no retries (so error assertions see the first response).
func Config(t testing.TB, h http.Handler) aws.Config {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return aws.Config{
		Region:           Region,
		Credentials:      credentials.NewStaticCredentialsProvider("AKIDJOISTTEST", "joist-test-secret", ""),
		BaseEndpoint:     aws.String(srv.URL),
		RetryMaxAttempts: 1,
		HTTPClient:       srv.Client(),
	}
}

// ErrorCode returns the API error code the SDK reports for err, failing the
// test when err is not an API error.
func ErrorCode(t testing.TB, err error) string {
	t.Helper()
	var apiErr smithy.APIError
	if !errors.As(err, &apiErr) {
		t.Fatalf("want an API error, got %v", err)
	}
	return apiErr.ErrorCode()
}
