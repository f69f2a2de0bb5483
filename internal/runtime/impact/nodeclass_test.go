package impact

import (
	"maps"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
)

func amd64AMI(id string) awsv1.AMI {
	return awsv1.AMI{ID: id, Requirements: []corev1.NodeSelectorRequirement{{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"amd64"}}}}
}

// liveClass is EC2NodeClass "default" as the controller leaves it: stamped
// with its hash, resolved to ami-old, which the nodes of w run.
func liveClass(w *world) *awsv1.EC2NodeClass {
	nc := &awsv1.EC2NodeClass{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Spec: awsv1.EC2NodeClassSpec{
		Role: "node", AMISelectorTerms: []awsv1.AMISelectorTerm{{Alias: "al2023@latest"}},
	}}
	nc.Annotations = nc.HashAnnotations("ca")
	nc.Status.AMIs = []awsv1.AMI{amd64AMI("ami-old")}
	for i := range w.c.NodeClaims {
		maps.Copy(w.c.NodeClaims[i].Annotations, nc.Annotations)
		w.c.NodeClaims[i].Status.ImageID = "ami-old"
	}
	return nc
}

func (w *world) predictClass(pool *v1.NodePool, change *NodeClassChange) *Result {
	base := map[string][]*scheduling.InstanceType{}
	for _, p := range w.c.NodePools {
		base[p.Name] = catalog()
	}
	return Predict(Input{Cluster: w.c, Planned: pool, BaseTypes: base, PlannedBaseTypes: catalog(), Now: now, NodeClass: change})
}

// TestPinnedAMIReplacesNodesOnTheOldImage: pinning the class to another
// release drifts every node on the old image (AMIDrift), replaced in the
// budget's waves at the same offerings' prices; pinning the release the
// nodes run drifts none.
func TestPinnedAMIReplacesNodesOnTheOldImage(t *testing.T) {
	w, pool := tenSpotNodes()
	live := liveClass(w)
	pinned := live.DeepCopy()
	pinned.Spec.AMISelectorTerms = []awsv1.AMISelectorTerm{{Alias: "al2023@v20261101"}}
	pinned.Status.AMIs = []awsv1.AMI{amd64AMI("ami-new")}
	res := w.predictClass(pool, &NodeClassChange{Current: live, Planned: pinned})
	if res.Drifted != 10 || res.Replaced != 10 || res.Waves != 5 || res.AllowedAtOnce != 2 {
		t.Errorf("pinned: drifted %d, replaced %d in %d waves of %d; want 10, 10 in 5 of 2", res.Drifted, res.Replaced, res.Waves, res.AllowedAtOnce)
	}
	if res.CostAfter > res.CostNow+1e-9 {
		t.Errorf("pinned: cost $%.4f/h → $%.4f/h; the offerings are the same", res.CostNow, res.CostAfter)
	}
	if claim := &w.c.NodeClaims[0]; (&NodeClassChange{Current: live, Planned: pinned}).Drift(claim, claim.Labels) != "AMIDrift" {
		t.Errorf("the reason is not AMIDrift")
	}

	same := live.DeepCopy()
	same.Spec.AMISelectorTerms = []awsv1.AMISelectorTerm{{Alias: "al2023@v20261001"}}
	if res := w.predictClass(pool, &NodeClassChange{Current: live, Planned: same}); res.Drifted != 0 {
		t.Errorf("pinned to the running image: %d drifted, want 0", res.Drifted)
	}
}

// TestHashedNodeClassChangeDriftsEveryNode: a change of a hashed field
// (user data) drifts every node of the class (NodeClassDrift), though the
// live class was stamped with a CA bundle the prediction does not know.
func TestHashedNodeClassChangeDriftsEveryNode(t *testing.T) {
	w, pool := tenSpotNodes()
	live := liveClass(w)
	changed := live.DeepCopy()
	changed.Spec.UserData = new("echo hi")
	change := &NodeClassChange{Current: live, Planned: changed}
	if res := w.predictClass(pool, change); res.Drifted != 10 {
		t.Errorf("user data changed: %d drifted, want 10", res.Drifted)
	}
	if claim := &w.c.NodeClaims[0]; change.Drift(claim, claim.Labels) != "NodeClassDrift" {
		t.Errorf("the reason is not NodeClassDrift")
	}
	// A claim of another class is not this change's.
	other := w.c.NodeClaims[0].DeepCopy()
	other.Spec.NodeClassRef = &v1.NodeClassReference{Group: v1.AWSGroup, Kind: "EC2NodeClass", Name: "other"}
	if got := change.Drift(other, other.Labels); got != "" {
		t.Errorf("a claim of another class: %q", got)
	}
}
