// Package eks is the simulated Amazon EKS control plane API (restJson1):
// DescribeCluster for clusters registered through the Go API (the sandbox's
// kube-apiserver endpoint and CA), access entries, EKS Pod Identity
// associations and tags.
package eks

import (
	"net/http"
	"sync"
	"time"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/iam"
	"github.com/joistdev/terraform-provider-joist/internal/awssim/seqid"
)

// Service holds the EKS clusters of one account in one region. It is an
// http.Handler for requests already routed to EKS, and safe for concurrent
// use.
type Service struct {
	account    string
	region     string
	principals *iam.Service
	ids        *seqid.Sequence
	requestIDs *seqid.Sequence

	mu       sync.Mutex
	clusters map[string]*cluster // by name
}

// New returns EKS with no clusters. Access entries and pod identity
// associations must name roles that exist in principals, as in EKS; with nil
// principals any IAM ARN of the account is accepted.
func New(account, region string, principals *iam.Service) *Service {
	return &Service{
		account:    account,
		region:     region,
		principals: principals,
		ids:        seqid.New("eks-id/" + account + "/" + region),
		requestIDs: seqid.New("eks-request/" + account + "/" + region),
		clusters:   map[string]*cluster{},
	}
}

func (s *Service) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	requestID := s.requestIDs.UUID()
	e, args, ok := route(r)
	if !ok {
		writeError(w, requestID, &restError{Status: http.StatusNotFound, Type: "UnknownOperationException",
			Message: "no EKS operation matches " + r.Method + " " + r.URL.Path})
		return
	}
	if err := check(e, args, r); err != nil {
		writeError(w, requestID, err)
		return
	}
	result, err := e.fn(s, &call{Request: r, Args: args})
	if err != nil {
		writeError(w, requestID, err)
		return
	}
	writeResult(w, requestID, result)
}

func (s *Service) now() time.Time { return time.Now().UTC() }

func (s *Service) arn(resource string) string {
	return "arn:aws:eks:" + s.region + ":" + s.account + ":" + resource
}
