package termination

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/events"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/metrics"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/nodeclaim"
)

// terminateInstance asks the cloud to terminate the instance and reports
// whether it is gone. Termination is only done once the cloud says the
// instance does not exist, so a Node is never released while its machine
// still runs. claim may be nil (a Node without its NodeClaim); then the
// providerID alone identifies the instance.
func terminateInstance(ctx context.Context, kube client.Client, provider cloud.Provider, rec *events.Recorder, claim *v1.NodeClaim, providerID string) (bool, error) {
	target := claim
	if target == nil {
		if providerID == "" {
			return true, nil
		}
		target = &v1.NodeClaim{Status: v1.NodeClaimStatus{ProviderID: providerID}}
	}
	if target.Status.ProviderID == "" {
		return true, nil
	}
	err := provider.Delete(metrics.WithController(ctx, "nodeclaim.termination"), target)
	if cloud.IsNodeClaimNotFound(err) {
		if u, ok := cloud.AsUnmanagedInstance(err); ok {
			reportUnmanaged(ctx, rec, claim, target, u)
		}
		if claim != nil {
			if c := nodeclaim.Get(claim, v1.ConditionTypeInstanceTerminating); c != nil && c.Status == metav1.ConditionTrue {
				instanceTerminationDuration.WithLabelValues(claim.Labels[v1.NodePoolLabelKey]).Observe(
					metav1.Now().Sub(c.LastTransitionTime.Time).Seconds())
			}
		}
		return true, nil
	}
	if err != nil {
		if claim != nil {
			rec.Warning(claim, reasonFailedTermination, actionTerminate, "Failed to terminate instance %s: %s", target.Status.ProviderID, err)
		}
		return false, fmt.Errorf("terminating instance %s: %w", target.Status.ProviderID, err)
	}
	if claim != nil && !nodeclaim.IsTrue(claim, v1.ConditionTypeInstanceTerminating) {
		rec.Normal(claim, reasonInstanceTerminating, actionTerminate, "Terminating instance %s", target.Status.ProviderID)
	}
	return false, setCondition(ctx, kube, claim, v1.ConditionTypeInstanceTerminating, metav1.ConditionTrue, v1.ConditionTypeInstanceTerminating, "")
}

// setCondition patches one status condition of claim when it changes; a
// nil claim is skipped.
func setCondition(ctx context.Context, kube client.Client, claim *v1.NodeClaim, typ string, status metav1.ConditionStatus, reason, message string) error {
	if claim == nil {
		return nil
	}
	if c := nodeclaim.Get(claim, typ); c != nil && c.Status == status && c.Reason == reason && c.Message == message {
		return nil
	}
	stored := claim.DeepCopy()
	nodeclaim.Set(claim, typ, status, reason, message)
	if err := kube.Status().Patch(ctx, claim, client.MergeFrom(stored)); err != nil {
		return client.IgnoreNotFound(err)
	}
	return nil
}

// reportUnmanaged tells the user about an instance left running: tagged
// for this cluster and a NodePool but failing the ownership check, so it is
// never terminated, and once the claim is released nothing manages it
// while it is billed.
func reportUnmanaged(ctx context.Context, rec *events.Recorder, claim, target *v1.NodeClaim, u *cloud.UnmanagedInstanceError) {
	pool := target.Labels[v1.NodePoolLabelKey]
	unmanagedInstances.WithLabelValues(pool).Inc()
	log.FromContext(ctx).Error(u, "leaving a running instance that no NodeClaim manages; terminate it or restore its tags",
		"instanceID", u.InstanceID, "provider-id", target.Status.ProviderID, "NodeClaim", target.Name, "nodepool", pool)
	if claim != nil {
		rec.Warning(claim, reasonUnmanagedInstance, actionTerminate,
			"Instance %s is left running and billed, managed by no NodeClaim: %s. Terminate it or restore its tags", u.InstanceID, u.Err)
	}
}
