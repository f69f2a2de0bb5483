package requirements

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Operators beyond the core NodeSelectorOperator set that Karpenter accepts.
const (
	OpGte corev1.NodeSelectorOperator = "Gte"
	OpLte corev1.NodeSelectorOperator = "Lte"
)

// Requirement constrains the values of one label key. Internally it is either
// a finite set of allowed values (complement=false) or the complement of a
// finite set of disallowed values (complement=true), further restricted by
// optional exclusive integer bounds. Requirements are treated as immutable:
// operations return new values and Requirements may share them, so do not
// modify one after construction.
type Requirement struct {
	Key string
	// MinValues is the minimum number of distinct values the key must keep
	// across the instance types a NodeClaim may launch.
	MinValues *int

	complement  bool
	values      map[string]struct{}
	greaterThan *int64
	lessThan    *int64
}

// New builds a requirement. Values of Gt/Lt/Gte/Lte that are not integers
// make the requirement unsatisfiable (DoesNotExist), so a malformed bound can
// never widen what matches; use Parse to get an error instead.
func New(key string, op corev1.NodeSelectorOperator, values ...string) *Requirement {
	r, err := build(key, op, values, nil)
	if err != nil {
		r, _ = build(key, corev1.NodeSelectorOpDoesNotExist, nil, nil)
	}
	return r
}

// Parse converts a NodeSelectorRequirement (plus the NodePool minValues, if
// any) into a Requirement, rejecting unknown operators and malformed values.
func Parse(in corev1.NodeSelectorRequirement, minValues *int) (*Requirement, error) {
	return build(in.Key, in.Operator, in.Values, minValues)
}

