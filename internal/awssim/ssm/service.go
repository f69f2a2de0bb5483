// Package ssm is the simulated AWS Systems Manager Parameter Store, enough of
// it for EKS-optimized AMI discovery: GetParameter, GetParameters and
// GetParametersByPath (awsJson1_1, X-Amz-Target AmazonSSM.<Op>) over public
// /aws/service/... parameters that the simulator publishes.
package ssm

import (
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
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

			"GetParametersByPath": s.getParametersByPath,
		},
		Rules: constraints,
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

type parameterFilter struct {
	Key    string   `json:"Key"`
	Option string   `json:"Option"`
	Values []string `json:"Values"`
}

type getParametersByPathInput struct {
	Path             string            `json:"Path"`
	Recursive        bool              `json:"Recursive"`
	ParameterFilters []parameterFilter `json:"ParameterFilters"`
	WithDecryption   bool              `json:"WithDecryption"`
	MaxResults       int               `json:"MaxResults"`
	NextToken        string            `json:"NextToken"`
}

// getParametersByPath lists the parameters directly under a path, or with
// Recursive everything below it, in name order, ten to a page by default.
func (s *Service) getParametersByPath(c *awsjson.Call) (any, *awsjson.Error) {
	var in getParametersByPathInput
	if err := c.Decode(&in); err != nil {
		return nil, err
	}
	if !strings.HasPrefix(in.Path, "/") {
		return nil, validation("The parameter doesn't meet the parameter name requirements. The parameter name must begin with a forward slash \"/\".")
	}
	for _, f := range in.ParameterFilters {
		if err := checkFilter(f); err != nil {
			return nil, err
		}
	}
	prefix := strings.TrimSuffix(in.Path, "/") + "/"
	size := in.MaxResults
	if size == 0 {
		size = 10
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var names []string
	for name, p := range s.params {
		rest, under := strings.CutPrefix(name, prefix)
		if !under || rest == "" || (!in.Recursive && strings.Contains(rest, "/")) || !matchesFilters(p, in.ParameterFilters) {
			continue
		}
		names = append(names, name)
	}
	sort.Strings(names)
	start := 0
	if in.NextToken != "" {
		n, err := strconv.Atoi(in.NextToken)
		if err != nil || n < 0 || n > len(names) {
			return nil, &awsjson.Error{Status: http.StatusBadRequest, Type: "InvalidNextToken", Message: "The specified token is not valid.", Sender: true}
		}
		start = n
	}
	end := min(start+size, len(names))
	found := make([]parameter, 0, end-start)
	for _, n := range names[start:end] {
		found = append(found, *s.params[n])
	}
	out := map[string]any{"Parameters": found}
	if end < len(names) {
		out["NextToken"] = strconv.Itoa(end)
	}
	return out, nil
}

// checkFilter accepts the filter keys GetParametersByPath supports.
func checkFilter(f parameterFilter) *awsjson.Error {
	switch f.Key {
	case "Type", "KeyId", "Label":
	default:
		return &awsjson.Error{Status: http.StatusBadRequest, Type: "InvalidFilterKey", Sender: true,
			Message: fmt.Sprintf("The following filter key is not valid for GetParametersByPath: %s. Valid keys are Type, KeyId and Label.", f.Key)}
	}
	if f.Option != "" && f.Option != "Equals" {
		return &awsjson.Error{Status: http.StatusBadRequest, Type: "InvalidFilterOption", Sender: true,
			Message: fmt.Sprintf("The filter option %q is not valid for key %s. Valid options are Equals.", f.Option, f.Key)}
	}
	if len(f.Values) == 0 {
		return &awsjson.Error{Status: http.StatusBadRequest, Type: "InvalidFilterValue", Sender: true,
			Message: fmt.Sprintf("The filter for key %s has no values.", f.Key)}
	}
	return nil
}

// matchesFilters applies Equals filters; the simulated parameters are plain
// Strings without a KMS key or labels.
func matchesFilters(p *parameter, filters []parameterFilter) bool {
	for _, f := range filters {
		have := ""
		if f.Key == "Type" {
			have = p.Type
		}
		if !slices.Contains(f.Values, have) {
			return false
		}
	}
	return true
}

func validation(msg string) *awsjson.Error {
	return &awsjson.Error{Status: http.StatusBadRequest, Type: "ValidationException", Message: msg, Sender: true}
}
