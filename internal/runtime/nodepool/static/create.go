package static

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/metrics"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/simulation"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/state"
)

// createStatic creates n NodeClaims like nc for the static pool, with the
// given reason in karpenter_nodeclaims_created_total, and returns how many
// it created.
func createStatic(ctx context.Context, kube client.Client, cluster *state.Cluster, pool *v1.NodePool, nc *scheduling.NewClaim, n int, reason string) (int, error) {
	for i := range n {
		claim := simulation.NewNodeClaim(pool, nc)
		if err := kube.Create(ctx, claim); err != nil {
			return i, fmt.Errorf("creating a nodeclaim for static nodepool %q: %w", pool.Name, err)
		}
		cluster.ClaimCreated(claim)
		metrics.NodeClaimsCreated.With(metrics.CreatedLabels(reason, claim)).Inc()
	}
	return n, nil
}
