package ec2

import (
	"encoding/base64"
	"strconv"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/protocol"
)

// limits are an operation's MaxResults bounds (max 0: the model sets none)
// and its page size when the caller sets none.
type limits struct{ min, max, def int }

// pageCap is the most a page holds where the model leaves MaxResults
// unbounded: a larger MaxResults is accepted and served in pages this size.
const pageCap = 1000

// page returns the [start, end) slice of n results for a request's
// MaxResults and NextToken, and the token for the next page (nil on the last).
func page(n int, maxResults *int32, nextToken *string, l limits) (int, int, *string, *protocol.Error) {
	size := l.def
	if maxResults != nil {
		size = int(*maxResults)
		if l.max == 0 {
			size = min(size, pageCap)
		} else if size < l.min || size > l.max {
			return 0, 0, nil, errorf("InvalidParameterValue",
				"Value ( %d ) for parameter maxResults is invalid. Expecting a value between %d and %d.", size, l.min, l.max)
		}
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
