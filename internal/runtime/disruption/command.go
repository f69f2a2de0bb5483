package disruption

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
)

// Methods, as reported in metrics and logs.
const (
	MethodEmptiness  = "emptiness"
	MethodDrift      = "drift"
	MethodMultiNode  = "multi"
	MethodSingleNode = "single"
	// MethodResumed is a command an earlier leader started and this one
	// finishes (see resumable).
	MethodResumed = "resumed"
)

// Command disrupts Candidates, after launching Replacements for their pods.
type Command struct {
	Method       string
	Reason       v1.DisruptionReason
	Candidates   []*Candidate
	Replacements []*scheduling.NewClaim
}

// Decision is "delete" or "replace". A resumed command always replaces:
// only commands whose replacements exist are resumed.
func (c *Command) Decision() string {
	if len(c.Replacements) == 0 && c.Method != MethodResumed {
		return "delete"
	}
	return "replace"
}

// Price is the summed price of the candidates.
func (c *Command) Price() float64 {
	var p float64
	for _, cand := range c.Candidates {
		p += cand.Price
	}
	return p
}

// ReplacementPrice is the summed price of the replacements' cheapest options.
func (c *Command) ReplacementPrice() float64 {
	var p float64
	for _, r := range c.Replacements {
		p += r.Price()
	}
	return p
}

// NeedsValidation is true for consolidation and emptiness: their decisions
// rest on a quiet cluster and are re-checked after a delay.
func (c *Command) NeedsValidation() bool { return c.Method != MethodDrift && c.Method != MethodRepair }

func (c *Command) String() string {
	var names []string
	for _, cand := range c.Candidates {
		names = append(names, fmt.Sprintf("%s/%s/%s", cand.Name(), cand.Labels()[corev1.LabelInstanceTypeStable], cand.CapacityType))
	}
	s := fmt.Sprintf("%s %s (%s) of %s", c.Decision(), c.Method, c.Reason, strings.Join(names, ", "))
	for _, r := range c.Replacements {
		var types []string
		for i, o := range r.InstanceTypes {
			if i == 3 {
				types = append(types, fmt.Sprintf("and %d more", len(r.InstanceTypes)-3))
				break
			}
			types = append(types, o.Type.Name)
		}
		s += fmt.Sprintf(" with %s ($%.4f/h)", strings.Join(types, ", "), r.Price())
	}
	return s
}
