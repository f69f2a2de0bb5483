package eks

import "strings"

// principal is an IAM principal ARN split into its kind and name.
type principal struct {
	kind string // "role" or "user"
	name string // without path
}

// parsePrincipal checks that arn is an IAM role or user of the account and,
// when the simulator has IAM, that a role exists.
func (s *Service) parsePrincipal(arn string) (principal, bool) {
	rest, ok := strings.CutPrefix(arn, "arn:aws:iam::"+s.account+":")
	if !ok {
		return principal{}, false
	}
	kind, path, ok := strings.Cut(rest, "/")
	if !ok || (kind != "role" && kind != "user") || path == "" {
		return principal{}, false
	}
	if kind == "role" && s.principals != nil {
		if _, found := s.principals.RoleByARN(arn); !found {
			return principal{}, false
		}
	}
	return principal{kind: kind, name: path[strings.LastIndex(path, "/")+1:]}, true
}
