package disruption

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/disruption/repair"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/events"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/metrics"
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
	NodeRepair       bool
	PreferencePolicy string
	MinValuesPolicy  string
	// PollPeriod and ValidationDelay default to the constants above.
	PollPeriod      time.Duration
	ValidationDelay time.Duration
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
	return &Controller{
		kube: kube, cluster: cluster, cloud: provider, recorder: rec, clock: clk, opts: opts,
		queue: NewQueue(kube, cluster, rec, clk), lastEvents: map[string]eventMemo{},
	}
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

// method is one disruption method with the reason its budgets use.
type method struct {
	name   string
	reason v1.DisruptionReason
	run    func(context.Context, *Env, []*Candidate, Budgets) Outcome
}

// methods run in Karpenter v1.15's order: repair first (fixing a fault
// outranks any discretionary change), then Emptiness, Drift and
// consolidation.
var methods = []method{
	{MethodRepair, v1.DisruptionReasonUnhealthy, func(_ context.Context, e *Env, c []*Candidate, b Budgets) Outcome { return Repair(e, c, b) }},
	{MethodEmptiness, v1.DisruptionReasonEmpty, func(_ context.Context, e *Env, c []*Candidate, b Budgets) Outcome { return Emptiness(e, c, b) }},
	{MethodDrift, v1.DisruptionReasonDrifted, func(_ context.Context, e *Env, c []*Candidate, b Budgets) Outcome { return Drift(e, c, b) }},
	{MethodMultiNode, v1.DisruptionReasonUnderutilized, MultiNode},
	{MethodSingleNode, v1.DisruptionReasonUnderutilized, SingleNode},
}

// A pass decides at most MaxCommandsPerPass consolidation and emptiness
// commands before their common validation, and starts no further search
// passSearch after its first decision: the first command's nodes wait at
// most that longer than the validation delay.
const (
	MaxCommandsPerPass = 10
	passSearch         = 5 * time.Second
)

// Pass decides (see decide) and starts what it decided; it reports
// whether it decided a command (started, or abandoned when its validation
// failed).
func (c *Controller) Pass(ctx context.Context) (bool, error) {
	start := c.clock.Now()
	env, err := c.Env(ctx)
	if err != nil {
		return false, err
	}
	tEnv := c.clock.Since(start)
	c.removeStaleTaints(ctx, env)
	batch, now, took := c.decide(ctx, env)
	logPass(ctx, env, tEnv, c.clock.Since(start), took, batch, now)
	switch {
	case now != nil:
		if err := c.queue.Execute(ctx, now, env.Snapshot.NodePools); err != nil {
			return false, fmt.Errorf("starting %s: %w", now, err)
		}
		return true, nil
	case len(batch) > 0:
		return true, c.validateAndStart(ctx, batch, env.Snapshot.NodePools)
	}
	return false, nil
}

