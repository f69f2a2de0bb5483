package provider

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

// warnRename warns when a plan renames a node pool that has NodeClaims: a
// NodePool's name cannot change in place, so the plan replaces it, and
// deleting the old pool deletes all of its NodeClaims at once, past its
// disruption budgets.
func (r *NodePoolResource) warnRename(ctx context.Context, plan, state map[string]attr.Value, diags *diag.Diagnostics) {
	planned, current := plan["name"].(basetypes.StringValue), state["name"].(basetypes.StringValue)
	if planned.IsUnknown() || planned.Equal(current) {
		return
	}
	old, renamed := current.ValueString(), planned.ValueString()
	n, err := r.countClaims(ctx, old)
	switch {
	case err != nil:
		diags.AddWarning("Node pool replaced",
			fmt.Sprintf("Renaming node pool %s to %s replaces it: deleting %s deletes all of its NodeClaims at once, past its disruption budgets. "+
				"The cluster could not be asked how many it has: %v.", old, renamed, old, err))
	case n > 0:
		diags.AddWarning("Node pool replaced",
			fmt.Sprintf("Renaming node pool %s to %s replaces it: deleting %s deletes its %d NodeClaims at once, past its disruption budgets, "+
				"and their pods wait for the new pool's nodes. Keep name = %q (a moved block renames the Terraform resource without renaming the pool), "+
				"or add the new pool beside the old one and remove the old one once its nodes have drained.", old, renamed, old, n, old))
	}
}

// countClaims counts the NodeClaims of pool.
func (r *NodePoolResource) countClaims(ctx context.Context, pool string) (int, error) {
	if r.clients == nil {
		return 0, fmt.Errorf("the provider is not configured")
	}
	kube, err := r.clients.Kubernetes(ctx)
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	claims, err := kube.Resource(nodeClaimGVR).List(ctx, metav1.ListOptions{LabelSelector: v1.NodePoolLabelKey + "=" + pool})
	if err != nil {
		return 0, err
	}
	return len(claims.Items), nil
}
