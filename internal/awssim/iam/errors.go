package iam

import (
	"fmt"
	"net/http"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/awsquery"
)

func iamError(status int, code, format string, args ...any) *awsquery.Error {
	return &awsquery.Error{Status: status, Code: code, Message: fmt.Sprintf(format, args...), Sender: true}
}

func errNoSuchEntity(format string, args ...any) *awsquery.Error {
	return iamError(http.StatusNotFound, "NoSuchEntity", format, args...)
}

func errAlreadyExists(format string, args ...any) *awsquery.Error {
	return iamError(http.StatusConflict, "EntityAlreadyExists", format, args...)
}

func errDeleteConflict(format string, args ...any) *awsquery.Error {
	return iamError(http.StatusConflict, "DeleteConflict", format, args...)
}

func errLimitExceeded(format string, args ...any) *awsquery.Error {
	return iamError(http.StatusConflict, "LimitExceeded", format, args...)
}

func errValidation(format string, args ...any) *awsquery.Error {
	return iamError(http.StatusBadRequest, "ValidationError", format, args...)
}

func errInvalidInput(format string, args ...any) *awsquery.Error {
	return iamError(http.StatusBadRequest, "InvalidInput", format, args...)
}

func errMalformedPolicy() *awsquery.Error {
	return iamError(http.StatusBadRequest, "MalformedPolicyDocument", "Syntax errors in policy.")
}

func errNoSuchRole(name string) *awsquery.Error {
	return errNoSuchEntity("The role with name %s cannot be found.", name)
}

func errNoSuchPolicy(arn string) *awsquery.Error {
	return errNoSuchEntity("Policy %s does not exist or is not attachable.", arn)
}

func errNoSuchInstanceProfile(name string) *awsquery.Error {
	return errNoSuchEntity("Instance Profile %s cannot be found.", name)
}
