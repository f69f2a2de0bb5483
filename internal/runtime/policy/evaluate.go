package policy

import (
	"fmt"
	"path"
	"strings"
)

// Request is one authorization check: an action on a resource with the
// request's condition keys (aws:RequestTag/k, aws:ResourceTag/k,
// aws:TagKeys, aws:RequestedRegion, ec2:CreateAction, iam:PassedToService).
// A key missing from Context is absent from the request.
type Request struct {
	Action   string
	Resource string
	Context  map[string][]string
}

// Allows reports whether d allows r: some Allow statement matches and no
// Deny statement does. Unsupported condition operators are errors, never
// silently true.
func (d Document) Allows(r Request) (bool, error) {
	allowed := false
	for _, s := range d.Statement {
		ok, err := s.matches(r)
		if err != nil {
			return false, fmt.Errorf("statement %s: %w", s.Sid, err)
		}
		if !ok {
			continue
		}
		if s.Effect == "Deny" {
			return false, nil
		}
		allowed = true
	}
	return allowed, nil
}

func (s Statement) matches(r Request) (bool, error) {
	if !anyGlob(s.Action, r.Action, true) || !anyGlob(s.Resource, r.Resource, false) {
		return false, nil
	}
	ctx := map[string][]string{}
	for k, v := range r.Context {
		ctx[strings.ToLower(k)] = v
	}
	for op, keys := range s.Condition {
		for key, want := range keys {
			got, present := ctx[strings.ToLower(key)]
			ok, err := test(op, want, got, present)
			if err != nil || !ok {
				return false, err
			}
		}
	}
	return true, nil
}

// test evaluates one condition operator on one key.
func test(op string, want, got []string, present bool) (bool, error) {
	switch op {
	case "StringEquals":
		return present && anyOf(got, want, exact), nil
	case "StringEqualsIfExists":
		return !present || anyOf(got, want, exact), nil
	case "StringLike":
		return present && anyOf(got, want, like), nil
	case "StringLikeIfExists":
		return !present || anyOf(got, want, like), nil
	case "ForAllValues:StringEquals":
		for _, g := range got {
			if !anyOf([]string{g}, want, exact) {
				return false, nil
			}
		}
		return true, nil
	case "Null":
		return len(want) == 1 && (want[0] == "true") == !present, nil
	case "Bool":
		return present && anyOf(got, want, strings.EqualFold), nil
	}
	return false, fmt.Errorf("condition operator %s is not supported by the evaluator", op)
}

func exact(a, b string) bool { return a == b }

func like(value, pattern string) bool { return glob(pattern, value, false) }

func anyOf(got, want []string, eq func(value, pattern string) bool) bool {
	for _, g := range got {
		for _, w := range want {
			if eq(g, w) {
				return true
			}
		}
	}
	return false
}

func anyGlob(patterns []string, value string, fold bool) bool {
	for _, p := range patterns {
		if glob(p, value, fold) {
			return true
		}
	}
	return false
}

// glob matches IAM wildcards: * any run of characters (including /), ?
// one character. Actions compare case-insensitively.
func glob(pattern, value string, fold bool) bool {
	if fold {
		pattern, value = strings.ToLower(pattern), strings.ToLower(value)
	}
	// path.Match stops * at '/'; IAM does not, so match on a '/'-free alphabet.
	const sep = "\x00"
	ok, err := path.Match(strings.ReplaceAll(escape(pattern), "/", sep), strings.ReplaceAll(value, "/", sep))
	return err == nil && ok
}

// escape quotes the characters path.Match treats specially but IAM does not.
func escape(p string) string {
	r := strings.NewReplacer(`\`, `\\`, `[`, `\[`, `]`, `\]`)
	return r.Replace(p)
}
