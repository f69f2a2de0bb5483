package disruption

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/disruption/repair"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/disruption/rollout"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/pods"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/state"
)

// reasonDriftRolloutStopped is the Warning a NodePool gets when a
// replacement of its drift rollout fails.
const reasonDriftRolloutStopped = "DriftRolloutStopped"

// stepRollouts advances the drift rollout of every pool that has one and
// drifted nodes, persisting its state on the NodePool, and records in
// env.DriftAllowed how many drifted nodes of each may start now. A pool
// whose state cannot be written starts none this pass.
func (c *Controller) stepRollouts(ctx context.Context, env *Env, specs map[string]string) {
	env.DriftAllowed = map[string]int{}
	budgets, _ := BuildBudgets(env.Snapshot.Nodes, env.Snapshot.NodePools, v1.DisruptionReasonDrifted, env.Now)
	for _, p := range env.Snapshot.NodePools {
		controls, _ := v1.ParseDisruptionControls(p.Annotations)
		if controls.Rollout == nil || p.DeletionTimestamp != nil {
			continue
		}
		env.DriftAllowed[p.Name] = 0
		spec, known := specs[p.Name]
		total, drifted := poolNodes(env.Snapshot.Nodes, p.Name)
		if !known || drifted == 0 {
			continue
		}
		old := rollout.ParseState(p.Annotations[v1.DriftRolloutStateAnnotationKey])
		replacements := replacementsByMember(env.Snapshot.Nodes)
		next, allowed := rollout.Step(old, *controls.Rollout, spec, total, budgets[p.Name], readyMembers(env.Snapshot.Nodes, replacements, old.Members), env.Now)
		why := ""
		if next.Failed == "" {
			if why = failingReplacement(replacements, next.Members, env.Repair, env.Now); why != "" {
				next, allowed = next.Fail(why), 0
			}
		}
		if next.Encode() != old.Encode() {
			if err := c.writeRollout(ctx, p.Name, func(rollout.State) rollout.State { return next }); err != nil {
				log.FromContext(ctx).Error(err, "recording the drift rollout", "nodepool", p.Name)
				continue
			}
		}
		if why != "" {
			c.announceRolloutStopped(p, why)
		}
		env.DriftAllowed[p.Name] = allowed
	}
}

// poolNodes counts the pool's initialized nodes and the drifted ones.
func poolNodes(nodes []*state.StateNode, pool string) (total, drifted int) {
	for _, n := range nodes {
		if n.NodeClaim == nil || n.Node == nil || !n.Initialized() || n.NodePool() != pool {
			continue
		}
		total++
		if (&Candidate{StateNode: n}).Drifted() {
			drifted++
		}
	}
	return total, drifted
}

// replacementsByMember maps each NodeClaim a disruption replaced to the
// nodes launched as its replacements.
func replacementsByMember(nodes []*state.StateNode) map[string][]*state.StateNode {
	byMember := map[string][]*state.StateNode{}
	for _, n := range nodes {
		if n.NodeClaim == nil {
			continue
		}
		for _, m := range strings.Split(n.NodeClaim.Annotations[v1.ReplacementForAnnotationKey], ",") {
			if m != "" {
				byMember[m] = append(byMember[m], n)
			}
		}
	}
	return byMember
}

// readyMembers counts the members (NodeClaims a wave replaced) whose
// replacements are all ready: registered and initialized, the Node Ready
// and every pod on it Ready. A member replaced by nothing (its pods fit
// elsewhere) is ready once it is gone.
func readyMembers(nodes []*state.StateNode, byMember map[string][]*state.StateNode, members []string) int {
	present := map[string]bool{}
	for _, n := range nodes {
		if n.NodeClaim != nil {
			present[n.NodeClaim.Name] = true
		}
	}
	ready := 0
	for _, m := range members {
		reps := byMember[m]
		if len(reps) == 0 {
			if !present[m] {
				ready++
			}
			continue
		}
		if !slices.ContainsFunc(reps, func(n *state.StateNode) bool { return !replacementReady(n) }) {
			ready++
		}
	}
	return ready
}

