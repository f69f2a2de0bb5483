// Package awserr reads AWS API error codes out of SDK errors and tells
// transient failures from definite answers.
package awserr

import (
	"context"
	"errors"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// Code is the API error code of err, empty when err is not an API error.
func Code(err error) string {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		return apiErr.ErrorCode()
	}
	return ""
}

// IsCode reports whether err is an API error with one of the codes.
func IsCode(err error, codes ...string) bool {
	c := Code(err)
	if c == "" {
		return false
	}
	for _, want := range codes {
		if c == want {
			return true
		}
	}
	return false
}

// IsTransient reports whether err says nothing definite about what was
// asked: throttling, a server error (5xx), a connection failure or a
// timeout, even after the SDK's retries. A caller keeps what it last knew
// rather than act on such an error.
func IsTransient(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	if retry.IsErrorRetryables(retry.DefaultRetryables).IsErrorRetryable(err) == aws.TrueTernary {
		return true
	}
	var resp *smithyhttp.ResponseError
	return errors.As(err, &resp) && resp.HTTPStatusCode() >= 500
}

// Operation names the AWS call that failed ("EC2 DescribeSubnets"), empty
// when err did not come from one.
func Operation(err error) string {
	var op *smithy.OperationError
	if errors.As(err, &op) {
		return op.Service() + " " + op.Operation()
	}
	return ""
}
