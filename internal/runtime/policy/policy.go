// Package policy is the controller's least-privilege IAM policy as code:
// one table (table.go) lists every action with the runtime calls that need
// it and the tag, region and resource scoping of each statement; Render
// turns it into IAM policy JSON for a cluster, Split cuts it to IAM's size
// limits, and Evaluate answers whether a request would be allowed, so tests
// can hold the runtime's real calls against the policy.
package policy

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Params are what the policy is scoped to.
type Params struct {
	Partition   string // default aws
	Region      string
	AccountID   string
	ClusterName string
	// NodeRoleARN is the role nodes run with (iam:PassRole is limited to it).
	NodeRoleARN string
	// QueueName is the interruption queue; empty leaves the SQS statement out.
	QueueName string
	// QueueKMSKeyARN is the KMS key the queue is encrypted with (SSE-KMS),
	// as a key ARN; empty for SQS-managed encryption. SQS decrypts each
	// message for its reader with the reader's own permission on the key.
	QueueKMSKeyARN string
	// SSMParameterARNs are parameters the controller may read besides
	// /aws/service/* (AMI aliases), for ssmParameter AMI selector terms.
	SSMParameterARNs []string
}

func (p Params) withDefaults() Params {
	if p.Partition == "" {
		p.Partition = "aws"
	}
	return p
}

// Validate names the missing inputs.
func (p Params) Validate() error {
	var errs []error
	for _, f := range []struct{ name, v string }{
		{"region", p.Region}, {"account_id", p.AccountID}, {"cluster_name", p.ClusterName}, {"node_role_arn", p.NodeRoleARN},
	} {
		if f.v == "" {
			errs = append(errs, fmt.Errorf("policy: %s is required", f.name))
		}
	}
	if p.QueueKMSKeyARN != "" {
		if p.QueueName == "" {
			errs = append(errs, fmt.Errorf("policy: interruption_queue_kms_key_arn is set without interruption_queue_name: the key is the queue's"))
		}
		if err := CheckKeyARN(p.QueueKMSKeyARN); err != nil {
			errs = append(errs, fmt.Errorf("policy: interruption_queue_kms_key_arn: %w", err))
		}
	}
	return errors.Join(errs...)
}

// keyARN is a KMS key's ARN, single- or multi-Region (mrk-).
var keyARN = regexp.MustCompile(`^arn:aws[a-z-]*:kms:[a-z0-9-]+:[0-9]{12}:key/(mrk-)?[0-9a-fA-F-]+$`)

// CheckKeyARN accepts a KMS key ARN only. IAM authorizes kms:Decrypt on
// the key's ARN, so a grant on a key ID or an alias would never match and
// the controller could not read the queue.
func CheckKeyARN(s string) error {
	switch {
	case keyARN.MatchString(s):
		return nil
	case strings.HasPrefix(s, "alias/") || strings.Contains(s, ":alias/"):
		return fmt.Errorf("%q is an alias: give the key's ARN (arn:aws:kms:<region>:<account>:key/<id>), "+
			"e.g. aws_kms_key.<name>.arn or data.aws_kms_alias.<name>.target_key_arn", s)
	default:
		return fmt.Errorf("%q is not a KMS key ARN: give arn:aws:kms:<region>:<account>:key/<id> "+
			"(a key ID alone does not name the region and account), e.g. aws_kms_key.<name>.arn", s)
	}
}

func (p Params) clusterTag() string { return "kubernetes.io/cluster/" + p.ClusterName }

func (p Params) ec2ARNs(account string, kinds []string) []string {
	out := make([]string, len(kinds))
	for i, k := range kinds {
		out[i] = fmt.Sprintf("arn:%s:ec2:%s:%s:%s/*", p.Partition, p.Region, account, k)
	}
	return out
}

func (p Params) instanceProfileARN() string {
	return fmt.Sprintf("arn:%s:iam::%s:instance-profile/*", p.Partition, p.AccountID)
}

func (p Params) clusterARN() string {
	return fmt.Sprintf("arn:%s:eks:%s:%s:cluster/%s", p.Partition, p.Region, p.AccountID, p.ClusterName)
}

