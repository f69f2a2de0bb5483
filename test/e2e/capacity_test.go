package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/nodeclaim/lifecycle"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/state"
)

// capacityClass is the EC2NodeClass of TestCapacityLoss.
const capacityClass = "capacity"

// TestCapacityLoss: capacity that fails to come or goes away: an instance
// whose boot fails, a pool whose instance types have no capacity left, and
// the interruptions AWS announces through the queue. A world of its own,
// with an interruption queue; the scenarios run in parallel in it, each on
// NodePools and instance types of its own.
func TestCapacityLoss(t *testing.T) {
	t.Parallel()
	ownWorld(t, worldOptions{name: "capacity", interruptionQueue: true})
	nodeClass(t, capacityClass)
	t.Run("registration-timeout", testRegistrationTimeout)
	t.Run("insufficient-capacity", testInsufficientCapacity)
	t.Run("interruption", testInterruption)
	t.Run("node-repair", testNodeRepair)
}

// testRegistrationTimeout: one of two instances launched for a Deployment
// fails to boot and never becomes a Node. After the registration timeout
// its NodeClaim is deleted and the instance terminated, and its pod runs
// on a new node; users are told with RegistrationFailed events.
func testRegistrationTimeout(t *testing.T) {
	t.Parallel()
	const pool, replicas = "boot", 2
	wd := worldOf(t)
	ns := scenarioNamespace(t, "e2e-boot")
	consolidatingPool(t, pool, "Never", func(np *v1.NodePool) { np.Spec.Template.Spec.NodeClassRef.Name = capacityClass })
	if err := wd.sim.FailBoots(1, map[string]string{v1.NodePoolLabelKey: pool}); err != nil {
		t.Fatal(err)
	}
	claims := watchClaims(t, pool)
	_, inv := spreadWorkload(t, ns, pool, replicas, 1, pool)
	var broken v1.NodeClaim
	eventually(t, "one node registered, the other launched and not", func() (bool, string) {
		registered := 0
		for _, c := range claimsOf(t, pool) {
			if meta.IsStatusConditionTrue(c.Status.Conditions, v1.ConditionTypeRegistered) {
				registered++
			} else if meta.IsStatusConditionTrue(c.Status.Conditions, v1.ConditionTypeLaunched) {
				broken = c
			}
		}
		return registered == 1 && broken.Name != "", fmt.Sprintf("%d registered; unregistered launched: %q", registered, broken.Name)
	})
	id := instanceID(t, broken.Status.ProviderID)
	launched := meta.FindStatusCondition(broken.Status.Conditions, v1.ConditionTypeLaunched).LastTransitionTime.Time
	t.Logf("nodeclaim %s launched instance %s at %s, which never registers; waiting out the %s registration timeout",
		broken.Name, id, launched.Format(time.TimeOnly), lifecycle.RegistrationTimeout)
	deadline := time.Now().Add(lifecycle.RegistrationTimeout + waitTimeout)
	for {
		c := &v1.NodeClaim{}
		err := wd.kube.Get(context.Background(), client.ObjectKey{Name: broken.Name}, c)
		if client.IgnoreNotFound(err) == nil && (err != nil || c.DeletionTimestamp != nil) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("nodeclaim %s of an instance that never registered still there %s after its launch", broken.Name, time.Since(launched).Round(time.Second))
		}
		time.Sleep(5 * time.Second)
	}
	if gone := time.Since(launched); gone < lifecycle.RegistrationTimeout {
		t.Errorf("nodeclaim %s deleted %s after its launch, before the registration timeout", broken.Name, gone.Round(time.Second))
	}
	// Users see it: a RegistrationFailed warning on the NodeClaim and on
	// its NodePool, naming the instance.
	eventually(t, "RegistrationFailed events on nodeclaim "+broken.Name+" and nodepool "+pool, func() (bool, string) {
		var missing []string
		for _, name := range []string{broken.Name, pool} {
			found := false
			for _, e := range runtimeEvents(t, "default", name, "RegistrationFailed") {
				found = found || strings.Contains(e.Note, id)
			}
			if !found {
				missing = append(missing, name)
			}
		}
		return len(missing) == 0, fmt.Sprintf("no RegistrationFailed event naming %s on %v", id, missing)
	})
	inv.check(t)
	eventually(t, "the instance that never registered terminated", func() (bool, string) {
		s := instanceStateOf(t, id)
		return s == "shutting-down" || s == "terminated", string(s)
	})
	if created, _ := claims.counts(); created != replicas+1 {
		t.Errorf("%d nodeclaims created; want %d and one replacement for the one that never registered", created, replicas)
	}
}

