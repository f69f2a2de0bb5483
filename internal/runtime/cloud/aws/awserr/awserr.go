// Package awserr reads AWS API error codes out of SDK errors.
package awserr

import (
	"errors"

	"github.com/aws/smithy-go"
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
