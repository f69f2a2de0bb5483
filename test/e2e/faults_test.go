package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/instance"
)

// invariants follows one workload of a fault scenario for the three
// invariants (invariants.go) and asserts them when the scenario ends.
type invariants struct {
	pods     *PodWatch
	ns, app  string
	pools    []string // none: the capacity of the whole cluster
	replicas int
}

// watchInvariants starts following the app's pods in ns; maxUnavailable is
// what its PodDisruptionBudget allows (negative: none). pools scope the
// capacity check (none: the whole cluster).
func watchInvariants(t *testing.T, ns, app string, replicas, maxUnavailable int, pools ...string) *invariants {
	t.Helper()
	pw, err := WatchPods(context.Background(), worldOf(t).sandbox.Config, Workload{
		Namespace: ns, Labels: map[string]string{"app": app}, Replicas: replicas, MaxUnavailable: maxUnavailable,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pw.Stop)
	return &invariants{pods: pw, ns: ns, app: app, pools: pools, replicas: replicas}
}

// expect says how many replicas the workload runs from now on.
func (inv *invariants) expect(replicas int) {
	inv.replicas = replicas
	inv.pods.Expect(replicas)
}

// check asserts, once the scenario settles: every pod of the workload
// Running; no leaked capacity; and, from the watch, no pod lost and the
// PodDisruptionBudget never exceeded.
func (inv *invariants) check(t *testing.T) {
	t.Helper()
	eventually(t, fmt.Sprintf("%d pods of %s Running", inv.replicas, inv.app), func() (bool, string) {
		ps := pods(t, inv.ns, map[string]string{"app": inv.app})
		n, waiting := running(ps)
		return n == inv.replicas && len(ps) == inv.replicas, fmt.Sprintf("%d pods, %d Running; %s", len(ps), n, waiting)
	})
	if len(inv.pools) == 0 {
		noLeakedCapacity(t, "")
	}
	for _, pool := range inv.pools {
		noLeakedCapacity(t, pool)
	}
	worst, evictions := inv.pods.Worst()
	for _, v := range inv.pods.Violations() {
		t.Errorf("invariant broken: %s", v)
	}
	held, heldAt := inv.pods.HeldByNodeHealth()
	t.Logf("invariants: %d pods Running, no capacity leaked, %d pods evicted by disruptions, at most %d replicas unavailable at once", inv.replicas, evictions, worst)
	if held > 0 {
		t.Logf("at most %d pods were not Ready only for their nodes' health (not counted): %s", held, heldAt)
	}
	staleGrants, bypassed := inv.pods.StaleGrants()
	for _, g := range staleGrants {
		t.Logf("budget exceeded by evictions kube-apiserver granted against a stale status, every pod removed through the Eviction API (not counted): %s", g)
	}
	for _, b := range bypassed {
		t.Logf("pod deleted while available, not through the Eviction API (a scale-down, or a removal no budget governs): %s", b)
	}
}

// noLeakedCapacity waits until every instance of the pool (or cluster) has
// a NodeClaim and every NodeClaim an instance.
func noLeakedCapacity(t *testing.T, pool string) {
	t.Helper()
	wd := worldOf(t)
	ec2c := ec2.NewFromConfig(wd.sim.AWSConfig())
	eventually(t, "every instance with a nodeclaim and every nodeclaim with an instance", func() (bool, string) {
		problems, err := LeakedCapacity(context.Background(), wd.kube, ec2c, clusterName, pool)
		if err != nil {
			return false, err.Error()
		}
		return len(problems) == 0, strings.Join(problems, "; ")
	})
}

// spreadWorkload creates the Deployment "pause" of replicas pods pinned to
// pool, one per node (hostname anti-affinity) of 1 CPU and 1Gi each, with a
// PodDisruptionBudget of maxUnavailable, and follows it for the
// invariants; claims scope the capacity check, as in watchInvariants.
func spreadWorkload(t *testing.T, ns, pool string, replicas, maxUnavailable int, claims ...string) (*appsv1.Deployment, *invariants) {
	t.Helper()
	spec := podSpec(pool, requests("1", "1Gi"))
	hostnameAntiAffinity(&spec, "pause")
	inv := watchInvariants(t, ns, "pause", replicas, maxUnavailable, claims...)
	d := deployment(ns, "pause", int32(replicas), spec)
	create(t, d)
	pdb(t, ns, "pause", int32(maxUnavailable))
	return d, inv
}

// pdb creates a PodDisruptionBudget of maxUnavailable for the app.
func pdb(t *testing.T, ns, app string, maxUnavailable int32) {
	t.Helper()
	create(t, &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: app},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MaxUnavailable: new(intstr.FromInt32(maxUnavailable)),
			Selector:       &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}},
		},
	})
}

