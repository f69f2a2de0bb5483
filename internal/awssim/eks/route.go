package eks

import (
	"net/http"
	"net/url"
	"strings"
)

// op handles one EKS operation.
type op func(s *Service, c *call) (any, *restError)

// endpoint is an operation served at a path: its name and the model members
// its path labels carry, in order.
type endpoint struct {
	name   string
	labels []string
	fn     op
}

// routes maps "METHOD pattern" to operations; "*" in a pattern is a path
// label.
var routes = map[string]endpoint{
	"GET /clusters":      {"ListClusters", nil, (*Service).listClusters},
	"GET /clusters/*":    {"DescribeCluster", []string{"name"}, (*Service).describeCluster},
	"DELETE /clusters/*": {"DeleteCluster", []string{"name"}, (*Service).deleteCluster},

	"POST /clusters/*/access-entries":     {"CreateAccessEntry", []string{"clusterName"}, (*Service).createAccessEntry},
	"GET /clusters/*/access-entries":      {"ListAccessEntries", []string{"clusterName"}, (*Service).listAccessEntries},
	"GET /clusters/*/access-entries/*":    {"DescribeAccessEntry", []string{"clusterName", "principalArn"}, (*Service).describeAccessEntry},
	"POST /clusters/*/access-entries/*":   {"UpdateAccessEntry", []string{"clusterName", "principalArn"}, (*Service).updateAccessEntry},
	"DELETE /clusters/*/access-entries/*": {"DeleteAccessEntry", []string{"clusterName", "principalArn"}, (*Service).deleteAccessEntry},

	"POST /clusters/*/pod-identity-associations":     {"CreatePodIdentityAssociation", []string{"clusterName"}, (*Service).createPodIdentityAssociation},
	"GET /clusters/*/pod-identity-associations":      {"ListPodIdentityAssociations", []string{"clusterName"}, (*Service).listPodIdentityAssociations},
	"GET /clusters/*/pod-identity-associations/*":    {"DescribePodIdentityAssociation", []string{"clusterName", "associationId"}, (*Service).describePodIdentityAssociation},
	"POST /clusters/*/pod-identity-associations/*":   {"UpdatePodIdentityAssociation", []string{"clusterName", "associationId"}, (*Service).updatePodIdentityAssociation},
	"DELETE /clusters/*/pod-identity-associations/*": {"DeletePodIdentityAssociation", []string{"clusterName", "associationId"}, (*Service).deletePodIdentityAssociation},

	"POST /tags/*":   {"TagResource", []string{"resourceArn"}, (*Service).tagResource},
	"DELETE /tags/*": {"UntagResource", []string{"resourceArn"}, (*Service).untagResource},
	"GET /tags/*":    {"ListTagsForResource", []string{"resourceArn"}, (*Service).listTagsForResource},
}

// route finds the endpoint for a request and its path labels. Labels are
// split on the escaped path, so a label may hold an encoded "/" (access
// entry principal ARNs such as arn:aws:iam::111122223333:role/x).
func route(r *http.Request) (endpoint, []string, bool) {
	segments := strings.Split(strings.Trim(r.URL.EscapedPath(), "/"), "/")
	var args []string
	pattern := make([]string, len(segments))
	for i, seg := range segments {
		pattern[i] = seg
		if i%2 == 1 {
			// Odd positions are labels in every EKS path above.
			v, err := url.PathUnescape(seg)
			if err != nil {
				return endpoint{}, nil, false
			}
			pattern[i] = "*"
			args = append(args, v)
		}
	}
	e, ok := routes[r.Method+" /"+strings.Join(pattern, "/")]
	return e, args, ok
}
