// Package sdkhttp holds the HTTP client every aws-sdk-go-v2 client in Joist
// uses, runtime and tests alike.
package sdkhttp

import (
	"io"
	"net/http"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
)

// Client returns the SDK's default HTTP client with one change.
//
// The SDK closes a request's body as soon as the response headers arrive and
// then answers reads of it with io.EOF — also through WriteTo, where
// net/http's final "is there more?" probe of the body treats io.EOF as a
// write failure and closes the connection under the response being read.
// Against a distant endpoint the probe nearly always wins that race; against
// a near one it often loses, and the SDK retries after a backoff. Hiding
// WriteTo makes the probe a plain Read, for which io.EOF is the normal end.
func Client() *http.Client {
	return &http.Client{Transport: readOnlyBodies{awshttp.NewBuildableClient().GetTransport()}}
}

type readOnlyBodies struct{ base http.RoundTripper }

func (t readOnlyBodies) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil && r.Body != http.NoBody {
		r.Body = readOnlyBody{r.Body}
	}
	return t.base.RoundTrip(r)
}

// readOnlyBody exposes only Read and Close of a request body.
type readOnlyBody struct{ rc io.ReadCloser }

func (b readOnlyBody) Read(p []byte) (int, error) { return b.rc.Read(p) }
func (b readOnlyBody) Close() error               { return b.rc.Close() }
