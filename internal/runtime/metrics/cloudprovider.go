package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
)

var (
	// CloudDuration times cloud provider calls (Prometheus' default
	// buckets, as Karpenter's).
	CloudDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace, Subsystem: "cloudprovider", Name: "duration_seconds",
		Help: "Duration of cloud provider method calls, by calling controller, method and provider.",
	}, []string{LabelController, LabelMethod, LabelProvider})
	// CloudErrors counts failed cloud provider calls.
	CloudErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Subsystem: "cloudprovider", Name: "errors_total",
		Help: "Errors returned by cloud provider calls, by calling controller, method, provider, error kind and NodePool.",
	}, []string{LabelController, LabelMethod, LabelProvider, LabelError, LabelNodePool})
)

func init() { crmetrics.Registry.MustRegister(CloudDuration, CloudErrors) }

type controllerKey struct{}

// WithController names the controller on whose behalf ctx's calls run,
// for the controller label of the cloud provider series.
func WithController(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, controllerKey{}, name)
}

// Controller is the name WithController put on ctx, "" if none.
func Controller(ctx context.Context) string {
	name, _ := ctx.Value(controllerKey{}).(string)
	return name
}

// Decorate wraps p so every call is timed and failures counted.
func Decorate(p cloud.Provider) cloud.Provider { return &measured{p: p} }

type measured struct{ p cloud.Provider }

func (m *measured) observe(ctx context.Context, method, pool string, start time.Time, err error) {
	controller := Controller(ctx)
	CloudDuration.WithLabelValues(controller, method, m.p.Name()).Observe(time.Since(start).Seconds())
	if err != nil {
		CloudErrors.WithLabelValues(controller, method, m.p.Name(), ErrorKind(err), pool).Inc()
	}
}

// ErrorKind is the error label of a cloud provider error: Karpenter's
// names for the kinds it distinguishes, unknown for the rest.
func ErrorKind(err error) string {
	switch {
	case cloud.IsInsufficientCapacity(err):
		return "InsufficientCapacityError"
	case cloud.IsNodeClaimNotFound(err):
		return "NodeClaimNotFoundError"
	case cloud.IsNodeClassNotReady(err):
		return "NodeClassNotReadyError"
	}
	return "unknown"
}

func poolOf(c *v1.NodeClaim) string {
	if c == nil {
		return ""
	}
	return c.Labels[v1.NodePoolLabelKey]
}

func (m *measured) Create(ctx context.Context, c *v1.NodeClaim) (out *v1.NodeClaim, err error) {
	defer func(t time.Time) { m.observe(ctx, "Create", poolOf(c), t, err) }(time.Now())
	return m.p.Create(ctx, c)
}

// Delete counts NotFound, its success signal, as Karpenter does.
func (m *measured) Delete(ctx context.Context, c *v1.NodeClaim) (err error) {
	defer func(t time.Time) { m.observe(ctx, "Delete", poolOf(c), t, err) }(time.Now())
	return m.p.Delete(ctx, c)
}

func (m *measured) Get(ctx context.Context, id string) (out *v1.NodeClaim, err error) {
	defer func(t time.Time) { m.observe(ctx, "Get", "", t, err) }(time.Now())
	return m.p.Get(ctx, id)
}

func (m *measured) List(ctx context.Context) (out []*v1.NodeClaim, err error) {
	defer func(t time.Time) { m.observe(ctx, "List", "", t, err) }(time.Now())
	return m.p.List(ctx)
}

func (m *measured) GetInstanceTypes(ctx context.Context, p *v1.NodePool) (out []*scheduling.InstanceType, err error) {
	pool := ""
	if p != nil {
		pool = p.Name
	}
	defer func(t time.Time) { m.observe(ctx, "GetInstanceTypes", pool, t, err) }(time.Now())
	return m.p.GetInstanceTypes(ctx, p)
}

func (m *measured) IsDrifted(ctx context.Context, c *v1.NodeClaim) (r cloud.DriftReason, err error) {
	defer func(t time.Time) { m.observe(ctx, "IsDrifted", poolOf(c), t, err) }(time.Now())
	return m.p.IsDrifted(ctx, c)
}

// NodeClasses is static: nothing to time.
func (m *measured) NodeClasses() []cloud.NodeClassKind { return m.p.NodeClasses() }

// RepairPolicies is static: nothing to time.
func (m *measured) RepairPolicies() []cloud.RepairPolicy { return m.p.RepairPolicies() }

func (m *measured) Name() string { return m.p.Name() }
