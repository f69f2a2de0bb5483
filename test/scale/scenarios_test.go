package scale

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/requirements"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	cloudaws "github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling/oracle"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/simulation"
)

// workload is one Deployment of a scenario.
type workload struct {
	name     string
	replicas int32
	cpu, mem string
	// spread: "" none, "zone" (maxSkew 1, DoNotSchedule), "hostname-anti"
	// (required pod anti-affinity on the hostname).
	spread string
}

var (
	nodeClaimGVR = schema.GroupVersionResource{Group: v1.Group, Version: "v1", Resource: "nodeclaims"}
	podGVR       = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
)

// addedWatch records when each object of a watch was first seen, and for
// pods when kube-scheduler first decided about each: bound it, or marked it
// Unschedulable.
type addedWatch struct {
	mu      sync.Mutex
	added   map[string]time.Time
	decided map[string]time.Time
	stop    func()
}

// watchAdded records when each object of gvr in namespace ("" for
// cluster-scoped) matching selector is first seen. An informer, not a bare
// watch, so a closed watch is resumed and no object is missed.
func (w *world) watchAdded(ctx context.Context, gvr schema.GroupVersionResource, namespace, selector string) (*addedWatch, error) {
	dyn, err := dynamic.NewForConfig(w.sb.Config)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	inf := dynamicinformer.NewFilteredDynamicInformer(dyn, gvr, namespace, 0, toolscache.Indexers{},
		func(o *metav1.ListOptions) { o.LabelSelector = selector })
	aw := &addedWatch{added: map[string]time.Time{}, decided: map[string]time.Time{}, stop: cancel}
	see := func(obj any) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return
		}
		now := time.Now()
		aw.mu.Lock()
		defer aw.mu.Unlock()
		if _, seen := aw.added[u.GetName()]; !seen {
			aw.added[u.GetName()] = now
		}
		if _, seen := aw.decided[u.GetName()]; !seen && schedulerDecided(u) {
			aw.decided[u.GetName()] = now
		}
	}
	if _, err := inf.Informer().AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    see,
		UpdateFunc: func(_, obj any) { see(obj) },
	}); err != nil {
		cancel()
		return nil, err
	}
	go inf.Informer().Run(ctx.Done())
	if !toolscache.WaitForCacheSync(ctx.Done(), inf.Informer().HasSynced) {
		cancel()
		return nil, fmt.Errorf("informer for %s did not sync", gvr.Resource)
	}
	return aw, nil
}

// nth is when the n-th object was first seen (zero if fewer were): the
// scenario's own pods, not replacements created later by disruption.
func (a *addedWatch) nth(n int) time.Time {
	a.mu.Lock()
	defer a.mu.Unlock()
	if n <= 0 || len(a.added) < n {
		return time.Time{}
	}
	ts := make([]time.Time, 0, len(a.added))
	for _, t := range a.added {
		ts = append(ts, t)
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i].Before(ts[j]) })
	return ts[n-1]
}

// schedulerDecided is true once a pod is bound or marked Unschedulable.
func schedulerDecided(u *unstructured.Unstructured) bool {
	if node, _, _ := unstructured.NestedString(u.Object, "spec", "nodeName"); node != "" {
		return true
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == string(corev1.PodScheduled) && m["reason"] == corev1.PodReasonUnschedulable {
			return true
		}
	}
	return false
}

// lastDecided is when kube-scheduler had decided about every one of the
// first n pods seen (zero if it had not): the earliest Joist can know of
// them all.
func (a *addedWatch) lastDecided(n int) time.Time {
	a.mu.Lock()
	defer a.mu.Unlock()
	if n <= 0 || len(a.decided) < n {
		return time.Time{}
	}
	var last time.Time
	for name, t := range a.decided {
		if _, ok := a.added[name]; ok && t.After(last) {
			last = t
		}
	}
	return last
}

func (a *addedWatch) last() time.Time {
	a.mu.Lock()
	defer a.mu.Unlock()
	var last time.Time
	for _, t := range a.added {
		if t.After(last) {
			last = t
		}
	}
	return last
}

