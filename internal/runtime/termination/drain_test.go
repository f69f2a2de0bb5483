package termination

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/pods"
)

var now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

type podOpt func(*corev1.Pod)

func pod(name string, opts ...podOpt) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	for _, o := range opts {
		o(p)
	}
	return p
}

func daemon(p *corev1.Pod) {
	p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "ds", Controller: new(true)}}
}
func critical(p *corev1.Pod) { p.Spec.PriorityClassName = "system-node-critical" }
func doNotDisrupt(v string) podOpt {
	return func(p *corev1.Pod) { p.Annotations = map[string]string{v1.DoNotDisruptAnnotationKey: v} }
}
func grace(s int64) podOpt { return func(p *corev1.Pod) { p.Spec.TerminationGracePeriodSeconds = &s } }
func deletedAt(t time.Time) podOpt {
	return func(p *corev1.Pod) { p.DeletionTimestamp = &metav1.Time{Time: t} }
}

func names(pods []*corev1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return out
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestTierOf(t *testing.T) {
	for _, tc := range []struct {
		pod  *corev1.Pod
		want Tier
	}{
		{pod("app"), TierNonCritical},
		{pod("ds", daemon), TierNonCriticalDaemon},
		{pod("crit", critical), TierCritical},
		{pod("critds", critical, daemon), TierCriticalDaemon},
		{pod("cluster-crit", func(p *corev1.Pod) { p.Spec.PriorityClassName = "system-cluster-critical" }), TierCritical},
	} {
		if got := TierOf(tc.pod); got != tc.want {
			t.Errorf("TierOf(%s) = %d, want %d", tc.pod.Name, got, tc.want)
		}
	}
}

func TestPlanDrainEvictsOneTierAtATime(t *testing.T) {
	pods := []*corev1.Pod{pod("critds", critical, daemon), pod("ds", daemon), pod("crit", critical), pod("app1"), pod("app2")}
	plan := PlanDrain(pods, nil, now)
	if plan.Tier != TierNonCritical || !equal(names(plan.Evict), []string{"app1", "app2"}) {
		t.Fatalf("first pass evicts %v in tier %d, want app1, app2 in tier 0", names(plan.Evict), plan.Tier)
	}
	if len(plan.Waiting) != 3 {
		t.Fatalf("waiting %v, want the three later-tier pods", names(plan.Waiting))
	}
	// The tier drains in order as earlier tiers empty.
	for _, step := range []struct {
		left []*corev1.Pod
		want string
		tier Tier
	}{
		{pods[:3], "ds", TierNonCriticalDaemon},
		{[]*corev1.Pod{pods[0], pods[2]}, "crit", TierCritical},
		{pods[:1], "critds", TierCriticalDaemon},
	} {
		plan := PlanDrain(step.left, nil, now)
		if plan.Tier != step.tier || !equal(names(plan.Evict), []string{step.want}) {
			t.Errorf("with %v left: evict %v in tier %d, want %s in tier %d", names(step.left), names(plan.Evict), plan.Tier, step.want, step.tier)
		}
	}
	if !PlanDrain(nil, nil, now).Done() {
		t.Error("an empty node is not drained")
	}
}

func TestPlanDrainSkipsUndrainablePods(t *testing.T) {
	pods := []*corev1.Pod{
		pod("done", func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded }),
		pod("mirror", func(p *corev1.Pod) { p.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "x"} }),
		pod("tolerates", func(p *corev1.Pod) {
			p.Spec.Tolerations = []corev1.Toleration{{Key: v1.DisruptedTaintKey, Operator: corev1.TolerationOpExists}}
		}),
		pod("stuck", deletedAt(now.Add(-2*time.Minute))),
	}
	if plan := PlanDrain(pods, nil, now); !plan.Done() {
		t.Fatalf("plan acts on undrainable pods: evict %v, waiting %v", names(plan.Evict), names(plan.Waiting))
	}
	// A pod deleted recently is still waited for.
	plan := PlanDrain([]*corev1.Pod{pod("terminating", deletedAt(now.Add(-10*time.Second)))}, nil, now)
	if len(plan.Evict) != 0 || !equal(names(plan.Waiting), []string{"terminating"}) {
		t.Fatalf("terminating pod: evict %v waiting %v, want it waited for and not evicted again", names(plan.Evict), names(plan.Waiting))
	}
}

