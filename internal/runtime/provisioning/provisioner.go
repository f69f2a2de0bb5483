// Package provisioning turns pending pods into NodeClaims: pod and node
// triggers feed a batcher; each closed batch runs one scheduling pass over
// a state snapshot, nominates pods to existing capacity and creates the
// NodeClaims the solver asks for.
package provisioning

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/events"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/metrics"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/pods"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/simulation"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/state"
)

// Options tune the provisioner.
type Options struct {
	// NominationTTL is how long a pod stays nominated to its target.
	NominationTTL time.Duration
	// Solver are the settings every scheduling pass runs with.
	Solver scheduling.Options
}

// Provisioner runs scheduling passes whenever the batcher closes a batch.
type Provisioner struct {
	kube     client.Client
	cluster  *state.Cluster
	cloud    cloud.Provider
	batcher  *Batcher
	recorder *events.Recorder
	clock    clock.Clock
	opts     Options
	// catalogs keeps the instance-type index from pass to pass while the
	// cloud provider lists the same types.
	catalogs scheduling.CatalogCache
}

// NewProvisioner wires the provisioner.
func NewProvisioner(kube client.Client, cluster *state.Cluster, provider cloud.Provider, b *Batcher, rec *events.Recorder, clk clock.Clock, opts Options) *Provisioner {
	return &Provisioner{kube: kube, cluster: cluster, cloud: provider, batcher: b, recorder: rec, clock: clk, opts: opts}
}

// Start loops until ctx ends; it is a leader-elected manager runnable.
func (p *Provisioner) Start(ctx context.Context) error {
	logger := log.FromContext(ctx).WithName("provisioner")
	ctx = log.IntoContext(ctx, logger)
	for ctx.Err() == nil {
		if !p.batcher.Wait(ctx) {
			continue
		}
		if _, err := p.Schedule(ctx); err != nil && ctx.Err() == nil {
			logger.Error(err, "scheduling pass failed")
		}
	}
	return nil
}

// NeedLeaderElection keeps passes on the leader only.
func (p *Provisioner) NeedLeaderElection() bool { return true }

// Result summarizes one pass.
type Result struct {
	Pods       int
	Created    []*v1.NodeClaim
	Nominated  int
	Failed     int
	Unassigned []scheduling.PodError
}

// Schedule runs one pass: snapshot, resolve volume topology, solve,
// nominate and create.
func (p *Provisioner) Schedule(ctx context.Context) (*Result, error) {
	start := p.clock.Now()
	defer func() {
		metrics.SchedulingDuration.WithLabelValues(ControllerName).Observe(p.clock.Since(start).Seconds())
	}()
	logger := log.FromContext(ctx)

	snap, err := p.cluster.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	tSnap := p.clock.Since(start)
	var tSolve, tCreate time.Duration
	pods := podsToSchedule(snap)
	metrics.PendingPods.Set(float64(len(pods)))
	res := &Result{Pods: len(pods)}
	if len(pods) == 0 {
		return res, nil
	}
	objs, err := p.cluster.VolumeObjects(ctx, pods)
	if err != nil {
		return nil, err
	}
	pods, volumes, unplaced := simulation.VolumeTopology(pods, objs)
	if len(pods) > 0 {
		in, pools, err := p.input(ctx, snap, pods, volumes)
		if err != nil {
			return nil, err
		}
		t0 := p.clock.Now()
		in.Catalog = p.catalogs.For(in.NodePools)
		plan, err := scheduling.Solve(*in)
		if err != nil {
			return nil, fmt.Errorf("solving for %d pods: %w", len(pods), err)
		}
		tSolve = p.clock.Since(t0)
		p.reportMinValuesUnmet(ctx, plan, pools)
		for _, pl := range plan.Placements {
			if pl.Kind == scheduling.TargetNewClaim {
				continue
			}
			p.nominate(pl.Pod, pl.Node, pl.Kind == scheduling.TargetInFlight)
			res.Nominated++
		}
		unplaced = append(unplaced, plan.Errors...)
		t0 = p.clock.Now()
		unplaced = append(unplaced, p.create(ctx, plan.NewClaims, pools, in, res)...)
		tCreate = p.clock.Since(t0)
	}
	for _, pe := range unplaced {
		p.recorder.PodFailedScheduling(pe.Pod, errors.New(simulation.ConciseReason(pe.Err)))
	}
	res.Unassigned = unplaced
	metrics.UnschedulablePods.WithLabelValues(ControllerName).Set(float64(len(unplaced)))
	logger.Info("scheduling pass", "pods", res.Pods, "nodeclaims", len(res.Created), "nominated", res.Nominated,
		"unschedulable", len(unplaced), "duration", p.clock.Since(start).String(),
		"snapshot", tSnap.String(), "solve", tSolve.String(), "create", tCreate.String())
	return res, nil
}

// podsToSchedule are the provisionable pending pods plus the pods of nodes
// going away.
func podsToSchedule(snap *state.Snapshot) []*corev1.Pod {
	var out []*corev1.Pod
	for _, pod := range snap.Pending {
		if pods.IsProvisionable(pod) && !pods.ExcludesManagedNodes(pod) {
			out = append(out, pod)
		}
	}
	return append(out, simulation.Displaced(snap.Nodes, nil)...)
}

