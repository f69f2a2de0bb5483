package v1

import "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/structhash"

// NodePoolHashVersion versions the NodePool static-drift hash, as Karpenter
// v1.15 does: the hash is Karpenter's, so the annotations mean the same to
// both. NodeClaims stamped with another version (Joist's earlier joist-v1,
// or a later Karpenter's) are re-stamped instead of drifted.
const NodePoolHashVersion = "v3"

// Hash is the static-drift hash of the NodePool's template: labels,
// annotations, taints, startup taints, nodeClassRef, expireAfter and
// terminationGracePeriod. Requirements are left out (requirement drift checks
// them against each node), and so is everything outside the template
// (weight, limits, disruption), which never drifts nodes.
func (in *NodePool) Hash() string {
	return structhash.Drift(in.Spec.Template)
}

// HashAnnotations are the hash and version annotations to stamp on the
// NodePool and on each NodeClaim launched from it.
func (in *NodePool) HashAnnotations() map[string]string {
	return map[string]string{
		NodePoolHashAnnotationKey:        in.Hash(),
		NodePoolHashVersionAnnotationKey: NodePoolHashVersion,
	}
}
