package static

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/state"
)

var now = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)

func node(name string, launched bool, pods ...*corev1.Pod) *state.StateNode {
	claim := &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1.NodePoolLabelKey: "static"},
		CreationTimestamp: metav1.NewTime(now.Add(-time.Hour))}}
	n := &state.StateNode{NodeClaim: claim, Pods: pods}
	if launched {
		claim.Status.ProviderID = "aws:///z/i-" + name
		n.Node = &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: claim.Labels}}
	}
	return n
}

func pod(opts ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "p"}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	for _, o := range opts {
		o(p)
	}
	return p
}

func daemon(p *corev1.Pod) {
	p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "ds", Controller: new(true)}}
}

func doNotDisrupt(p *corev1.Pod) {
	p.Annotations = map[string]string{v1.DoNotDisruptAnnotationKey: "true"}
}

func priority(v int32) func(*corev1.Pod) { return func(p *corev1.Pod) { p.Spec.Priority = new(v) } }

func names(claims []*v1.NodeClaim) []string {
	var out []string
	for _, c := range claims {
		out = append(out, c.Name)
	}
	return out
}

// TestScaleDownChoice: unlaunched claims go first, then nodes with only
// DaemonSet pods, then the rest cheapest to disrupt first, nodes with a
// do-not-disrupt pod last; other pools' and deleting claims never.
func TestScaleDownChoice(t *testing.T) {
	deleting := node("deleting", true)
	deleting.NodeClaim.DeletionTimestamp = &metav1.Time{Time: now}
	other := node("other", true)
	other.NodeClaim.Labels = map[string]string{v1.NodePoolLabelKey: "dynamic"}
	other.Node.Labels = other.NodeClaim.Labels
	nodes := []*state.StateNode{
		node("protected", true, pod(doNotDisrupt)),
		node("busy-important", true, pod(priority(1<<26)), pod()), // eviction costs 3 + 1
		node("busy", true, pod(), pod()),                          // 1 + 1
		node("daemons", true, pod(daemon)),
		node("daemons-protected", true, pod(daemon, doNotDisrupt)),
		node("pending", false),
		node("empty", true),
		deleting, other,
	}
	want := []string{"pending", "daemons", "empty", "busy", "busy-important", "daemons-protected", "protected"}
	for n := 0; n <= len(want); n++ {
		if got := names(ScaleDownChoice(nodes, "static", n, now)); !slices.Equal(got, want[:n]) {
			t.Errorf("choosing %d: %v, want %v", n, got, want[:n])
		}
	}
	if got := names(ScaleDownChoice(nodes, "static", 20, now)); !slices.Equal(got, want) {
		t.Errorf("choosing more than there are: %v, want %v", got, want)
	}
}
