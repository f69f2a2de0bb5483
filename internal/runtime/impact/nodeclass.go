package impact

import (
	"maps"

	corev1 "k8s.io/api/core/v1"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/disruption/drift"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
)

// NodeClassChange is a planned change of an EC2NodeClass.
type NodeClassChange struct {
	// Current is the class as live: its hash annotations as the controller
	// stamped them, its status as resolved.
	Current *awsv1.EC2NodeClass
	// Planned is the class as the plan writes it, its Status.AMIs what its
	// AMI selector terms resolve to now.
	Planned *awsv1.EC2NodeClass
}

// ClassSpec is a node class's part of a pool's spec identity
// (rollout.SpecIdentity): its hash annotations and the release it
// resolves.
type ClassSpec struct {
	Hashes  map[string]string
	Release string
}

// specs are the class's part of the pools' spec identity before and after
// the change; zero for no change.
func (c *NodeClassChange) specs() (before, after ClassSpec) {
	if c == nil {
		return ClassSpec{}, ClassSpec{}
	}
	b, a := c.hashes()
	return ClassSpec{b, c.Current.Release()}, ClassSpec{a, c.Planned.Release()}
}

// hashes are the class's hash annotations before and after the change,
// hashed alike (the CA bundle the controller adds is the same on both
// sides, so leaving it out changes no comparison); nil for no change.
func (c *NodeClassChange) hashes() (before, after map[string]string) {
	if c == nil {
		return nil, nil
	}
	return c.Current.HashAnnotations(""), c.Planned.HashAnnotations("")
}

// Drift is the drift the controller will find on claim against the planned
// class, by the controller's rules (drift.NodeClassHash, drift.AMI); labels
// are those of the claim's instance type. A claim stamped with the live
// class's hash is judged as stamped with the current spec's, so only the
// change counts. "" for a claim of another class, or no change.
func (c *NodeClassChange) Drift(claim *v1.NodeClaim, labels map[string]string) string {
	if c == nil || claim.Spec.NodeClassRef == nil || claim.Spec.NodeClassRef.Name != c.Planned.Name {
		return ""
	}
	before, after := c.hashes()
	live := c.Current.Annotations[v1.EC2NodeClassHashAnnotationKey]
	if stamp := claim.Annotations[v1.EC2NodeClassHashAnnotationKey]; stamp != "" && (live == "" || stamp == live) {
		claim = claim.DeepCopy()
		maps.Copy(claim.Annotations, before)
	}
	if reason := drift.NodeClassHash(after, claim); reason != "" {
		return reason
	}
	return drift.AMI(claim.Status.ImageID, c.Planned.Status.AMIs, labels)
}

// typeLabels are the labels of claim's instance type in its, as the
// controller picks an AMI by them; the claim's own labels (which carry
// them) when the type is not listed.
func typeLabels(claim *v1.NodeClaim, its []*scheduling.InstanceType) map[string]string {
	for _, it := range its {
		if it.Name == claim.Labels[corev1.LabelInstanceTypeStable] {
			return it.Labels
		}
	}
	return claim.Labels
}
