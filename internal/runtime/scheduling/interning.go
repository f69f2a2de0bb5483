package scheduling

import "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/requirements"

// reqTable interns requirement sets so that equal sets share an id and the
// result of combining two ids is computed once.
type reqTable struct {
	byString  map[string]int
	sets      []requirements.Requirements
	combined  map[[2]int]int
	wellKnown requirements.KeySet
}

func newReqTable(wellKnown requirements.KeySet) *reqTable {
	return &reqTable{byString: map[string]int{}, combined: map[[2]int]int{}, wellKnown: wellKnown}
}

func (t *reqTable) intern(r requirements.Requirements) int {
	s := r.String()
	if id, ok := t.byString[s]; ok {
		return id
	}
	id := len(t.sets)
	t.byString[s] = id
	t.sets = append(t.sets, r)
	return id
}

// combine returns the id of base ∧ incoming, or -1 when incoming is not
// compatible with base (Karpenter's Compatible with the well-known labels
// allowed undefined).
func (t *reqTable) combine(base, incoming int) int {
	key := [2]int{base, incoming}
	if id, ok := t.combined[key]; ok {
		return id
	}
	id := -1
	b, in := t.sets[base], t.sets[incoming]
	if b.IsCompatible(in, t.wellKnown) {
		id = t.intern(b.Intersect(in))
	}
	t.combined[key] = id
	return id
}