// input builds the solver's input; it also returns the NodePools by name.
func (p *Provisioner) input(ctx context.Context, snap *state.Snapshot, pods []*corev1.Pod, volumes map[types.UID][][]corev1.NodeSelectorRequirement) (*scheduling.Input, map[string]*v1.NodePool, error) {
	pools := simulation.SchedulablePools(snap.NodePools)
	poolTypes := map[string][]*scheduling.InstanceType{}
	byName := map[string]*v1.NodePool{}
	var errs []error
	for _, pool := range pools {
		its, err := p.cloud.GetInstanceTypes(metrics.WithController(ctx, ControllerName), pool)
		if err != nil {
			errs = append(errs, fmt.Errorf("instance types of nodepool %s: %w", pool.Name, err))
			continue
		}
		if len(its) == 0 {
			p.recorder.NoCompatibleInstanceTypes(pool, false)
			continue
		}
		poolTypes[pool.Name] = its
		byName[pool.Name] = pool
	}
	if len(byName) == 0 && len(errs) > 0 {
		return nil, nil, errors.Join(errs...)
	}
	for _, err := range errs {
		log.FromContext(ctx).Error(err, "skipping nodepool")
	}
	return simulation.Build(snap, nil, pods, volumes, poolTypes, p.opts.Solver, nil), byName, nil
}

// reportMinValuesUnmet tells each NodePool the solver found unusable
// because its instance types cannot meet its minValues (Strict policy), as
// Karpenter's NewScheduler does; its pods stay pending with their own
// FailedScheduling events.
func (p *Provisioner) reportMinValuesUnmet(ctx context.Context, plan *scheduling.Plan, pools map[string]*v1.NodePool) {
	for name, err := range plan.MinValuesUnmet {
		pool, ok := pools[name]
		if !ok {
			continue
		}
		p.recorder.NoCompatibleInstanceTypes(pool, true)
		log.FromContext(ctx).Info("skipping, nodepool requirements filtered out all instance types", "nodepool", name, "minValuesIncompatibleErr", err.Error())
	}
}

func (p *Provisioner) nominate(pod *corev1.Pod, target string, inFlight bool) {
	p.cluster.Nominate(pod.UID, target, inFlight, p.opts.NominationTTL)
	kind := "node"
	if inFlight {
		kind = "nodeclaim"
	}
	p.recorder.PodNominated(pod, kind, target)
}

// ControllerName names the provisioner in metrics.
const ControllerName = "provisioner"

// createWorkers bounds concurrent NodeClaim creates: under load each takes
// the API server hundreds of milliseconds, and a large pass creates hundreds.
const createWorkers = 50

// create re-checks each pool's limits against usage that includes the
// claims of this pass, then creates the claims in parallel. It returns the
// pods of claims it could not create.
func (p *Provisioner) create(ctx context.Context, claims []*scheduling.NewClaim, pools map[string]*v1.NodePool, in *scheduling.Input, res *Result) []scheduling.PodError {
	usage := map[string]corev1.ResourceList{}
	for _, sp := range in.NodePools {
		usage[sp.Name] = sp.Usage.DeepCopy()
		if usage[sp.Name] == nil {
			usage[sp.Name] = corev1.ResourceList{}
		}
	}
	var failed []scheduling.PodError
	fail := func(nc *scheduling.NewClaim, err error) {
		for _, pod := range nc.Pods {
			failed = append(failed, scheduling.PodError{Pod: pod, Err: err})
		}
	}
	var ok []*scheduling.NewClaim
	for _, nc := range claims {
		pool := pools[nc.NodePool]
		next := usage[nc.NodePool].DeepCopy()
		scheduling.AddResources(next, claimMaxCapacity(nc))
		if name := ExceededBy(pool.Spec.Limits, next); name != "" {
			fail(nc, limitError(pool.Name, name, pool.Spec.Limits))
			continue
		}
		usage[nc.NodePool] = next
		ok = append(ok, nc)
	}
	var mu sync.Mutex
	workqueue.ParallelizeUntil(ctx, createWorkers, len(ok), func(i int) {
		nc := ok[i]
		claim := simulation.NewNodeClaim(pools[nc.NodePool], nc)
		err := p.kube.Create(ctx, claim)
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			log.FromContext(ctx).Error(err, "creating nodeclaim", "nodepool", nc.NodePool)
			fail(nc, fmt.Errorf("creating a nodeclaim for nodepool %q: %w", nc.NodePool, err))
			return
		}
		p.cluster.ClaimCreated(claim)
		metrics.NodeClaimsCreated.With(metrics.CreatedLabels(metrics.ReasonProvisioned, claim)).Inc()
		log.FromContext(ctx).Info("created nodeclaim", "nodeclaim", claim.Name, "nodepool", nc.NodePool,
			"requests", resourceString(claim.Spec.Resources.Requests), "instance-types", optionNames(nc, 5), "pods", len(nc.Pods))
		res.Created = append(res.Created, claim)
		for _, pod := range nc.Pods {
			p.nominate(pod, claim.Name, true)
		}
	})
	return failed
}

func optionNames(nc *scheduling.NewClaim, n int) string {
	s := ""
	for i, o := range nc.InstanceTypes {
		if i == n {
			return fmt.Sprintf("%s and %d other(s)", s, len(nc.InstanceTypes)-n)
		}
		if i > 0 {
			s += ", "
		}
		s += o.Type.Name
	}
	return s
}

func resourceString(rl corev1.ResourceList) string {
	s := ""
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourcePods} {
		if q, ok := rl[name]; ok {
			if s != "" {
				s += " "
			}
			s += fmt.Sprintf("%s=%s", name, q.String())
		}
	}
	return s
}
