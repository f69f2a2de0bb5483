// Package drift decides whether a NodeClaim no longer matches its NodePool:
// the static hash of the pool's template (same hash version only: a version
// change re-stamps claims, it never drifts them) and the pool's
// requirements. Node class drift (AMI, subnets, security groups, the
// EC2NodeClass hash) is the cloud provider's IsDrifted. Behavioural fields
// (weight, limits, disruption) are outside the hash and never drift.
package drift

import (
	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/requirements"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

// Reasons, the Drifted condition's reason.
const (
	NodePoolDrifted     = "NodePoolDrifted"
	RequirementsDrifted = "RequirementsDrifted"
)

// Static reports NodePoolDrifted when the claim was stamped with the same
// hash version as the pool carries but a different hash; "" otherwise,
// including when either side lacks a hash or the versions differ.
func Static(claim *v1.NodeClaim, pool *v1.NodePool) string {
	poolHash, ok1 := pool.Annotations[v1.NodePoolHashAnnotationKey]
	poolVersion, ok2 := pool.Annotations[v1.NodePoolHashVersionAnnotationKey]
	claimHash, ok3 := claim.Annotations[v1.NodePoolHashAnnotationKey]
	claimVersion, ok4 := claim.Annotations[v1.NodePoolHashVersionAnnotationKey]
	if !ok1 || !ok2 || !ok3 || !ok4 || poolVersion != claimVersion {
		return ""
	}
	if poolHash != claimHash {
		return NodePoolDrifted
	}
	return ""
}

var wellKnown = requirements.NewKeySet(v1.WellKnownLabels...)

// Requirements reports RequirementsDrifted when the claim's labels no
// longer satisfy the pool's requirements and template labels (e.g. its
// instance type, zone or capacity type was removed from an In list).
// Widening the requirements never drifts.
func Requirements(claim *v1.NodeClaim, pool *v1.NodePool) string {
	poolReqs := requirements.Requirements{}
	for _, r := range pool.Spec.Template.Spec.Requirements {
		req, err := requirements.Parse(r.NodeSelectorRequirement(), nil)
		if err != nil {
			return ""
		}
		poolReqs.Add(req)
	}
	for _, r := range requirements.FromLabels(pool.Spec.Template.Labels) {
		poolReqs.Add(r)
	}
	claimReqs := requirements.FromLabels(claim.Labels)
	if !poolReqs.IsCompatible(claimReqs, wellKnown) {
		return RequirementsDrifted
	}
	return ""
}
