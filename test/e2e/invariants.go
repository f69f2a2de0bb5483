package e2e

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/instance"
)

// The three invariants every fault scenario ends on (and the scale
// scenarios end on the first): no leaked capacity, no lost pods, no
// PodDisruptionBudget violated.

// LeakedCapacity checks the no-leaked-capacity invariant: every instance
// tagged for the cluster that is not shutting down has a NodeClaim, and
// every NodeClaim has such an instance. pool narrows both sides to one
// NodePool ("" is the whole cluster). It returns what breaks the
// invariant; a launch or a deletion still under way is reported too, since
// the invariant holds only once the cluster has settled: callers poll.
func LeakedCapacity(ctx context.Context, kube client.Reader, ec2c *ec2.Client, cluster, pool string) ([]string, error) {
	filters := []ec2types.Filter{
		{Name: aws.String("tag:kubernetes.io/cluster/" + cluster), Values: []string{"owned"}},
		{Name: aws.String("instance-state-name"), Values: []string{"pending", "running", "stopping", "stopped"}},
	}
	var selector client.MatchingLabels
	if pool != "" {
		filters = append(filters, ec2types.Filter{Name: aws.String("tag:" + v1.NodePoolLabelKey), Values: []string{pool}})
		selector = client.MatchingLabels{v1.NodePoolLabelKey: pool}
	}
	live := map[string]string{} // providerID -> instance ID and its nodeclaim tag
	pager := ec2.NewDescribeInstancesPaginator(ec2c, &ec2.DescribeInstancesInput{Filters: filters})
	for pager.HasMorePages() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("DescribeInstances: %w", err)
		}
		for _, r := range page.Reservations {
			for _, i := range r.Instances {
				desc := aws.ToString(i.InstanceId)
				for _, tag := range i.Tags {
					if aws.ToString(tag.Key) == instance.NodeClaimTag {
						desc += " (nodeclaim tag " + aws.ToString(tag.Value) + ")"
					}
				}
				live["aws:///"+aws.ToString(i.Placement.AvailabilityZone)+"/"+aws.ToString(i.InstanceId)] = desc
			}
		}
	}
	claims := &v1.NodeClaimList{}
	if err := kube.List(ctx, claims, selector); err != nil {
		return nil, fmt.Errorf("listing NodeClaims: %w", err)
	}
	var problems []string
	claimed := map[string]bool{}
	for _, c := range claims.Items {
		id := c.Status.ProviderID
		claimed[id] = true
		switch {
		case c.DeletionTimestamp != nil:
			problems = append(problems, fmt.Sprintf("nodeclaim %s is being deleted", c.Name))
		case id == "":
			problems = append(problems, fmt.Sprintf("nodeclaim %s is not launched", c.Name))
		case live[id] == "":
			problems = append(problems, fmt.Sprintf("nodeclaim %s has no live instance (%s)", c.Name, id))
		}
	}
	for id, desc := range live {
		if !claimed[id] {
			problems = append(problems, fmt.Sprintf("instance %s has no nodeclaim", desc))
		}
	}
	sort.Strings(problems)
	return problems, nil
}

// Workload is what the pod invariants are about: the pods of one app.
type Workload struct {
	Namespace string
	Labels    map[string]string
	// Replicas is how many of its pods should be Ready.
	Replicas int
	// MaxUnavailable is what its PodDisruptionBudget allows; negative: it
	// has none.
	MaxUnavailable int
}

