package disruption

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/disruption/rollout"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/state"
)

func poolAnnotated(kv ...string) poolOpt {
	return func(p *v1.NodePool) {
		p.Annotations = map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			p.Annotations[kv[i]] = kv[i+1]
		}
	}
}

// decideHeld decides a pass over a drifted node and an empty one of pool
// under the cluster pause, returning the methods that started or batched
// a command.
func decideHeld(t *testing.T, pool *v1.NodePool, cluster ClusterPause) []string {
	t.Helper()
	return decideWith(t, pool, func(env *Env) { env.Holds = Holds(env, cluster, nil) })
}

// decideWith decides a pass over a drifted node of pool, then one over an
// empty node, each Env prepared by prep, returning the methods that
// started or batched a command.
func decideWith(t *testing.T, pool *v1.NodePool, prep func(*Env)) []string {
	t.Helper()
	nodes := []*state.StateNode{
		mkNode("d", pool, 0, 4, v1.CapacityTypeOnDemand, []*corev1.Pod{mkPod("3")}, drifted(now.Add(-10*time.Minute)), notConsolidatable),
	}
	env := mkEnv([]*v1.NodePool{pool}, nodes, 1)
	prep(env)
	batch, started, _ := deciding().decide(context.Background(), env)
	var out []string
	if started != nil {
		out = append(out, started.Method)
	}
	for _, cmd := range batch {
		out = append(out, cmd.Method)
	}
	// The empty node, alone: emptiness.
	env = mkEnv([]*v1.NodePool{pool}, []*state.StateNode{mkNode("e", pool, 0, 4, v1.CapacityTypeOnDemand, nil)}, 1)
	prep(env)
	batch, started, _ = deciding().decide(context.Background(), env)
	if started != nil {
		out = append(out, started.Method)
	}
	for _, cmd := range batch {
		out = append(out, cmd.Method)
	}
	return out
}

// TestDisruptionControlsHoldVoluntaryDisruption: a pool's pause, the
// cluster's pause and a pause that cannot be read hold drift and
// emptiness; observe-only drift holds drift alone; a pool with no controls
// is disrupted as before.
func TestDisruptionControlsHoldVoluntaryDisruption(t *testing.T) {
	for _, tc := range []struct {
		name    string
		pool    *v1.NodePool
		cluster ClusterPause
		want    string
	}{
		{"no controls", mkPool("default"), ClusterPause{}, MethodDrift + "," + MethodEmptiness},
		{"pool paused", mkPool("default", poolAnnotated(v1.DisruptionPausedAnnotationKey, "true")), ClusterPause{}, ""},
		{"pool unpaused", mkPool("default", poolAnnotated(v1.DisruptionPausedAnnotationKey, "false")), ClusterPause{}, MethodDrift + "," + MethodEmptiness},
		{"cluster paused", mkPool("default"), ClusterPause{Paused: true}, ""},
		{"cluster pause unreadable", mkPool("default"), ClusterPause{Err: errors.New("forbidden")}, ""},
		{"invalid pause", mkPool("default", poolAnnotated(v1.DisruptionPausedAnnotationKey, "maybe")), ClusterPause{}, ""},
		{"observe drift", mkPool("default", poolAnnotated(v1.DriftModeAnnotationKey, "observe")), ClusterPause{}, MethodEmptiness},
		{"replace drift", mkPool("default", poolAnnotated(v1.DriftModeAnnotationKey, "replace")), ClusterPause{}, MethodDrift + "," + MethodEmptiness},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := strings.Join(decideHeld(t, tc.pool, tc.cluster), ","); got != tc.want {
				t.Errorf("decided %q, want %q", got, tc.want)
			}
		})
	}
}

// TestHoldsNeverHoldRepair: node repair is not voluntary disruption.
func TestHoldsNeverHoldRepair(t *testing.T) {
	pool := mkPool("default", poolAnnotated(v1.DisruptionPausedAnnotationKey, "true", v1.DriftModeAnnotationKey, "observe"))
	h := Holds(mkEnv([]*v1.NodePool{pool}, nil, 1), ClusterPause{Paused: true}, nil)["default"]
	if why := h.blocks(v1.DisruptionReasonUnhealthy); why != "" {
		t.Errorf("repair held: %s", why)
	}
	for _, r := range []v1.DisruptionReason{v1.DisruptionReasonDrifted, v1.DisruptionReasonEmpty, v1.DisruptionReasonUnderutilized} {
		if h.blocks(r) == "" {
			t.Errorf("%s not held", r)
		}
	}
	if h.Reason != v1.DisruptionPausedReasonNodePool {
		t.Errorf("reason %q, want the pool's own pause", h.Reason)
	}
}

// openRecord is a breaker record for spec opened by three failures.
func openRecord(spec, reset string) string { return failedRecord(spec, reset, 3) }

