// Package drift decides whether a NodeClaim no longer matches its NodePool:
// the static hash of the pool's template (same hash version only: a version
// change re-stamps claims, it never drifts them), the pool's requirements,
// and whether the cloud still offers the claim's instance type. Node class
// drift (AMI, subnets, security groups, the EC2NodeClass hash) is the cloud
// provider's IsDrifted. Behavioural fields (weight, limits, disruption) are
// outside the hash and never drift.
package drift

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/requirements"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
)

// Reasons, the Drifted condition's reason.
const (
	NodePoolDrifted      = "NodePoolDrifted"
	RequirementsDrifted  = "RequirementsDrifted"
	InstanceTypeNotFound = "InstanceTypeNotFound"
)

// The instance type check reads the whole catalog, so it runs less often
// than the rest: not before a claim is InstanceTypeCheckMinAge old, and
// not again within InstanceTypeCheckInterval of a check it passed. The
// catalog is the cloud's, not the user's, so reacting late is acceptable.
const (
	InstanceTypeCheckMinAge   = time.Hour
	InstanceTypeCheckInterval = 30 * time.Minute
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

// NodePool is why a claim no longer matches its NodePool, judged from the
// two alone (no cloud call): the static hash first, then the requirements.
// A claim that has not launched lacks the labels the cloud fills in, so
// only its hash is judged. The drift controller and the plan preview of a
// NodePool change both ask this.
func NodePool(claim *v1.NodeClaim, pool *v1.NodePool) string {
	if r := Static(claim, pool); r != "" {
		return r
	}
	if !meta.IsStatusConditionTrue(claim.Status.Conditions, v1.ConditionTypeLaunched) {
		return ""
	}
	return Requirements(claim, pool)
}

// noneUndefined: every key a pool requires must be on the claim.
var noneUndefined = requirements.NewKeySet()

// Requirements reports RequirementsDrifted when the claim's labels no
// longer satisfy the pool's requirements, as Karpenter judges it: every key the pool requires (In, Exists, Gt, Lt) must be a
// label of the claim with an allowed value. So removing the claim's
// instance type, zone or capacity type from an In list drifts it, and so
// does a new requirement on a label the claim does not carry; widening the
// requirements never drifts. Requirements that do not parse drift nothing.
// Template labels are covered by the static hash.
func Requirements(claim *v1.NodeClaim, pool *v1.NodePool) string {
	poolReqs, err := pool.Spec.Template.Spec.Requirements.Parse()
	if err != nil {
		return ""
	}
	if !requirements.FromLabels(claim.Labels).IsCompatible(poolReqs, noneUndefined) {
		return RequirementsDrifted
	}
	return ""
}

// InstanceTypeCheckDue says whether a claim created at created, which last
// passed the instance type check at lastPassed (zero: never), is checked
// at now. Only passes are remembered, so a claim found drifted is checked
// again at once, and a transient gap in the catalog clears quickly.
func InstanceTypeCheckDue(created, lastPassed, now time.Time) bool {
	if now.Sub(created) < InstanceTypeCheckMinAge {
		return false
	}
	return lastPassed.IsZero() || now.Sub(lastPassed) >= InstanceTypeCheckInterval
}

// InstanceType reports InstanceTypeNotFound when the catalog (the pool's
// instance types, unavailable offerings included) has no type named by
// the claim's instance-type label, or that type has no offering in the
// claim's zone and capacity type. Availability does not matter: a
// temporarily exhausted offering still exists. Reserved and on-demand
// count as one capacity type, because a claim is relabelled from reserved
// to on-demand when its reservation ends and its label may lag; a pool
// that no longer allows the new capacity type is requirements drift.
func InstanceType(claim *v1.NodeClaim, catalog []*scheduling.InstanceType) string {
	name := claim.Labels[corev1.LabelInstanceTypeStable]
	zone, zoned := claim.Labels[corev1.LabelTopologyZone]
	capacityType, typed := claim.Labels[v1.CapacityTypeLabelKey]
	for _, it := range catalog {
		if name == "" || it.Name != name {
			continue
		}
		for _, o := range it.Offerings {
			if (!zoned || o.Zone == zone) && (!typed || sameCapacityType(o.CapacityType, capacityType)) {
				return ""
			}
		}
	}
	return InstanceTypeNotFound
}

func sameCapacityType(a, b string) bool {
	onDemandLike := func(ct string) bool { return ct == v1.CapacityTypeOnDemand || ct == v1.CapacityTypeReserved }
	return a == b || (onDemandLike(a) && onDemandLike(b))
}
