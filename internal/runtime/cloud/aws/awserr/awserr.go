// Package awserr reads AWS API error codes out of SDK errors and tells
// transient failures from definite answers.
package awserr

import (
	"context"
	"errors"
	"regexp"
	"strings"

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

// CodeOrError is the API error code of err, or err's text when it has none
// (a connection failure). Events name the code: it keeps repeated events
// identical, so they are not emitted again within the dedupe window.
func CodeOrError(err error) string {
	if code := Code(err); code != "" {
		return code
	}
	return err.Error()
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

// IsAccessDenied reports whether err is IAM refusing the call: the
// caller's policy lacks the action, or an edit of it has not propagated yet.
func IsAccessDenied(err error) bool {
	return IsCode(err, "UnauthorizedOperation", "AccessDenied", "AccessDeniedException")
}

// deniedAction finds the action in a denial's message ("... is not
// authorized to perform: ec2:DescribeSubnets on resource ...").
var deniedAction = regexp.MustCompile(`perform: ([A-Za-z0-9-]+:[A-Za-z0-9]+)`)

// DeniedAction is the IAM action a denial refused ("ec2:DescribeSubnets"):
// the one its message names, else the failed call's (service and
// operation), empty when err did not come from an AWS call.
func DeniedAction(err error) string {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		if m := deniedAction.FindStringSubmatch(apiErr.ErrorMessage()); m != nil {
			return m[1]
		}
	}
	var op *smithy.OperationError
	if errors.As(err, &op) {
		return strings.ToLower(strings.ReplaceAll(op.Service(), " ", "")) + ":" + op.Operation()
	}
	return ""
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
