package policy

import "fmt"

// IAM's size quotas, counted without whitespace.
const (
	ManagedPolicyMaxSize = 6144  // one customer managed policy
	InlinePolicyMaxSize  = 10240 // all inline policies of a role together
)

// Split cuts d into documents of at most maxSize characters. Statements of
// one Group stay together when they fit, so a split policy reads like
// Karpenter's (NodeLifecycle, IAMIntegration, ...); otherwise statements
// are packed in order. A single statement larger than maxSize is an error.
func Split(d Document, maxSize int) ([]Document, error) {
	if d.Size() <= maxSize {
		return []Document{d}, nil
	}
	var groups [][]Statement
	for _, s := range d.Statement {
		if n := len(groups); n > 0 && groups[n-1][0].group == s.group {
			groups[n-1] = append(groups[n-1], s)
			continue
		}
		groups = append(groups, []Statement{s})
	}
	var out []Document
	cur := Document{Version: d.Version}
	fits := func(doc Document, add ...Statement) bool {
		doc.Statement = append(append([]Statement{}, doc.Statement...), add...)
		return doc.Size() <= maxSize
	}
	flush := func() {
		if len(cur.Statement) > 0 {
			out = append(out, cur)
			cur = Document{Version: d.Version}
		}
	}
	for _, g := range groups {
		if fits(cur, g...) {
			cur.Statement = append(cur.Statement, g...)
			continue
		}
		flush()
		for _, s := range g {
			if !fits(cur, s) {
				flush()
				if !fits(cur, s) {
					return nil, fmt.Errorf("policy: statement %s alone is larger than %d characters", s.Sid, maxSize)
				}
			}
			cur.Statement = append(cur.Statement, s)
		}
	}
	flush()
	return out, nil
}
