package termination

import (
	"fmt"
	"time"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

// TerminationDeadline is when a deleted claim's node must be gone: its
// deletion time plus spec.terminationGracePeriod; nil without either.
func TerminationDeadline(claim *v1.NodeClaim) *time.Time {
	if claim.DeletionTimestamp == nil || claim.Spec.TerminationGracePeriod == nil {
		return nil
	}
	t := claim.DeletionTimestamp.Add(claim.Spec.TerminationGracePeriod.Duration).UTC().Truncate(time.Second)
	return &t
}

// AnnotatedDeadline reads the karpenter.sh/nodeclaim-termination-timestamp
// annotation (nil when absent). Forceful paths may set it to an earlier
// time than the grace period implies; the annotation wins.
func AnnotatedDeadline(claim *v1.NodeClaim) (*time.Time, error) {
	if claim == nil {
		return nil, nil
	}
	s, ok := claim.Annotations[v1.NodeClaimTerminationTimestampAnnotationKey]
	if !ok {
		return nil, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return nil, fmt.Errorf("nodeclaim %s annotation %s=%q is not an RFC3339 time; remove it or set e.g. 2026-01-02T15:04:05Z",
			claim.Name, v1.NodeClaimTerminationTimestampAnnotationKey, s)
	}
	return &t, nil
}