// logPass logs a pass that decided something at info, with how long it
// took (reading the cluster, then deciding), and one that decided nothing
// at debug.
func logPass(ctx context.Context, env *Env, tEnv, total time.Duration, took []string, batch []*Command, now *Command) {
	nodes := 0
	for _, cmd := range append(slices.Clone(batch), now) {
		if cmd != nil {
			nodes += len(cmd.Candidates)
		}
	}
	logger := log.FromContext(ctx)
	if nodes == 0 {
		logger = logger.V(1)
	}
	logger.Info("disruption pass", "nodes", len(env.Snapshot.Nodes), "commands", len(batch)+btoi(now != nil), "disrupting", nodes,
		"duration", total.String(), "snapshot", tEnv.String(), "methods", took)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// decide runs the methods in order. A command that needs no validation
// (repair, drift) found first is returned as now, to start at once. A
// consolidation or emptiness command that deletes is kept and the same
// method runs again, then the rest, with its nodes counted as going
// (Leaving): the batch so found waits out one validation delay, not one
// per command. A command that replaces ends the search, as does one that
// needs no validation after a batch began (it goes next pass).
// took lists each method run with how long it took, in the order run.
func (c *Controller) decide(ctx context.Context, env *Env) (batch []*Command, now *Command, took []string) {
	blockedReported := false
	var firstDecided time.Time
	// The consolidation searches are skipped while the cluster is the one
	// they last found nothing in; a pass in which both ran to the end and
	// found nothing records it.
	var fingerprint uint64
	fingerprinted, foundNothing := false, 0
	for i := 0; i < len(methods); i++ {
		m := methods[i]
		if m.name == MethodRepair && env.Repair == nil {
			continue
		}
		start := c.clock.Now()
		if len(batch) > 0 && start.Sub(firstDecided) >= passSearch {
			break
		}
		candidates, blocked := Candidates(env, m.reason)
		// Repair's candidates ignore do-not-disrupt; the reasons users
		// see are those of voluntary disruption.
		if !blockedReported && m.reason != v1.DisruptionReasonUnhealthy {
			c.reportBlocked(blocked)
			blockedReported = true
		}
		budgets, errs := BuildBudgets(env.Snapshot.Nodes, env.Snapshot.NodePools, m.reason, env.Now)
		for _, err := range errs {
			log.FromContext(ctx).Error(err, "evaluating disruption budgets")
		}
		for pool, n := range budgets {
			allowedDisruptions.WithLabelValues(pool, reasonLabel(m.reason)).Set(float64(n))
		}
		consolidation := m.name == MethodMultiNode || m.name == MethodSingleNode
		if consolidation && len(batch) == 0 {
			if !fingerprinted {
				fingerprint, fingerprinted = consolidationFingerprint(env, budgets), true
			}
			if c.consolidated.holds(fingerprint, env.Now) {
				took = append(took, m.name+"=unchanged")
				continue
			}
		}
		out := m.run(ctx, env, candidates, budgets)
		took = append(took, m.name+"="+c.clock.Since(start).Round(time.Millisecond).String())
		evaluationDuration.WithLabelValues(reasonLabel(m.reason), consolidationTypeOf(m.name)).Observe(c.clock.Since(start).Seconds())
		eligibleNodes.WithLabelValues(reasonLabel(m.reason)).Set(float64(out.Eligible))
		if out.TimedOut {
			consolidationTimeouts.WithLabelValues(consolidationTypeOf(m.name)).Inc()
		}
		c.reportRejected(out.Rejected)
		c.observeMoves(out.Moves)
		c.reportRepairBlocked(out)
		cmd := out.Command
		if consolidation && len(batch) == 0 && cmd == nil && !out.TimedOut {
			foundNothing++
		}
		switch {
		case cmd == nil:
			if len(batch) == 0 {
				c.reportBudgetBlocked(env, candidates, budgets, m)
			}
			continue
		case !cmd.NeedsValidation():
			if len(batch) == 0 {
				return nil, cmd, took
			}
			return batch, nil, took
		}
		if len(batch) == 0 {
			firstDecided = c.clock.Now()
		}
		batch = append(batch, cmd)
		// A replacement is sized for the pods the simulation moved; a
		// later decision would move some of them again.
		if cmd.Decision() != "delete" || len(batch) == MaxCommandsPerPass {
			break
		}
		for _, cand := range cmd.Candidates {
			cand.Leaving = true
		}
		i-- // the same method again, without these nodes
	}
	if len(batch) == 0 && foundNothing == 2 {
		c.consolidated = consolidatedMemo{fingerprint: fingerprint, at: env.Now}
	}
	return batch, nil, took
}

// validateAndStart waits the validation delay, then re-checks each command
// (see Revalidate) in the order decided, with the nodes of the commands
// before it that still hold counted as going, as they were when it was
// decided, and starts those that hold.
func (c *Controller) validateAndStart(ctx context.Context, decided []*Command, pools []*v1.NodePool) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-c.clock.After(c.opts.ValidationDelay):
	}
	env, err := c.Env(ctx)
	if err != nil {
		return err
	}
	going := map[string]bool{}
	for _, cmd := range decided {
		for _, n := range env.Snapshot.Nodes {
			n.Leaving = going[n.Name()]
		}
		valid, err := Revalidate(ctx, env, cmd)
		if err != nil {
			failedValidations.WithLabelValues(consolidationTypeOf(cmd.Method)).Inc()
			log.FromContext(ctx).Info("disruption command no longer valid", "method", cmd.Method, "reason", err.Error())
			continue
		}
		if err := c.queue.Execute(ctx, valid, pools); err != nil {
			return fmt.Errorf("starting %s: %w", valid, err)
		}
		for _, cand := range valid.Candidates {
			going[cand.Name()] = true
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
		Options: scheduling.Options{PreferencePolicy: c.opts.PreferencePolicy, MinValuesPolicy: c.opts.MinValuesPolicy},
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

// Revalidate re-derives cmd in env (see validateAndStart). An emptiness or
// multi-node command keeps those of its candidates that still hold: each
// passed the same wait, so a node that took pods, or a set that no longer
// goes as decided, costs the command only what changed, not the whole
// command and another validation delay. A multi-node command keeps the
// longest run, in its order, that still goes as decided at no higher price
// (at least two nodes).
func Revalidate(ctx context.Context, env *Env, cmd *Command) (*Command, error) {
	current, _ := Candidates(env, cmd.Reason)
	byName := map[string]*Candidate{}
	for _, cand := range current {
		byName[cand.Name()] = cand
	}
	budgets, _ := BuildBudgets(env.Snapshot.Nodes, env.Snapshot.NodePools, cmd.Reason, env.Now)
	narrows := cmd.Method == MethodEmptiness || cmd.Method == MethodMultiNode
	var fresh []*Candidate
	var lost error
	for _, old := range cmd.Candidates {
		cand, ok := byName[old.Name()]
		var why error
		switch {
		case !ok:
			why = fmt.Errorf("node %s is no longer a disruption candidate", old.Name())
		case !cand.Consolidatable():
			why = fmt.Errorf("node %s had pods scheduled or removed", old.Name())
		case cmd.Method == MethodEmptiness && !cand.Empty():
			why = fmt.Errorf("node %s is no longer empty", old.Name())
		case !budgets.take(cand.Pool.Name):
			why = fmt.Errorf("nodepool %s has no disruption budget left for node %s", cand.Pool.Name, old.Name())
		}
		if why != nil {
			if !narrows {
				return nil, why
			}
			lost = cmp.Or(lost, why)
			continue
		}
		fresh = append(fresh, cand)
	}
	if cmd.Method == MethodEmptiness {
		if len(fresh) == 0 {
			return nil, lost
		}
		return &Command{Method: cmd.Method, Reason: cmd.Reason, Candidates: fresh}, nil
	}
	holds := func(again *Command) bool {
		return again.Decision() == cmd.Decision() && again.ReplacementPrice() <= cmd.ReplacementPrice()
	}
	if lost == nil {
		again, err := Consolidate(env, cmd.Method, fresh)
		if err == nil && holds(again) {
			return again, nil
		}
		if lost = err; err == nil {
			lost = fmt.Errorf("the decision changed from %s to %s", cmd, again)
		}
		if !narrows {
			return nil, lost
		}
	}
	var set []*Candidate
	var best *Command
	for _, c := range fresh {
		if ctx.Err() != nil {
			break
		}
		next := slices.Concat(set, []*Candidate{c})
		again, err := Consolidate(env, cmd.Method, next)
		if err != nil || !holds(again) {
			continue
		}
		set = next
		if len(set) >= 2 {
			best = again
		}
	}
	if best == nil {
		return nil, lost
	}
	if ok, _ := approveBalanced(best, poolTotals(env, current)); !ok {
		return nil, lost
	}
	log.FromContext(ctx).Info("disruption command narrowed at validation", "from", len(cmd.Candidates), "to", len(best.Candidates), "reason", lost.Error())
	return best, nil
}

// removeStaleTaints deals with nodes left tainted by a command this process
// no longer runs (a restart, a lost leader lease). A command whose
// replacements were created is resumed: its nodes wait for them and go, as
// they would have, instead of being untainted, disrupted again and
// replaced a second time. The other nodes are untainted.
func (c *Controller) removeStaleTaints(ctx context.Context, env *Env) {
	stale := map[string]*state.StateNode{}
	for _, n := range env.Snapshot.Nodes {
		if n.Node == nil || n.NodeClaim == nil || env.Queued[n.Node.Name] || !v1.HasDisruptedTaint(n.Node) {
			continue
		}
		if n.Node.DeletionTimestamp != nil || n.NodeClaim.DeletionTimestamp != nil {
			continue
		}
		stale[n.NodeClaim.Name] = n
	}
	for _, r := range resumable(env, stale) {
		for _, cand := range r.cmd.Candidates {
			delete(stale, cand.NodeClaim.Name)
		}
		c.queue.Resume(ctx, r.cmd, r.replacements)
	}
	for _, n := range stale {
		if err := Untaint(ctx, c.kube, n.Node.Name, n.NodeClaim.Name); err != nil {
			log.FromContext(ctx).Error(err, "removing a stale disruption taint", "node", n.Node.Name)
		}
	}
}

// reportBlocked tells users why consolidatable or drifted nodes are not
// disrupted.
func (c *Controller) reportBlocked(blocked []Blocked) {
	for _, b := range blocked {
		cand := &Candidate{StateNode: b.StateNode}
		if !cand.Consolidatable() && !cand.Drifted() {
			continue
		}
		c.emitOnce(b.Node.Name+"/blocked", b.Reason, func() {
			c.recorder.Normal(b.Node, reasonDisruptionBlocked, actionDisrupt, "Cannot disrupt Node: %s", b.Reason)
			c.recorder.Normal(b.NodeClaim, reasonDisruptionBlocked, actionDisrupt, "Cannot disrupt NodeClaim: %s", b.Reason)
		})
	}
}

func (c *Controller) reportRejected(rejected map[*Candidate]string) {
	for cand, why := range rejected {
		c.emitOnce(cand.Node.Name+"/unconsolidatable", why, func() {
			c.recorder.Normal(cand.Node, reasonUnconsolidatable, actionDisrupt, "%s", why)
			c.recorder.Normal(cand.NodeClaim, reasonUnconsolidatable, actionDisrupt, "%s", why)
		})
	}
}

// reportRepairBlocked tells users why unhealthy nodes are not repaired:
// DisruptionBlocked on the Node and NodeClaim, and NodeRepairBlocked
// (warnings, also on the NodePool) when the pool is over the safety limit.
func (c *Controller) reportRepairBlocked(out Outcome) {
	for cand, why := range out.Blocked {
		c.emitOnce(cand.Node.Name+"/blocked", why, func() {
			c.recorder.Normal(cand.Node, reasonDisruptionBlocked, actionDisrupt, "Cannot disrupt Node: %s", why)
			c.recorder.Normal(cand.NodeClaim, reasonDisruptionBlocked, actionDisrupt, "Cannot disrupt NodeClaim: %s", why)
		})
	}
	for cand, why := range out.RepairBlocked {
		c.emitOnce(cand.Node.Name+"/repairblocked", why, func() {
			c.recorder.Warning(cand.Node, reasonNodeRepairBlocked, actionRepair, "%s", why)
			c.recorder.Warning(cand.NodeClaim, reasonNodeRepairBlocked, actionRepair, "%s", why)
		})
		c.emitOnce(cand.Pool.Name+"/repairblocked", why, func() {
			c.recorder.Warning(cand.Pool, reasonNodeRepairBlocked, actionRepair, "%s", why)
		})
	}
}

// reportBudgetBlocked tells a NodePool when its budget for the method's
// reason is what holds eligible nodes back.
func (c *Controller) reportBudgetBlocked(env *Env, candidates []*Candidate, budgets Budgets, m method) {
	seen := map[string]bool{}
	for _, cand := range candidates {
		pool := cand.Pool.Name
		if seen[pool] || budgets[pool] > 0 {
			continue
		}
		var waiting bool
		switch m.reason {
		case v1.DisruptionReasonDrifted:
			waiting = cand.Drifted()
		case v1.DisruptionReasonUnhealthy:
			waiting = cand.Repair.Eligible && cand.Initialized()
		default:
			waiting = cand.Consolidatable()
		}
		if waiting {
			seen[pool] = true
			msg := fmt.Sprintf("No allowed disruptions for disruption reason %s due to blocking budget", m.reason)
			c.emitOnce(pool+"/budget/"+string(m.reason), msg, func() {
				c.recorder.Normal(cand.Pool, reasonDisruptionBlocked, actionDisrupt, "%s", msg)
			})
		}
	}
}

// emitOnce calls emit unless the same message was emitted for key recently.
func (c *Controller) emitOnce(key, message string, emit func()) {
	c.mu.Lock()
	last, ok := c.lastEvents[key]
	now := c.clock.Now()
	if ok && last.message == message && now.Sub(last.at) < eventRepeat {
		c.mu.Unlock()
		return
	}
	c.lastEvents[key] = eventMemo{message: message, at: now}
	c.mu.Unlock()
	emit()
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
