// Package ssm is the simulated AWS Systems Manager Parameter Store, enough of
// it for EKS-optimized AMI discovery: GetParameter and GetParameters
// (awsJson1_1, X-Amz-Target AmazonSSM.<Op>) over public /aws/service/...
// parameters that the simulator publishes.
package ssm

import (
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/awsjson"
	"github.com/joistdev/terraform-provider-joist/internal/awssim/seqid"
)

const contentType = "application/x-amz-json-1.1"

// Service holds the parameters of one region. It is an http.Handler for
// requests already routed to SSM, and safe for concurrent use.
type Service struct {
	region     string
	dispatcher awsjson.Dispatcher

	mu     sync.Mutex
	params map[string]*parameter
}

type parameter struct {
	Name             string  `json:"Name"`
	Type             string  `json:"Type"`
	Value            string  `json:"Value"`
	Version          int64   `json:"Version"`
	LastModifiedDate float64 `json:"LastModifiedDate"`
	ARN              string  `json:"ARN"`
	DataType         string  `json:"DataType"`
}

// New returns an empty parameter store for a region.
func New(region string) *Service {
	s := &Service{region: region, params: map[string]*parameter{}}
	s.dispatcher = awsjson.Dispatcher{
		Prefix:      "AmazonSSM",
		ContentType: contentType,
		RequestIDs:  seqid.New("ssm-request/" + region),
		Ops: map[string]awsjson.Op{
			"GetParameter":  s.getParameter,
			"GetParameters": s.getParameters,
		},
	}
	return s
}

func (s *Service) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.dispatcher.ServeHTTP(w, r) }

// Put sets a parameter's value, creating it or adding a version.
func (s *Service) Put(name, value string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.params[name]
	if !ok {
		// Public parameters carry no account in their ARN.
		arn := "arn:aws:ssm:" + s.region + "::parameter/" + strings.TrimPrefix(name, "/")
		p = &parameter{Name: name, Type: "String", DataType: "text", ARN: arn}
		s.params[name] = p
	}
	if p.Value == value && p.Version > 0 {
		return
	}
	p.Value = value
	p.Version++
	p.LastModifiedDate = float64(time.Now().UnixMilli()) / 1000
}

// Get returns a parameter's value.
func (s *Service) Get(name string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.params[name]
	if !ok {
		return "", false
	}
	return p.Value, true
}

// Names lists every parameter name, sorted.
func (s *Service) Names() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.params))
	for n := range s.params {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

type getParameterInput struct {
	Name           string `json:"Name"`
	WithDecryption bool   `json:"WithDecryption"`
}

func (s *Service) getParameter(c *awsjson.Call) (any, *awsjson.Error) {
	var in getParameterInput
	if err := c.Decode(&in); err != nil {
		return nil, err
	}
	if in.Name == "" {
		return nil, validation("1 validation error detected: Value null at 'name' failed to satisfy constraint: Member must not be null")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.params[in.Name]
	if !ok {
		return nil, &awsjson.Error{Status: http.StatusBadRequest, Type: "ParameterNotFound", Message: "Parameter " + in.Name + " not found.", Sender: true}
	}
	return map[string]any{"Parameter": *p}, nil
}

type getParametersInput struct {
	Names          []string `json:"Names"`
	WithDecryption bool     `json:"WithDecryption"`
}

func (s *Service) getParameters(c *awsjson.Call) (any, *awsjson.Error) {
	var in getParametersInput
	if err := c.Decode(&in); err != nil {
		return nil, err
	}
	if len(in.Names) == 0 || len(in.Names) > 10 {
		return nil, validation("1 validation error detected: Value at 'names' failed to satisfy constraint: Member must have length between 1 and 10")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	found, invalid := []parameter{}, []string{}
	for _, n := range in.Names {
		if p, ok := s.params[n]; ok {
			found = append(found, *p)
		} else {
			invalid = append(invalid, n)
		}
	}
	return map[string]any{"Parameters": found, "InvalidParameters": invalid}, nil
}

func validation(msg string) *awsjson.Error {
	return &awsjson.Error{Status: http.StatusBadRequest, Type: "ValidationException", Message: msg, Sender: true}
}
