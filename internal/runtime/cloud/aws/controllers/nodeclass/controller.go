package nodeclass

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	awsprovider "github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/awserr"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/events"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/ratelimit"
)

// Events this controller emits.
const (
	WaitingOnNodeClaimTermination = "WaitingOnNodeClaimTermination"
	// TransientAWSError names an AWS call that failed with throttling, a
	// server error or a timeout while resolving the node class.
	TransientAWSError = "TransientAWSError"
	// AWSAccessDenied names an AWS call IAM denied while resolving the
	// node class, and the permission it lacks.
	AWSAccessDenied = "AWSAccessDenied"
	actionFinalize  = "Finalizing"
)

// Controller reconciles EC2NodeClasses.
type Controller struct {
	kube     client.Client
	provider *awsprovider.Provider
	recorder *events.Recorder
	clock    clock.Clock
	denials  *Denials
}

// NewController returns the EC2NodeClass status controller; clk dates IAM
// denials (DenialGrace).
func NewController(kube client.Client, provider *awsprovider.Provider, recorder *events.Recorder, clk clock.Clock) *Controller {
	return &Controller{kube: kube, provider: provider, recorder: recorder, clock: clk, denials: NewDenials()}
}

// Register adds the controller to the manager; NodeClaims that go away wake
// their node class so a pending deletion can finish.
func (c *Controller) Register(mgr manager.Manager) error {
	return builder.ControllerManagedBy(mgr).
		Named("nodeclass.status").
		// Karpenter's concurrency: a node class waiting on a slow or
		// throttled AWS call does not hold the others back.
		WithOptions(controller.Options{MaxConcurrentReconciles: ratelimit.Concurrency(10)}).
		For(&awsv1.EC2NodeClass{}).
		Watches(&v1.NodeClaim{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			claim := o.(*v1.NodeClaim)
			if ref := claim.Spec.NodeClassRef; ref != nil && ref.Name != "" {
				return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: ref.Name}}}
			}
			return nil
		})).
		Complete(c)
}

// Reconcile resolves one node class.
func (c *Controller) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	nc := &awsv1.EC2NodeClass{}
	if err := c.kube.Get(ctx, req.NamespacedName, nc); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	ctx = log.IntoContext(ctx, log.FromContext(ctx).WithValues("EC2NodeClass", nc.Name))
	if !nc.DeletionTimestamp.IsZero() {
		return c.finalize(ctx, nc)
	}
	hashes := c.provider.HashAnnotations(nc)
	if !controllerutil.ContainsFinalizer(nc, v1.AWSTerminationFinalizer) || !hashStamped(nc, hashes) {
		patch := client.MergeFrom(nc.DeepCopy())
		controllerutil.AddFinalizer(nc, v1.AWSTerminationFinalizer)
		if nc.Annotations == nil {
			nc.Annotations = map[string]string{}
		}
		maps.Copy(nc.Annotations, hashes)
		if err := c.kube.Patch(ctx, nc, patch); err != nil {
			return reconcile.Result{}, client.IgnoreNotFound(err)
		}
	}
	before := nc.DeepCopy()
	res := c.denials.Resolve(ctx, c.provider, nc, c.clock.Now())
	for _, t := range res.Transient {
		log.FromContext(ctx).Info("keeping the last resolution after a transient AWS error", "part", t.Part, "call", t.Call, "error", t.Err.Error())
		c.recorder.Warning(nc, TransientAWSError, resolveAction(t.Condition), "%s failed transiently (%s); keeping the last resolved %s", callOrPart(t), awserr.CodeOrError(t.Err), t.Part)
	}
	for _, d := range res.Denied {
		log.FromContext(ctx).Info("keeping the last resolution after an IAM denial", "part", d.Part, "call", d.Call, "permission", d.Action, "until", d.Until, "error", d.Err.Error())
		c.recorder.Warning(nc, AWSAccessDenied, resolveAction(d.Condition),
			"%s was denied (%s): the controller's IAM policy lacks %s; keeping the last resolved %s until %s, then the EC2NodeClass turns NotReady",
			d.Call, awserr.CodeOrError(d.Err), d.Action, d.Part, d.Until.UTC().Format(time.RFC3339))
	}
	requeue := res.Requeue
	if !equality.Semantic.DeepEqual(before.Status, nc.Status) {
		if err := c.kube.Status().Patch(ctx, nc, client.MergeFrom(before)); err != nil {
			return reconcile.Result{}, client.IgnoreNotFound(err)
		}
	}
	return reconcile.Result{RequeueAfter: requeue}, nil
}

// resolveAction is the event action of a part's resolution: one per part,
// since the events API folds events that differ only in their note into
// one series that keeps the first note.
func resolveAction(condition string) string {
	return "Resolve" + strings.TrimSuffix(condition, "Ready")
}

func callOrPart(t Transient) string {
	if t.Call != "" {
		return t.Call
	}
	return "resolving the " + t.Part
}

func hashStamped(nc *awsv1.EC2NodeClass, hashes map[string]string) bool {
	for k, v := range hashes {
		if nc.Annotations[k] != v {
			return false
		}
	}
	return true
}

// finalize waits for the node class's NodeClaims to go, then deletes what
// was made for it and releases the finalizer.
func (c *Controller) finalize(ctx context.Context, nc *awsv1.EC2NodeClass) (reconcile.Result, error) {
	if !controllerutil.ContainsFinalizer(nc, v1.AWSTerminationFinalizer) {
		return reconcile.Result{}, nil
	}
	claims := &v1.NodeClaimList{}
	if err := c.kube.List(ctx, claims); err != nil {
		return reconcile.Result{}, err
	}
	var names []string
	for _, claim := range claims.Items {
		if ref := claim.Spec.NodeClassRef; ref != nil && ref.Name == nc.Name {
			names = append(names, claim.Name)
		}
	}
	if len(names) > 0 {
		c.recorder.Normal(nc, WaitingOnNodeClaimTermination, actionFinalize, "Waiting on NodeClaim termination for %s", truncatedList(names, 5))
		return reconcile.Result{RequeueAfter: 10 * time.Second}, nil
	}
	if c.provider.IsolatedVPC() {
		log.FromContext(ctx).Info("isolated VPC: leaving the node class's instance profiles for IAM users to delete", "ec2nodeclass", nc.Name)
	} else if err := c.provider.InstanceProfiles().DeleteAll(ctx, nc); err != nil {
		return reconcile.Result{}, fmt.Errorf("deleting the instance profiles of EC2NodeClass %s: %w", nc.Name, err)
	}
	if err := c.provider.LaunchTemplates().DeleteAll(ctx, nc.Name); err != nil {
		return reconcile.Result{}, fmt.Errorf("deleting the launch templates of EC2NodeClass %s: %w", nc.Name, err)
	}
	patch := client.MergeFrom(nc.DeepCopy())
	controllerutil.RemoveFinalizer(nc, v1.AWSTerminationFinalizer)
	if err := c.kube.Patch(ctx, nc, patch); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	log.FromContext(ctx).Info("deleted the node class's instance profiles and launch templates")
	return reconcile.Result{}, nil
}

func truncatedList(names []string, n int) string {
	if len(names) <= n {
		return fmt.Sprint(names)
	}
	return fmt.Sprintf("%v and %d more", names[:n], len(names)-n)
}