// testInsufficientCapacity: the preferred NodePool (higher weight) allows
// only instance types with no capacity left in any zone, spot or
// on-demand. Its launches fail; the pods run on the next NodePool's nodes,
// and the first pool keeps no NodeClaim and no instance.
func testInsufficientCapacity(t *testing.T) {
	t.Parallel()
	const first, fallback, replicas = "ice-first", "ice-fallback", 3
	wd := worldOf(t)
	ns := scenarioNamespace(t, "e2e-ice")
	group := map[string]string{"e2e.joist.dev/ice": "true"}
	pool := func(name, family string, weight int32) {
		consolidatingPool(t, name, "Never", func(np *v1.NodePool) {
			np.Spec.Weight = &weight
			np.Spec.Template.Labels = group
			np.Spec.Template.Spec.NodeClassRef.Name = capacityClass
			np.Spec.Template.Spec.Requirements = append(np.Spec.Template.Spec.Requirements[:1], spotAndOnDemand, amd64,
				req(v1.LabelInstanceFamily, corev1.NodeSelectorOpIn, family))
		})
	}
	dry := 0
	for _, it := range familyTypes("c6a") {
		for _, z := range region(t).Zones {
			for _, ct := range []string{"spot", "on-demand"} {
				if err := wd.sim.EC2.SetCapacity(it, z.Name, ct, 0); err == nil {
					dry++
				}
			}
		}
	}
	t.Logf("no capacity left in %d c6a pools (type, zone, capacity type)", dry)
	pool(first, "c6a", 100)
	pool(fallback, "m6a", 10)
	firstClaims := watchClaims(t, first)
	spec := podSpec("", requests("1", "1Gi"))
	spec.NodeSelector = group
	hostnameAntiAffinity(&spec, "pause")
	inv := watchInvariants(t, ns, "pause", replicas, 1, first, fallback)
	create(t, deployment(ns, "pause", replicas, spec))
	pdb(t, ns, "pause", 1)
	waitRunning(t, ns, replicas)
	nodePool := map[string]string{}
	for _, n := range nodesOf(t, fallback) {
		nodePool[n.Name] = fallback
	}
	for _, p := range pods(t, ns, map[string]string{"app": "pause"}) {
		if nodePool[p.Spec.NodeName] != fallback {
			t.Errorf("pod %s runs on %s, not on a node of %s", p.Name, p.Spec.NodeName, fallback)
		}
	}
	created, _ := firstClaims.names()
	if len(created) == 0 {
		t.Errorf("no launch was tried in %s: the scenario tested nothing", first)
	}
	ice := 0
	for _, name := range created {
		ice += len(runtimeEvents(t, "default", name, "InsufficientCapacityError"))
	}
	if ice == 0 {
		t.Errorf("nodeclaims %v of %s report no InsufficientCapacityError", created, first)
	}
	inv.check(t)
	if n := len(claimNames(t, first)); n != 0 {
		t.Errorf("%s keeps %d nodeclaims", first, n)
	}
	t.Logf("%s tried %d nodeclaims, all out of capacity; the pods run on %s", first, len(created), fallback)
}

// spotOnly is the spot capacity type alone.
var spotOnly = req(v1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, v1.CapacityTypeSpot)

