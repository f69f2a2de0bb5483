package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/fault"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
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

// testDrainAcrossRestarts: a template change drifts every node; they are
// replaced, up to three at a time, each drained through the eviction API.
// kube-apiserver restarts during the first drain, etcd during a later one.
// Every node is replaced once and the PodDisruptionBudget holds: the watch
// counts a replica unavailable when its pod was evicted or deleted, or is
// not yet Running, or not Ready on a healthy node; pods kube-controller-
// manager marks not Ready because their nodes' heartbeats stopped during
// the outage run on, and are not counted (PodWatch). Nor is a breach
// kube-apiserver granted through the Eviction API against the status
// kube-controller-manager wrote from caches that still lagged the restart
// (it counted gone pods healthy), when every pod went through that API.
func testDrainAcrossRestarts(t *testing.T, np *v1.NodePool, claims *claimLog, inv *invariants) {
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
	// The pool's budget lets three nodes be disrupted at once; the
	// PodDisruptionBudget (1) is what keeps the drains from overlapping:
	// a drain that bypassed the eviction API would break it.
	np.Spec.Disruption.Budgets = []v1.Budget{{Nodes: "3"}}
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

// launchOutage is how long every CreateFleet call fails in testAWSErrors.
// A CreateFleet call runs under the instance batcher's one-minute deadline,
// and the SDK's standard retryer spaces its 8 attempts by jittered backoffs
// of up to 2, 4, 8 and 16 s, then 20 s three times (60 to 90 s in all): a
// call begun in the outage's first minute ends in an error (its attempts
// exhausted or its deadline passed) that reaches the runtime, which must
// keep the claim and launch it again. Once the outage ends, the attempt or
// call under way succeeds within one backoff (20 s; another if EC2's 30%
// throttling hits it): claims launch about 2.5 minutes after their
// creation, inside the 5-minute launch timeout, and their pods run within
// waitRunning's 4 minutes on a loaded machine. A runtime that deletes a
// claim on such an error deletes one a minute in.
const launchOutage = 2 * time.Minute

// testAWSErrors: a scale-out while every CreateFleet call fails for
// launchOutage (long enough for the error to outlast the SDK's retries),
// SSM GetParameters (an AMI alias's reads) throttles for as long, and EC2 and SQS throttle or fail
// a share of their calls, gets every pod Running without giving up a
// NodeClaim (a launch error that is not a capacity error is retried on the
// same claim), the node class keeps its AMIs and stays Ready, and a
// scheduled change sent while SQS fails is acted on; a consolidation while
// new instances stay invisible to Describe calls for 45 s neither collects
// a replacement nor breaks the PodDisruptionBudget.
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
	var added, outage []fault.Fault
	for _, f := range []fault.Fault{
		{Service: "ec2", Kind: fault.Throttle, Rate: 0.3},
		{Service: "sqs", Kind: fault.Throttle, Rate: 0.3},
		{Service: "sqs", Kind: fault.ServerError, Rate: 0.5},
		{Service: "ec2", Operation: "CreateFleet", Kind: fault.ServerError},
		{Service: "ssm", Operation: "GetParameters", Kind: fault.Throttle},
	} {
		a, err := wd.sim.Faults().Add(f)
		if err != nil {
			t.Fatal(err)
		}
		if f.Operation != "" {
			outage = append(outage, a)
		} else {
			added = append(added, a)
		}
	}
	var fired []fault.Fault // the outage's faults as they were when it ended
	var ending sync.Once
	end := func() {
		ending.Do(func() {
			for _, f := range wd.sim.Faults().List() {
				for _, o := range outage {
					if f.ID == o.ID {
						fired = append(fired, f)
					}
				}
			}
			for _, f := range outage {
				wd.sim.Faults().Remove(f.ID)
			}
		})
	}
	endOutage := time.AfterFunc(launchOutage, end)
	t.Cleanup(func() { endOutage.Stop(); end() })
	// What the runtime saw of the outage (a claim's Launched condition
	// holding the CreateFleet error), and whether the node class ever lost
	// its AMIs or Ready.
	var mu sync.Mutex
	var launchErrors, lapses []string
	stopWatching := observe(time.Second, func() {
		nc := &awsv1.EC2NodeClass{}
		if err := wd.kube.Get(ctx, client.ObjectKey{Name: "outages"}, nc); err == nil {
			mu.Lock()
			if !meta.IsStatusConditionTrue(nc.Status.Conditions, v1.ConditionTypeReady) || len(nc.Status.AMIs) == 0 {
				lapses = append(lapses, fmt.Sprintf("%s: EC2NodeClass Ready=%v with %d AMIs", time.Now().Format(time.TimeOnly),
					meta.FindStatusCondition(nc.Status.Conditions, v1.ConditionTypeReady), len(nc.Status.AMIs)))
			}
			mu.Unlock()
		}
		list := &v1.NodeClaimList{}
		if err := wd.kube.List(ctx, list, client.MatchingLabels{v1.NodePoolLabelKey: pool}); err != nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		for _, c := range list.Items {
			if l := meta.FindStatusCondition(c.Status.Conditions, v1.ConditionTypeLaunched); l != nil && l.Status != metav1.ConditionTrue && strings.Contains(l.Message, "CreateFleet") {
				launchErrors = append(launchErrors, c.Name+": "+l.Reason+": "+l.Message)
			}
		}
	})
	defer stopWatching()
	d := deployment(ns, "pause", 12, spec)
	create(t, d)
	pdb(t, ns, "pause", 2)
	waitRunning(t, ns, 12)
	stopWatching()
	endOutage.Stop()
	end()
	for _, f := range fired {
		t.Logf("fault %s %s %s fired %d times", f.Service, f.Operation, f.Kind, f.Fired)
		if f.Fired == 0 {
			t.Errorf("the %s %s fault never fired: the scenario tested nothing", f.Service, f.Operation)
		}
	}
	if created, deleted := claims.names(); len(deleted) != 0 {
		t.Errorf("nodeclaims %v deleted during the errors (of %d created): a transient error is no reason to give up a launch", deleted, len(created))
	}
	mu.Lock()
	if len(launchErrors) == 0 {
		t.Errorf("no CreateFleet error was kept on a nodeclaim's Launched condition: the SDK's retries absorbed the outage (the scenario tested nothing), or the claims were given up")
	} else {
		t.Logf("%d observations of a launch error kept on its nodeclaim, e.g. %s", len(launchErrors), launchErrors[0])
	}
	for _, l := range lapses {
		t.Errorf("the node class lapsed while SSM throttled: %s", l)
	}
	mu.Unlock()

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
