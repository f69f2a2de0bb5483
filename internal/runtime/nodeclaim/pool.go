package nodeclaim

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

// PoolRequest maps a NodeClaim to a request for its NodePool: the watch a
// NodePool controller keeps on its claims. A claim of no pool maps to none.
func PoolRequest(_ context.Context, o client.Object) []reconcile.Request {
	if name := o.GetLabels()[v1.NodePoolLabelKey]; name != "" {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: name}}}
	}
	return nil
}