// claimLog records the NodeClaims of a pool created and deleted from now
// on; those that exist already count only when deleted.
type claimLog struct {
	mu      sync.Mutex
	created []string
	seen    map[string]bool
	deleted map[string]bool
	stop    func()
}

func watchClaims(t *testing.T, pool string) *claimLog {
	t.Helper()
	l := &claimLog{seen: map[string]bool{}, deleted: map[string]bool{}}
	kube := worldOf(t).kube
	list := func() *v1.NodeClaimList {
		list := &v1.NodeClaimList{}
		if err := kube.List(context.Background(), list, client.MatchingLabels{v1.NodePoolLabelKey: pool}); err != nil {
			return nil
		}
		return list
	}
	existing := list()
	if existing == nil {
		t.Fatalf("listing the nodeclaims of %s", pool)
	}
	for _, c := range existing.Items {
		l.seen[c.Name] = true
	}
	probe := func() {
		list := list()
		if list == nil {
			return
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		for _, c := range list.Items {
			if !l.seen[c.Name] {
				l.seen[c.Name] = true
				l.created = append(l.created, c.Name)
			}
			if c.DeletionTimestamp != nil {
				l.deleted[c.Name] = true
			}
		}
		live := map[string]bool{}
		for _, c := range list.Items {
			live[c.Name] = true
		}
		for name := range l.seen {
			if !live[name] {
				l.deleted[name] = true
			}
		}
	}
	probe()
	l.stop = observe(200*time.Millisecond, probe)
	t.Cleanup(l.stop)
	return l
}

// waitCreated waits until more than n claims were created: what is under
// way.
func (l *claimLog) waitCreated(t *testing.T, n int, what string) {
	t.Helper()
	eventually(t, what+" under way", func() (bool, string) {
		created, _ := l.counts()
		return created > n, fmt.Sprintf("%d nodeclaims created", created)
	})
}

// counts are how many claims were created and deleted so far.
func (l *claimLog) counts() (created, deleted int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.created), len(l.deleted)
}

func (l *claimLog) names() (created, deleted []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for name := range l.deleted {
		deleted = append(deleted, name)
	}
	return append([]string(nil), l.created...), deleted
}

// faultsClass is the EC2NodeClass of the shared world's fault scenarios.
const faultsClass = "faults"

// testSharedFaults: the faults that stay within a NodePool or node class
// of their own, in parallel on the shared world.
func testSharedFaults(t *testing.T) {
	nodeClass(t, faultsClass)
	t.Run("runaway-scale-up", testRunawayScaleUp)
	t.Run("out-of-band-termination", testOutOfBandTermination)
	t.Run("launch-template-deleted", testLaunchTemplateDeleted)
}

// startupTaint is a taint an agent on the node would remove once it is
// ready; in the runaway scenario nothing does.
var startupTaint = corev1.Taint{Key: "e2e.joist.dev/agent-not-ready", Value: "true", Effect: corev1.TaintEffectNoSchedule}

// removeStartupTaint removes startupTaint from the pool's nodes, as the
// agent that owns it does once it is ready.
func removeStartupTaint(ctx context.Context, kube client.Client, pool string) error {
	list := &corev1.NodeList{}
	if err := kube.List(ctx, list, client.MatchingLabels{v1.NodePoolLabelKey: pool}); err != nil {
		return err
	}
	for _, n := range list.Items {
		isStartup := func(taint corev1.Taint) bool { return taint.Key == startupTaint.Key }
		if !slices.ContainsFunc(n.Spec.Taints, isStartup) {
			continue
		}
		patch := client.MergeFrom(n.DeepCopy())
		n.Spec.Taints = slices.DeleteFunc(n.Spec.Taints, isStartup)
		if err := kube.Patch(ctx, &n, patch); err != nil {
			return err
		}
	}
	return nil
}

