// Package readiness keeps a NodePool's Ready condition: NodeClassReady
// mirrors its node class's Ready condition and ValidationSucceeded the
// runtime checks of its template; Ready is both. Only Ready NodePools are
// provisioned from.
package readiness

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

// Controller is the NodePool readiness controller.
type Controller struct{ kube client.Client }

// NewController wires the controller.
func NewController(kube client.Client) *Controller { return &Controller{kube: kube} }

// Reconcile recomputes the pool's conditions.
func (c *Controller) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	pool := &v1.NodePool{}
	if err := c.kube.Get(ctx, req.NamespacedName, pool); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	stored := pool.DeepCopy()
	status, reason, msg, gen, err := c.nodeClassReady(ctx, pool)
	if err != nil {
		return reconcile.Result{}, err
	}
	set(pool, v1.ConditionTypeNodeClassReady, status, reason, msg)
	if gen != 0 {
		pool.Status.NodeClassObservedGeneration = gen
	}
	if err := Validate(pool); err != nil {
		set(pool, v1.ConditionTypeValidationSucceeded, metav1.ConditionFalse, "NodePoolValidationFailed", err.Error())
	} else {
		set(pool, v1.ConditionTypeValidationSucceeded, metav1.ConditionTrue, v1.ConditionTypeValidationSucceeded, "")
	}
	setRoot(pool)
	if equality.Semantic.DeepEqual(stored.Status, pool.Status) {
		return reconcile.Result{}, nil
	}
	return reconcile.Result{}, client.IgnoreNotFound(c.kube.Status().Patch(ctx, pool, client.MergeFrom(stored)))
}

func (c *Controller) nodeClassReady(ctx context.Context, pool *v1.NodePool) (metav1.ConditionStatus, string, string, int64, error) {
	ref := pool.Spec.Template.Spec.NodeClassRef
	if ref == nil || ref.Group != v1.AWSGroup || ref.Kind != "EC2NodeClass" {
		return metav1.ConditionFalse, "UnsupportedNodeClass", "spec.template.spec.nodeClassRef must reference group karpenter.k8s.aws, kind EC2NodeClass", 0, nil
	}
	nc := &awsv1.EC2NodeClass{}
	if err := c.kube.Get(ctx, types.NamespacedName{Name: ref.Name}, nc); err != nil {
		if client.IgnoreNotFound(err) == nil {
			return metav1.ConditionFalse, "NodeClassNotFound", fmt.Sprintf("EC2NodeClass %q not found", ref.Name), 0, nil
		}
		return "", "", "", 0, err
	}
	if nc.DeletionTimestamp != nil {
		return metav1.ConditionFalse, "NodeClassTerminating", fmt.Sprintf("EC2NodeClass %q is being deleted", ref.Name), nc.Generation, nil
	}
	ready := meta.FindStatusCondition(nc.Status.Conditions, v1.ConditionTypeReady)
	switch {
	case ready == nil:
		return metav1.ConditionUnknown, "NodeClassReadinessUnknown", fmt.Sprintf("EC2NodeClass %q has no Ready condition yet", ref.Name), nc.Generation, nil
	case ready.Status == metav1.ConditionTrue:
		return metav1.ConditionTrue, v1.ConditionTypeNodeClassReady, "", nc.Generation, nil
	}
	return ready.Status, "NodeClassNotReady", fmt.Sprintf("EC2NodeClass %q is not ready: %s", ref.Name, ready.Message), nc.Generation, nil
}

// Validate runs the checks CEL cannot: every requirement parses.
func Validate(pool *v1.NodePool) error {
	var errs []error
	for i, r := range pool.Spec.Template.Spec.Requirements {
		if _, err := r.Parse(); err != nil {
			errs = append(errs, fmt.Errorf("spec.template.spec.requirements[%d] (%s): %w", i, r.Key, err))
		}
	}
	return errors.Join(errs...)
}

func set(pool *v1.NodePool, typ string, status metav1.ConditionStatus, reason, msg string) {
	meta.SetStatusCondition(&pool.Status.Conditions, metav1.Condition{Type: typ, Status: status, Reason: reason, Message: msg, ObservedGeneration: pool.Generation})
}

func setRoot(pool *v1.NodePool) {
	status, reason, msg := metav1.ConditionTrue, v1.ConditionTypeReady, ""
	for _, t := range v1.NodePoolReadyConditions {
		c := meta.FindStatusCondition(pool.Status.Conditions, t)
		if c == nil || c.Status != metav1.ConditionTrue {
			s := metav1.ConditionUnknown
			if c != nil {
				s = c.Status
			}
			if status != metav1.ConditionFalse {
				status = s
			}
			reason = "UnhealthyDependents"
			if msg != "" {
				msg += ", "
			}
			msg += fmt.Sprintf("%s=%s", t, s)
		}
	}
	set(pool, v1.ConditionTypeReady, status, reason, msg)
}

// Register adds the controller; node class changes wake their pools.
func (c *Controller) Register(mgr manager.Manager) error {
	return builder.ControllerManagedBy(mgr).
		Named("nodepool.readiness").
		For(&v1.NodePool{}).
		Watches(&awsv1.EC2NodeClass{}, handler.EnqueueRequestsFromMapFunc(c.poolsFor)).
		Complete(c)
}

func (c *Controller) poolsFor(ctx context.Context, o client.Object) []reconcile.Request {
	pools := &v1.NodePoolList{}
	if err := c.kube.List(ctx, pools); err != nil {
		return nil
	}
	var out []reconcile.Request
	for _, p := range pools.Items {
		if ref := p.Spec.Template.Spec.NodeClassRef; ref != nil && ref.Name == o.GetName() {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Name: p.Name}})
		}
	}
	return out
}
