// Package sts is the simulated AWS STS: GetCallerIdentity, AssumeRole and
// AssumeRoleWithWebIdentity over the awsQuery protocol. Credentials it issues
// are static-looking strings; the simulator does not verify signatures, but
// it remembers which role a session key belongs to so GetCallerIdentity
// answers as the assumed role.
package sts

import (
	"net/http"
	"sync"
	"time"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/awsquery"
	"github.com/joistdev/terraform-provider-joist/internal/awssim/iam"
	"github.com/joistdev/terraform-provider-joist/internal/awssim/seqid"
)

const namespace = "https://sts.amazonaws.com/doc/2011-06-15/"

// Service is STS for one account. It is an http.Handler for requests already
// routed to STS, and safe for concurrent use.
type Service struct {
	account    string
	roles      *iam.Service
	ids        *seqid.Sequence
	dispatcher awsquery.Dispatcher

	mu       sync.Mutex
	sessions map[string]identity // access key ID -> assumed-role identity
}

// identity is who a caller is, as GetCallerIdentity reports it.
type identity struct {
	Arn     string `xml:"Arn"`
	UserID  string `xml:"UserId"`
	Account string `xml:"Account"`
}

// New returns STS for the account. Roles are looked up in roles, so
// assuming a role that does not exist is denied as in AWS; with nil roles
// any well-formed role ARN of the account can be assumed.
func New(account string, roles *iam.Service) *Service {
	s := &Service{
		account:  account,
		roles:    roles,
		ids:      seqid.New("sts-id/" + account),
		sessions: map[string]identity{},
	}
	s.dispatcher = awsquery.Dispatcher{
		Namespace:  namespace,
		RequestIDs: seqid.New("sts-request/" + account),
		Ops: map[string]awsquery.Op{
			"GetCallerIdentity":         s.getCallerIdentity,
			"AssumeRole":                s.assumeRole,
			"AssumeRoleWithWebIdentity": s.assumeRoleWithWebIdentity,
		},
		Rules: constraints,
	}
	return s
}

func (s *Service) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.dispatcher.ServeHTTP(w, r)
}

func (s *Service) now() time.Time { return time.Now().UTC().Truncate(time.Second) }