func deployment(ns, pool string, wl workload) *appsv1.Deployment {
	labels := map[string]string{"app": wl.name}
	spec := corev1.PodSpec{
		NodeSelector:                  map[string]string{v1.NodePoolLabelKey: pool},
		TerminationGracePeriodSeconds: new(int64),
		Containers: []corev1.Container{{
			Name: "pause", Image: "registry.k8s.io/pause:3.10",
			Resources: corev1.ResourceRequirements{Requests: requests(wl.cpu, wl.mem)},
		}},
	}
	switch wl.spread {
	case "zone":
		spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{
			MaxSkew: 1, TopologyKey: corev1.LabelTopologyZone, WhenUnsatisfiable: corev1.DoNotSchedule,
			LabelSelector: &metav1.LabelSelector{MatchLabels: labels},
		}}
	case "hostname-anti":
		spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				TopologyKey: corev1.LabelHostname, LabelSelector: &metav1.LabelSelector{MatchLabels: labels},
			}},
		}}
	}
	r := wl.replicas
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: wl.name, Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: &r,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec},
		},
	}
}

// runningPods counts Running pods of a namespace and returns them.
func (w *world) runningPods(ctx context.Context, ns string) ([]*corev1.Pod, error) {
	var pods corev1.PodList
	if err := w.kube.List(ctx, &pods, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	var out []*corev1.Pod
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out, nil
}

func (w *world) waitRunning(ctx context.Context, ns string, want int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		pods, err := w.runningPods(ctx, ns)
		if err == nil && len(pods) == want {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d pods Running in %s after %s (err %v); not Running: %s", len(pods), want, ns, timeout, err, w.notRunning(ctx, ns))
		}
		time.Sleep(time.Second)
	}
}

// notRunning describes, for a timeout's message, the first few pods of ns
// that are not Running: why kube-scheduler left them (their PodScheduled
// condition) and the node they were bound or nominated to.
func (w *world) notRunning(ctx context.Context, ns string) string {
	var pods corev1.PodList
	if err := w.kube.List(ctx, &pods, client.InNamespace(ns)); err != nil {
		return err.Error()
	}
	var out []string
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			continue
		}
		if len(out) == 5 {
			out = append(out, "...")
			break
		}
		d := fmt.Sprintf("%s phase %s node %q nominated %q deleting %v", p.Name, p.Status.Phase, p.Spec.NodeName, p.Status.NominatedNodeName, p.DeletionTimestamp != nil)
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status != corev1.ConditionTrue {
				d += fmt.Sprintf(" unscheduled (%s: %s)", c.Reason, c.Message)
			}
		}
		for _, name := range []string{p.Spec.NodeName, p.Status.NominatedNodeName} {
			if name == "" {
				continue
			}
			var n corev1.Node
			if err := w.kube.Get(ctx, client.ObjectKey{Name: name}, &n); err != nil {
				d += fmt.Sprintf("; node %s: %v", name, err)
				continue
			}
			d += fmt.Sprintf("; node %s unschedulable %v taints %v deleting %v", name, n.Spec.Unschedulable, n.Spec.Taints, n.DeletionTimestamp != nil)
		}
		out = append(out, d)
	}
	return strings.Join(out, " | ")
}

// poolAndTypes reads the pool and the instance types the runtime itself
// discovers for it, through a cloud provider set up on first use.
func (w *world) poolAndTypes(ctx context.Context, pool string) (*v1.NodePool, []*scheduling.InstanceType, error) {
	if w.cloud == nil {
		p, err := cloudaws.New(w.sb.AWS.AWSConfig(), w.kube, cloudaws.Settings{
			ClusterName: clusterName, ClusterEndpoint: w.sb.Config.Host, KubernetesVersion: "1.36",
			ClusterCIDR: "10.100.0.0/16", IsolatedVPC: true,
		})
		if err != nil {
			return nil, nil, err
		}
		// Start loads on-demand and spot prices; without it offerings
		// carry no spot price and the bound is not the controller's.
		if err := p.Start(ctx); err != nil {
			return nil, nil, err
		}
		w.cloud = p
	}
	var np v1.NodePool
	if err := w.kube.Get(ctx, client.ObjectKey{Name: pool}, &np); err != nil {
		return nil, nil, err
	}
	types, err := w.cloud.GetInstanceTypes(ctx, &np)
	return &np, types, err
}