// testRunawayScaleUp: pods that can never run on the nodes launched for
// them (the NodePool's startup taint is never removed: the agent that
// should remove it is broken) keep their first nodes: over several
// provisioning and disruption passes no NodeClaim is created beyond them
// and none is deleted, so nothing thrashes. Once the taint goes, the pods
// run.
func testRunawayScaleUp(t *testing.T) {
	t.Parallel()
	const pool, replicas = "runaway", 4
	ns := scenarioNamespace(t, "e2e-runaway")
	consolidatingPool(t, pool, "10s", func(np *v1.NodePool) {
		np.Spec.Template.Spec.NodeClassRef.Name = faultsClass
		np.Spec.Template.Spec.StartupTaints = []corev1.Taint{startupTaint}
	})
	claims := watchClaims(t, pool)
	inv := watchInvariants(t, ns, "pause", replicas, 1, pool)
	create(t, deployment(ns, "pause", replicas, podSpec(pool, requests("1", "1.5Gi"))))
	pdb(t, ns, "pause", 1)
	eventually(t, "the first nodes registered, the pods pending behind the startup taint", func() (bool, string) {
		nodes := nodesOf(t, pool)
		created, _ := claims.counts()
		n, _ := running(pods(t, ns, map[string]string{"app": "pause"}))
		return created > 0 && len(nodes) == created && n == 0, fmt.Sprintf("%d nodeclaims, %d nodes, %d pods Running", created, len(nodes), n)
	})
	first, _ := claims.names()
	// Nine batch windows and disruption passes (and the consolidateAfter of
	// 10 s many times over) with the pods pending.
	time.Sleep(90 * time.Second)
	created, deleted := claims.names()
	if len(created) != len(first) || len(deleted) > 0 {
		t.Errorf("while the pods could not run: nodeclaims %v became %v created, %v deleted: the pool thrashed or grew", first, created, deleted)
	}
	if n, _ := running(pods(t, ns, map[string]string{"app": "pause"})); n != 0 {
		t.Errorf("%d pods Running on nodes that still carry %s", n, startupTaint.Key)
	}
	t.Logf("%d pods pending for 90 s on %d nodes of their own; no nodeclaim created or deleted meanwhile", replicas, len(first))
	// The agent recovers: the pods run on the nodes made for them.
	if err := removeStartupTaint(context.Background(), worldOf(t).kube, pool); err != nil {
		t.Fatal(err)
	}
	inv.check(t)
	if created, _ := claims.counts(); created != len(first) {
		t.Errorf("%d nodeclaims created in all, %d before the taint went", created, len(first))
	}
}

// testOutOfBandTermination: with no interruption queue, an instance
// terminated outside Joist (an operator, a failed host) loses its Node and
// NodeClaim, and its pod runs on a new node; the other replicas are not
// disturbed beyond the one the loss took. The cloud's node-lifecycle
// controller (awssim's stand-in) deletes the Node of the terminated
// instance, and Joist's Node finalizer takes the NodeClaim with it:
// garbage collection, which would find the claim's instance gone a minute
// or two later, has nothing left to collect.
func testOutOfBandTermination(t *testing.T) {
	t.Parallel()
	const pool, replicas = "out-of-band", 4
	ns := scenarioNamespace(t, "e2e-out-of-band")
	consolidatingPool(t, pool, "Never", func(np *v1.NodePool) { np.Spec.Template.Spec.NodeClassRef.Name = faultsClass })
	// The loss of one node makes one replica unavailable; the budget allows
	// exactly that, so any eviction Joist adds would break it.
	_, inv := spreadWorkload(t, ns, pool, replicas, 1, pool)
	waitRunning(t, ns, replicas)
	// A node of the pool; a claim whose Node the status has not named yet
	// (possible under load right after the pods run) would not do.
	var victim v1.NodeClaim
	eventually(t, "a registered nodeclaim in the pool", func() (bool, string) {
		for _, c := range claimsOf(t, pool) {
			if c.Status.NodeName != "" && c.Status.ProviderID != "" {
				victim = c
				return true, ""
			}
		}
		return false, "no claim names its node yet"
	})
	claims := watchClaims(t, pool)
	id := instanceID(t, victim.Status.ProviderID)
	if _, err := ec2.NewFromConfig(worldOf(t).sim.AWSConfig()).TerminateInstances(context.Background(), &ec2.TerminateInstancesInput{InstanceIds: []string{id}}); err != nil {
		t.Fatal(err)
	}
	terminated := time.Now()
	eventually(t, "the terminated instance's NodeClaim and Node gone", func() (bool, string) {
		c, n := &v1.NodeClaim{}, &corev1.Node{}
		cErr := worldOf(t).kube.Get(context.Background(), client.ObjectKey{Name: victim.Name}, c)
		nErr := worldOf(t).kube.Get(context.Background(), client.ObjectKey{Name: victim.Status.NodeName}, n)
		return client.IgnoreNotFound(cErr) == nil && cErr != nil && client.IgnoreNotFound(nErr) == nil && nErr != nil,
			fmt.Sprintf("nodeclaim: %v; node: %v", cErr, nErr)
	})
	t.Logf("instance %s terminated out of band: nodeclaim %s and node %s gone %s later", id, victim.Name, victim.Status.NodeName, time.Since(terminated).Round(time.Second))
	if gc := runtimeEvents(t, "default", victim.Name, "GarbageCollected"); len(gc) > 0 {
		t.Errorf("nodeclaim %s was garbage collected (%s): the deletion of its Node did not take it", victim.Name, gc[0].Note)
	}
	inv.check(t)
	if created, deleted := claims.names(); len(created) != 1 || len(deleted) != 1 || deleted[0] != victim.Name {
		t.Errorf("nodeclaims created %v and deleted %v after the termination; want one replacement for %s", created, deleted, victim.Name)
	}
}