func (p Params) queueARN() string {
	return fmt.Sprintf("arn:%s:sqs:%s:%s:%s", p.Partition, p.Region, p.AccountID, p.QueueName)
}

// requestTagsOwned requires the tags every resource the runtime creates
// carries, plus the presence of existsKey (the NodePool or EC2NodeClass).
func (p Params) requestTagsOwned(existsKey string) Condition {
	return Condition{
		"StringEquals": {
			"aws:RequestTag/" + p.clusterTag():    {"owned"},
			"aws:RequestTag/eks:eks-cluster-name": {p.ClusterName},
		},
		"StringLike": {"aws:RequestTag/" + existsKey: {"*"}},
	}
}

// profileResourceTags scope instance-profile changes to the profiles the
// runtime created for this cluster in this region.
func (p Params) profileResourceTags() Condition {
	return Condition{
		"StringEquals": {
			"aws:ResourceTag/" + p.clusterTag():             {"owned"},
			"aws:ResourceTag/topology.kubernetes.io/region": {p.Region},
		},
		"StringLike": {"aws:ResourceTag/karpenter.k8s.aws/ec2nodeclass": {"*"}},
	}
}

// Condition is an IAM condition block: operator -> key -> values.
type Condition map[string]map[string][]string

func merge(a, b Condition) Condition {
	out := Condition{}
	for _, c := range []Condition{a, b} {
		for op, kv := range c {
			if out[op] == nil {
				out[op] = map[string][]string{}
			}
			for k, v := range kv {
				out[op][k] = v
			}
		}
	}
	return out
}

// Statement is one rendered statement.
type Statement struct {
	Sid       string    `json:"Sid"`
	Effect    string    `json:"Effect"`
	Action    []string  `json:"Action"`
	Resource  []string  `json:"Resource"`
	Condition Condition `json:"Condition,omitempty"`

	group Group
}

// Document is an IAM policy document.
type Document struct {
	Version   string      `json:"Version"`
	Statement []Statement `json:"Statement"`
}

// Render builds the policy for p.
func Render(p Params) (Document, error) {
	p = p.withDefaults()
	if err := p.Validate(); err != nil {
		return Document{}, err
	}
	doc := Document{Version: "2012-10-17"}
	for _, r := range Rules {
		if r.Optional != nil && !r.Optional(p) {
			continue
		}
		s := Statement{Sid: r.Sid, Effect: "Allow", Resource: r.Resources(p), Condition: r.Condition(p), group: r.Group}
		for _, a := range r.Actions {
			s.Action = append(s.Action, a.Name)
		}
		sort.Strings(s.Action)
		doc.Statement = append(doc.Statement, s)
	}
	return doc, nil
}

// JSON is the document as compact JSON (map keys sorted, so the text is
// stable across runs and Terraform sees no spurious diff).
func (d Document) JSON() string {
	b, err := json.Marshal(d)
	if err != nil {
		panic(err) // only strings, slices and maps
	}
	return string(b)
}

// Indented is the document as indented JSON, for people.
func (d Document) Indented() string {
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		panic(err)
	}
	return string(b)
}

// Size is the length IAM counts against its quotas: the JSON without
// whitespace outside strings.
func (d Document) Size() int { return len(d.JSON()) }

// Actions lists the document's actions, sorted and unique.
func (d Document) Actions() []string {
	seen := map[string]bool{}
	for _, s := range d.Statement {
		for _, a := range s.Action {
			seen[a] = true
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// Calls lists the runtime calls ("service:Operation") the table says need
// some action, sorted and unique.
func Calls() []string {
	seen := map[string]bool{}
	for _, r := range Rules {
		for _, a := range r.Actions {
			for _, c := range a.NeededBy {
				seen[c] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// ActionsFor returns the actions the table grants for a runtime call.
func ActionsFor(call string) []string {
	var out []string
	for _, r := range Rules {
		for _, a := range r.Actions {
			for _, c := range a.NeededBy {
				if strings.EqualFold(c, call) {
					out = append(out, a.Name)
				}
			}
		}
	}
	return out
}