// lpRatio is the pool's $/h over the LP lower bound for the Running pods,
// over the pool's instance types.
func lpRatio(np *v1.NodePool, types []*scheduling.InstanceType, pods []*corev1.Pod, cost float64) (float64, error) {
	bound := oracle.LPLowerBoundForPods(poolTypes(np, types), pods)
	if bound <= 0 {
		avail, free := 0, []string{}
		for _, it := range types {
			for _, o := range it.Offerings {
				if o.Available {
					avail++
					if o.Price <= 0 {
						free = append(free, it.Name+"/"+o.CapacityType+"/"+o.Zone)
					}
				}
			}
			cpu, mem := it.Allocatable[corev1.ResourceCPU], it.Allocatable[corev1.ResourceMemory]
			if cpu.Sign() < 0 || mem.Sign() < 0 {
				free = append(free, it.Name+" negative allocatable "+cpu.String()+"/"+mem.String())
			}
		}
		if len(free) > 8 {
			free = free[:8]
		}
		return 0, fmt.Errorf("LP bound is %v over %d types (%d available offerings) and %d pods; suspicious: %v", bound, len(types), avail, len(pods), free)
	}
	return cost / bound, nil
}

// poolTypes keeps the instance types and offerings the pool's requirements
// allow; a key a type does not label (zone, capacity type) is checked on its
// offerings.
func poolTypes(np *v1.NodePool, types []*scheduling.InstanceType) []*scheduling.InstanceType {
	var reqs []corev1.NodeSelectorRequirement
	for _, r := range np.Spec.Template.Spec.Requirements {
		reqs = append(reqs, r.NodeSelectorRequirement())
	}
	rs, err := requirements.FromNodeSelectorRequirements(reqs, nil)
	if err != nil {
		return nil
	}
	var out []*scheduling.InstanceType
	for _, it := range types {
		ok := true
		for key, r := range rs {
			if v, labelled := it.Labels[key]; labelled && !r.Has(v) {
				ok = false
			}
		}
		if !ok {
			continue
		}
		cp := *it
		cp.Offerings = nil
		for _, o := range it.Offerings {
			if rs.Get(v1.CapacityTypeLabelKey).Has(o.CapacityType) && rs.Get(corev1.LabelTopologyZone).Has(o.Zone) {
				cp.Offerings = append(cp.Offerings, o)
			}
		}
		out = append(out, &cp)
	}
	return out
}

// provision runs a scale-out: workloads created at once in a new namespace
// served by a new pool; ends when every pod is Running.
func (w *world) provision(ctx context.Context, t *testing.T, kind, scenario, pool string, wls []workload, budget string, timeout time.Duration) (row, string) {
	t.Helper()
	ns := pool
	if err := w.kube.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	// No disruption while the pods arrive: the row measures provisioning.
	// The scenario's budget applies once every pod is Running.
	if err := w.kube.Create(ctx, nodePool(pool, "scale", "0", 0)); err != nil {
		t.Fatal(err)
	}
	cw, err := w.watchAdded(ctx, nodeClaimGVR, "", v1.NodePoolLabelKey+"="+pool)
	if err != nil {
		t.Fatal(err)
	}
	defer cw.stop()
	pw, err := w.watchAdded(ctx, podGVR, ns, "")
	if err != nil {
		t.Fatal(err)
	}
	defer pw.stop()
	w.sb.AWS.Requests().Reset()
	s := startSampler(w)
	t0 := time.Now()
	total := 0
	for _, wl := range wls {
		total += int(wl.replicas)
		if err := w.kube.Create(ctx, deployment(ns, pool, wl)); err != nil {
			t.Fatal(err)
		}
	}
	err = w.waitRunning(ctx, ns, total, timeout)
	wall := time.Since(t0)
	peak, p95, cores := s.finish()
	if err != nil {
		t.Fatalf("%s: %v", scenario, err)
	}
	r := row{Kind: kind, Scenario: scenario, Pods: total, Wall: wall, PeakRSS: peak, P95RSS: p95, CPU: cores, Calls: w.awsCalls()}
	if err := w.saveHeapProfile(ctx, pool); err != nil {
		t.Logf("%s: saving the controller's heap profile: %v", scenario, err)
	}
	if r.Passes, r.FirstPass, r.PassTotal, err = w.passes(t0, time.Now()); err != nil {
		t.Logf("%s: reading the controller's passes: %v", scenario, err)
	}
	var np v1.NodePool
	if err := w.kube.Get(ctx, client.ObjectKey{Name: pool}, &np); err != nil {
		t.Fatal(err)
	}
	np.Spec.Disruption.Budgets = []v1.Budget{{Nodes: budget}}
	if err := w.kube.Update(ctx, &np); err != nil {
		t.Fatal(err)
	}
	// Joist cannot decide for a pod before kube-controller-manager creates
	// it: decision is what remains after the last pod exists.
	lastPod := pw.nth(total)
	if last := cw.last(); !last.IsZero() && !lastPod.IsZero() {
		r.Decision = max(0, last.Sub(lastPod))
		r.Arrival = lastPod.Sub(t0)
	}
	if decided := pw.lastDecided(total); !decided.IsZero() && !lastPod.IsZero() {
		r.SchedulerReached = max(0, decided.Sub(lastPod))
	}
	w.fillCost(ctx, t, &r, pool, ns)
	r.Changed = r.Nodes
	return r, ns
}

