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
	return simulate(env, candidates, false)
}

// SimulateReplacement is Simulate for a node that drift or repair replaces:
// its pods go on one new node whenever one holds them all (see
// scheduling.Options.Replacing).
func SimulateReplacement(env *Env, c *Candidate) (*Simulation, error) {
	return simulate(env, []*Candidate{c}, true)
}

func simulate(env *Env, candidates []*Candidate, replacing bool) (*Simulation, error) {
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
	in.Options.Replacing = replacing
	start := time.Now()
	plan, err := scheduling.Solve(*in)
	metrics.SchedulingDuration.WithLabelValues(ControllerName).Observe(time.Since(start).Seconds())
	if err != nil {
		return nil, fmt.Errorf("simulating the removal of %d nodes: %w", len(candidates), err)
	}
	sim := &Simulation{Plan: plan}
	for _, pe := range append(append(waiting, plan.Errors...), onUninitialized(in, plan)...) {
		if ours[pe.Pod.UID] {
			sim.Unplaced = append(sim.Unplaced, pe)
		}
	}
	return sim, nil
}

// onUninitialized are the plan's placements on nodes and in-flight claims
// that have not initialized. The solver may use them, as provisioning
// does, but a disruption must not count on them: such a node may never
// come up (a replacement abandoned by its command stays in flight until
// its registration times out), and the candidate's pods would be left
// with nowhere to go. Pods of nodes already being deleted are not the
// candidates' and are not counted (see Simulate).
func onUninitialized(in *scheduling.Input, plan *scheduling.Plan) []scheduling.PodError {
	type target struct {
		kind scheduling.TargetKind
		name string
	}
	pending := map[target]bool{}
	for kind, nodes := range map[scheduling.TargetKind][]*scheduling.Node{scheduling.TargetNode: in.Nodes, scheduling.TargetInFlight: in.InFlight} {
		for _, n := range nodes {
			pending[target{kind, n.Name}] = !n.Initialized
		}
	}
	var out []scheduling.PodError
	for _, p := range plan.Placements {
		if !pending[target{p.Kind, p.Node}] {
			continue
		}
		what := "node"
		if p.Kind == scheduling.TargetInFlight {
			what = "nodeclaim"
		}
		out = append(out, scheduling.PodError{Pod: p.Pod, Err: fmt.Errorf("would schedule against uninitialized %s/%s", what, p.Node)})
	}
	return out
}
