package provider

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/joistdev/terraform-provider-joist/internal/controllerdeploy"
)

// defaultResolveTimeout bounds the wait for the controller to resolve an
// EC2NodeClass: a few reconciles, each bounded by its AWS calls.
const defaultResolveTimeout = "5m"

// resolvePoll is how often the wait looks at the EC2NodeClass.
const resolvePoll = 2 * time.Second

// waitResolved waits, when the state asks for it, until the controller has
// reconciled the EC2NodeClass's current generation, and returns the state
// with ready from that answer. A class the controller finds not Ready is a
// warning: the object is written, and its conditions say what to fix.
func (r *EC2NodeClassResource) waitResolved(ctx context.Context, t attr.Type, state tftypes.Value, diags *diag.Diagnostics) tftypes.Value {
	attrs, d := attrsOf(ctx, t, state)
	diags.Append(d...)
	if diags.HasError() || !attrs["wait_for_ready"].(basetypes.BoolValue).ValueBool() {
		return state
	}
	name := attrs["name"].(basetypes.StringValue).ValueString()
	timeout, _ := time.ParseDuration(attrs["wait_timeout"].(basetypes.StringValue).ValueString())
	kube, err := r.clients.Kubernetes(ctx)
	if err != nil {
		diags.AddError("Waiting for EC2NodeClass "+name, err.Error())
		return state
	}
	live, err := waitForResolution(ctx, kube, r.kind.gvr(), name, timeout)
	if err != nil {
		var absent noController
		if asNoController(err, &absent) {
			diags.AddWarning(fmt.Sprintf("EC2NodeClass %s written, not resolved", name),
				fmt.Sprintf("No Joist controller is in the cluster (%s), so nothing resolves the class yet; `ready` stays false until one runs "+
					"and the next refresh reads its answer. Install joist_controller first (depends_on), or set wait_for_ready = false.", absent.why))
			return state
		}
		diags.AddError("Waiting for EC2NodeClass "+name, err.Error()+". Raise wait_timeout, or set wait_for_ready = false.")
		return state
	}
	status, _ := live.Object["status"].(map[string]any)
	if !conditionTrue(status, "Ready") {
		diags.AddWarning(fmt.Sprintf("EC2NodeClass %s is not Ready", name),
			fmt.Sprintf("The controller resolved it and reports: %s. No node launches with it until that is fixed.", notReadyConditions(status)))
	}
	raw, d := rawOf(ctx, t, r.withLive(attrs, live, false))
	diags.Append(d...)
	if d.HasError() {
		return state
	}
	return raw
}

// noController is waitForResolution's error when no controller is there to
// resolve the class.
type noController struct{ why string }

func (e noController) Error() string { return "no Joist controller in the cluster: " + e.why }

func asNoController(err error, out *noController) bool {
	nc, ok := err.(noController)
	if ok {
		*out = nc
	}
	return ok
}

// waitForResolution polls the object until its Ready condition has
// observed its generation, failing at once when no controller is running
// or starting, and with the controller's liveness at the timeout.
func waitForResolution(ctx context.Context, kube dynamic.Interface, gvr k8sschema.GroupVersionResource, name string, timeout time.Duration) (*unstructured.Unstructured, error) {
	deadline := time.Now().Add(timeout)
	for {
		live, err := kube.Resource(gvr).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		if resolved(live) {
			return live, nil
		}
		running, why, err := controllerRunning(ctx, kube, time.Now())
		if err != nil {
			return nil, err
		}
		if !running {
			starting, err := controllerDeployed(ctx, kube)
			if err != nil {
				return nil, err
			}
			if !starting {
				return nil, noController{why: why}
			}
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the controller did not resolve generation %d of EC2NodeClass %s within %s (%s)", live.GetGeneration(), name, timeout, liveness(running, why))
		}
		tflog.Debug(ctx, "waiting for the controller to resolve the EC2NodeClass", map[string]any{"name": name, "generation": live.GetGeneration()})
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(resolvePoll):
		}
	}
}

func liveness(running bool, why string) string {
	if running {
		return "a controller holds the leader-election Lease"
	}
	return why
}

// resolved reports whether the controller's Ready condition has observed
// the object's current generation. Unknown counts once the controller has
// resolved every part (ReconcilingDependents: a part is Unknown, as for a
// role that does not exist) and not before.
func resolved(u *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] != "Ready" {
			continue
		}
		observed, _, _ := unstructured.NestedInt64(m, "observedGeneration")
		return observed >= u.GetGeneration() && (m["status"] != "Unknown" || m["reason"] == "ReconcilingDependents")
	}
	return false
}

// controllerDeployed reports whether a Joist controller Deployment with
// replicas exists in some namespace: one that is starting and will take
// the Lease.
func controllerDeployed(ctx context.Context, kube dynamic.Interface) (bool, error) {
	list, err := kube.Resource(deploymentsGVR).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=" + controllerdeploy.Name})
	if err != nil {
		return false, fmt.Errorf("listing Deployments: %w", err)
	}
	for _, d := range list.Items {
		if replicas, found, _ := unstructured.NestedInt64(d.Object, "spec", "replicas"); (!found || replicas > 0) && d.GetDeletionTimestamp() == nil {
			return true, nil
		}
	}
	return false, nil
}

// notReadyConditions names the conditions that are not True, with their
// messages.
func notReadyConditions(status map[string]any) string {
	conds, _ := status["conditions"].([]any)
	var bad []string
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Ready" || m["status"] == "True" {
			continue
		}
		s := fmt.Sprintf("%v=%v", m["type"], m["status"])
		if msg, _ := m["message"].(string); msg != "" {
			s += " (" + msg + ")"
		}
		bad = append(bad, s)
	}
	if len(bad) == 0 {
		return "Ready=False"
	}
	return strings.Join(bad, ", ")
}