func (w *world) fillCost(ctx context.Context, t *testing.T, r *row, pool, ns string) {
	t.Helper()
	cost, nodes, err := w.poolCost(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	r.Cost, r.Nodes = cost, nodes
	if w.costOnly {
		return
	}
	pods, err := w.runningPods(ctx, ns)
	if err != nil {
		t.Fatal(err)
	}
	np, types, err := w.poolAndTypes(ctx, pool)
	if err != nil {
		t.Logf("%s: no instance types for the cost ratios: %v", r.Scenario, err)
		return
	}
	if r.LPRatio, err = lpRatio(np, types, pods, cost); err != nil {
		t.Logf("%s: no LP ratio: %v", r.Scenario, err)
	}
	if fresh, freshNodes, err := freshCost(np, types, pods); err != nil {
		t.Logf("%s: no fresh plan: %v", r.Scenario, err)
	} else if fresh > 0 {
		r.FreshRatio, r.FreshNodes = cost/fresh, freshNodes
	}
}

// freshCost is what the solver would pay to provision pods from nothing in
// the pool ($/h of each new claim's cheapest type), and on how many nodes:
// the reference for "consolidation reaches fresh-provisioning cost".
func freshCost(np *v1.NodePool, types []*scheduling.InstanceType, pods []*corev1.Pod) (float64, int, error) {
	pending := make([]*corev1.Pod, len(pods))
	for i, p := range pods {
		cp := p.DeepCopy()
		cp.Spec.NodeName = ""
		pending[i] = cp
	}
	plan, err := scheduling.Solve(scheduling.Input{
		NodePools: []*scheduling.NodePool{simulation.SolverPool(np, types, nil)},
		Pods:      pending,
	})
	if err != nil {
		return 0, 0, err
	}
	if len(plan.Errors) > 0 {
		return 0, 0, fmt.Errorf("%d of %d pods do not fit a fresh plan: %v", len(plan.Errors), len(pods), plan.Errors[0].Err)
	}
	return plan.Cost(), len(plan.NewClaims), nil
}

// scaleTo sets every Deployment of ns to replicas.
func (w *world) scaleTo(ctx context.Context, t *testing.T, ns string, wls []workload, replicas int32) int {
	t.Helper()
	total := 0
	for _, wl := range wls {
		var d appsv1.Deployment
		if err := w.kube.Get(ctx, client.ObjectKey{Namespace: ns, Name: wl.name}, &d); err != nil {
			t.Fatal(err)
		}
		d.Spec.Replicas = &replicas
		if err := w.kube.Update(ctx, &d); err != nil {
			t.Fatal(err)
		}
		total += int(replicas)
	}
	return total
}

// settle waits until the pool's NodeClaims stop changing for quiet (no
// claim created, deleted or deleting) and every pod is Running; it returns
// the most claims deleting at once and when the claims last changed.
func (w *world) settle(ctx context.Context, pool, ns string, pods int, quiet, timeout time.Duration) (maxDisrupting int, lastChange time.Time, err error) {
	deadline := time.Now().Add(timeout)
	var lastSig string
	lastChange = time.Now()
	for {
		var claims v1.NodeClaimList
		if err := w.kube.List(ctx, &claims, client.MatchingLabels{v1.NodePoolLabelKey: pool}); err != nil {
			return maxDisrupting, lastChange, err
		}
		var names []string
		deleting := 0
		for _, c := range claims.Items {
			names = append(names, c.Name)
			if c.DeletionTimestamp != nil {
				deleting++
			}
		}
		maxDisrupting = max(maxDisrupting, deleting)
		sort.Strings(names)
		sig := fmt.Sprint(names, deleting)
		if sig != lastSig {
			lastSig, lastChange = sig, time.Now()
		}
		running, _ := w.runningPods(ctx, ns)
		if deleting == 0 && len(running) == pods && time.Since(lastChange) >= quiet {
			return maxDisrupting, lastChange, nil
		}
		if time.Now().After(deadline) {
			return maxDisrupting, lastChange, fmt.Errorf("pool %s not settled after %s: %d claims, %d deleting, %d/%d pods Running", pool, timeout, len(names), deleting, len(running), pods)
		}
		time.Sleep(time.Second)
	}
}

// teardown deletes the namespace's workloads and the pool, and waits until
// its NodeClaims are gone. Deployments and their ReplicaSets go first, and
// their pods without a grace period: the namespace controller deletes in no
// particular order, and a ReplicaSet that outlives its drained pods
// recreates them, which keeps the pool provisioning during its own teardown.
func (w *world) teardown(ctx context.Context, t *testing.T, pool, ns string, timeout time.Duration) {
	t.Helper()
	bg := client.PropagationPolicy(metav1.DeletePropagationBackground)
	_ = w.kube.DeleteAllOf(ctx, &appsv1.Deployment{}, client.InNamespace(ns), bg)
	_ = w.kube.DeleteAllOf(ctx, &appsv1.ReplicaSet{}, client.InNamespace(ns), bg)
	_ = w.kube.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(ns), client.GracePeriodSeconds(0))
	_ = w.kube.Delete(ctx, &v1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: pool}})
	_ = w.kube.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	deadline := time.Now().Add(timeout)
	for {
		var claims v1.NodeClaimList
		if err := w.kube.List(ctx, &claims, client.MatchingLabels{v1.NodePoolLabelKey: pool}); err == nil && len(claims.Items) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pool %s still has %d NodeClaims %s after deletion", pool, len(claims.Items), timeout)
		}
		time.Sleep(2 * time.Second)
	}
}

