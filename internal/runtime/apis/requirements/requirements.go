package requirements

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Requirements is a conjunction of per-key requirements. The zero value (nil)
// is the empty conjunction; use Add on a non-nil value or New* constructors.
type Requirements map[string]*Requirement

// NewRequirements returns the conjunction of reqs; requirements on the same
// key are intersected.
func NewRequirements(reqs ...*Requirement) Requirements {
	out := Requirements{}
	out.Add(reqs...)
	return out
}

// FromNodeSelectorRequirements parses API requirements. minValues is looked
// up by key and may be nil.
func FromNodeSelectorRequirements(in []corev1.NodeSelectorRequirement, minValues map[string]int) (Requirements, error) {
	out := Requirements{}
	var errs []error
	for _, r := range in {
		var mv *int
		if v, ok := minValues[r.Key]; ok {
			mv = &v
		}
		req, err := Parse(r, mv)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out.Add(req)
	}
	return out, errors.Join(errs...)
}

// FromLabels turns each label into an In requirement with that single value.
func FromLabels(labels map[string]string) Requirements {
	out := make(Requirements, len(labels))
	for k, v := range labels {
		out.Add(New(k, corev1.NodeSelectorOpIn, v))
	}
	return out
}

// FromNodeSelectorTerm parses one node selector term's matchExpressions.
// matchFields are not supported for provisioning and are reported as errors.
func FromNodeSelectorTerm(term corev1.NodeSelectorTerm) (Requirements, error) {
	out, err := FromNodeSelectorRequirements(term.MatchExpressions, nil)
	if len(term.MatchFields) > 0 {
		err = errors.Join(err, fmt.Errorf("node selector term: matchFields (%s) are not supported, use matchExpressions", term.MatchFields[0].Key))
	}
	return out, err
}

// Add intersects each of reqs into r.
func (r Requirements) Add(reqs ...*Requirement) {
	for _, req := range reqs {
		if cur, ok := r[req.Key]; ok {
			r[req.Key] = cur.Intersection(req)
		} else {
			r[req.Key] = req
		}
	}
}

// Intersect returns a new Requirements that is r ∧ o; neither input changes.
func (r Requirements) Intersect(o Requirements) Requirements {
	out := make(Requirements, len(r)+len(o))
	for k, v := range r {
		out[k] = v
	}
	for k, v := range o {
		if cur, ok := out[k]; ok {
			out[k] = cur.Intersection(v)
		} else {
			out[k] = v
		}
	}
	return out
}

// Clone returns a deep copy.
func (r Requirements) Clone() Requirements {
	out := make(Requirements, len(r))
	for k, v := range r {
		out[k] = v.clone()
	}
	return out
}

