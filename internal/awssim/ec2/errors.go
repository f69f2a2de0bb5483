package ec2

import (
	"net/http"
	"strings"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/protocol"
)

var errorf = protocol.Errorf

func errDryRun() *protocol.Error {
	return &protocol.Error{Status: http.StatusPreconditionFailed, Code: "DryRunOperation",
		Message: "Request would have succeeded, but DryRun flag is set."}
}

// errInstanceNotFound names every absent ID of a request, as EC2 does: one
// absent ID fails the whole call.
func errInstanceNotFound(ids ...string) *protocol.Error {
	if len(ids) == 1 {
		return errorf("InvalidInstanceID.NotFound", "The instance ID '%s' does not exist", ids[0])
	}
	return errorf("InvalidInstanceID.NotFound", "The instance IDs '%s' do not exist", strings.Join(ids, ", "))
}

func errInvalidFilter(name string) *protocol.Error {
	return errorf("InvalidParameterValue", "The filter '%s' is invalid", name)
}
