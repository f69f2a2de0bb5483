package awsv1

import (
	"hash/fnv"
	"slices"
	"strconv"
	"strings"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/structhash"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

// EC2NodeClassHashVersion versions the EC2NodeClass static-drift hash, as
// Karpenter v1.15 does (see v1.NodePoolHashVersion): claims stamped with
// another version, such as Joist's earlier joist-v2, are re-stamped instead
// of drifted.
const EC2NodeClassHashVersion = "v6"

// Hash is Karpenter's static-drift hash of the EC2NodeClass: its spec except
// the selector terms (their resolved values drift nodes dynamically) and
// ipPrefixCount, with the AMI family as resolved rather than as written (so
// spelling out the family an alias implies does not drift nodes), the
// kubelet configuration as JSON, and the cluster CA bundle the nodes'
// user data carries, so a new cluster CA drifts them. The digest hashes Go
// type names, field names, kinds and the order of fields, so the spec's
// types keep Karpenter's names, types and field order.
func (in *EC2NodeClass) Hash(caBundle string) string {
	return structhash.Drift([]any{in.Spec, in.AMIFamily(), caBundle, in.Spec.Kubelet.String()})
}

// HashAnnotations are the hash and version annotations to stamp on the
// EC2NodeClass and on each NodeClaim launched with it, for nodes joining
// with the CA bundle caBundle.
func (in *EC2NodeClass) HashAnnotations(caBundle string) map[string]string {
	return map[string]string{
		v1.EC2NodeClassHashAnnotationKey:        in.Hash(caBundle),
		v1.EC2NodeClassHashVersionAnnotationKey: EC2NodeClassHashVersion,
	}
}

// Release names the AMIs the node class resolves now, as a short digest,
// "" before any is resolved. The hash leaves the AMI selector out (an AMI
// release drifts nodes dynamically), so a new release changes this and not
// the hash: a drift rollout and a disruption breaker follow it as they
// follow a spec change.
func (in *EC2NodeClass) Release() string {
	ids := make([]string, 0, len(in.Status.AMIs))
	for _, ami := range in.Status.AMIs {
		ids = append(ids, ami.ID)
	}
	if len(ids) == 0 {
		return ""
	}
	slices.Sort(ids)
	h := fnv.New64a()
	h.Write([]byte(strings.Join(slices.Compact(ids), ",")))
	return strconv.FormatUint(h.Sum64(), 36)
}
