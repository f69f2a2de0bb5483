package sqs

import (
	"fmt"
	"strings"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/awsjson"
)

// Authorizer answers who signs with an access key and whether IAM lets
// them call action on resource; context holds the request's condition keys.
type Authorizer func(accessKey, action, resource string, context map[string]string) (principal string, allowed bool)

// SetAuthorizer makes SSE-KMS queues hold callers to their IAM policies:
// SendMessage needs kms:GenerateDataKey and a ReceiveMessage that returns
// messages needs kms:Decrypt on the queue's key, as SQS asks KMS on the
// caller's behalf. Without an authorizer every caller may.
func (s *Service) SetAuthorizer(a Authorizer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.authorize = a
}

// managedKey is the AWS managed key for SQS: every principal of the account
// that may use the queue may use it, so it needs no grant.
const managedKey = "alias/aws/sqs"

// keyARN is the ARN IAM checks for the queue's KmsMasterKeyId; empty for a
// queue without one or with the AWS managed key. A key ID becomes the key's
// ARN in the queue's region and account. awssim has no KMS, so an alias
// cannot be resolved to its key: it stays an alias ARN, which only a grant
// on every key ("*") matches.
func (s *Service) keyARN(q *queue) string {
	id := q.attributes["KmsMasterKeyId"]
	switch {
	case id == "" || id == managedKey || strings.HasSuffix(id, ":"+managedKey):
		return ""
	case strings.HasPrefix(id, "arn:"):
		return id
	case strings.HasPrefix(id, "alias/"):
		return fmt.Sprintf("arn:aws:kms:%s:%s:%s", s.region, s.account, id)
	}
	return fmt.Sprintf("arn:aws:kms:%s:%s:key/%s", s.region, s.account, id)
}

// checkKMS fails with SQS's KmsAccessDenied when the caller may not call
// action (kms:Decrypt or kms:GenerateDataKey) on q's key through SQS. The
// caller holds s.mu.
func (s *Service) checkKMS(c *awsjson.Call, q *queue, action string) *awsjson.Error {
	key := s.keyARN(q)
	if key == "" || s.authorize == nil {
		return nil
	}
	principal, ok := s.authorize(callerAccessKey(c), action, key, map[string]string{
		"kms:ViaService":                    "sqs." + s.region + ".amazonaws.com",
		"kms:CallerAccount":                 s.account,
		"kms:EncryptionContext:aws:sqs:arn": q.arn,
		"aws:RequestedRegion":               s.region,
	})
	if ok {
		return nil
	}
	return senderError("KmsAccessDenied", "KMS.AccessDeniedException", fmt.Sprintf(
		"User: %s is not authorized to perform: %s on resource: %s because no identity-based policy allows the %s action "+
			"(Service: AWSKMS; Status Code: 400; Error Code: AccessDeniedException)", principal, action, key, action))
}
