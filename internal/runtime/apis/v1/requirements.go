package v1

import (
	"errors"
	"fmt"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/requirements"
)

// Requirements are the node selector requirements of a NodePool template or
// a NodeClaim. Entries with the same key are intersected.
// +kubebuilder:validation:MaxItems:=100
// +listType=atomic
// +kubebuilder:validation:XValidation:message="requirements with operator 'In' must have a value defined",rule="self.all(x, x.operator == 'In' ? x.values.size() != 0 : true)"
// +kubebuilder:validation:XValidation:message="requirements operator 'Gt', 'Lt', 'Gte', or 'Lte' must have a single positive integer value",rule="self.all(x, (x.operator == 'Gt' || x.operator == 'Lt' || x.operator == 'Gte' || x.operator == 'Lte') ? (x.values.size() == 1 && int(x.values[0]) >= 0) : true)"
// +kubebuilder:validation:XValidation:message="requirements with 'minValues' must have at least that many values specified in the 'values' field",rule="self.all(x, (x.operator == 'In' && has(x.minValues)) ? x.values.size() >= x.minValues : true)"
type Requirements []NodeSelectorRequirementWithMinValues

// Parse is the conjunction of the requirements, minValues kept (entries on
// the same key intersect, the larger minValues wins). Entries that do not
// parse are left out and reported, joined, with their index and key.
func (r Requirements) Parse() (requirements.Requirements, error) {
	out := requirements.Requirements{}
	var errs []error
	for i, e := range r {
		req, err := e.Parse()
		if err != nil {
			errs = append(errs, fmt.Errorf("requirements[%d] (%s): %w", i, e.Key, err))
			continue
		}
		out.Add(req)
	}
	return out, errors.Join(errs...)
}