// failingReplacement says why a replacement of the wave's members has
// failed while the wave waits for it or bakes: node repair would replace
// it now (a covered condition held past its toleration; health is nil when
// node repair is off), or a pod on it is crash-looping. Either stops the
// rollout before the next wave.
func failingReplacement(byMember map[string][]*state.StateNode, members []string, health *repair.Matcher, now time.Time) string {
	for _, m := range members {
		for _, n := range byMember[m] {
			if n.Node == nil || n.Deleting() {
				continue
			}
			if health != nil {
				if r := health.Resolve(n.Node, now); r.Eligible {
					return fmt.Sprintf("replacement %s of %s needs node repair (%s=%s)", n.Node.Name, m, r.Condition, r.Status)
				}
			}
			for _, p := range n.Pods {
				if pods.IsCrashLooping(p) {
					return fmt.Sprintf("pod %s/%s is crash-looping on replacement %s of %s", p.Namespace, p.Name, n.Node.Name, m)
				}
			}
		}
	}
	return ""
}

func replacementReady(n *state.StateNode) bool {
	if n.Node == nil || !n.Initialized() || !state.IsNodeReady(n.Node) || n.Deleting() {
		return false
	}
	for _, p := range n.Pods {
		if !pods.IsTerminal(p) && !podReady(p) {
			return false
		}
	}
	return true
}

// writeRollout updates the pool's persisted rollout state.
func (c *Controller) writeRollout(ctx context.Context, pool string, update func(rollout.State) rollout.State) error {
	return retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		np := &v1.NodePool{}
		if err := c.kube.Get(ctx, client.ObjectKey{Name: pool}, np); err != nil {
			return err
		}
		stored := np.DeepCopy()
		if np.Annotations == nil {
			np.Annotations = map[string]string{}
		}
		np.Annotations[v1.DriftRolloutStateAnnotationKey] = update(rollout.ParseState(np.Annotations[v1.DriftRolloutStateAnnotationKey])).Encode()
		return c.kube.Patch(ctx, np, client.MergeFromWithOptions(stored, client.MergeFromWithOptimisticLock{}))
	})
}

// rolloutPools are the pools of the command's candidates that roll drift
// out.
func (c *Controller) rolloutPools(env *Env, cmd *Command) []string {
	if cmd.Method != MethodDrift {
		return nil
	}
	var out []string
	for _, cand := range cmd.Candidates {
		if _, ok := env.DriftAllowed[cand.Pool.Name]; ok && !slices.Contains(out, cand.Pool.Name) {
			out = append(out, cand.Pool.Name)
		}
	}
	return out
}

// startInRollout records the command's candidates as members of their
// pools' current waves before the command starts, so a restart never
// starts more of the wave than it holds.
func (c *Controller) startInRollout(ctx context.Context, env *Env, cmd *Command) error {
	for _, pool := range c.rolloutPools(env, cmd) {
		err := c.writeRollout(ctx, pool, func(s rollout.State) rollout.State {
			for _, cand := range cmd.Candidates {
				if cand.Pool.Name == pool {
					s = s.Start(cand.NodeClaim.Name)
				}
			}
			return s
		})
		if err != nil {
			return fmt.Errorf("recording the drift rollout of nodepool %s: %w", pool, err)
		}
	}
	return nil
}

// stopRollout stops the drift rollout of the command's pools after a
// failed replacement, and tells the pools.
func (c *Controller) stopRollout(ctx context.Context, cmd *Command, cause error) {
	if cmd.Method != MethodDrift {
		return
	}
	seen := map[string]bool{}
	for _, cand := range cmd.Candidates {
		pool := cand.Pool
		if pool == nil || seen[pool.Name] {
			continue
		}
		seen[pool.Name] = true
		if controls, _ := v1.ParseDisruptionControls(pool.Annotations); controls.Rollout == nil {
			continue
		}
		why := fmt.Sprintf("replacing %s failed: %v", cand.NodeClaim.Name, cause)
		if err := c.writeRollout(ctx, pool.Name, func(s rollout.State) rollout.State { return s.Fail(why) }); err != nil {
			log.FromContext(ctx).Error(err, "stopping the drift rollout", "nodepool", pool.Name)
			continue
		}
		c.announceRolloutStopped(pool, why)
	}
}

// announceRolloutStopped tells the pool that its drift rollout stopped.
func (c *Controller) announceRolloutStopped(pool *v1.NodePool, why string) {
	c.recorder.Warning(pool, reasonDriftRolloutStopped, actionDisrupt,
		"Drift rollout stopped: %s; no further drifted node is replaced until the nodepool or its node class changes (a new AMI release included)", why)
}