// failedRecord is a breaker record for spec with n failures in the last
// minutes.
func failedRecord(spec, reset string, n int) string {
	r := rollout.Record{Spec: spec, Reset: reset}
	for i := range n {
		r = r.Fail(now.Add(time.Duration(i-n)*time.Minute), rollout.PoolDefault)
	}
	return r.Encode()
}

// TestBreakerHoldsVoluntaryDisruption: a pool whose breaker record (as a
// previous controller persisted it) is open for its current spec is not
// disrupted; a changed spec or a new reset token closes it; failures
// across pools open the cluster's breaker for every pool.
func TestBreakerHoldsVoluntaryDisruption(t *testing.T) {
	for _, tc := range []struct {
		name    string
		pool    *v1.NodePool
		specs   map[string]string
		cluster ClusterPause
		want    string
	}{
		{"open", mkPool("default", poolAnnotated(v1.DisruptionBreakerStateAnnotationKey, openRecord("s1", ""))), map[string]string{"default": "s1"}, ClusterPause{}, ""},
		{"open, node class unreadable", mkPool("default", poolAnnotated(v1.DisruptionBreakerStateAnnotationKey, openRecord("s1", ""))), nil, ClusterPause{}, ""},
		{"spec changed", mkPool("default", poolAnnotated(v1.DisruptionBreakerStateAnnotationKey, openRecord("s1", ""))), map[string]string{"default": "s2"}, ClusterPause{}, MethodDrift + "," + MethodEmptiness},
		{"reset", mkPool("default", poolAnnotated(v1.DisruptionBreakerStateAnnotationKey, openRecord("s1", ""), v1.DisruptionBreakerResetAnnotationKey, "r1")),
			map[string]string{"default": "s1"}, ClusterPause{}, MethodDrift + "," + MethodEmptiness},
		{"reset seen", mkPool("default", poolAnnotated(v1.DisruptionBreakerStateAnnotationKey, openRecord("s1", "r1"), v1.DisruptionBreakerResetAnnotationKey, "r1")),
			map[string]string{"default": "s1"}, ClusterPause{}, ""},
		{"pool closed", mkPool("default", poolAnnotated(v1.DisruptionBreakerStateAnnotationKey, failedRecord("s1", "", 2))), map[string]string{"default": "s1"},
			ClusterPause{}, MethodDrift + "," + MethodEmptiness},
		{"cluster breaker", mkPool("default", poolAnnotated(v1.DisruptionBreakerStateAnnotationKey, failedRecord("s1", "", 2))), map[string]string{"default": "s1"},
			ClusterPause{Breaker: rollout.Policy{Failures: 2, Window: time.Hour}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := decideWith(t, tc.pool, func(env *Env) { env.Holds = Holds(env, tc.cluster, tc.specs) })
			if strings.Join(got, ",") != tc.want {
				t.Errorf("decided %q, want %q", strings.Join(got, ","), tc.want)
			}
		})
	}
}

// TestSpecIdentityFollowsTheNodeClassRelease: a new AMI release leaves the
// EC2NodeClass's hash as it was (the hash ignores the AMI selector) and
// must still change what the breaker and the drift rollout count against,
// so the release that fixes a broken one starts a new rollout and closes
// the breaker. The AMIs' order is no change, and a node class with none
// resolved has no identity yet.
func TestSpecIdentityFollowsTheNodeClassRelease(t *testing.T) {
	kind := cloud.NodeClassKind{
		HashAnnotations: func(nc cloud.NodeClass) map[string]string { return nc.(*awsv1.EC2NodeClass).HashAnnotations("") },
		Release:         func(nc cloud.NodeClass) string { return nc.(*awsv1.EC2NodeClass).Release() },
	}
	pool := mkPool("default", poolAnnotated(v1.NodePoolHashAnnotationKey, "p1"))
	class := func(amis ...string) *awsv1.EC2NodeClass {
		nc := &awsv1.EC2NodeClass{Spec: awsv1.EC2NodeClassSpec{AMISelectorTerms: []awsv1.AMISelectorTerm{{Alias: "al2023@latest"}}}}
		for _, id := range amis {
			nc.Status.AMIs = append(nc.Status.AMIs, awsv1.AMI{ID: id})
		}
		return nc
	}
	before, ok := identity(pool, kind, class("ami-x86-1", "ami-arm-1"))
	if !ok {
		t.Fatal("no identity for a node class with AMIs resolved")
	}
	if got, _ := identity(pool, kind, class("ami-arm-1", "ami-x86-1")); got != before {
		t.Errorf("the same AMIs in another order: identity %q, want %q", got, before)
	}
	if got, _ := identity(pool, kind, class("ami-x86-2", "ami-arm-1")); got == before {
		t.Errorf("a new AMI release left the identity at %q", got)
	}
	if _, ok := identity(pool, kind, class()); ok {
		t.Error("a node class with no AMI resolved has an identity; a transient resolution failure would pass for a new release")
	}
}
