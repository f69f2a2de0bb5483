package disruption

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/disruption/repair"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/metrics"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/simulation"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/state"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/volumetopology"
)

// Env is everything a disruption decision looks at; decisions are pure
// functions of it.
type Env struct {
	Now      time.Time
	Snapshot *state.Snapshot
	// InstanceTypes per NodePool name, with offerings and prices.
	InstanceTypes map[string][]*scheduling.InstanceType
	PDBs          *PDBLimits
	// Queued names the Nodes that an executing command already holds.
	Queued map[string]bool
	// SpotToSpot is the SpotToSpotConsolidation feature gate.
	SpotToSpot bool
	Options    scheduling.Options
	// Volumes are the claims, volumes and storage classes behind the pods
	// on the nodes, so simulations keep pods in their volumes' zones.
	Volumes volumetopology.Objects
	// Repair matches Nodes against the repair policies; nil when the
	// NodeRepair gate is off.
	Repair *repair.Matcher
	// Holds are the NodePools whose voluntary disruption, or drift, Joist's
	// disruption controls hold this pass (see Holds).
	Holds map[string]Hold
	// DriftAllowed says, for each pool that rolls drift out, how many of
	// its drifted nodes may start now (see stepRollouts); others are
	// bound by their budgets alone.
	DriftAllowed map[string]int

	// catalog indexes the NodePools' instance types once for every
	// simulation of the decision (see catalogFor).
	catalogOnce sync.Once
	catalog     *scheduling.Catalog
	// nodes are the snapshot's nodes as every simulation gives them to the
	// solver, converted once.
	nodes simulation.Nodes
}

// catalogFor is the catalog of pools, the solver NodePools every
// simulation in this Env builds from the same instance types: built by the
// first simulation, shared by the rest. Nil when it cannot be built; Solve
// then builds its own and reports why.
func (e *Env) catalogFor(pools []*scheduling.NodePool) *scheduling.Catalog {
	e.catalogOnce.Do(func() {
		e.catalog, _ = scheduling.NewCatalog(pools)
	})
	return e.catalog
}

// pool returns the named NodePool.
func (e *Env) pool(name string) *v1.NodePool {
	for _, p := range e.Snapshot.NodePools {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// Env reads the cluster into a decision environment.
func (c *Controller) Env(ctx context.Context) (*Env, error) {
	snap, err := c.cluster.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	env := &Env{
		Now: c.clock.Now(), Snapshot: snap, InstanceTypes: map[string][]*scheduling.InstanceType{},
		Queued: c.queue.Held(), SpotToSpot: c.opts.SpotToSpot, Repair: c.repair,
		Options: c.opts.Solver,
	}
	for _, pool := range snap.NodePools {
		if pool.DeletionTimestamp != nil {
			continue
		}
		its, err := c.cloud.GetInstanceTypes(metrics.WithController(ctx, ControllerName), pool)
		if err != nil {
			log.FromContext(ctx).Error(err, "instance types unavailable; its nodes are not disrupted this pass", "nodepool", pool.Name)
			continue
		}
		env.InstanceTypes[pool.Name] = its
	}
	specs := c.specIdentities(ctx, snap.NodePools)
	env.Holds = Holds(env, c.readClusterPause(ctx), specs)
	c.stepRollouts(ctx, env, specs)
	pdbs := &policyv1.PodDisruptionBudgetList{}
	if err := c.kube.List(ctx, pdbs); err != nil {
		return nil, fmt.Errorf("listing poddisruptionbudgets: %w", err)
	}
	env.PDBs = NewPDBLimits(pdbs.Items)
	var pods []*corev1.Pod
	for _, n := range snap.Nodes {
		pods = append(pods, n.Pods...)
	}
	if env.Volumes, err = c.cluster.VolumeObjects(ctx, pods); err != nil {
		return nil, err
	}
	return env, nil
}

// driftAllowed reports whether another drifted node of pool may start.
func (e *Env) driftAllowed(pool string) bool {
	n, ok := e.DriftAllowed[pool]
	return !ok || n > 0
}
