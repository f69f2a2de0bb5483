package disruption

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sevents "k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/disruption/repair"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/disruption/rollout"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/events"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/state"
)

// TestDriftHoldsToTheRolloutsAllowance: a pool rolling drift out starts
// no drifted node while its wave allows none, and does when it allows one;
// a pool without a rollout is bound by its budget alone.
func TestDriftHoldsToTheRolloutsAllowance(t *testing.T) {
	for _, tc := range []struct {
		allowed map[string]int
		want    string
	}{
		{nil, MethodDrift},
		{map[string]int{"default": 0}, ""},
		{map[string]int{"default": 1}, MethodDrift},
		{map[string]int{"other": 0}, MethodDrift},
	} {
		pool := mkPool("default")
		env := mkEnv([]*v1.NodePool{pool}, []*state.StateNode{
			mkNode("d", pool, 0, 4, v1.CapacityTypeOnDemand, []*corev1.Pod{mkPod("3")}, drifted(now.Add(-10*time.Minute)), notConsolidatable),
		}, 1)
		env.DriftAllowed = tc.allowed
		_, started, _ := deciding().decide(context.Background(), env)
		got := ""
		if started != nil {
			got = started.Method
		}
		if got != tc.want {
			t.Errorf("allowance %v: started %q, want %q", tc.allowed, got, tc.want)
		}
	}
}

// TestRolloutResumesAtTheSameWaveAfterRestart runs the rollout step
// against a real apiserver: the first controller starts a canary of one
// and records it on the NodePool; a second controller (a restart) reads
// the NodePool back and starts no second canary while the first
// replacement is not ready; once it is ready and baked, the next wave
// starts.
func TestRolloutResumesAtTheSameWaveAfterRestart(t *testing.T) {
	kube := apiserver(t)
	ctx := context.Background()
	pool := mkPool("rollout", poolAnnotated(v1.DriftRolloutAnnotationKey, "canary=1,bake=15m"))
	pool.Spec.Disruption.Budgets = []v1.Budget{{Nodes: "100%"}}
	if err := kube.Create(ctx, pool); err != nil {
		t.Fatal(err)
	}
	reload := func() *v1.NodePool {
		np := &v1.NodePool{}
		if err := kube.Get(ctx, client.ObjectKey{Name: pool.Name}, np); err != nil {
			t.Fatal(err)
		}
		return np
	}
	nodes := func(np *v1.NodePool) []*state.StateNode {
		var out []*state.StateNode
		for _, name := range []string{"a", "b", "c", "d"} {
			out = append(out, mkNode(name, np, 0, 4, v1.CapacityTypeOnDemand, nil, drifted(now.Add(-time.Hour))))
		}
		return out
	}
	step := func(at time.Time, extra ...*state.StateNode) *Env {
		np := reload()
		env := mkEnv([]*v1.NodePool{np}, append(nodes(np), extra...), 1)
		env.Now = at
		c := &Controller{kube: kube, clock: clocktesting.NewFakeClock(at), lastEvents: map[string]eventMemo{}}
		c.stepRollouts(ctx, env, map[string]string{np.Name: "v2"})
		return env
	}

	env := step(now)
	if got := env.DriftAllowed[pool.Name]; got != 1 {
		t.Fatalf("the canary allows %d, want 1", got)
	}
	c := &Controller{kube: kube, clock: clocktesting.NewFakeClock(now), lastEvents: map[string]eventMemo{}}
	cmd := &Command{Method: MethodDrift, Candidates: []*Candidate{{StateNode: env.Snapshot.Nodes[0], Pool: env.Snapshot.NodePools[0]}}}
	if err := c.startInRollout(ctx, env, cmd); err != nil {
		t.Fatal(err)
	}

	// Restarted, the replacement of a not ready yet.
	replacement := mkNode("a2", pool, 0, 4, v1.CapacityTypeOnDemand, nil)
	replacement.NodeClaim.Annotations = map[string]string{v1.ReplacementForAnnotationKey: "a"}
	replacement.Node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionFalse}}
	if got := step(now.Add(time.Minute), replacement).DriftAllowed[pool.Name]; got != 0 {
		t.Fatalf("after a restart, %d more start while the canary's replacement is not ready", got)
	}
	st := rollout.ParseState(reload().Annotations[v1.DriftRolloutStateAnnotationKey])
	if st.Wave != 0 || strings.Join(st.Members, ",") != "a" || st.BakeStart != nil {
		t.Fatalf("state after the restart %+v, want wave 0 with member a, not baking", st)
	}

	// Ready at 2m: the bake runs to 17m, across another restart.
	replacement.Node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
	if got := step(now.Add(2*time.Minute), replacement).DriftAllowed[pool.Name]; got != 0 {
		t.Fatalf("%d start as the bake begins", got)
	}
	if got := step(now.Add(16*time.Minute), replacement).DriftAllowed[pool.Name]; got != 0 {
		t.Fatalf("%d start before the bake ends", got)
	}
	if got := step(now.Add(17*time.Minute), replacement).DriftAllowed[pool.Name]; got != 5 {
		t.Fatalf("after the bake %d may start, want the budget: 100%% of the 5 nodes", got)
	}
}

