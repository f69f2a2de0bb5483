package disruption

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/disruption/repair"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/events"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/state"
)

// ControllerName names the disruption loop in metrics.
const ControllerName = "disruption"

// Loop timers.
const (
	PollPeriod = 10 * time.Second
	// ValidationDelay is how long a consolidation or emptiness decision
	// waits before it is re-checked and carried out.
	ValidationDelay = 15 * time.Second
	// eventRepeat spaces repeated identical candidate events.
	eventRepeat = 10 * time.Minute
)

// Options tune the controller.
type Options struct {
	// SpotToSpot is the SpotToSpotConsolidation feature gate.
	SpotToSpot bool
	// NodeRepair is the NodeRepair feature gate: the Repair method runs,
	// with the cloud provider's repair policies.
	NodeRepair bool
	// Solver are the settings every simulation runs with.
	Solver scheduling.Options
	// PollPeriod and ValidationDelay default to the constants above.
	PollPeriod      time.Duration
	ValidationDelay time.Duration
	// APIReader reads from the API server, uncached: the cluster-wide
	// disruption controls (the ConfigMap v1.DisruptionSettingsConfigMap in
	// SettingsNamespace) on every pass, so a change takes effect without a
	// restart, and a replacement the cache does not show. Nil: the
	// controller's client, and no cluster-wide controls.
	APIReader         client.Reader
	SettingsNamespace string
}

// Controller is the disruption loop, a leader-elected manager runnable.
type Controller struct {
	kube     client.Client
	cluster  *state.Cluster
	cloud    cloud.Provider
	recorder *events.Recorder
	clock    clock.Clock
	queue    *Queue
	opts     Options
	// repair is nil when the NodeRepair gate is off.
	repair *repair.Matcher

	mu         sync.Mutex
	lastEvents map[string]eventMemo
	// consolidated lets passes skip the consolidation searches while the
	// cluster is as it was when they last found nothing.
	consolidated consolidatedMemo
}

type eventMemo struct {
	message string
	at      time.Time
}

// NewController wires the disruption loop; Register adds repair's policies.
func NewController(kube client.Client, cluster *state.Cluster, provider cloud.Provider, rec *events.Recorder, clk clock.Clock, opts Options) *Controller {
	if opts.PollPeriod == 0 {
		opts.PollPeriod = PollPeriod
	}
	if opts.ValidationDelay == 0 {
		opts.ValidationDelay = ValidationDelay
	}
	c := &Controller{
		kube: kube, cluster: cluster, cloud: provider, recorder: rec, clock: clk, opts: opts,
		lastEvents: map[string]eventMemo{},
	}
	live := opts.APIReader
	if live == nil {
		live = kube
	}
	c.queue = NewQueue(kube, live, cluster, rec, clk)
	c.queue.failed = c.commandFailed
	return c
}

// repairMatcher compiles the provider's repair policies when the NodeRepair
// gate is on (nil when off); an invalid set stops the controller.
func repairMatcher(provider cloud.Provider, opts Options) (*repair.Matcher, error) {
	if !opts.NodeRepair {
		return nil, nil
	}
	m, err := repair.NewMatcher(provider.RepairPolicies())
	if err != nil {
		return nil, fmt.Errorf("the NodeRepair gate needs valid repair policies from cloud provider %s: %w", provider.Name(), err)
	}
	return m, nil
}

// NeedLeaderElection keeps the loop on the leader.
func (c *Controller) NeedLeaderElection() bool { return true }

// Start polls until ctx ends, going again at once after a pass that
// started a command or abandoned one at validation (the cluster changed
// under it, so another decision is likely ready).
func (c *Controller) Start(ctx context.Context) error {
	logger := log.FromContext(ctx).WithName("disruption")
	ctx = log.IntoContext(ctx, logger)
	for ctx.Err() == nil {
		acted, err := c.Pass(ctx)
		if err != nil && ctx.Err() == nil {
			logger.Error(err, "disruption pass failed")
		}
		if acted {
			continue
		}
		select {
		case <-ctx.Done():
		case <-c.clock.After(c.opts.PollPeriod):
		}
	}
	return nil
}

// Register adds the disruption loop to mgr, with node repair's policies
// compiled when the NodeRepair gate is on.
func (c *Controller) Register(mgr manager.Manager) error {
	m, err := repairMatcher(c.cloud, c.opts)
	if err != nil {
		return err
	}
	c.repair = m
	return mgr.Add(c)
}