func build(key string, op corev1.NodeSelectorOperator, values []string, minValues *int) (*Requirement, error) {
	r := &Requirement{Key: NormalizeKey(key), values: map[string]struct{}{}}
	if minValues != nil {
		if *minValues < 1 {
			return nil, fmt.Errorf("requirement %q: minValues must be at least 1, got %d", key, *minValues)
		}
		mv := *minValues
		r.MinValues = &mv
	}
	bound := func() (int64, error) {
		if len(values) != 1 {
			return 0, fmt.Errorf("requirement %q: operator %s needs exactly one integer value, got %d values", key, op, len(values))
		}
		v, err := strconv.ParseInt(values[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("requirement %q: operator %s needs an integer value, got %q", key, op, values[0])
		}
		return v, nil
	}
	switch op {
	case corev1.NodeSelectorOpIn:
		for _, v := range values {
			r.values[v] = struct{}{}
		}
	case corev1.NodeSelectorOpNotIn:
		r.complement = true
		for _, v := range values {
			r.values[v] = struct{}{}
		}
	case corev1.NodeSelectorOpExists:
		r.complement = true
	case corev1.NodeSelectorOpDoesNotExist:
	case corev1.NodeSelectorOpGt, OpGte:
		v, err := bound()
		if err != nil {
			return nil, err
		}
		if op == OpGte {
			v--
		}
		r.complement, r.greaterThan = true, &v
	case corev1.NodeSelectorOpLt, OpLte:
		v, err := bound()
		if err != nil {
			return nil, err
		}
		if op == OpLte {
			v++
		}
		r.complement, r.lessThan = true, &v
	default:
		return nil, fmt.Errorf("requirement %q: unsupported operator %q (use In, NotIn, Exists, DoesNotExist, Gt, Lt, Gte or Lte)", key, op)
	}
	if (op == corev1.NodeSelectorOpExists || op == corev1.NodeSelectorOpDoesNotExist) && len(values) > 0 {
		return nil, fmt.Errorf("requirement %q: operator %s takes no values, got %v", key, op, values)
	}
	return r, nil
}

// Operator reports the NodeSelector operator that best describes r.
func (r *Requirement) Operator() corev1.NodeSelectorOperator {
	if r.complement {
		if len(r.values) > 0 {
			return corev1.NodeSelectorOpNotIn
		}
		return corev1.NodeSelectorOpExists
	}
	if len(r.values) > 0 {
		return corev1.NodeSelectorOpIn
	}
	return corev1.NodeSelectorOpDoesNotExist
}

// Complement reports whether r allows every value except a finite set.
func (r *Requirement) Complement() bool { return r.complement }

// Bounds returns the exclusive integer bounds, nil when unbounded.
func (r *Requirement) Bounds() (greaterThan, lessThan *int64) { return r.greaterThan, r.lessThan }

// Len is the number of allowed values; complements count as MaxInt64 minus
// the excluded values.
func (r *Requirement) Len() int {
	if r.complement {
		return math.MaxInt64 - len(r.values)
	}
	return len(r.values)
}

// Values returns the set values sorted: the allowed ones for In, the excluded
// ones for NotIn.
func (r *Requirement) Values() []string {
	out := make([]string, 0, len(r.values))
	for v := range r.values {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

// Has reports whether value is allowed.
func (r *Requirement) Has(value string) bool {
	_, in := r.values[value]
	if r.complement {
		return !in && withinBounds(value, r.greaterThan, r.lessThan)
	}
	return in && withinBounds(value, r.greaterThan, r.lessThan)
}

// SingleValue is the one value an In requirement with one value allows.
func (r *Requirement) SingleValue() (string, bool) {
	if r.Operator() != corev1.NodeSelectorOpIn || r.Len() != 1 {
		return "", false
	}
	return r.Values()[0], true
}

// Any returns a deterministic allowed value: the smallest allowed set member,
// or the smallest non-negative integer inside the bounds that is not
// excluded; "" when nothing is allowed.
func (r *Requirement) Any() string {
	if !r.complement {
		if len(r.values) == 0 {
			return ""
		}
		return r.Values()[0]
	}
	lo, hi := int64(0), int64(math.MaxInt64)
	if r.greaterThan != nil && *r.greaterThan+1 > lo {
		lo = *r.greaterThan + 1
	}
	if r.lessThan != nil {
		hi = *r.lessThan
	}
	for v := lo; v < hi && v-lo <= int64(len(r.values)); v++ {
		if s := strconv.FormatInt(v, 10); r.Has(s) {
			return s
		}
	}
	return ""
}

// Intersection returns the requirement allowing exactly the values both allow.
// MinValues is the larger of the two.
func (r *Requirement) Intersection(o *Requirement) *Requirement {
	out := &Requirement{
		Key:         r.Key,
		MinValues:   maxIntPtr(r.MinValues, o.MinValues),
		complement:  r.complement && o.complement,
		greaterThan: maxInt64Ptr(r.greaterThan, o.greaterThan),
		lessThan:    minInt64Ptr(r.lessThan, o.lessThan),
	}
	if out.greaterThan != nil && out.lessThan != nil && *out.greaterThan+1 >= *out.lessThan {
		out.complement, out.greaterThan, out.lessThan = false, nil, nil
		out.values = map[string]struct{}{}
		return out
	}
	switch {
	case r.complement && o.complement:
		out.values = make(map[string]struct{}, len(r.values)+len(o.values))
		for v := range r.values {
			out.values[v] = struct{}{}
		}
		for v := range o.values {
			out.values[v] = struct{}{}
		}
	case r.complement:
		out.values = difference(o.values, r.values)
	case o.complement:
		out.values = difference(r.values, o.values)
	default:
		out.values = map[string]struct{}{}
		for v := range r.values {
			if _, ok := o.values[v]; ok {
				out.values[v] = struct{}{}
			}
		}
	}
	if !out.complement {
		for v := range out.values {
			if !withinBounds(v, out.greaterThan, out.lessThan) {
				delete(out.values, v)
			}
		}
		// A concrete set needs no bounds any more.
		out.greaterThan, out.lessThan = nil, nil
	}
	return out
}

// NodeSelectorRequirement converts r back into API form. Bounded complements
// become Gt/Lt; a requirement with both bounds and exclusions cannot be
// expressed as one NodeSelectorRequirement, so the result may be several.
func (r *Requirement) NodeSelectorRequirements() []corev1.NodeSelectorRequirement {
	var out []corev1.NodeSelectorRequirement
	if r.greaterThan != nil {
		out = append(out, corev1.NodeSelectorRequirement{Key: r.Key, Operator: corev1.NodeSelectorOpGt, Values: []string{strconv.FormatInt(*r.greaterThan, 10)}})
	}
	if r.lessThan != nil {
		out = append(out, corev1.NodeSelectorRequirement{Key: r.Key, Operator: corev1.NodeSelectorOpLt, Values: []string{strconv.FormatInt(*r.lessThan, 10)}})
	}
	op := r.Operator()
	if op == corev1.NodeSelectorOpExists && len(out) > 0 {
		return out
	}
	return append(out, corev1.NodeSelectorRequirement{Key: r.Key, Operator: op, Values: r.Values()})
}

// String renders r canonically (sorted values), e.g. `zone In [a b]`.
func (r *Requirement) String() string {
	var b strings.Builder
	b.WriteString(r.Key)
	b.WriteByte(' ')
	b.WriteString(string(r.Operator()))
	if len(r.values) > 0 {
		b.WriteString(" [")
		b.WriteString(strings.Join(r.Values(), " "))
		b.WriteByte(']')
	}
	if r.greaterThan != nil {
		fmt.Fprintf(&b, " >%d", *r.greaterThan)
	}
	if r.lessThan != nil {
		fmt.Fprintf(&b, " <%d", *r.lessThan)
	}
	if r.MinValues != nil {
		fmt.Fprintf(&b, " minValues=%d", *r.MinValues)
	}
	return b.String()
}

// WithMinValues returns a copy of r that requires n distinct values.
func (r *Requirement) WithMinValues(n int) *Requirement {
	out := r.clone()
	out.MinValues = &n
	return out
}

func (r *Requirement) clone() *Requirement {
	out := *r
	out.values = make(map[string]struct{}, len(r.values))
	for v := range r.values {
		out.values[v] = struct{}{}
	}
	return &out
}

func withinBounds(value string, gt, lt *int64) bool {
	if gt == nil && lt == nil {
		return true
	}
	v, err := strconv.ParseInt(value, 10, 64)
	if err != nil {
		return false
	}
	return (gt == nil || v > *gt) && (lt == nil || v < *lt)
}

func difference(a, b map[string]struct{}) map[string]struct{} {
	out := make(map[string]struct{}, len(a))
	for v := range a {
		if _, ok := b[v]; !ok {
			out[v] = struct{}{}
		}
	}
	return out
}

func maxIntPtr(a, b *int) *int {
	if a == nil {
		return b
	}
	if b == nil || *a >= *b {
		return a
	}
	return b
}

func maxInt64Ptr(a, b *int64) *int64 {
	if a == nil {
		return b
	}
	if b == nil || *a >= *b {
		return a
	}
	return b
}

func minInt64Ptr(a, b *int64) *int64 {
	if a == nil {
		return b
	}
	if b == nil || *a <= *b {
		return a
	}
	return b
}
