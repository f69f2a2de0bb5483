package eks

import (
	"net/http"
	"net/url"
	"strings"
)

// op handles one EKS operation.
type op func(s *Service, c *call) (any, *restError)

// routes maps "METHOD pattern" to operations; "*" in a pattern is a path
// label.
var routes = map[string]op{
	"GET /clusters":      (*Service).listClusters,
	"GET /clusters/*":    (*Service).describeCluster,
	"DELETE /clusters/*": (*Service).deleteCluster,

	"POST /clusters/*/access-entries":     (*Service).createAccessEntry,
	"GET /clusters/*/access-entries":      (*Service).listAccessEntries,
	"GET /clusters/*/access-entries/*":    (*Service).describeAccessEntry,
	"POST /clusters/*/access-entries/*":   (*Service).updateAccessEntry,
	"DELETE /clusters/*/access-entries/*": (*Service).deleteAccessEntry,

	"POST /clusters/*/pod-identity-associations":     (*Service).createPodIdentityAssociation,
	"GET /clusters/*/pod-identity-associations":      (*Service).listPodIdentityAssociations,
	"GET /clusters/*/pod-identity-associations/*":    (*Service).describePodIdentityAssociation,
	"POST /clusters/*/pod-identity-associations/*":   (*Service).updatePodIdentityAssociation,
	"DELETE /clusters/*/pod-identity-associations/*": (*Service).deletePodIdentityAssociation,

	"POST /tags/*":   (*Service).tagResource,
	"DELETE /tags/*": (*Service).untagResource,
	"GET /tags/*":    (*Service).listTagsForResource,
}

// route finds the operation for a request and its path labels. Labels are
// split on the escaped path, so a label may hold an encoded "/" (access
// entry principal ARNs such as arn:aws:iam::111122223333:role/x).
func route(r *http.Request) (op, []string) {
	segments := strings.Split(strings.Trim(r.URL.EscapedPath(), "/"), "/")
	var args []string
	pattern := make([]string, len(segments))
	for i, seg := range segments {
		pattern[i] = seg
		if i%2 == 1 {
			// Odd positions are labels in every EKS path above.
			v, err := url.PathUnescape(seg)
			if err != nil {
				return nil, nil
			}
			pattern[i] = "*"
			args = append(args, v)
		}
	}
	return routes[r.Method+" /"+strings.Join(pattern, "/")], args
}
