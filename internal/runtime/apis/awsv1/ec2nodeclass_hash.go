package awsv1

import (
	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/structhash"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

// EC2NodeClassHashVersion versions the EC2NodeClass static-drift hash (see
// v1.NodePoolHashVersion for when to bump it and why it is not Karpenter's).
const EC2NodeClassHashVersion = "joist-v2"

// Hash is the static-drift hash of the EC2NodeClass: its spec except the
// selector terms (their resolved values drift nodes dynamically) and
// ipPrefixCount, with the AMI family as resolved rather than as written, so
// that spelling out the family an alias implies does not drift nodes.
func (in *EC2NodeClass) Hash() string {
	return structhash.Hash(struct {
		Spec      EC2NodeClassSpec
		AMIFamily string
	}{in.Spec, in.AMIFamily()})
}

// HashAnnotations are the hash and version annotations to stamp on the
// EC2NodeClass and on each NodeClaim launched with it.
func (in *EC2NodeClass) HashAnnotations() map[string]string {
	return map[string]string{
		v1.EC2NodeClassHashAnnotationKey:        in.Hash(),
		v1.EC2NodeClassHashVersionAnnotationKey: EC2NodeClassHashVersion,
	}
}
