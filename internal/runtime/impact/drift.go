package impact

import (
	"maps"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/disruption/drift"
)

// PlannedDrift is the drift the controller will find on claim once the
// planned pool is applied and stamped. A claim not stamped (yet), or stamped
// by another hash version, was made from the current spec, so it is judged
// as if stamped with the current hash.
func PlannedDrift(claim *v1.NodeClaim, planned, current *v1.NodePool) string {
	planned = planned.DeepCopy()
	planned.Annotations = planned.HashAnnotations()
	if claim.Annotations[v1.NodePoolHashAnnotationKey] == "" || claim.Annotations[v1.NodePoolHashVersionAnnotationKey] != v1.NodePoolHashVersion {
		claim = claim.DeepCopy()
		if claim.Annotations == nil {
			claim.Annotations = map[string]string{}
		}
		maps.Copy(claim.Annotations, current.HashAnnotations())
	}
	return drift.NodePool(claim, planned)
}
