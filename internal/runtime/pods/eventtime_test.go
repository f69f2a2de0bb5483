package pods

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestEventTime(t *testing.T) {
	created := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	scheduled := created.Add(5 * time.Second)
	finished := created.Add(time.Hour)
	bound := func() *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(created)},
			Spec:       corev1.PodSpec{NodeName: "n1"},
			Status: corev1.PodStatus{Conditions: []corev1.PodCondition{
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(scheduled)},
			}},
		}
	}
	for _, tc := range []struct {
		name   string
		pod    func() *corev1.Pod
		want   time.Time
		counts bool
	}{
		{"unbound", func() *corev1.Pod { p := bound(); p.Spec.NodeName = ""; return p }, time.Time{}, false},
		{"daemonset", func() *corev1.Pod {
			p := bound()
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "ds"}}
			return p
		}, time.Time{}, false},
		{"bound by the scheduler", bound, scheduled, true},
		{"bound at creation", func() *corev1.Pod { p := bound(); p.Status.Conditions = nil; return p }, created, true},
		{"finished", func() *corev1.Pod {
			p := bound()
			p.Status.Phase = corev1.PodSucceeded
			p.Status.ContainerStatuses = []corev1.ContainerStatus{
				{State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{FinishedAt: metav1.NewTime(finished.Add(-time.Minute))}}},
				{State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{FinishedAt: metav1.NewTime(finished)}}},
			}
			return p
		}, finished, true},
		{"terminating", func() *corev1.Pod {
			p := bound()
			p.DeletionTimestamp = ptr.To(metav1.NewTime(finished.Add(30 * time.Second)))
			p.DeletionGracePeriodSeconds = ptr.To[int64](30)
			return p
		}, finished, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := EventTime(tc.pod())
			if ok != tc.counts || !got.Equal(tc.want) {
				t.Errorf("EventTime = %s, %v; want %s, %v", got, ok, tc.want, tc.counts)
			}
		})
	}
}
