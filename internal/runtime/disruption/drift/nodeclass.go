package drift

import (
	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

// Reasons a NodeClaim drifts from its EC2NodeClass, named as Karpenter's
// AWS provider names them.
const (
	NodeClassDrift = "NodeClassDrift"
	AMIDrift       = "AMIDrift"
)

// NodeClassHash is NodeClassDrift when the EC2NodeClass hash stamped on
// claim at launch differs from want (the class's hash annotations now),
// both computed by the same hash version; a claim stamped by another
// version is not judged.
func NodeClassHash(want map[string]string, claim *v1.NodeClaim) string {
	got, ok := claim.Annotations[v1.EC2NodeClassHashAnnotationKey]
	if !ok || claim.Annotations[v1.EC2NodeClassHashVersionAnnotationKey] != want[v1.EC2NodeClassHashVersionAnnotationKey] {
		return ""
	}
	if got != want[v1.EC2NodeClassHashAnnotationKey] {
		return NodeClassDrift
	}
	return ""
}

// AMI is AMIDrift when an instance running imageID, of a type with these
// labels, would not be launched with that image by a node class resolved
// to amis. Nothing is judged without an image or resolved AMIs.
func AMI(imageID string, amis []awsv1.AMI, labels map[string]string) string {
	if imageID == "" || len(amis) == 0 {
		return ""
	}
	for _, a := range amis {
		if a.ID != imageID {
			continue
		}
		if _, ok := awsv1.AMIForLabels([]awsv1.AMI{a}, labels); ok {
			return ""
		}
	}
	return AMIDrift
}
