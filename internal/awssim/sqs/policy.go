package sqs

import (
	"encoding/json"
	"github.com/joistdev/terraform-provider-joist/internal/awssim/iam"
	"slices"
	"strings"
)

// allowsService reports whether a queue policy lets an AWS service principal
// (e.g. "events.amazonaws.com") call sqs:SendMessage on behalf of sourceARN
// (the EventBridge rule), the check SQS makes before accepting a delivery
// from EventBridge. Statements are evaluated simply: an unconditional Deny
// that matches wins; otherwise an Allow must match. An Allow's conditions
// on aws:SourceArn and aws:SourceAccount are evaluated (the confused-deputy
// guard AWS recommends); its other conditions are taken as satisfied. Deny
// statements with conditions (such as the deny of non-TLS access) do not
// apply to deliveries, which are made over TLS from inside AWS.
func allowsService(policy, service, sourceARN string) bool {
	var doc struct {
		Statement json.RawMessage
	}
	if json.Unmarshal([]byte(policy), &doc) != nil {
		return false
	}
	var statements []policyStatement
	if json.Unmarshal(doc.Statement, &statements) != nil {
		var one policyStatement
		if json.Unmarshal(doc.Statement, &one) != nil {
			return false
		}
		statements = []policyStatement{one}
	}
	allowed := false
	for _, st := range statements {
		if !st.matchesPrincipal(service) || !matchesAction(st.Action, "sqs:SendMessage") {
			continue
		}
		switch {
		case st.Effect == "Deny" && len(st.Condition) == 0:
			return false
		case st.Effect == "Allow" && st.sourceMatches(sourceARN):
			allowed = true
		}
	}
	return allowed
}

type policyStatement struct {
	Effect    string
	Principal json.RawMessage
	Action    json.RawMessage
	Condition map[string]json.RawMessage
}

// sourceMatches evaluates the statement's conditions on the delivery's
// source: aws:SourceArn (the rule's ARN) and aws:SourceAccount (its
// account), under the ARN and string operators, "IfExists" included (the
// source always exists for a delivery). Keys IAM would find missing on a
// delivery, and other operators, are left as satisfied.
func (st policyStatement) sourceMatches(sourceARN string) bool {
	account := ""
	if parts := strings.SplitN(sourceARN, ":", 6); len(parts) == 6 {
		account = parts[4]
	}
	for op, raw := range st.Condition {
		var keys map[string]json.RawMessage
		if json.Unmarshal(raw, &keys) != nil {
			return false
		}
		base := strings.TrimSuffix(op, "IfExists")
		for key, values := range keys {
			var got string
			switch strings.ToLower(key) {
			case "aws:sourcearn":
				got = sourceARN
			case "aws:sourceaccount":
				got = account
			default:
				continue
			}
			if !conditionHolds(base, iam.StringValues(values), got) {
				return false
			}
		}
	}
	return true
}

// conditionHolds applies one condition operator (without IfExists) to a
// value: true when any of the condition's values matches. Operators other
// than the ARN and string equality and wildcard ones are not evaluated.
func conditionHolds(op string, want []string, got string) bool {
	switch op {
	case "ArnEquals", "StringEquals":
		return slices.Contains(want, got)
	case "ArnLike", "StringLike":
		return slices.ContainsFunc(want, func(w string) bool { return iam.Wildcard(w, got) })
	case "ArnNotEquals", "StringNotEquals":
		return !slices.Contains(want, got)
	case "ArnNotLike", "StringNotLike":
		return !slices.ContainsFunc(want, func(w string) bool { return iam.Wildcard(w, got) })
	}
	return true
}

// matchesPrincipal reports whether the statement's Principal covers the
// service: "*", {"AWS": "*"}, or {"Service": service or a list holding it}.
func (st policyStatement) matchesPrincipal(service string) bool {
	var star string
	if json.Unmarshal(st.Principal, &star) == nil {
		return star == "*"
	}
	var principal map[string]json.RawMessage
	if json.Unmarshal(st.Principal, &principal) != nil {
		return false
	}
	return contains(principal["Service"], service) || contains(principal["AWS"], "*")
}

// matchesAction reports whether an Action value (a string or a list, with
// "*" wildcards) covers action.
func matchesAction(raw json.RawMessage, action string) bool {
	for _, a := range iam.StringValues(raw) {
		prefix, wildcard := strings.CutSuffix(a, "*")
		if strings.EqualFold(a, action) || (wildcard && strings.HasPrefix(strings.ToLower(action), strings.ToLower(prefix))) {
			return true
		}
	}
	return false
}

func contains(raw json.RawMessage, want string) bool {
	for _, v := range iam.StringValues(raw) {
		if v == want {
			return true
		}
	}
	return false
}
