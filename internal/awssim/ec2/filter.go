package ec2

import (
	"strings"

	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/protocol"
)

// attributes returns the values a resource has for a filter name, and
// whether the name is a filter the resource supports.
type attributes func(name string) ([]string, bool)

// matches reports whether a resource passes every filter: for each filter,
// one of the resource's values must match one of the filter's values
// (with EC2's * and ? wildcards).
func matches(filters []ec2types.Filter, tags []ec2types.Tag, attr attributes) (bool, *protocol.Error) {
	for _, f := range filters {
		name := deref(f.Name)
		var have []string
		switch {
		case strings.HasPrefix(name, "tag:"):
			for _, t := range tags {
				if deref(t.Key) == name[4:] {
					have = append(have, deref(t.Value))
				}
			}
		case name == "tag-key":
			for _, t := range tags {
				have = append(have, deref(t.Key))
			}
		case name == "tag-value":
			for _, t := range tags {
				have = append(have, deref(t.Value))
			}
		default:
			var ok bool
			if have, ok = attr(name); !ok {
				return false, errInvalidFilter(name)
			}
		}
		if !anyMatch(f.Values, have) {
			return false, nil
		}
	}
	return true, nil
}

func anyMatch(patterns, values []string) bool {
	for _, p := range patterns {
		for _, v := range values {
			if glob(p, v) {
				return true
			}
		}
	}
	return false
}

// glob matches s against p where * is any run and ? any one character.
func glob(p, s string) bool {
	if !strings.ContainsAny(p, "*?") {
		return p == s
	}
	px, sx, star, mark := 0, 0, -1, 0
	for sx < len(s) {
		switch {
		case px < len(p) && (p[px] == '?' || p[px] == s[sx]):
			px++
			sx++
		case px < len(p) && p[px] == '*':
			star, mark = px, sx
			px++
		case star >= 0:
			px = star + 1
			mark++
			sx = mark
		default:
			return false
		}
	}
	for px < len(p) && p[px] == '*' {
		px++
	}
	return px == len(p)
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func ptr[T any](v T) *T { return &v }

// allowed reports whether list is empty (no restriction) or holds v.
func allowed(list []string, v string) bool {
	if len(list) == 0 {
		return true
	}
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}
