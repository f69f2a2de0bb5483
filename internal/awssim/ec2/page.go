package ec2

import (
	"encoding/base64"
	"strconv"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/protocol"
)

// pageCap is the most a page holds: a larger MaxResults (the model bounds
// it for some operations, and the operation's constraints reject what lies
// outside; for others any value is valid) is served in pages this size.
const pageCap = 1000

// page returns the [start, end) slice of n results for a request's
// MaxResults and NextToken, and the token for the next page (nil on the
// last). def is the page size without MaxResults; 0 serves everything.
func page(n int, maxResults *int32, nextToken *string, def int) (int, int, *string, *protocol.Error) {
	size := def
	if maxResults != nil {
		size = min(int(*maxResults), pageCap)
	}
	start := 0
	if nextToken != nil && *nextToken != "" {
		b, err := base64.RawURLEncoding.DecodeString(*nextToken)
		if err == nil {
			start, err = strconv.Atoi(string(b))
		}
		if err != nil || start < 0 || start > n {
			return 0, 0, nil, errorf("InvalidNextToken", "The token '%s' is invalid.", *nextToken)
		}
	}
	end := start + size
	if size <= 0 || end >= n {
		return start, n, nil, nil
	}
	return start, end, ptr(base64.RawURLEncoding.EncodeToString([]byte(strconv.Itoa(end)))), nil
}