// TestRolloutStopsOnAFailingReplacement: while the canary waits or
// bakes, a replacement that node repair would replace now, or one with a
// crash-looping pod, stops the rollout with a Warning on the pool; one that
// is not Ready yet within the repair toleration does not.
func TestRolloutStopsOnAFailingReplacement(t *testing.T) {
	kube := apiserver(t)
	ctx := context.Background()
	health, err := repair.NewMatcher([]cloud.RepairPolicy{
		{ConditionType: corev1.NodeReady, ConditionStatus: corev1.ConditionFalse, TolerationDuration: 30 * time.Minute, Action: cloud.ReplaceNode},
	})
	if err != nil {
		t.Fatal(err)
	}
	crashLooping := func(p *corev1.Pod) {
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c", RestartCount: 4,
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}}}
	}
	for i, tc := range []struct {
		name     string
		notReady time.Duration // how long the replacement's Node has been Ready=False; 0 is Ready
		pod      podOpt
		want     string // in the stop reason; "" is not stopped
	}{
		{"not ready within the toleration", time.Minute, nil, ""},
		{"needs node repair", 31 * time.Minute, nil, "needs node repair (Ready=False)"},
		{"crash-looping pod", 0, crashLooping, "is crash-looping on replacement"},
		{"healthy pod", 0, func(*corev1.Pod) {}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pool := mkPool(fmt.Sprintf("stop-%d", i), poolAnnotated(v1.DriftRolloutAnnotationKey, "canary=1,bake=15m"))
			if err := kube.Create(ctx, pool); err != nil {
				t.Fatal(err)
			}
			f := k8sevents.NewFakeRecorder(10)
			c := &Controller{kube: kube, clock: clocktesting.NewFakeClock(now), lastEvents: map[string]eventMemo{}, recorder: events.NewRecorder(f)}
			step := func(extra ...*state.StateNode) *Env {
				np := &v1.NodePool{}
				if err := kube.Get(ctx, client.ObjectKey{Name: pool.Name}, np); err != nil {
					t.Fatal(err)
				}
				nodes := []*state.StateNode{
					mkNode("a", np, 0, 4, v1.CapacityTypeOnDemand, nil, drifted(now.Add(-time.Hour))),
					mkNode("b", np, 0, 4, v1.CapacityTypeOnDemand, nil, drifted(now.Add(-time.Hour))),
				}
				env := mkEnv([]*v1.NodePool{np}, append(nodes, extra...), 1)
				env.Repair = health
				c.stepRollouts(ctx, env, map[string]string{np.Name: "v2"})
				return env
			}
			env := step()
			cmd := &Command{Method: MethodDrift, Candidates: []*Candidate{{StateNode: env.Snapshot.Nodes[0], Pool: env.Snapshot.NodePools[0]}}}
			if err := c.startInRollout(ctx, env, cmd); err != nil {
				t.Fatal(err)
			}

			var pods []*corev1.Pod
			if tc.pod != nil {
				pods = append(pods, mkPod("1", tc.pod))
			}
			replacement := mkNode("a2", pool, 0, 4, v1.CapacityTypeOnDemand, pods)
			replacement.NodeClaim.Annotations = map[string]string{v1.ReplacementForAnnotationKey: "a"}
			ready := corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionTrue}
			if tc.notReady > 0 {
				ready = corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionFalse, LastTransitionTime: metav1.NewTime(now.Add(-tc.notReady))}
				replacement.Node.CreationTimestamp = metav1.NewTime(now.Add(-time.Hour))
			}
			replacement.Node.Status.Conditions = []corev1.NodeCondition{ready}
			allowed := step(replacement).DriftAllowed[pool.Name]

			np := &v1.NodePool{}
			if err := kube.Get(ctx, client.ObjectKey{Name: pool.Name}, np); err != nil {
				t.Fatal(err)
			}
			st := rollout.ParseState(np.Annotations[v1.DriftRolloutStateAnnotationKey])
			var got []string
			for len(f.Events) > 0 {
				got = append(got, <-f.Events)
			}
			if tc.want == "" {
				if st.Failed != "" || len(got) != 0 {
					t.Fatalf("stopped: %q, events %q", st.Failed, got)
				}
				return
			}
			if !strings.Contains(st.Failed, tc.want) || allowed != 0 {
				t.Fatalf("rollout state %+v, %d allowed; want stopped with %q", st, allowed, tc.want)
			}
			if len(got) != 1 || !strings.Contains(got[0], reasonDriftRolloutStopped) || !strings.Contains(got[0], tc.want) {
				t.Fatalf("events %q, want one %s naming %q", got, reasonDriftRolloutStopped, tc.want)
			}
		})
	}
}