// testLaunchTemplateDeleted: the node class's launch templates are deleted
// outside Joist between two launches; the next launch fails once on the
// missing template, recreates it and succeeds, without giving up its
// NodeClaim.
func testLaunchTemplateDeleted(t *testing.T) {
	t.Parallel()
	const nodeClassName, pool = "lt-deleted", "lt-deleted"
	ctx := context.Background()
	nodeClass(t, nodeClassName)
	ns := scenarioNamespace(t, "e2e-lt-deleted")
	consolidatingPool(t, pool, "Never", func(np *v1.NodePool) { np.Spec.Template.Spec.NodeClassRef.Name = nodeClassName })
	d, inv := spreadWorkload(t, ns, pool, 1, 1, pool)
	waitRunning(t, ns, 1)
	lts, err := ownTemplates(nodeClassName, nil)
	if err != nil || len(lts) == 0 {
		t.Fatalf("no launch template for node class %s after a launch (%v)", nodeClassName, err)
	}
	ec2c := ec2.NewFromConfig(worldOf(t).sim.AWSConfig())
	var names []string
	for _, lt := range lts {
		name := aws.ToString(lt.LaunchTemplateName)
		if _, err := ec2c.DeleteLaunchTemplate(ctx, &ec2.DeleteLaunchTemplateInput{LaunchTemplateName: aws.String(name)}); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	deletedAt := time.Now()
	claims := watchClaims(t, pool)
	// Within the minute the runtime trusts its memory of a template.
	inv.expect(2)
	scale(t, d, 2)
	waitRunning(t, ns, 2)
	if created, deleted := claims.names(); len(created) != 1 || len(deleted) != 0 {
		t.Errorf("nodeclaims created %v, deleted %v for one new pod: the launch gave up its claim", created, deleted)
	}
	// The first fleet fails on the missing template; the second, after the
	// template is recreated, launches. More would mean the launch kept
	// failing until the runtime's memory of the template expired.
	fleets, recreates := 0, 0
	for _, r := range worldOf(t).sim.Requests().Requests("ec2", "") {
		if r.Time.Before(deletedAt) || !namesTemplate(r.Parameters, names) {
			continue
		}
		switch r.Operation {
		case "CreateFleet":
			fleets++
		case "CreateLaunchTemplate":
			recreates++
		}
	}
	if fleets != 2 || recreates == 0 {
		t.Errorf("after the deletion: %d CreateFleet calls and %d CreateLaunchTemplate calls named the deleted templates %v; want 2 fleets (one failing on the missing template, one launching) and the template recreated in between",
			fleets, recreates, names)
	}
	t.Logf("deleted %v; the next launch took %d CreateFleet calls and recreated the template %d times", names, fleets, recreates)
	inv.check(t)
}

// instanceID is the EC2 instance ID of a providerID.
func instanceID(t *testing.T, providerID string) string {
	t.Helper()
	id, err := instance.ParseProviderID(providerID)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// namesTemplate reports whether a request's parameters name one of the
// launch templates.
func namesTemplate(params map[string]any, names []string) bool {
	for k, v := range params {
		if strings.HasSuffix(k, "LaunchTemplateName") && slices.Contains(names, fmt.Sprint(v)) {
			return true
		}
	}
	return false
}
