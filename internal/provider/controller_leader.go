package provider

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/joistdev/terraform-provider-joist/internal/controllerdeploy"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/operator/settings"
)

var leasesGVR = schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}

// foreignLeader returns the live leader-election Lease another
// Karpenter-API controller holds outside m's namespace, by the rule the
// controller refuses to start with, or nil.
func foreignLeader(ctx context.Context, dyn dynamic.Interface, m *controllerModel) (*coordinationv1.Lease, error) {
	env := controllerEnvironment(ctx, m, &diag.Diagnostics{})
	name := controllerdeploy.Spec{Settings: env.env}.LeaseName()
	list, err := dyn.Resource(leasesGVR).List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	if err != nil {
		return nil, fmt.Errorf("listing Leases named %s: %w", name, err)
	}
	leases := make([]coordinationv1.Lease, len(list.Items))
	for i := range list.Items {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(list.Items[i].Object, &leases[i]); err != nil {
			return nil, fmt.Errorf("reading Lease %s/%s: %w", list.Items[i].GetNamespace(), name, err)
		}
	}
	return settings.ForeignLeader(leases, m.Namespace.ValueString(), name, time.Now()), nil
}

// checkNoForeignLeader adds the controller's refusal to diags when another
// Karpenter-API controller holds a live Lease. At plan (atPlan) a cluster
// that cannot be read yet is skipped: apply checks again.
func (r *ControllerResource) checkNoForeignLeader(ctx context.Context, dyn dynamic.Interface, m *controllerModel, atPlan bool, diags *diag.Diagnostics) {
	l, err := foreignLeader(ctx, dyn, m)
	switch {
	case err != nil && !atPlan:
		diags.AddError("Looking for another Karpenter-API controller", err.Error())
	case l != nil:
		diags.AddError("Another Karpenter-API controller is running", settings.ForeignLeaderError(l).Error())
	}
}

// planLeaderCheck runs checkNoForeignLeader at plan when the provider can
// reach the cluster, within a short wait so a cluster not created yet does
// not hold up the plan.
func (r *ControllerResource) planLeaderCheck(ctx context.Context, m *controllerModel, diags *diag.Diagnostics) {
	if r.clients == nil || !r.clients.kubeKnown || m.Namespace.IsUnknown() {
		return
	}
	dyn, err := r.clients.Kubernetes(ctx)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	r.checkNoForeignLeader(ctx, dyn, m, true, diags)
}
