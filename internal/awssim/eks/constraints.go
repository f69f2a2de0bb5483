package eks

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"

	c "github.com/joistdev/terraform-provider-joist/internal/awssim/constraint"
)

// constraints are EKS's model constraints on the operations' top-level
// input members: path labels, query parameters and body members alike.
var constraints = func() c.Operations {
	// required is a string member the request must carry, as a path label
	// or in the body.
	required := func(m string) c.Rule { return c.Rule{Member: m, Type: "string"}.Req() }
	cluster := required("clusterName")
	maxResults := c.Integer("maxResults", 1, 100)
	tags := c.Map("tags", 1, 50)
	return c.Operations{
		"ListClusters":                   {maxResults},
		"DescribeCluster":                {required("name")},
		"DeleteCluster":                  {required("name")},
		"CreateAccessEntry":              {cluster, required("principalArn"), tags},
		"ListAccessEntries":              {cluster, maxResults},
		"DescribeAccessEntry":            {cluster, required("principalArn")},
		"UpdateAccessEntry":              {cluster, required("principalArn")},
		"DeleteAccessEntry":              {cluster, required("principalArn")},
		"CreatePodIdentityAssociation":   {cluster, required("namespace"), required("serviceAccount"), required("roleArn"), tags},
		"ListPodIdentityAssociations":    {cluster, maxResults},
		"DescribePodIdentityAssociation": {cluster, required("associationId")},
		"UpdatePodIdentityAssociation":   {cluster, required("associationId")},
		"DeletePodIdentityAssociation":   {cluster, required("associationId")},
		"TagResource":                    {required("resourceArn"), tags.Req()},
		"UntagResource":                  {required("resourceArn"), c.List("tagKeys", 1, 50).Req()},
		"ListTagsForResource":            {required("resourceArn")},
	}
}()

// Operations lists the operations served, each with its constraints.
func (s *Service) Operations() c.Operations {
	ops := map[string]bool{}
	for _, e := range routes {
		ops[e.name] = true
	}
	return c.Served(ops, constraints)
}

// input is a request's members: path labels, query parameters (under their
// names, which are the members' in EKS) and the JSON body's members.
type input struct {
	labels map[string]string
	query  url.Values
	body   c.JSON
}

func (in input) Lookup(member, typ string) (c.Value, bool) {
	if v, ok := in.labels[member]; ok {
		return c.Value{Text: v}, true
	}
	if v, ok := in.query[member]; ok {
		return c.Value{Text: v[0], Count: len(v)}, true
	}
	return in.body.Lookup(member, typ)
}

// check applies an endpoint's constraints to a request and leaves the body
// for the operation; a body that is not a JSON object is the operation's to
// reject.
func check(e endpoint, args []string, r *http.Request) *restError {
	in := input{labels: map[string]string{}, query: r.URL.Query(), body: c.JSON{}}
	for i, name := range e.labels {
		in.labels[name] = args[i]
	}
	if raw, err := io.ReadAll(r.Body); err == nil {
		r.Body = io.NopCloser(bytes.NewReader(raw))
		if len(bytes.TrimSpace(raw)) > 0 && json.Unmarshal(raw, &in.body) != nil {
			return nil
		}
	}
	if v := c.Check(constraints[e.name], in); v != nil {
		return errInvalidParameter(v.Standard(), nil)
	}
	return nil
}