func TestPlanDrainWaitsForDoNotDisrupt(t *testing.T) {
	started := func(p *corev1.Pod) { p.Status.StartTime = &metav1.Time{Time: now.Add(-time.Minute)} }
	onNode := []*corev1.Pod{pod("protected", doNotDisrupt("true")), pod("app"), pod("ds", daemon)}
	plan := PlanDrain(onNode, nil, now)
	if !equal(names(plan.Evict), []string{"app"}) || !equal(names(plan.Waiting), []string{"protected", "ds"}) {
		t.Fatalf("evict %v waiting %v: the protected pod must be waited for and hold back the next tier", names(plan.Evict), names(plan.Waiting))
	}
	// A duration protects only until it has elapsed since the pod started.
	if plan := PlanDrain([]*corev1.Pod{pod("short", doNotDisrupt("30s"), started)}, nil, now); !equal(names(plan.Evict), []string{"short"}) {
		t.Errorf("an elapsed do-not-disrupt duration still protects: evict %v", names(plan.Evict))
	}
	if plan := PlanDrain([]*corev1.Pod{pod("long", doNotDisrupt("1h"), started)}, nil, now); len(plan.Evict) != 0 {
		t.Errorf("an active do-not-disrupt duration does not protect: evict %v", names(plan.Evict))
	}
	if _, ok := pods.HasDoNotDisrupt(pod("bad", doNotDisrupt("soon")), now); ok {
		t.Error("an invalid do-not-disrupt value is accepted")
	}
}

func TestPlanDrainDeadlineDeletesEarly(t *testing.T) {
	deadline := now.Add(60 * time.Second)
	pods := []*corev1.Pod{
		pod("quick", grace(30)),                            // due at deadline-30s: not yet
		pod("slow", grace(90)),                             // due at deadline-90s: now, with 60s left
		pod("protected", grace(60), doNotDisrupt("true")),  // due exactly now despite the annotation
		pod("critical-slow", grace(120), critical, daemon), // later tier, still deleted now
	}
	plan := PlanDrain(pods, &deadline, now)
	got := map[string]int64{}
	for _, d := range plan.Delete {
		got[d.Pod.Name] = d.GracePeriod
	}
	want := map[string]int64{"slow": 60, "protected": 60, "critical-slow": 60}
	if len(got) != len(want) {
		t.Fatalf("deleted %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("pod %s deleted with grace %d, want %d", k, got[k], v)
		}
	}
	if !equal(names(plan.Evict), []string{"quick"}) {
		t.Errorf("evict %v, want quick", names(plan.Evict))
	}
	// Past the deadline every pod goes with no grace left.
	late := now.Add(2 * time.Minute)
	plan = PlanDrain([]*corev1.Pod{pod("quick", grace(30))}, &deadline, late)
	if len(plan.Delete) != 1 || plan.Delete[0].GracePeriod != 0 {
		t.Errorf("past the deadline: delete %+v, want quick with grace 0", plan.Delete)
	}
	// A pod already deleting with a short enough grace is not deleted again.
	already := pod("quick", grace(30), deletedAt(late), func(p *corev1.Pod) { p.DeletionGracePeriodSeconds = new(int64) })
	if plan := PlanDrain([]*corev1.Pod{already}, &deadline, late); len(plan.Delete) != 0 || len(plan.Waiting) != 1 {
		t.Errorf("re-deletes a pod already deleting with grace 0: %+v", plan)
	}
}

func TestTerminationDeadline(t *testing.T) {
	claim := &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "c", DeletionTimestamp: &metav1.Time{Time: now}}}
	if TerminationDeadline(claim) != nil {
		t.Fatal("deadline without terminationGracePeriod")
	}
	claim.Spec.TerminationGracePeriod = &metav1.Duration{Duration: time.Hour}
	if d := TerminationDeadline(claim); d == nil || !d.Equal(now.Add(time.Hour)) {
		t.Fatalf("deadline %v, want %v", d, now.Add(time.Hour))
	}
	claim.Annotations = map[string]string{v1.NodeClaimTerminationTimestampAnnotationKey: now.Format(time.RFC3339)}
	if d, err := AnnotatedDeadline(claim); err != nil || !d.Equal(now) {
		t.Fatalf("annotated deadline %v, %v", d, err)
	}
	claim.Annotations[v1.NodeClaimTerminationTimestampAnnotationKey] = "tomorrow"
	if _, err := AnnotatedDeadline(claim); err == nil {
		t.Fatal("an unparsable deadline is accepted")
	}
}
