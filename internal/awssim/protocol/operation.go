package protocol

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
)

// Operation names the API operation of a request and returns its parameters
// in a form fit for recording: the form values of query protocols, the JSON
// document of JSON protocols, or the path of REST calls.
func Operation(f Family, r *http.Request, body []byte) (string, map[string]any) {
	switch f {
	case EC2Query, AWSQuery:
		form, _ := url.ParseQuery(string(body))
		if len(form) == 0 {
			form = r.URL.Query()
		}
		params := map[string]any{}
		for k, v := range form {
			if k == "Action" || k == "Version" {
				continue
			}
			if len(v) == 1 {
				params[k] = v[0]
			} else {
				params[k] = v
			}
		}
		return form.Get("Action"), params
	case JSON:
		op := r.Header.Get("X-Amz-Target")
		if i := strings.LastIndexByte(op, '.'); i >= 0 {
			op = op[i+1:]
		}
		params := map[string]any{}
		_ = json.Unmarshal(body, &params)
		return op, params
	default:
		params := map[string]any{"path": r.URL.Path}
		if len(body) > 0 {
			var doc map[string]any
			if json.Unmarshal(body, &doc) == nil {
				params["body"] = doc
			}
		}
		// Named from the escaped path: a principal ARN in it holds slashes.
		return restOperation(r.Method, r.URL.EscapedPath()), params
	}
}

// restOperation names the EKS operations the runtime and the provider call;
// other calls are named by method and path.
func restOperation(method, path string) string {
	seg := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(seg) == 1 && seg[0] == "clusters":
		return map[string]string{"GET": "ListClusters", "POST": "CreateCluster"}[method]
	case len(seg) == 2 && seg[0] == "clusters":
		return map[string]string{"GET": "DescribeCluster", "DELETE": "DeleteCluster"}[method]
	case len(seg) == 3 && seg[2] == "access-entries":
		return map[string]string{"GET": "ListAccessEntries", "POST": "CreateAccessEntry"}[method]
	case len(seg) == 4 && seg[2] == "access-entries":
		return map[string]string{"GET": "DescribeAccessEntry", "DELETE": "DeleteAccessEntry", "POST": "UpdateAccessEntry"}[method]
	case len(seg) == 3 && seg[2] == "pod-identity-associations":
		return map[string]string{"GET": "ListPodIdentityAssociations", "POST": "CreatePodIdentityAssociation"}[method]
	case len(seg) == 4 && seg[2] == "pod-identity-associations":
		return map[string]string{"GET": "DescribePodIdentityAssociation", "DELETE": "DeletePodIdentityAssociation", "POST": "UpdatePodIdentityAssociation"}[method]
	}
	return method + " " + path
}

// ErrorCode extracts the error code from an error response written by any
// family, for the request log.
func ErrorCode(f Family, header http.Header, body []byte) string {
	if c := header.Get("X-Amzn-Errortype"); c != "" {
		if i := strings.IndexByte(c, ':'); i >= 0 {
			c = c[:i]
		}
		return c
	}
	switch f {
	case EC2Query, AWSQuery:
		s := string(body)
		i := strings.Index(s, "<Code>")
		j := strings.Index(s, "</Code>")
		if i >= 0 && j > i {
			return s[i+len("<Code>") : j]
		}
	default:
		var doc struct {
			Type string `json:"__type"`
			Code string `json:"code"`
		}
		if json.Unmarshal(body, &doc) == nil {
			c := doc.Type
			if c == "" {
				c = doc.Code
			}
			if i := strings.LastIndexByte(c, '#'); i >= 0 {
				c = c[i+1:]
			}
			return c
		}
	}
	return ""
}
