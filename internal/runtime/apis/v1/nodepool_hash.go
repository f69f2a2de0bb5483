package v1

import "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/structhash"

// NodePoolHashVersion versions the NodePool static-drift hash. Bump it when a
// hashed field's default changes or a field with existing values enters or
// leaves the hash: NodeClaims stamped with another version are re-stamped
// instead of drifted. It differs from every Karpenter version on purpose,
// because the digest differs: NodeClaims adopted from Karpenter are re-stamped.
const NodePoolHashVersion = "joist-v1"

// Hash is the static-drift hash of the NodePool's template: labels,
// annotations, taints, startup taints, nodeClassRef, expireAfter and
// terminationGracePeriod. Requirements are left out (requirement drift checks
// them against each node), and so is everything outside the template
// (weight, limits, disruption), which never drifts nodes.
func (in *NodePool) Hash() string {
	return structhash.Hash(in.Spec.Template)
}

// HashAnnotations are the hash and version annotations to stamp on the
// NodePool and on each NodeClaim launched from it.
func (in *NodePool) HashAnnotations() map[string]string {
	return map[string]string{
		NodePoolHashAnnotationKey:        in.Hash(),
		NodePoolHashVersionAnnotationKey: NodePoolHashVersion,
	}
}