// PodWatch follows a workload's pods, and the Nodes they run on, for two
// invariants:
//   - no lost pods: no pod is evicted or deleted by the cluster (its
//     DisruptionTarget condition: the Eviction API, the taint manager, pod
//     garbage collection, preemption) from a Node that was not being
//     disrupted (tainted karpenter.sh/disrupted, deleted, or gone), and none
//     fails;
//   - no PodDisruptionBudget violated: once all Replicas were Ready, never
//     more than MaxUnavailable of them are unavailable, counted by cause:
//     a replica is unavailable when its pod is gone, terminating, not yet
//     Running, or not Ready while its node is healthy. A Running pod that
//     is not Ready only because the control plane's node-health handling
//     says so (see heldByNodeHealth) is not counted: kube-controller-manager
//     marks every pod of a node not Ready when the node's heartbeats stop
//     reaching it for the node monitor grace period, as in a control-plane
//     outage longer than that. That is an involuntary disruption no
//     PodDisruptionBudget governs; the pod itself runs on, and a pod the
//     runtime evicts or deletes is still counted, whatever its node's state.
//
// The Eviction API grants an eviction only while the budget's status (which
// kube-controller-manager computes from its caches) allows one, so the
// runtime can break a budget only by removing a pod some other way. After a
// control-plane restart kube-controller-manager's caches can lag for a
// while and it writes a status that counts gone pods as healthy; the
// apiserver then grants evictions the budget does not allow. A breach is
// put down to that (staleGrants, logged, not a violation) only on evidence
// of both: every pod that went away while available went through the
// Eviction API, and the status kube-apiserver holds at the breach counts
// more pods healthy and not yet disrupted than are available.
//
// It uses informers, which resume after the apiserver comes back. The
// count is taken again on every pod and Node event, so a node whose
// heartbeats resume is seen at once.
type PodWatch struct {
	wl    Workload
	cs    kubernetes.Interface
	nodes toolscache.Store
	stop  context.CancelFunc

	mu         sync.Mutex
	pods       map[string]*corev1.Pod // the live pods, by name
	judged     map[string]bool        // pods whose eviction or failure was recorded
	armed      bool
	worst      int
	held       int    // the most pods excused at once by heldByNodeHealth
	heldAt     string // the pods and their nodes then
	violations []string
	evictions  int
	// bypassed are pods that went away while available other than through
	// the Eviction API; any of them rules out putting a breach down to a
	// stale budget status.
	bypassed    []string
	staleGrants []string
}

// WatchPods starts following wl.
func WatchPods(ctx context.Context, cfg *rest.Config, wl Workload) (*PodWatch, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	p := &PodWatch{wl: wl, cs: cs, stop: cancel, pods: map[string]*corev1.Pod{}, judged: map[string]bool{}}
	all := informers.NewSharedInformerFactory(cs, 0)
	nodes := all.Core().V1().Nodes().Informer()
	p.nodes = nodes.GetStore()
	selector := labels.SelectorFromSet(wl.Labels).String()
	// A node's health changes which of its pods count as available.
	if _, err := nodes.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, _ any) { p.recount() },
		DeleteFunc: func(_ any) { p.recount() },
	}); err != nil {
		cancel()
		return nil, err
	}
	mine := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(wl.Namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = selector }))
	pods := mine.Core().V1().Pods().Informer()
	if _, err := pods.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { p.see(ctx, obj, false) },
		UpdateFunc: func(_, obj any) { p.see(ctx, obj, false) },
		DeleteFunc: func(obj any) {
			if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			p.see(ctx, obj, true)
		},
	}); err != nil {
		cancel()
		return nil, err
	}
	all.Start(ctx.Done())
	mine.Start(ctx.Done())
	if !toolscache.WaitForCacheSync(ctx.Done(), nodes.HasSynced, pods.HasSynced) {
		cancel()
		return nil, fmt.Errorf("watching the pods of %s: informers did not sync", wl.Namespace)
	}
	return p, nil
}

// Stop ends the watch.
func (p *PodWatch) Stop() { p.stop() }

// Expect sets how many replicas should be Ready from now on. The budget is
// checked again only once that many are: scaling up is not a disruption.
func (p *PodWatch) Expect(replicas int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.wl.Replicas = replicas
	p.armed = false
	p.arm()
}

// Violations are the lost pods and budget breaches seen so far.
func (p *PodWatch) Violations() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.violations...)
}

// Worst is the most replicas seen unavailable at once while the budget was
// checked, and Evictions how many pods were evicted or deleted by the
// cluster.
func (p *PodWatch) Worst() (worst, evictions int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.worst, p.evictions
}

// HeldByNodeHealth is the most Running pods seen not Ready at once only
// because of their nodes' health, which the budget check does not count,
// and the state of every pod and its node at that moment.
func (p *PodWatch) HeldByNodeHealth() (int, string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.held, p.heldAt
}

