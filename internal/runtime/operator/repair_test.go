package operator

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	awsprovider "github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/disruption/repair"
)

// TestAWSRepairPolicies checks the AWS policy set is one the NodeRepair
// gate starts with, and its tolerations are Karpenter AWS v1.15's.
func TestAWSRepairPolicies(t *testing.T) {
	m, err := repair.NewMatcher((*awsprovider.Provider)(nil).RepairPolicies())
	if err != nil {
		t.Fatal(err)
	}
	created := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		condition  corev1.NodeConditionType
		status     corev1.ConditionStatus
		reason     string
		toleration time.Duration
		drain      time.Duration
	}{
		{corev1.NodeReady, corev1.ConditionFalse, "KubeletNotReady", 30 * time.Minute, 10 * time.Minute},
		{corev1.NodeReady, corev1.ConditionUnknown, "NodeStatusUnknown", 30 * time.Minute, 10 * time.Minute},
		{"AcceleratedHardwareReady", corev1.ConditionFalse, "NvidiaXID79Error", 10 * time.Minute, 5 * time.Minute},
		{"AcceleratedHardwareReady", corev1.ConditionFalse, "NvidiaXID48Error", 10 * time.Minute, 5 * time.Minute},
		{"AcceleratedHardwareReady", corev1.ConditionFalse, "NvidiaXID13Error", 30 * time.Minute, 10 * time.Minute},
		{"StorageReady", corev1.ConditionFalse, "", 30 * time.Minute, 10 * time.Minute},
		{"NetworkingReady", corev1.ConditionFalse, "", 30 * time.Minute, 10 * time.Minute},
		{"KernelReady", corev1.ConditionFalse, "", 30 * time.Minute, 10 * time.Minute},
		{"ContainerRuntimeReady", corev1.ConditionFalse, "", 30 * time.Minute, 10 * time.Minute},
	} {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(created)}, Status: corev1.NodeStatus{
			Conditions: []corev1.NodeCondition{{Type: tc.condition, Status: tc.status, Reason: tc.reason, LastTransitionTime: metav1.NewTime(created)}}}}
		if r := m.Resolve(n, created.Add(tc.toleration-time.Second)); r.Eligible {
			t.Errorf("%s=%s (%s) eligible before %s", tc.condition, tc.status, tc.reason, tc.toleration)
		}
		r := m.Resolve(n, created.Add(tc.toleration))
		if !r.Eligible || r.TerminationGracePeriod == nil || *r.TerminationGracePeriod != tc.drain {
			t.Errorf("%s=%s (%s) after %s: %+v, want eligible with a %s drain", tc.condition, tc.status, tc.reason, tc.toleration, r, tc.drain)
		}
	}
	healthy := &corev1.Node{Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
	if m.Unhealthy(healthy) {
		t.Error("a Ready node counts as unhealthy")
	}
}
