// Package loopback holds what SDK clients of a local AWS endpoint need that
// clients of AWS do not.
package loopback

import (
	"io"
	"net/http"
)

// HTTPClient returns an HTTP client for SDK clients of a local endpoint.
//
// The SDK closes a request's body as soon as the response headers arrive and
// then answers reads of it with io.EOF — also through WriteTo, where
// net/http's final "is there more?" probe of the body treats io.EOF as a
// write failure and closes the connection under the response being read.
// Against a distant endpoint the probe always wins that race; on loopback it
// often loses, and the SDK retries after a backoff. Hiding WriteTo makes the
// probe a plain Read, for which io.EOF is the normal end.
func HTTPClient() *http.Client {
	return &http.Client{Transport: bodyReaderTransport{http.DefaultTransport.(*http.Transport).Clone()}}
}

type bodyReaderTransport struct{ base http.RoundTripper }

func (t bodyReaderTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil && r.Body != http.NoBody {
		r.Body = readOnlyBody{r.Body}
	}
	return t.base.RoundTrip(r)
}

// readOnlyBody exposes only Read and Close of a request body.
type readOnlyBody struct{ rc io.ReadCloser }

func (b readOnlyBody) Read(p []byte) (int, error) { return b.rc.Read(p) }
func (b readOnlyBody) Close() error               { return b.rc.Close() }
