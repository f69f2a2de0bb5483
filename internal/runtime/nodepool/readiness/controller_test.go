package readiness

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

func TestReadyFollowsNodeClassAndValidation(t *testing.T) {
	pool := &v1.NodePool{}
	set(pool, v1.ConditionTypeValidationSucceeded, metav1.ConditionTrue, v1.ConditionTypeValidationSucceeded, "")
	set(pool, v1.ConditionTypeNodeClassReady, metav1.ConditionUnknown, "NodeClassReadinessUnknown", "")
	setRoot(pool)
	if c := meta.FindStatusCondition(pool.Status.Conditions, v1.ConditionTypeReady); c.Status != metav1.ConditionUnknown || c.Message != "NodeClassReady=Unknown" {
		t.Errorf("Ready %s %q while the node class is unknown", c.Status, c.Message)
	}
	set(pool, v1.ConditionTypeNodeClassReady, metav1.ConditionTrue, v1.ConditionTypeNodeClassReady, "")
	setRoot(pool)
	if !meta.IsStatusConditionTrue(pool.Status.Conditions, v1.ConditionTypeReady) {
		t.Error("Ready not True with a ready node class and a valid template")
	}
	set(pool, v1.ConditionTypeValidationSucceeded, metav1.ConditionFalse, "NodePoolValidationFailed", "bad")
	setRoot(pool)
	if c := meta.FindStatusCondition(pool.Status.Conditions, v1.ConditionTypeReady); c.Status != metav1.ConditionFalse {
		t.Errorf("Ready %s with a failed validation", c.Status)
	}
}

func TestValidate(t *testing.T) {
	pool := &v1.NodePool{Spec: v1.NodePoolSpec{Template: v1.NodeClaimTemplate{Spec: v1.NodeClaimTemplateSpec{Requirements: v1.Requirements{
		{Key: v1.LabelInstanceCPU, Operator: corev1.NodeSelectorOpGt, Values: []string{"4"}},
	}}}}}
	if err := Validate(pool); err != nil {
		t.Errorf("valid pool rejected: %v", err)
	}
	pool.Spec.Template.Spec.Requirements = append(pool.Spec.Template.Spec.Requirements,
		v1.NodeSelectorRequirementWithMinValues{Key: v1.LabelInstanceCPU, Operator: corev1.NodeSelectorOpLt, Values: []string{"many"}})
	if err := Validate(pool); err == nil {
		t.Error("a non-integer Lt bound was accepted")
	}
}