// schedulerBaseline measures the sandbox's own share: kube-scheduler binding
// and kwok running pods on pre-made nodes, with no Joist involved.
func (w *world) schedulerBaseline(ctx context.Context, t *testing.T, pods int) row {
	t.Helper()
	const ns = "baseline"
	if err := w.kube.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	nodes := (pods + 99) / 100
	for i := 0; i < nodes; i++ {
		name := fmt.Sprintf("baseline-%d", i)
		res := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("64"), corev1.ResourceMemory: resource.MustParse("256Gi"), corev1.ResourcePods: resource.MustParse("110")}
		n := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"scale/baseline": "true", corev1.LabelHostname: name},
				Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"}},
			Status: corev1.NodeStatus{Capacity: res, Allocatable: res},
		}
		if err := w.kube.Create(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(2 * time.Second) // kwok marks the nodes Ready
	t0 := time.Now()
	replicas := int32(pods)
	d := deployment(ns, "", workload{name: "baseline", replicas: replicas, cpu: "100m", mem: "128Mi"})
	d.Spec.Template.Spec.NodeSelector = map[string]string{"scale/baseline": "true"}
	if err := w.kube.Create(ctx, d); err != nil {
		t.Fatal(err)
	}
	if err := w.waitRunning(ctx, ns, pods, 10*time.Minute); err != nil {
		t.Fatal(err)
	}
	wall := time.Since(t0)
	_ = w.kube.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	for i := 0; i < nodes; i++ {
		_ = w.kube.Delete(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("baseline-%d", i)}})
	}
	return row{Kind: "baseline", Scenario: "sandbox only: kube-controller-manager + kube-scheduler + kwok", Pods: pods, Nodes: nodes, Wall: wall,
		Note: fmt.Sprintf("%.0f pods/s created, bound and Running, no Joist", float64(pods)/wall.Seconds())}
}
