package disruption

import (
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/metrics"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/simulation"
)

// Simulation is where the candidates' pods would go if they were removed.
type Simulation struct {
	Plan *scheduling.Plan
	// Unplaced are candidate pods the solver could not place.
	Unplaced []scheduling.PodError
}

// errNoPools means no NodePool could take the pods.
var errNoPools = errors.New("no ready NodePool with instance types")

// Simulate runs the solver as if the candidates were gone: their pods, and
// those of nodes already being disrupted, are placed on the remaining
// nodes, in-flight claims or new claims.
func Simulate(env *Env, candidates []*Candidate) (*Simulation, error) {
	removed := map[string]bool{}
	ours := map[types.UID]bool{}
	var moving []*corev1.Pod
	for _, c := range candidates {
		removed[c.Name()] = true
		for _, p := range c.Reschedulable {
			ours[p.UID] = true
			moving = append(moving, p)
		}
	}
	moving = append(moving, simulation.Displaced(env.Snapshot.Nodes, removed)...)
	// Pods whose storage does not resolve cannot be shown to fit anywhere.
	moving, volumes, waiting := simulation.VolumeTopology(moving, env.Volumes)
	in := simulation.Build(env.Snapshot, &env.nodes, moving, volumes, env.InstanceTypes, env.Options, removed)
	if len(in.NodePools) == 0 && len(moving) > 0 {
		return nil, errNoPools
	}
	in.Catalog = env.catalogFor(in.NodePools)
	start := time.Now()
	plan, err := scheduling.Solve(*in)
	metrics.SchedulingDuration.WithLabelValues(ControllerName).Observe(time.Since(start).Seconds())
	if err != nil {
		return nil, fmt.Errorf("simulating the removal of %d nodes: %w", len(candidates), err)
	}
	sim := &Simulation{Plan: plan}
	for _, pe := range append(waiting, plan.Errors...) {
		if ours[pe.Pod.UID] {
			sim.Unplaced = append(sim.Unplaced, pe)
		}
	}
	return sim, nil
}
