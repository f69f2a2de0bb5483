// Package awstest starts the simulated AWS (awssim's EC2, IAM, SSM and
// Pricing) in-process on loopback for the AWS provider's tests, routing each
// SigV4-signed request to the service named in its credential scope, and
// returns an SDK config pointed at it.
package awstest

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	ec2sim "github.com/joistdev/terraform-provider-joist/internal/awssim/ec2"
	iamsim "github.com/joistdev/terraform-provider-joist/internal/awssim/iam"
	pricingsim "github.com/joistdev/terraform-provider-joist/internal/awssim/pricing"
	"github.com/joistdev/terraform-provider-joist/internal/awssim/protocol"
	ssmsim "github.com/joistdev/terraform-provider-joist/internal/awssim/ssm"
)

// Account is the simulated account.
const Account = "123456789012"

// Sim is a running simulated AWS.
type Sim struct {
	EC2     *ec2sim.Service
	IAM     *iamsim.Service
	SSM     *ssmsim.Service
	Pricing *pricingsim.Service
	Options ec2sim.Options
	Config  aws.Config

	server *httptest.Server
}

// Start runs the simulated services; opts shape EC2 (region, cluster name,
// Kubernetes version, capacity).
func Start(opts ec2sim.Options) (*Sim, error) {
	e, err := ec2sim.New(opts)
	if err != nil {
		return nil, err
	}
	pr, err := pricingsim.New()
	if err != nil {
		return nil, err
	}
	s := &Sim{EC2: e, IAM: iamsim.New(Account), SSM: ssmsim.New(e.Region().Name), Pricing: pr, Options: opts}
	if s.Options.KubernetesVersion == "" {
		s.Options.KubernetesVersion = "1.36"
	}
	for _, r := range e.Images() {
		if err := s.publishParameters(r); err != nil {
			return nil, err
		}
	}
	s.server = httptest.NewServer(http.HandlerFunc(s.route))
	s.Config = aws.Config{
		Region:       e.Region().Name,
		Credentials:  credentials.NewStaticCredentialsProvider("AKIDJOISTTEST", "joist-test-secret", ""),
		BaseEndpoint: aws.String(s.server.URL),
		HTTPClient:   s.server.Client(),
	}
	return s, nil
}

// Close stops the server and the services' timers.
func (s *Sim) Close() {
	s.server.Close()
	s.EC2.Close()
}

func (s *Sim) route(w http.ResponseWriter, r *http.Request) {
	cred, ok := protocol.ParseAuthorization(r.Header.Get("Authorization"))
	if !ok {
		http.Error(w, "request is not SigV4-signed", http.StatusForbidden)
		return
	}
	switch cred.Service {
	case "ec2":
		s.EC2.ServeHTTP(w, r)
	case "iam":
		s.IAM.ServeHTTP(w, r)
	case "ssm":
		s.SSM.ServeHTTP(w, r)
	case "pricing":
		s.Pricing.ServeHTTP(w, r)
	default:
		http.Error(w, fmt.Sprintf("service %q is not simulated here", cred.Service), http.StatusNotImplemented)
	}
}

// PublishImage releases a new EKS-optimized image and points its SSM
// parameters (including latest/recommended) at it, as EKS does.
func (s *Sim) PublishImage(family, arch, variant string) (ec2sim.ImageRelease, error) {
	r, err := s.EC2.PublishImage(family, arch, variant)
	if err != nil {
		return r, err
	}
	return r, s.publishParameters(r)
}

func (s *Sim) publishParameters(r ec2sim.ImageRelease) error {
	names, err := ssmsim.AMIParameters(s.Options.KubernetesVersion, r.Family, r.Architecture, r.Variant, r.Name, r.Version)
	if err != nil {
		return err
	}
	for _, n := range names {
		s.SSM.Put(n, r.ImageID)
	}
	return nil
}
