package provisioning

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/metrics"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/simulation"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/state"
)

// StaticClaim is the claim a static NodePool launches for one replica: its
// template's requirements, the cheapest instance types they allow first,
// and the DaemonSet overhead as requests. Static pools launch for no pod,
// so the solver places a single placeholder that asks for nothing and
// tolerates every taint, in that pool alone.
func StaticClaim(snap *state.Snapshot, pool *v1.NodePool, its []*scheduling.InstanceType, opts scheduling.Options) (*scheduling.NewClaim, error) {
	sp := simulation.SolverPool(pool, its, nil)
	// limits.nodes, the only limit a static pool may set, is counted by
	// the caller against the pool's claims.
	sp.Limits = nil
	placeholder := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "static", Name: pool.Name, UID: types.UID("static-" + string(pool.UID))},
		Spec:       corev1.PodSpec{Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}}},
	}
	plan, err := scheduling.Solve(scheduling.Input{
		NodePools:       []*scheduling.NodePool{sp},
		DaemonSets:      simulation.DaemonSetPods(snap.DaemonSets, snap.LimitRanges),
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

// CreateStatic creates n NodeClaims like nc for the static pool, with the
// given reason in karpenter_nodeclaims_created_total, and returns how many
// it created.
func CreateStatic(ctx context.Context, kube client.Client, cluster *state.Cluster, pool *v1.NodePool, nc *scheduling.NewClaim, n int, reason string) (int, error) {
	for i := range n {
		claim := NewNodeClaim(pool, nc)
		if err := kube.Create(ctx, claim); err != nil {
			return i, fmt.Errorf("creating a nodeclaim for static nodepool %q: %w", pool.Name, err)
		}
		cluster.ClaimCreated(claim)
		metrics.NodeClaimsCreated.With(metrics.CreatedLabels(reason, claim)).Inc()
	}
	return n, nil
}

// StaticCount is how a static pool's claims stand.
type StaticCount struct {
	// Active claims are neither going away nor held by a disruption.
	Active int
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
		}
	}
	return c
}

// StaticToLaunch is how many claims a pool with replicas wanted and nodeLimit
// (limits.nodes, or -1 for none) may launch now: none while the active
// and replacing ones reach replicas; else up to replicas minus the active
// ones, as far as the limit allows counting every claim the pool has.
func StaticToLaunch(c StaticCount, replicas, nodeLimit int64) int64 {
	if int64(c.Active+c.PendingDisruption) >= replicas {
		return 0
	}
	want := replicas - int64(c.Active)
	if nodeLimit >= 0 {
		want = min(want, nodeLimit-int64(c.Active+c.Deleting+c.PendingDisruption))
	}
	return max(0, want)
}
