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
func StaticToLaunch(c simulation.StaticCount, replicas int64, limits v1.Limits) int64 {
	if int64(c.Active+c.PendingDisruption) >= replicas {
		return 0
	}
	want := min(replicas-int64(c.Active), StaticLaunchBatch-int64(c.Launching))
	if room, limited := c.NodeRoom(limits); limited {
		want = min(want, room)
	}
	return max(0, want)
}
