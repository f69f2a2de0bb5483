package hash

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
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
