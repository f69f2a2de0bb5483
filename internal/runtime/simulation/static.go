package simulation

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/state"
)

// StaticCount is how a static pool's claims stand.
type StaticCount struct {
	// Active claims are neither going away nor held by a disruption.
	Active int
	// Launching are the active claims whose instance is not launched yet.
	Launching int
	// Deleting claims (or their Nodes) have a deletion timestamp.
	Deleting int
	// PendingDisruption claims are tainted by a disruption command that is
	// launching their replacements.
	PendingDisruption int
}

// CountStatic counts the claims of pool among nodes; claims named in
// deleted count as deleting whatever the cache says yet.
func CountStatic(nodes []*state.StateNode, pool string, deleted map[string]bool) StaticCount {
	var c StaticCount
	for _, n := range nodes {
		if n.NodeClaim == nil || n.NodePool() != pool {
			continue
		}
		switch {
		case deleted[n.NodeClaim.Name] || n.NodeClaim.DeletionTimestamp != nil || (n.Node != nil && n.Node.DeletionTimestamp != nil):
			c.Deleting++
		case n.Node != nil && v1.HasDisruptedTaint(n.Node):
			c.PendingDisruption++
		default:
			c.Active++
			if !meta.IsStatusConditionTrue(n.NodeClaim.Status.Conditions, v1.ConditionTypeLaunched) {
				c.Launching++
			}
		}
	}
	return c
}

// NodeRoom is how many more claims limits.nodes lets a static pool with
// these claims launch: every claim counts, deleting and replacing ones too,
// since their instances still run. limited is false when the pool sets no
// node limit. A negative limit (the CRD refuses one; an object stored
// before may hold it) leaves no room, as in Karpenter.
func (c StaticCount) NodeRoom(limits v1.Limits) (room int64, limited bool) {
	q, ok := limits[ResourceNodes]
	if !ok {
		return 0, false
	}
	return max(0, q.Value()-int64(c.Active+c.Deleting+c.PendingDisruption)), true
}

// StaticClaim is the claim a static NodePool launches for one replica: its
// template's requirements, the cheapest instance types they allow first,
// and the DaemonSet overhead as requests. Static pools launch for no pod,
// so the solver places a single placeholder that asks for nothing and
// tolerates every taint, in that pool alone.
func StaticClaim(snap *state.Snapshot, pool *v1.NodePool, its []*scheduling.InstanceType, opts scheduling.Options) (*scheduling.NewClaim, error) {
	sp := SolverPool(pool, its, nil)
	// limits.nodes, the only limit a static pool may set, is counted by
	// the caller against the pool's claims.
	sp.Limits = nil
	placeholder := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "static", Name: pool.Name, UID: types.UID("static-" + string(pool.UID))},
		Spec:       corev1.PodSpec{Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}}},
	}
	plan, err := scheduling.Solve(scheduling.Input{
		NodePools:       []*scheduling.NodePool{sp},
		DaemonSets:      DaemonSetPods(snap.DaemonSets, snap.LimitRanges),
		Pods:            []*corev1.Pod{placeholder},
		NamespaceLabels: snap.NamespaceLabels,
		Options:         opts,
	})
	if err != nil {
		return nil, err
	}
	if len(plan.Errors) > 0 {
		return nil, plan.Errors[0].Err
	}
	if len(plan.NewClaims) != 1 {
		return nil, fmt.Errorf("nodepool %q: no instance type satisfies its requirements", pool.Name)
	}
	nc := plan.NewClaims[0]
	nc.Pods = nil
	return nc, nil
}

// StaticLaunchBatch is how many NodeClaims of one static pool may be
// launching (created, instance not launched yet) at once. A pass creates
// at most this many less those still launching, so a large replicas (or a
// typo in it) grows the pool batch by batch, each waiting for the previous
// one's launches, rather than all at once; events report the progress.
// Karpenter creates every missing replica in one pass.
const StaticLaunchBatch = 10

// StaticToLaunch is how many claims a pool with replicas wanted and limits
// may launch now: none while the active and replacing ones reach replicas;
// else up to replicas minus the active ones, as far as limits.nodes
// (StaticCount.NodeRoom) and StaticLaunchBatch allow.
func StaticToLaunch(c StaticCount, replicas int64, limits v1.Limits) int64 {
	if int64(c.Active+c.PendingDisruption) >= replicas {
		return 0
	}
	want := min(replicas-int64(c.Active), StaticLaunchBatch-int64(c.Launching))
	if room, limited := c.NodeRoom(limits); limited {
		want = min(want, room)
	}
	return max(0, want)
}
