package awserr

import (
	"fmt"
	"testing"

	"github.com/aws/smithy-go"
)

// TestDeniedAction: the permission a denial names in its message, else
// the failed call's; throttling is no denial.
func TestDeniedAction(t *testing.T) {
	call := func(service, op, code, msg string) error {
		return fmt.Errorf("listing: %w", &smithy.OperationError{ServiceID: service, OperationName: op,
			Err: &smithy.GenericAPIError{Code: code, Message: msg}})
	}
	for _, c := range []struct {
		err    error
		denied bool
		action string
	}{
		{call("EC2", "DescribeSubnets", "UnauthorizedOperation", "You are not authorized to perform this operation. User: arn:aws:sts::111122223333:assumed-role/joist/i is not authorized to perform: ec2:DescribeSubnets because no identity-based policy allows the ec2:DescribeSubnets action"), true, "ec2:DescribeSubnets"},
		{call("IAM", "GetInstanceProfile", "AccessDenied", "User: arn:aws:sts::111122223333:assumed-role/joist/i is not authorized to perform: iam:GetInstanceProfile on resource: instance profile x"), true, "iam:GetInstanceProfile"},
		{call("EC2", "RunInstances", "UnauthorizedOperation", "You are not authorized to perform this operation. Encoded authorization failure message: AbCd"), true, "ec2:RunInstances"},
		{call("SSM", "GetParameters", "AccessDeniedException", ""), true, "ssm:GetParameters"},
		{call("EC2", "DescribeSubnets", "RequestLimitExceeded", "Request limit exceeded."), false, "ec2:DescribeSubnets"},
	} {
		if got := IsAccessDenied(c.err); got != c.denied {
			t.Errorf("%v: IsAccessDenied %v, want %v", c.err, got, c.denied)
		}
		if got := DeniedAction(c.err); got != c.action {
			t.Errorf("%v: DeniedAction %q, want %q", c.err, got, c.action)
		}
	}
}