// testInterruption: through the interruption queue, a spot interruption
// warning drains its node, whose pod runs on a replacement Ready before
// the two-minute notice ends; a rebalance recommendation is reported and
// changes nothing; an AWS Health scheduled change drains its node too.
// The PodDisruptionBudget holds throughout.
func testInterruption(t *testing.T) {
	t.Parallel()
	const pool, replicas = "interruption", 3
	wd := worldOf(t)
	ns := scenarioNamespace(t, "e2e-interruption")
	consolidatingPool(t, pool, "Never", func(np *v1.NodePool) {
		np.Spec.Template.Spec.NodeClassRef.Name = capacityClass
		np.Spec.Template.Spec.Requirements = append(np.Spec.Template.Spec.Requirements[:1], spotOnly, amd64, categoriesCMR)
	})
	_, inv := spreadWorkload(t, ns, pool, replicas, 1, pool)
	waitRunning(t, ns, replicas)
	victims := claimsOf(t, pool)
	spot, rebalance, scheduled := victims[0], victims[1], victims[2]
	claims := watchClaims(t, pool)

	// Spot interruption: two minutes' notice, as AWS gives.
	const notice = 2 * time.Minute
	spotID := instanceID(t, spot.Status.ProviderID)
	if err := wd.sim.EC2.InterruptSpot(spotID, notice); err != nil {
		t.Fatal(err)
	}
	reclaim := time.Now().Add(notice)
	replacement := replacedBy(t, claims, spot.Name, nil)
	if replacement.ready.After(reclaim) {
		t.Errorf("the replacement %s of interrupted %s was Ready at %s, after the notice ended at %s",
			replacement.name, spot.Name, replacement.ready.Format(time.TimeOnly), reclaim.Format(time.TimeOnly))
	}
	t.Logf("spot interruption of %s (%s): replacement %s Ready %s before the notice ended", spot.Name, spotID, replacement.name, reclaim.Sub(replacement.ready).Round(time.Second))
	waitRunning(t, ns, replicas)

	// Rebalance recommendation: reported, nothing drained.
	if err := wd.sim.EC2.RecommendRebalance(instanceID(t, rebalance.Status.ProviderID)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the rebalance recommendation reported on "+rebalance.Name, func() (bool, string) {
		return len(runtimeEvents(t, "default", rebalance.Name, "SpotRebalanceRecommendation")) > 0, "no event yet"
	})

	// Scheduled change (an instance retirement): drained like a spot
	// interruption.
	if err := wd.sim.EC2.ScheduleChange([]string{instanceID(t, scheduled.Status.ProviderID)}, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	replacement = replacedBy(t, claims, scheduled.Name, map[string]bool{replacement.name: true})
	t.Logf("scheduled change for %s: replaced by %s", scheduled.Name, replacement.name)
	inv.check(t)
	c := &v1.NodeClaim{}
	if err := wd.kube.Get(context.Background(), client.ObjectKeyFromObject(&rebalance), c); err != nil || c.DeletionTimestamp != nil {
		t.Errorf("nodeclaim %s was disrupted by a rebalance recommendation (%v)", rebalance.Name, err)
	}
	if created, deleted := claims.names(); len(created) != 2 || len(deleted) != 2 {
		t.Errorf("nodeclaims created %v and deleted %v; want one replacement for each drained node", created, deleted)
	}
}

// replacement is a NodeClaim created after another was drained.
type replacement struct {
	name  string
	ready time.Time
}

// replacedBy waits until the claim is gone and a claim created since (not
// one of taken) took its place with a Ready node, and returns it.
func replacedBy(t *testing.T, claims *claimLog, gone string, taken map[string]bool) replacement {
	t.Helper()
	var out replacement
	eventually(t, "nodeclaim "+gone+" replaced by a Ready node", func() (bool, string) {
		created, deleted := claims.names()
		if !contains(deleted, gone) {
			return false, gone + " not deleted yet"
		}
		for _, name := range created {
			if taken[name] {
				continue
			}
			c := &v1.NodeClaim{}
			if err := worldOf(t).kube.Get(context.Background(), client.ObjectKey{Name: name}, c); err != nil || c.Status.NodeName == "" {
				continue
			}
			n := &corev1.Node{}
			if err := worldOf(t).kube.Get(context.Background(), client.ObjectKey{Name: c.Status.NodeName}, n); err != nil || !state.IsNodeReady(n) {
				continue
			}
			for _, cond := range n.Status.Conditions {
				if cond.Type == corev1.NodeReady {
					out = replacement{name: name, ready: cond.LastTransitionTime.Time}
				}
			}
			return true, ""
		}
		return false, fmt.Sprintf("no Ready replacement among %v", created)
	})
	return out
}
