package ec2

import (
	"net/http"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/protocol"
)

var errorf = protocol.Errorf

func errDryRun() *protocol.Error {
	return &protocol.Error{Status: http.StatusPreconditionFailed, Code: "DryRunOperation",
		Message: "Request would have succeeded, but DryRun flag is set."}
}

func errInstanceNotFound(id string) *protocol.Error {
	return errorf("InvalidInstanceID.NotFound", "The instance ID '%s' does not exist", id)
}

func errInvalidFilter(name string) *protocol.Error {
	return errorf("InvalidParameterValue", "The filter '%s' is invalid", name)
}
