package iam

import (
	"encoding/json"
	"strings"
)

// RoleAllows reports whether a role's identity-based policies (its inline
// policies and the default versions of its attached managed policies)
// allow action on resource, as IAM decides for a session of the role in
// its own account: an explicit Deny wins; otherwise an Allow must match, and
// a permissions boundary, when set, must allow it too. Resource-based
// policies (a KMS key policy, say) are not modelled: they are taken to
// delegate to IAM, as a key's default policy does.
//
// Conditions are evaluated on the keys in context with the string and ARN
// operators (and their IfExists and Not forms); a key missing from context
// fails a condition as in IAM, and an operator outside that set fails it,
// so an Allow awssim cannot judge never grants.
func (s *Service) RoleAllows(roleName, action, resource string, context map[string]string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.roles[roleName]
	if r == nil {
		return false
	}
	var docs []string
	for _, name := range r.inlineOrder {
		docs = append(docs, r.inline[name])
	}
	for _, arn := range r.attached {
		if p := s.policies[arn]; p != nil && p.defaultVersion() != nil {
			docs = append(docs, p.defaultVersion().document)
		}
	}
	req := evalRequest{action: action, resource: resource, context: context}
	if decide(docs, req) != allow {
		return false
	}
	if r.boundary != "" {
		p := s.policies[r.boundary]
		if p == nil || p.defaultVersion() == nil || decide([]string{p.defaultVersion().document}, req) != allow {
			return false
		}
	}
	return true
}

type evalRequest struct {
	action, resource string
	context          map[string]string
}

type decision int

const (
	implicitDeny decision = iota
	allow
	explicitDeny
)

// decide evaluates policy documents together.
func decide(docs []string, req evalRequest) decision {
	out := implicitDeny
	for _, doc := range docs {
		for _, st := range statements(doc) {
			if !st.applies(req) {
				continue
			}
			if strings.EqualFold(st.Effect, "Deny") {
				return explicitDeny
			}
			if strings.EqualFold(st.Effect, "Allow") {
				out = allow
			}
		}
	}
	return out
}

type statement struct {
	Effect      string
	Action      json.RawMessage
	NotAction   json.RawMessage
	Resource    json.RawMessage
	NotResource json.RawMessage
	Condition   map[string]map[string]json.RawMessage
}

// statements parses a document's Statement, a list or a single object;
// an unreadable document has none.
func statements(doc string) []statement {
	var d struct{ Statement json.RawMessage }
	if json.Unmarshal([]byte(doc), &d) != nil {
		return nil
	}
	var list []statement
	if json.Unmarshal(d.Statement, &list) == nil {
		return list
	}
	var one statement
	if json.Unmarshal(d.Statement, &one) == nil {
		return []statement{one}
	}
	return nil
}

func (st statement) applies(req evalRequest) bool {
	actionMatch := func(p string) bool { return Wildcard(strings.ToLower(p), strings.ToLower(req.action)) }
	resourceMatch := func(p string) bool { return Wildcard(p, req.resource) }
	switch {
	case st.Action != nil && !anyOf(st.Action, actionMatch):
		return false
	case st.NotAction != nil && anyOf(st.NotAction, actionMatch):
		return false
	case st.Resource != nil && !anyOf(st.Resource, resourceMatch):
		return false
	case st.NotResource != nil && anyOf(st.NotResource, resourceMatch):
		return false
	}
	for op, keys := range st.Condition {
		for key, values := range keys {
			if !conditionHolds(op, strings.ToLower(key), values, req.context) {
				return false
			}
		}
	}
	return true
}

// conditionHolds applies one operator to one key. Context keys are matched
// without regard to case, as IAM matches condition keys.
func conditionHolds(op, key string, raw json.RawMessage, context map[string]string) bool {
	base, ifExists := strings.CutSuffix(op, "IfExists")
	got, present := "", false
	for k, v := range context {
		if strings.EqualFold(k, key) {
			got, present = v, true
		}
	}
	want := StringValues(raw)
	equal := func(w string) bool { return w == got }
	like := func(w string) bool { return Wildcard(w, got) }
	var positive, negated bool
	var match func(string) bool
	switch base {
	case "StringEquals", "ArnEquals":
		positive, match = true, equal
	case "StringLike", "ArnLike":
		positive, match = true, like
	case "StringNotEquals", "ArnNotEquals":
		negated, match = true, equal
	case "StringNotLike", "ArnNotLike":
		negated, match = true, like
	default:
		return false
	}
	if !present {
		// IAM: a missing key fails a positive operator and satisfies a
		// negated one; IfExists satisfies either.
		return ifExists || negated
	}
	hit := false
	for _, w := range want {
		if match(w) {
			hit = true
		}
	}
	return hit == positive
}

func anyOf(raw json.RawMessage, match func(string) bool) bool {
	for _, v := range StringValues(raw) {
		if match(v) {
			return true
		}
	}
	return false
}

// StringValues reads a policy value: a string or a list of strings.
func StringValues(raw json.RawMessage) []string {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}
	}
	var many []string
	_ = json.Unmarshal(raw, &many)
	return many
}

// Wildcard matches s against an IAM pattern: "*" any run of characters,
// "?" any one character. Resource policies (SQS's) match with it too.
func Wildcard(pattern, s string) bool {
	if pattern == "" {
		return s == ""
	}
	switch pattern[0] {
	case '*':
		for i := 0; i <= len(s); i++ {
			if Wildcard(pattern[1:], s[i:]) {
				return true
			}
		}
		return false
	case '?':
		return s != "" && Wildcard(pattern[1:], s[1:])
	}
	return s != "" && s[0] == pattern[0] && Wildcard(pattern[1:], s[1:])
}
