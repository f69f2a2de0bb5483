package eventbridge

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"strings"
)

// matcher matches one event value (a string, json.Number, bool or nil).
type matcher interface {
	match(v any) bool
	// matchMissing reports whether the matcher accepts an absent field.
	matchMissing() bool
}

type matchFunc func(v any) bool

func (f matchFunc) match(v any) bool { return f(v) }
func (matchFunc) matchMissing() bool { return false }

// existsMatcher is {"exists": bool}: it only looks at presence of a leaf.
type existsMatcher bool

func (e existsMatcher) match(v any) bool {
	_, isObject := v.(map[string]any)
	return bool(e) && !isObject
}
func (e existsMatcher) matchMissing() bool { return !bool(e) }

// compileMatcher compiles one element of a pattern value list.
func compileMatcher(value any, at string) (matcher, error) {
	switch v := value.(type) {
	case string:
		return matchFunc(func(e any) bool { s, ok := e.(string); return ok && s == v }), nil
	case json.Number:
		want, err := v.Float64()
		if err != nil {
			return nil, invalid("bad number %s at %s", v, at)
		}
		return matchFunc(func(e any) bool { n, ok := number(e); return ok && n == want }), nil
	case bool:
		return matchFunc(func(e any) bool { b, ok := e.(bool); return ok && b == v }), nil
	case nil:
		return matchFunc(func(e any) bool { return e == nil }), nil
	case map[string]any:
		return compileOperator(v, at)
	}
	return nil, invalid("Match value must be String, number, true, false, or null at %s", at)
}

// compileOperator compiles a content-filter object such as {"prefix": "x"}.
func compileOperator(op map[string]any, at string) (matcher, error) {
	if len(op) != 1 {
		return nil, invalid("Only one key allowed in match expression at %s", at)
	}
	for name, arg := range op {
		switch name {
		case "exists":
			b, ok := arg.(bool)
			if !ok {
				return nil, invalid("exists match pattern must be either true or false at %s", at)
			}
			return existsMatcher(b), nil
		case "prefix", "suffix", "equals-ignore-case", "wildcard", "cidr":
			f, err := compileStringOperator(name, arg, at)
			if err != nil {
				return nil, err
			}
			return matchFunc(f), nil
		case "anything-but":
			return compileAnythingBut(arg, at)
		case "numeric":
			return compileNumeric(arg, at)
		default:
			return nil, invalid("Unrecognized match type %s at %s", name, at)
		}
	}
	panic("unreachable")
}

// compileStringOperator compiles the string content filters, including the
// {"prefix": {"equals-ignore-case": "x"}} form.
func compileStringOperator(name string, arg any, at string) (func(any) bool, error) {
	fold := false
	if inner, ok := arg.(map[string]any); ok && (name == "prefix" || name == "suffix") {
		s, ok := inner["equals-ignore-case"].(string)
		if len(inner) != 1 || !ok {
			return nil, invalid("%s match pattern must be a string at %s", name, at)
		}
		arg, fold = s, true
	}
	want, ok := arg.(string)
	if !ok {
		return nil, invalid("%s match pattern must be a string at %s", name, at)
	}
	var test func(string) bool
	switch name {
	case "prefix":
		test = func(s string) bool { return strings.HasPrefix(s, want) }
		if fold {
			test = func(s string) bool { return len(s) >= len(want) && strings.EqualFold(s[:len(want)], want) }
		}
	case "suffix":
		test = func(s string) bool { return strings.HasSuffix(s, want) }
		if fold {
			test = func(s string) bool { return len(s) >= len(want) && strings.EqualFold(s[len(s)-len(want):], want) }
		}
	case "equals-ignore-case":
		test = func(s string) bool { return strings.EqualFold(s, want) }
	case "wildcard":
		test = func(s string) bool { return wildcardMatch(want, s) }
	case "cidr":
		prefix, err := netip.ParsePrefix(want)
		if err != nil {
			return nil, invalid("Malformed CIDR at %s: %v", at, err)
		}
		test = func(s string) bool { a, err := netip.ParseAddr(s); return err == nil && prefix.Contains(a) }
	}
	return func(e any) bool { s, ok := e.(string); return ok && test(s) }, nil
}

// compileAnythingBut compiles {"anything-but": value | [values] | {operator}}.
func compileAnythingBut(arg any, at string) (matcher, error) {
	var excluded []func(any) bool
	switch v := arg.(type) {
	case map[string]any:
		if len(v) != 1 {
			return nil, invalid("anything-but takes one operator at %s", at)
		}
		for name, inner := range v {
			f, err := compileStringOperator(name, inner, at)
			if err != nil {
				return nil, err
			}
			excluded = append(excluded, f)
		}
	case []any:
		for _, item := range v {
			m, err := compileMatcher(item, at)
			if err != nil {
				return nil, err
			}
			excluded = append(excluded, m.match)
		}
	default:
		m, err := compileMatcher(v, at)
		if err != nil {
			return nil, err
		}
		excluded = append(excluded, m.match)
	}
	return matchFunc(func(e any) bool {
		for _, f := range excluded {
			if f(e) {
				return false
			}
		}
		return true
	}), nil
}

// compileNumeric compiles {"numeric": [">", 0, "<=", 5]}.
func compileNumeric(arg any, at string) (matcher, error) {
	terms, ok := arg.([]any)
	if !ok || len(terms) == 0 || len(terms)%2 != 0 || len(terms) > 4 {
		return nil, invalid("Value of numeric must be an array of operator, number pairs at %s", at)
	}
	var tests []func(float64) bool
	for i := 0; i < len(terms); i += 2 {
		op, _ := terms[i].(string)
		n, ok := number(terms[i+1])
		if !ok {
			return nil, invalid("Value of %s must be numeric at %s", op, at)
		}
		switch op {
		case "=":
			tests = append(tests, func(x float64) bool { return x == n })
		case "<":
			tests = append(tests, func(x float64) bool { return x < n })
		case "<=":
			tests = append(tests, func(x float64) bool { return x <= n })
		case ">":
			tests = append(tests, func(x float64) bool { return x > n })
		case ">=":
			tests = append(tests, func(x float64) bool { return x >= n })
		default:
			return nil, invalid("Unrecognized numeric range operator %q at %s", fmt.Sprint(terms[i]), at)
		}
	}
	return matchFunc(func(e any) bool {
		x, ok := number(e)
		if !ok {
			return false
		}
		for _, t := range tests {
			if !t(x) {
				return false
			}
		}
		return true
	}), nil
}

// number reads a JSON number decoded with UseNumber.
func number(v any) (float64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	f, err := n.Float64()
	return f, err == nil
}

// wildcardMatch matches s against a pattern in which each * stands for any
// run of characters (including none).
func wildcardMatch(pattern, s string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return s == pattern
	}
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, part := range parts[1 : len(parts)-1] {
		i := strings.Index(s, part)
		if i < 0 {
			return false
		}
		s = s[i+len(part):]
	}
	return strings.HasSuffix(s, last)
}
