package readiness

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/state/nodepoolhealth"
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

// TestRegistrationHealthResets: NodeRegistrationHealthy starts Unknown,
// goes back to Unknown (its record forgotten) when the pool's spec or its
// node class changes, and after a restart its stored value seeds the
// record again.
func TestRegistrationHealthResets(t *testing.T) {
	health := nodepoolhealth.New()
	c := &Controller{health: health}
	pool := &v1.NodePool{ObjectMeta: metav1.ObjectMeta{UID: "pool", Generation: 1}}
	registration := func() *metav1.Condition {
		return meta.FindStatusCondition(pool.Status.Conditions, v1.ConditionTypeNodeRegistrationHealthy)
	}
	observe := func(gen int64) {
		c.registrationHealth(pool, gen)
		pool.Status.NodeClassObservedGeneration = gen
	}
	observe(1)
	if got := registration(); got == nil || got.Status != metav1.ConditionUnknown {
		t.Fatalf("a new pool: %+v, want Unknown", got)
	}
	// The lifecycle records launches and sets the condition.
	health.Record(pool.UID, false)
	health.Record(pool.UID, false)
	meta.SetStatusCondition(&pool.Status.Conditions, metav1.Condition{Type: v1.ConditionTypeNodeRegistrationHealthy,
		Status: metav1.ConditionFalse, Reason: "RegistrationFailed", ObservedGeneration: 1})
	observe(1)
	if got := registration(); got.Status != metav1.ConditionFalse || health.Status(pool.UID) != nodepoolhealth.Unhealthy {
		t.Errorf("nothing changed, yet the condition is %s and the record %v", got.Status, health.Status(pool.UID))
	}
	observe(2)
	if got := registration(); got.Status != metav1.ConditionUnknown || health.Status(pool.UID) != nodepoolhealth.Unknown {
		t.Errorf("after a node class change: condition %s, record %v; want both Unknown", got.Status, health.Status(pool.UID))
	}
	meta.SetStatusCondition(&pool.Status.Conditions, metav1.Condition{Type: v1.ConditionTypeNodeRegistrationHealthy,
		Status: metav1.ConditionTrue, Reason: v1.ConditionTypeNodeRegistrationHealthy, ObservedGeneration: 1})
	health.Record(pool.UID, true)
	pool.Generation = 2
	observe(2)
	if got := registration(); got.Status != metav1.ConditionUnknown || got.ObservedGeneration != 2 || health.Status(pool.UID) != nodepoolhealth.Unknown {
		t.Errorf("after a spec change: condition %+v, record %v; want both Unknown", got, health.Status(pool.UID))
	}
	// A restart: an empty record, the condition stored False.
	meta.SetStatusCondition(&pool.Status.Conditions, metav1.Condition{Type: v1.ConditionTypeNodeRegistrationHealthy,
		Status: metav1.ConditionFalse, Reason: "RegistrationFailed", ObservedGeneration: 2})
	restarted := nodepoolhealth.New()
	c.health = restarted
	observe(2)
	if got := registration(); got.Status != metav1.ConditionFalse || restarted.Status(pool.UID) != nodepoolhealth.Unhealthy {
		t.Errorf("after a restart: condition %s, record %v; want False and Unhealthy", got.Status, restarted.Status(pool.UID))
	}
}
