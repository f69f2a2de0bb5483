package validate

import (
	"strconv"
	"strings"
)

// Step is one step of a Path: a field name, a list index or a map key.
type Step struct {
	// Field is set for an object field.
	Field string
	// Index is the list index when IsIndex.
	Index   int
	IsIndex bool
	// Key is set for a map entry.
	Key   string
	IsKey bool
}

// Path locates a value in a manifest, from the object root.
type Path []Step

// Child returns p extended by the field name.
func (p Path) Child(name string) Path { return append(p[:len(p):len(p)], Step{Field: name}) }

// Index returns p extended by the list index i.
func (p Path) Index(i int) Path { return append(p[:len(p):len(p)], Step{Index: i, IsIndex: true}) }

// Key returns p extended by the map key k.
func (p Path) Key(k string) Path { return append(p[:len(p):len(p)], Step{Key: k, IsKey: true}) }

// String spells the path as the apiserver does: spec.requirements[0].key,
// spec.tags.team (map keys as fields).
func (p Path) String() string {
	var b strings.Builder
	for i, s := range p {
		switch {
		case s.IsIndex:
			b.WriteString("[" + strconv.Itoa(s.Index) + "]")
		case s.IsKey:
			b.WriteString("." + s.Key)
		default:
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s.Field)
		}
	}
	return b.String()
}

// HasPrefix reports whether q is p or an ancestor of p.
func (p Path) HasPrefix(q Path) bool {
	if len(q) > len(p) {
		return false
	}
	for i := range q {
		if p[i] != q[i] {
			return false
		}
	}
	return true
}

// Overlaps reports whether one of p and q contains the other.
func (p Path) Overlaps(q Path) bool { return p.HasPrefix(q) || q.HasPrefix(p) }
