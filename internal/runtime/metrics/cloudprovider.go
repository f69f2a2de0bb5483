package metrics

import (
	"context"
	"time"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
)

// Decorate wraps p so every call is timed and failures counted.
func Decorate(p cloud.Provider) cloud.Provider { return &measured{p: p} }

type measured struct{ p cloud.Provider }

func observe(method string, start time.Time, err error) {
	CloudDuration.WithLabelValues(method).Observe(time.Since(start).Seconds())
	if err != nil {
		CloudErrors.WithLabelValues(method, errorKind(err)).Inc()
	}
}

// errorKind keeps the label's cardinality bounded.
func errorKind(err error) string {
	switch {
	case cloud.IsInsufficientCapacity(err):
		return "insufficient_capacity"
	case cloud.IsNodeClaimNotFound(err):
		return "not_found"
	case cloud.IsNodeClassNotReady(err):
		return "nodeclass_not_ready"
	}
	return "other"
}

func (m *measured) Create(ctx context.Context, c *v1.NodeClaim) (out *v1.NodeClaim, err error) {
	defer func(t time.Time) { observe("Create", t, err) }(time.Now())
	return m.p.Create(ctx, c)
}

func (m *measured) Delete(ctx context.Context, c *v1.NodeClaim) (err error) {
	defer func(t time.Time) {
		// NotFound is Delete's success signal, not a failure.
		if cloud.IsNodeClaimNotFound(err) {
			observe("Delete", t, nil)
			return
		}
		observe("Delete", t, err)
	}(time.Now())
	return m.p.Delete(ctx, c)
}

func (m *measured) Get(ctx context.Context, id string) (out *v1.NodeClaim, err error) {
	defer func(t time.Time) { observe("Get", t, err) }(time.Now())
	return m.p.Get(ctx, id)
}

func (m *measured) List(ctx context.Context) (out []*v1.NodeClaim, err error) {
	defer func(t time.Time) { observe("List", t, err) }(time.Now())
	return m.p.List(ctx)
}

func (m *measured) GetInstanceTypes(ctx context.Context, p *v1.NodePool) (out []*scheduling.InstanceType, err error) {
	defer func(t time.Time) { observe("GetInstanceTypes", t, err) }(time.Now())
	return m.p.GetInstanceTypes(ctx, p)
}

func (m *measured) IsDrifted(ctx context.Context, c *v1.NodeClaim) (r cloud.DriftReason, err error) {
	defer func(t time.Time) { observe("IsDrifted", t, err) }(time.Now())
	return m.p.IsDrifted(ctx, c)
}

// NodeClasses is static: nothing to time.
func (m *measured) NodeClasses() []cloud.NodeClassKind { return m.p.NodeClasses() }

func (m *measured) Name() string { return m.p.Name() }