func (p *PodWatch) see(ctx context.Context, obj any, deleted bool) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if prev := p.pods[pod.Name]; prev != nil && p.available(prev) && (deleted || pod.DeletionTimestamp != nil) {
		if c := disruptionTarget(pod); c == nil || c.Reason != evictionByEvictionAPI {
			p.bypassed = append(p.bypassed, fmt.Sprintf("%s: pod %s on node %s", time.Now().Format(time.TimeOnly), pod.Name, pod.Spec.NodeName))
		}
	}
	if deleted {
		delete(p.pods, pod.Name)
	} else {
		p.pods[pod.Name] = pod
	}
	if !p.judged[pod.Name] {
		if c := disruptionTarget(pod); c != nil {
			p.judged[pod.Name] = true
			p.evictions++
			if why := p.undisrupted(ctx, pod.Spec.NodeName); why != "" {
				p.violations = append(p.violations, fmt.Sprintf("%s: pod %s removed (%s: %s) from node %s, which %s",
					time.Now().Format(time.TimeOnly), pod.Name, c.Reason, c.Message, pod.Spec.NodeName, why))
			}
		} else if pod.Status.Phase == corev1.PodFailed {
			p.judged[pod.Name] = true
			p.violations = append(p.violations, fmt.Sprintf("%s: pod %s failed on node %s: %s %s",
				time.Now().Format(time.TimeOnly), pod.Name, pod.Spec.NodeName, pod.Status.Reason, pod.Status.Message))
		}
	}
	p.count()
}

// recount takes the count again after a Node changed.
func (p *PodWatch) recount() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.count()
}

// count arms the budget check and checks it. Caller holds p.mu.
func (p *PodWatch) count() {
	held := 0
	for _, pod := range p.pods {
		if p.available(pod) && !PodReady(pod) {
			held++
		}
	}
	if held > p.held {
		p.held, p.heldAt = held, p.describe()
	}
	p.arm()
	if !p.armed || p.wl.MaxUnavailable < 0 {
		return
	}
	healthy := p.healthyCount()
	if down := p.wl.Replicas - healthy; down > p.worst {
		p.worst = down
		if down > p.wl.MaxUnavailable {
			status, stale := p.budgetStatus(healthy)
			breach := fmt.Sprintf("%s: %d of %d replicas unavailable; the PodDisruptionBudget allows %d; pods: %s; %s",
				time.Now().Format(time.TimeOnly), down, p.wl.Replicas, p.wl.MaxUnavailable, p.describe(), status)
			if stale && len(p.bypassed) == 0 {
				p.staleGrants = append(p.staleGrants, breach)
			} else {
				p.violations = append(p.violations, breach)
			}
		}
	}
}

// evictionByEvictionAPI is the DisruptionTarget reason kube-apiserver sets
// on a pod it evicts through the Eviction API.
const evictionByEvictionAPI = "EvictionByEvictionAPI"

// StaleGrants are the budget breaches put down to a stale budget status
// (see PodWatch), and Bypassed the pods that went away while available
// other than through the Eviction API.
func (p *PodWatch) StaleGrants() (staleGrants, bypassed []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.staleGrants...), append([]string(nil), p.bypassed...)
}

// budgetStatus reads, for a breach, the status kube-apiserver grants
// evictions by (what kube-controller-manager last wrote, less the
// evictions since), and whether it counts more pods healthy and not
// disrupted than the watch sees available: a status by which the
// apiserver grants evictions the budget does not allow.
func (p *PodWatch) budgetStatus(healthy int) (string, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	pdbs, err := p.cs.PolicyV1().PodDisruptionBudgets(p.wl.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "PodDisruptionBudget status unread: " + err.Error(), false
	}
	stale := false
	var out []string
	for _, b := range pdbs.Items {
		if sel, err := metav1.LabelSelectorAsSelector(b.Spec.Selector); err != nil || !sel.Matches(labels.Set(p.wl.Labels)) {
			continue // another workload's budget
		}
		// Pods the apiserver granted an eviction to are listed as
		// disrupted until kube-controller-manager sees them go.
		if int(b.Status.CurrentHealthy)-len(b.Status.DisruptedPods) > healthy {
			stale = true
		}
		var disrupted []string
		for name := range b.Status.DisruptedPods {
			disrupted = append(disrupted, name)
		}
		sort.Strings(disrupted)
		out = append(out, fmt.Sprintf("PodDisruptionBudget %s status now: disruptionsAllowed %d, currentHealthy %d, desiredHealthy %d, expectedPods %d, disruptedPods %v, observedGeneration %d of %d",
			b.Name, b.Status.DisruptionsAllowed, b.Status.CurrentHealthy, b.Status.DesiredHealthy, b.Status.ExpectedPods, disrupted, b.Status.ObservedGeneration, b.Generation))
	}
	return strings.Join(out, "; "), stale
}

