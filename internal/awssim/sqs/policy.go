package sqs

import (
	"encoding/json"
	"strings"
)

// allowsService reports whether a queue policy lets an AWS service principal
// (e.g. "events.amazonaws.com") call sqs:SendMessage, the check SQS makes
// before accepting a delivery from EventBridge. Statements are evaluated
// simply: an unconditional Deny that matches wins; otherwise an Allow must
// match. Conditions on Allow statements (aws:SourceArn and the like) are
// taken as satisfied; Deny statements with conditions (such as Karpenter's
// deny of non-TLS access) do not apply to deliveries, which are made over TLS
// from inside AWS.
func allowsService(policy, service string) bool {
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
		case st.Effect == "Allow":
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
	for _, a := range stringOrList(raw) {
		prefix, wildcard := strings.CutSuffix(a, "*")
		if strings.EqualFold(a, action) || (wildcard && strings.HasPrefix(strings.ToLower(action), strings.ToLower(prefix))) {
			return true
		}
	}
	return false
}

func contains(raw json.RawMessage, want string) bool {
	for _, v := range stringOrList(raw) {
		if v == want {
			return true
		}
	}
	return false
}

func stringOrList(raw json.RawMessage) []string {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}
	}
	var many []string
	_ = json.Unmarshal(raw, &many)
	return many
}
