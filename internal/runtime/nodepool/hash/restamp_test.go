package hash

import (
	"maps"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/disruption/drift"
)

func TestRestamp(t *testing.T) {
	want := map[string]string{v1.NodePoolHashAnnotationKey: "new", v1.NodePoolHashVersionAnnotationKey: "v9"}
	claim := &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{
		v1.NodePoolHashAnnotationKey: "old", v1.NodePoolHashVersionAnnotationKey: "v8"}}}
	if !Restamp(claim, v1.NodePoolHashAnnotationKey, v1.NodePoolHashVersionAnnotationKey, want) {
		t.Fatal("version change not re-stamped")
	}
	if claim.Annotations[v1.NodePoolHashAnnotationKey] != "new" || claim.Annotations[v1.NodePoolHashVersionAnnotationKey] != "v9" {
		t.Fatalf("annotations %v", claim.Annotations)
	}
	if Restamp(claim, v1.NodePoolHashAnnotationKey, v1.NodePoolHashVersionAnnotationKey, want) {
		t.Fatal("current version re-stamped")
	}
	// Same version, different hash: that is drift, left alone.
	claim.Annotations[v1.NodePoolHashAnnotationKey] = "other"
	if Restamp(claim, v1.NodePoolHashAnnotationKey, v1.NodePoolHashVersionAnnotationKey, want) || claim.Annotations[v1.NodePoolHashAnnotationKey] != "other" {
		t.Fatal("a drifted hash of the current version was overwritten")
	}
	// A drifted claim of an old version keeps its hash: it stays drifted.
	drifted := &v1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{v1.NodePoolHashAnnotationKey: "old", v1.NodePoolHashVersionAnnotationKey: "v8"}},
		Status:     v1.NodeClaimStatus{Conditions: []metav1.Condition{{Type: v1.ConditionTypeDrifted, Status: metav1.ConditionTrue}}},
	}
	Restamp(drifted, v1.NodePoolHashAnnotationKey, v1.NodePoolHashVersionAnnotationKey, want)
	if drifted.Annotations[v1.NodePoolHashAnnotationKey] != "old" || drifted.Annotations[v1.NodePoolHashVersionAnnotationKey] != "v9" {
		t.Fatalf("drifted claim annotations %v, want old hash with the new version", drifted.Annotations)
	}
}

// TestUpgradeFromJoistHashesDoesNotDrift checks a claim stamped by an
// earlier Joist (hash version joist-v1, Joist's own digest): re-stamping it
// to Karpenter's version and hash leaves it undrifted, while a claim that
// had already drifted keeps its old hash and stays drifted.
func TestUpgradeFromJoistHashesDoesNotDrift(t *testing.T) {
	pool := &v1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: "default"},
		Spec: v1.NodePoolSpec{Template: v1.NodeClaimTemplate{
			ObjectMeta: v1.ObjectMeta{Labels: map[string]string{"team": "a"}},
			Spec:       v1.NodeClaimTemplateSpec{NodeClassRef: &v1.NodeClassReference{Group: v1.AWSGroup, Kind: "EC2NodeClass", Name: "default"}},
		}},
	}
	pool.Annotations = pool.HashAnnotations()
	old := map[string]string{v1.NodePoolHashAnnotationKey: "4854894404761281177", v1.NodePoolHashVersionAnnotationKey: "joist-v1"}
	claim := &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Annotations: maps.Clone(old)}}
	if drift.Static(claim, pool) != "" {
		t.Fatal("a claim of another hash version drifted before re-stamping")
	}
	if !Restamp(claim, v1.NodePoolHashAnnotationKey, v1.NodePoolHashVersionAnnotationKey, pool.HashAnnotations()) {
		t.Fatal("a joist-v1 claim was not re-stamped")
	}
	if claim.Annotations[v1.NodePoolHashVersionAnnotationKey] != "v3" {
		t.Errorf("re-stamped version %s, want Karpenter's v3", claim.Annotations[v1.NodePoolHashVersionAnnotationKey])
	}
	if r := drift.Static(claim, pool); r != "" {
		t.Errorf("the re-stamped claim drifted: %s", r)
	}
	drifted := &v1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Annotations: maps.Clone(old)},
		Status:     v1.NodeClaimStatus{Conditions: []metav1.Condition{{Type: v1.ConditionTypeDrifted, Status: metav1.ConditionTrue}}},
	}
	Restamp(drifted, v1.NodePoolHashAnnotationKey, v1.NodePoolHashVersionAnnotationKey, pool.HashAnnotations())
	if drift.Static(drifted, pool) != drift.NodePoolDrifted {
		t.Error("a claim drifted before the upgrade is no longer drifted after it")
	}
}
