// Package constraint holds the input constraints of the simulated
// operations, as each service's API model states them for the top-level
// members of an operation's input: required members, value ranges of
// numbers, length ranges of strings, lists and maps, and enumerations.
//
// A service declares them once per operation; its protocol dispatcher checks
// every request against them before the operation runs, and the
// administration API lists them, so the conformance test can hold them
// against AWS's own service models and probe that they are what is enforced.
package constraint

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// None marks a range without that bound.
const None int64 = -1

// Rule is the constraints of one top-level input member.
type Rule struct {
	// Member is the member's name in the service model.
	Member string `json:"member"`
	// Type is the model's shape type: string, integer, long, boolean,
	// timestamp, list, map, structure or blob.
	Type     string `json:"type"`
	Required bool   `json:"required,omitempty"`
	// Min and Max bound a number's value, or the length of a string (in
	// characters), list or map; nil is no bound.
	Min *int64 `json:"min,omitempty"`
	Max *int64 `json:"max,omitempty"`
	// Enum is the closed set of values a string may take.
	Enum []string `json:"enum,omitempty"`
	// Unchecked names model constraints of the member that this rule does
	// not enforce (kind: "min", "max", "enum" or "required"), each with the
	// reason: where the service decides by its own logic instead.
	Unchecked map[string]string `json:"unchecked,omitempty"`
}

// Operations maps operation names to their rules.
type Operations map[string][]Rule

// ranged is a member of a type whose value (numbers) or length (strings,
// lists, maps) lies in [min, max].
func ranged(member, typ string, min, max int64) Rule {
	r := Rule{Member: member, Type: typ}
	if min != None {
		r.Min = &min
	}
	if max != None {
		r.Max = &max
	}
	return r
}

// String is a string member whose length lies in [min, max].
func String(member string, min, max int64) Rule { return ranged(member, "string", min, max) }

// Integer is an integer member whose value lies in [min, max].
func Integer(member string, min, max int64) Rule { return ranged(member, "integer", min, max) }

// Long is a long member whose value lies in [min, max].
func Long(member string, min, max int64) Rule { return ranged(member, "long", min, max) }

// List is a list member with [min, max] elements.
func List(member string, min, max int64) Rule { return ranged(member, "list", min, max) }

// Map is a map member with [min, max] entries.
func Map(member string, min, max int64) Rule { return ranged(member, "map", min, max) }

// Structure is a structure member; only its presence is checked.
func Structure(member string) Rule { return Rule{Member: member, Type: "structure"} }

// Enum is a string member that takes one of values.
func Enum(member string, values ...string) Rule {
	return Rule{Member: member, Type: "string", Enum: values}
}

// Req returns r for a member the request must carry (the model's required).
func (r Rule) Req() Rule {
	r.Required = true
	return r
}

// Leave records that the model's kind constraint is not enforced here, and why.
func (r Rule) Leave(kind, reason string) Rule {
	m := make(map[string]string, len(r.Unchecked)+1)
	for k, v := range r.Unchecked {
		m[k] = v
	}
	m[kind] = reason
	r.Unchecked = m
	return r
}

// Value is a member as a request carries it: the text of a scalar (numbers
// as their decimal text) or the number of elements of a list or map.
type Value struct {
	Text  string
	Count int
}

// Input looks up a request's top-level members by model name.
type Input interface {
	Lookup(member, typ string) (Value, bool)
}

// Violation is the first rule a request breaks.
type Violation struct {
	Member string
	// Kind is "required", "min", "max", "enum" or "type".
	Kind  string
	Rule  Rule
	Value string // the offending value's text, or its element count
	// Message is AWS's wording: "Member must not be null", "Member must
	// have length less than or equal to 64", ...
	Message string
}

// Check returns the first violation of rules by in, or nil.
func Check(rules []Rule, in Input) *Violation {
	for _, r := range rules {
		v, ok := in.Lookup(r.Member, r.Type)
		if !ok {
			if r.Required {
				return &Violation{Member: r.Member, Kind: "required", Rule: r, Message: "Member must not be null"}
			}
			continue
		}
		if violation := r.check(v); violation != nil {
			return violation
		}
	}
	return nil
}

func (r Rule) check(v Value) *Violation {
	bad := func(kind, text, format string, args ...any) *Violation {
		return &Violation{Member: r.Member, Kind: kind, Rule: r, Value: text, Message: fmt.Sprintf(format, args...)}
	}
	switch r.Type {
	case "integer", "long":
		n, err := strconv.ParseInt(v.Text, 10, 64)
		if err != nil {
			return bad("type", v.Text, "Member must be an integer")
		}
		if r.Min != nil && n < *r.Min {
			return bad("min", v.Text, "Member must have value greater than or equal to %d", *r.Min)
		}
		if r.Max != nil && n > *r.Max {
			return bad("max", v.Text, "Member must have value less than or equal to %d", *r.Max)
		}
	case "string":
		n := int64(utf8.RuneCountInString(v.Text))
		if r.Min != nil && n < *r.Min {
			return bad("min", v.Text, "Member must have length greater than or equal to %d", *r.Min)
		}
		if r.Max != nil && n > *r.Max {
			return bad("max", v.Text, "Member must have length less than or equal to %d", *r.Max)
		}
		if len(r.Enum) > 0 && !contains(r.Enum, v.Text) {
			return bad("enum", v.Text, "Member must satisfy enum value set: %v", r.Enum)
		}
	case "list", "map":
		n := int64(v.Count)
		text := strconv.Itoa(v.Count) + " elements"
		if r.Min != nil && n < *r.Min {
			return bad("min", text, "Member must have length greater than or equal to %d", *r.Min)
		}
		if r.Max != nil && n > *r.Max {
			return bad("max", text, "Member must have length less than or equal to %d", *r.Max)
		}
	}
	return nil
}

// Standard is AWS's usual validation message: "1 validation error detected:
// Value '2000' at 'maxResults' failed to satisfy constraint: Member must
// have value less than or equal to 100". Members are named lower-camel, as
// AWS's validators name them.
func (v *Violation) Standard() string {
	name := lowerFirst(v.Member)
	if v.Kind == "required" {
		return fmt.Sprintf("1 validation error detected: Value null at '%s' failed to satisfy constraint: %s", name, v.Message)
	}
	return fmt.Sprintf("1 validation error detected: Value '%s' at '%s' failed to satisfy constraint: %s", v.Value, name, v.Message)
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

func contains(values []string, v string) bool {
	for _, x := range values {
		if x == v {
			return true
		}
	}
	return false
}

// Served lists the operations of an operation table, each with its rules.
func Served[Op any](ops map[string]Op, rules Operations) Operations {
	out := make(Operations, len(ops))
	for name := range ops {
		out[name] = rules[name]
	}
	return out
}