// Keys returns the constrained keys, sorted.
func (r Requirements) Keys() []string {
	out := make([]string, 0, len(r))
	for k := range r {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Has reports whether key is constrained.
func (r Requirements) Has(key string) bool {
	_, ok := r[NormalizeKey(key)]
	return ok
}

// Get returns the requirement for key; an unconstrained key reads as Exists.
func (r Requirements) Get(key string) *Requirement {
	key = NormalizeKey(key)
	if req, ok := r[key]; ok {
		return req
	}
	return New(key, corev1.NodeSelectorOpExists)
}

// Compatible reports why incoming cannot be satisfied together with r, or
// nil. Following Karpenter: a key incoming requires (In/Exists/Gt/Lt) must be
// defined by r unless it is listed in allowUndefined (the well-known labels
// a cloud provider fills in later); NotIn and DoesNotExist on undefined keys
// are always fine; keys defined on both sides must intersect.
func (r Requirements) Compatible(incoming Requirements, allowUndefined KeySet) error {
	var errs []error
	for _, key := range incoming.Keys() {
		if r.Has(key) || allowUndefined.Has(key) {
			continue
		}
		if op := incoming[key].Operator(); op == corev1.NodeSelectorOpNotIn || op == corev1.NodeSelectorOpDoesNotExist {
			continue
		}
		errs = append(errs, fmt.Errorf("label %q does not have known values (no NodePool label or requirement defines it)", key))
	}
	if err := r.Intersects(incoming); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// IsCompatible is Compatible without building error text.
func (r Requirements) IsCompatible(incoming Requirements, allowUndefined KeySet) bool {
	for key, req := range incoming {
		if _, ok := r[key]; ok || allowUndefined.Has(key) {
			continue
		}
		if op := req.Operator(); op != corev1.NodeSelectorOpNotIn && op != corev1.NodeSelectorOpDoesNotExist {
			return false
		}
	}
	for key, in := range incoming {
		if cur, ok := r[key]; ok && !intersects(cur, in) {
			return false
		}
	}
	return true
}

// Intersects reports keys defined on both sides whose intersection is empty.
// Two "absent" requirements (NotIn/DoesNotExist) never conflict, since a node
// without the label satisfies both.
func (r Requirements) Intersects(incoming Requirements) error {
	var errs []error
	for _, key := range incoming.Keys() {
		cur, ok := r[key]
		if !ok {
			continue
		}
		if !intersects(cur, incoming[key]) {
			errs = append(errs, fmt.Errorf("key %s: %s conflicts with %s", key, incoming[key], cur))
		}
	}
	return errors.Join(errs...)
}

func intersects(a, b *Requirement) bool {
	if a.Intersection(b).Len() > 0 {
		return true
	}
	return absent(a) && absent(b)
}

func absent(r *Requirement) bool {
	op := r.Operator()
	return op == corev1.NodeSelectorOpNotIn || op == corev1.NodeSelectorOpDoesNotExist
}

// Matches reports why a node with exactly these labels does not satisfy r.
// Kubernetes selector semantics: a missing label satisfies only NotIn and
// DoesNotExist.
func (r Requirements) Matches(labels map[string]string) error {
	var errs []error
	for _, key := range r.Keys() {
		if !matchesLabel(r[key], labels) {
			v, ok := labels[key]
			if !ok {
				v = "<unset>"
			}
			errs = append(errs, fmt.Errorf("label %s=%s does not satisfy %s", key, v, r[key]))
		}
	}
	return errors.Join(errs...)
}

// MatchesLabels is Matches without building error text.
func (r Requirements) MatchesLabels(labels map[string]string) bool {
	for _, req := range r {
		if !matchesLabel(req, labels) {
			return false
		}
	}
	return true
}

func matchesLabel(req *Requirement, labels map[string]string) bool {
	v, ok := labels[req.Key]
	if !ok {
		for alias, key := range aliases {
			if key == req.Key {
				if v, ok = labels[alias]; ok {
					break
				}
			}
		}
	}
	if !ok {
		return absent(req)
	}
	return req.Has(v)
}

// Labels returns the label values a node built from r would carry: one value
// per key that allows any (Any), skipping keys in exclude (e.g. restricted
// labels such as the hostname placeholder).
func (r Requirements) Labels(exclude KeySet) map[string]string {
	out := map[string]string{}
	for key, req := range r {
		if exclude.Has(key) {
			continue
		}
		if v := req.Any(); v != "" {
			out[key] = v
		}
	}
	return out
}

// NodeSelectorRequirements converts r back to API form, sorted by key.
func (r Requirements) NodeSelectorRequirements() []corev1.NodeSelectorRequirement {
	var out []corev1.NodeSelectorRequirement
	for _, k := range r.Keys() {
		out = append(out, r[k].NodeSelectorRequirements()...)
	}
	return out
}

// String is a canonical rendering (sorted keys and values); equal strings
// mean equal requirement sets.
func (r Requirements) String() string {
	parts := make([]string, 0, len(r))
	for _, k := range r.Keys() {
		parts = append(parts, r[k].String())
	}
	return strings.Join(parts, ", ")
}
