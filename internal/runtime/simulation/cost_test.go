package simulation

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

// costPod is a pod as the cost rules see it: annotations and priority.
func costPod(opts ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{}
	for _, o := range opts {
		o(p)
	}
	return p
}

func TestEvictionAndDisruptionCost(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want float64
	}{
		{"plain", costPod(), 1},
		{"deletion cost", costPod(func(p *corev1.Pod) {
			p.Annotations = map[string]string{podDeletionCostAnnotation: "134217728"} // 2^27
		}), 2},
		{"negative priority", costPod(func(p *corev1.Pod) { p.Spec.Priority = new(int32(-1 << 25)) }), 0},
		{"clamped high", costPod(func(p *corev1.Pod) { p.Spec.Priority = new(int32(1 << 30)) }), 10},
		{"clamped low", costPod(func(p *corev1.Pod) {
			p.Annotations = map[string]string{podDeletionCostAnnotation: "-2147483648"}
		}), -10},
	} {
		if got := EvictionCost(tc.pod); got != tc.want {
			t.Errorf("%s: eviction cost %v, want %v", tc.name, got, tc.want)
		}
	}
	claim := &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(now.Add(-3 * time.Hour))}}
	if got := LifetimeRemaining(claim, now); got != 1 {
		t.Errorf("never-expiring claim has %v lifetime left, want 1", got)
	}
	d := 4 * time.Hour
	claim.Spec.ExpireAfter = v1.NillableDuration{Duration: &d}
	if got := LifetimeRemaining(claim, now); got != 0.25 {
		t.Errorf("lifetime left %v, want 0.25", got)
	}
	if got := DisruptionCost(claim, []*corev1.Pod{costPod(), costPod()}, now); got != 0.5 {
		t.Errorf("disruption cost %v, want 2 pods x 0.25 = 0.5", got)
	}
	claim.CreationTimestamp = metav1.NewTime(now.Add(-5 * time.Hour))
	if got := LifetimeRemaining(claim, now); got != 0 {
		t.Errorf("expired claim has %v lifetime left, want 0", got)
	}
}

func TestRescheduleCost(t *testing.T) {
	for _, tc := range []struct {
		name string
		pods []*corev1.Pod
		want float64
	}{
		{"no pods", nil, 1},
		{"one plain pod", []*corev1.Pod{costPod()}, 2},
		{"negative costs add nothing", []*corev1.Pod{costPod(), costPod(func(p *corev1.Pod) {
			p.Annotations = map[string]string{podDeletionCostAnnotation: "-2147483648"}
		})}, 2},
		{"a small positive cost counts", []*corev1.Pod{costPod(func(p *corev1.Pod) {
			p.Annotations = map[string]string{podDeletionCostAnnotation: "-134217727"} // 1 - (2^27-1)/2^27
		})}, 1 + 1/float64(1<<27)},
	} {
		if got := RescheduleCost(tc.pods); got != tc.want {
			t.Errorf("%s: reschedule cost %v, want %v", tc.name, got, tc.want)
		}
	}
}
