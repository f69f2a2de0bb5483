// Package loopback holds what SDK clients of a local AWS endpoint need.
package loopback

import (
	"net/http"

	"github.com/joistdev/terraform-provider-joist/internal/sdkhttp"
)

// HTTPClient returns the HTTP client SDK clients of awssim use: the same one
// the runtime uses (see sdkhttp), which needs no retries on loopback.
func HTTPClient() *http.Client { return sdkhttp.Client() }