// describe says, for a violation, the state of every pod and its node:
// what the count was made of.
func (p *PodWatch) describe() string {
	names := make([]string, 0, len(p.pods))
	for name := range p.pods {
		names = append(names, name)
	}
	sort.Strings(names)
	var out []string
	for _, name := range names {
		pod := p.pods[name]
		node := "-"
		if n := p.node(pod.Spec.NodeName); n != nil {
			node = fmt.Sprintf("%s (Ready %s, disrupted %t)", n.Name, nodeReady(n), disrupted(n))
		}
		out = append(out, fmt.Sprintf("%s [%s, Ready %t, ContainersReady %t, terminating %t, available %t, on %s]",
			name, pod.Status.Phase, PodReady(pod), containersReady(pod), pod.DeletionTimestamp != nil, p.available(pod), node))
	}
	return strings.Join(out, "; ")
}

// arm starts checking the budget once every expected replica is Ready.
// Caller holds p.mu.
func (p *PodWatch) arm() {
	if !p.armed && p.healthyCount() >= p.wl.Replicas {
		p.armed = true
	}
}

func (p *PodWatch) healthyCount() int {
	n := 0
	for _, pod := range p.pods {
		if p.available(pod) {
			n++
		}
	}
	return n
}

// available: the pod runs and is Ready, or is not Ready only because of
// its node's health (heldByNodeHealth). Caller holds p.mu.
func (p *PodWatch) available(pod *corev1.Pod) bool {
	if pod.DeletionTimestamp != nil || pod.Status.Phase != corev1.PodRunning {
		return false
	}
	return PodReady(pod) || heldByNodeHealth(pod, p.node(pod.Spec.NodeName))
}

func (p *PodWatch) node(name string) *corev1.Node {
	if name == "" {
		return nil
	}
	obj, ok, _ := p.nodes.GetByKey(name)
	if n, isNode := obj.(*corev1.Node); ok && isNode {
		return n
	}
	return nil
}

// undisrupted says why a node was not being disrupted, or "" when it was
// (or is gone). The cache may lag the taint that preceded the eviction:
// a live read decides.
func (p *PodWatch) undisrupted(ctx context.Context, name string) string {
	if name == "" {
		return ""
	}
	obj, ok, _ := p.nodes.GetByKey(name)
	if node, isNode := obj.(*corev1.Node); ok && isNode && disrupted(node) {
		return ""
	}
	node, err := p.cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return ""
	case err != nil:
		return "could not be read: " + err.Error()
	case disrupted(node):
		return ""
	}
	return "was neither tainted for disruption nor being deleted"
}

func disrupted(n *corev1.Node) bool {
	if n.DeletionTimestamp != nil {
		return true
	}
	for _, t := range n.Spec.Taints {
		if t.Key == v1.DisruptedTaintKey {
			return true
		}
	}
	return false
}

func disruptionTarget(p *corev1.Pod) *corev1.PodCondition {
	for i, c := range p.Status.Conditions {
		if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// heldByNodeHealth is true for a Running pod that is not Ready because of
// the control plane's node-health handling, not because the pod stopped:
// its containers are ready (kube-controller-manager's node lifecycle
// controller sets only the pod's Ready condition) or its node is not Ready
// or carries the not-ready/unreachable taint the node lifecycle controller
// adds. It is Ready again once its node reports.
func heldByNodeHealth(pod *corev1.Pod, node *corev1.Node) bool {
	if containersReady(pod) {
		return true
	}
	if node == nil {
		return false
	}
	if nodeReady(node) != corev1.ConditionTrue {
		return true
	}
	for _, t := range node.Spec.Taints {
		if t.Key == corev1.TaintNodeUnreachable || t.Key == corev1.TaintNodeNotReady {
			return true
		}
	}
	return false
}

func nodeReady(n *corev1.Node) corev1.ConditionStatus {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status
		}
	}
	return corev1.ConditionUnknown
}

func containersReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.ContainersReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// PodReady reports the pod's Ready condition.
func PodReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
