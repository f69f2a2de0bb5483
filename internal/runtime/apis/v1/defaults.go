package v1

import "time"

// The defaults the CRDs apply (Karpenter's), for code that builds objects in
// Go and must predict what the apiserver will store.
const (
	DefaultExpireAfter         = 720 * time.Hour
	DefaultConsolidateAfter    = time.Duration(0)
	DefaultConsolidationPolicy = ConsolidationPolicyWhenEmptyOrUnderutilized
	DefaultBudgetNodes         = "10%"
)
