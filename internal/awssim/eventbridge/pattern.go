package eventbridge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
)

// Pattern is a compiled EventBridge event pattern. Every field in it must
// match (AND); a field's list of values matches when any value does (OR);
// nested objects match nested event fields; "$or" holds alternative patterns.
type Pattern struct {
	fields map[string]patternField
	or     []*Pattern
}

// patternField is either a leaf (a list of value matchers) or a nested
// pattern.
type patternField struct {
	leaf   []matcher
	nested *Pattern
}

// invalidPattern is the reason CompilePattern rejects a pattern.
type invalidPattern struct{ reason string }

func (e *invalidPattern) Error() string { return "Event pattern is not valid. Reason: " + e.reason }

func invalid(format string, args ...any) error {
	return &invalidPattern{reason: fmt.Sprintf(format, args...)}
}

// CompilePattern parses an event pattern document.
func CompilePattern(doc string) (*Pattern, error) {
	var raw any
	dec := json.NewDecoder(bytes.NewReader([]byte(doc)))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return nil, invalid("Filter is not valid JSON: %v", err)
	}
	obj, ok := raw.(map[string]any)
	if !ok {
		return nil, invalid("Filter is not an object")
	}
	return compileObject(obj, "")
}

func compileObject(obj map[string]any, path string) (*Pattern, error) {
	p := &Pattern{fields: map[string]patternField{}}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		at := path + key
		switch v := obj[key].(type) {
		case map[string]any:
			nested, err := compileObject(v, at+".")
			if err != nil {
				return nil, err
			}
			p.fields[key] = patternField{nested: nested}
		case []any:
			if key == "$or" {
				for _, alt := range v {
					altObj, ok := alt.(map[string]any)
					if !ok {
						return nil, invalid("$or at %s must hold objects", at)
					}
					sub, err := compileObject(altObj, path)
					if err != nil {
						return nil, err
					}
					p.or = append(p.or, sub)
				}
				continue
			}
			if len(v) == 0 {
				return nil, invalid("Empty arrays are not allowed at %s", at)
			}
			var leaf []matcher
			for _, value := range v {
				m, err := compileMatcher(value, at)
				if err != nil {
					return nil, err
				}
				leaf = append(leaf, m)
			}
			p.fields[key] = patternField{leaf: leaf}
		default:
			return nil, invalid("Match value must be String, number, true, false, or null at %s", at)
		}
	}
	return p, nil
}

// Match reports whether an event (decoded with json.Decoder.UseNumber)
// matches the pattern.
func (p *Pattern) Match(event map[string]any) bool {
	for key, f := range p.fields {
		value, present := event[key]
		if !f.matches(value, present) {
			return false
		}
	}
	if len(p.or) == 0 {
		return true
	}
	for _, alt := range p.or {
		if alt.Match(event) {
			return true
		}
	}
	return false
}

func (f patternField) matches(value any, present bool) bool {
	if f.nested != nil {
		switch v := value.(type) {
		case map[string]any:
			return f.nested.Match(v)
		case []any:
			for _, e := range v {
				if obj, ok := e.(map[string]any); ok && f.nested.Match(obj) {
					return true
				}
			}
			return false
		default:
			// A missing or scalar field matches only patterns that accept
			// absence (exists: false) all the way down.
			return f.nested.Match(map[string]any{})
		}
	}
	values := []any{value}
	if list, ok := value.([]any); ok {
		values = list
	}
	for _, m := range f.leaf {
		if !present {
			if m.matchMissing() {
				return true
			}
			continue
		}
		for _, v := range values {
			if m.match(v) {
				return true
			}
		}
	}
	return false
}
