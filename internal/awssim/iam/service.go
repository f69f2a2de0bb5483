// Package iam is the simulated AWS IAM: the awsQuery protocol with IAM's XML
// shapes for roles, inline and managed policies (with versions), policy
// attachments, instance profiles, tags, paths and permissions boundaries.
// Policy documents are stored as given and returned URL-encoded, as IAM does.
// AWS managed policies the Karpenter node role uses exist from the start.
package iam

import (
	"net/http"
	"sync"
	"time"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/awsquery"
	"github.com/joistdev/terraform-provider-joist/internal/awssim/seqid"
)

const namespace = "https://iam.amazonaws.com/doc/2010-05-08/"

// Service holds one account's IAM entities. IAM is global: ARNs carry no
// region. It is an http.Handler for requests already routed to IAM, and safe
// for concurrent use.
type Service struct {
	account    string
	ids        *seqid.Sequence
	dispatcher awsquery.Dispatcher

	mu               sync.Mutex
	roles            map[string]*role            // by name
	policies         map[string]*managedPolicy   // by ARN
	instanceProfiles map[string]*instanceProfile // by name
}

// New returns the IAM of an account holding only the AWS managed policies.
func New(account string) *Service {
	s := &Service{
		account:          account,
		ids:              seqid.New("iam-id/" + account),
		roles:            map[string]*role{},
		policies:         map[string]*managedPolicy{},
		instanceProfiles: map[string]*instanceProfile{},
	}
	s.seedManagedPolicies()
	ops := map[string]awsquery.Op{
		"CreateRole":                    s.createRole,
		"CreateServiceLinkedRole":       s.createServiceLinkedRole,
		"GetRole":                       s.getRole,
		"UpdateRole":                    s.updateRole,
		"DeleteRole":                    s.deleteRole,
		"ListRoles":                     s.listRoles,
		"UpdateAssumeRolePolicy":        s.updateAssumeRolePolicy,
		"PutRolePermissionsBoundary":    s.putRolePermissionsBoundary,
		"DeleteRolePermissionsBoundary": s.deleteRolePermissionsBoundary,
		"TagRole":                       s.tagRole,
		"UntagRole":                     s.untagRole,
		"ListRoleTags":                  s.listRoleTags,
		"PutRolePolicy":                 s.putRolePolicy,
		"GetRolePolicy":                 s.getRolePolicy,
		"DeleteRolePolicy":              s.deleteRolePolicy,
		"ListRolePolicies":              s.listRolePolicies,
		"CreatePolicy":                  s.createPolicy,
		"GetPolicy":                     s.getPolicy,
		"DeletePolicy":                  s.deletePolicy,
		"ListPolicies":                  s.listPolicies,
		"CreatePolicyVersion":           s.createPolicyVersion,
		"GetPolicyVersion":              s.getPolicyVersion,
		"ListPolicyVersions":            s.listPolicyVersions,
		"DeletePolicyVersion":           s.deletePolicyVersion,
		"SetDefaultPolicyVersion":       s.setDefaultPolicyVersion,
		"AttachRolePolicy":              s.attachRolePolicy,
		"DetachRolePolicy":              s.detachRolePolicy,
		"ListAttachedRolePolicies":      s.listAttachedRolePolicies,
		"CreateInstanceProfile":         s.createInstanceProfile,
		"GetInstanceProfile":            s.getInstanceProfile,
		"DeleteInstanceProfile":         s.deleteInstanceProfile,
		"AddRoleToInstanceProfile":      s.addRoleToInstanceProfile,
		"RemoveRoleFromInstanceProfile": s.removeRoleFromInstanceProfile,
		"ListInstanceProfiles":          s.listInstanceProfiles,
		"ListInstanceProfilesForRole":   s.listInstanceProfilesForRole,
		"TagInstanceProfile":            s.tagInstanceProfile,
		"UntagInstanceProfile":          s.untagInstanceProfile,
		"ListInstanceProfileTags":       s.listInstanceProfileTags,
	}
	// Every operation runs under the one lock: IAM calls are small and
	// cross entities (roles, policies, profiles) freely.
	for name, op := range ops {
		ops[name] = func(c *awsquery.Call) (any, *awsquery.Error) {
			s.mu.Lock()
			defer s.mu.Unlock()
			return op(c)
		}
	}
	s.dispatcher = awsquery.Dispatcher{
		Namespace:  namespace,
		RequestIDs: seqid.New("iam-request/" + account),
		Ops:        ops,
		Rules:      constraints,
	}
	return s
}

func (s *Service) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.dispatcher.ServeHTTP(w, r)
}

// now is the creation clock, truncated to seconds as IAM reports dates.
func (s *Service) now() time.Time { return time.Now().UTC().Truncate(time.Second) }
