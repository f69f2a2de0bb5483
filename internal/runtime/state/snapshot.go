package state

import (
	"context"
	"fmt"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/pods"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
)

// StateNode is a Node, a NodeClaim, or both joined by providerID.
type StateNode struct {
	Node      *corev1.Node  // nil while the claim has no Node yet
	NodeClaim *v1.NodeClaim // nil for Nodes the runtime does not manage
	// Pods are the active pods bound to the Node.
	Pods []*corev1.Pod
	// Nominated are pending pods nominated to this node or claim.
	Nominated []*corev1.Pod
	// Leaving marks, in one snapshot, a node that a disruption command
	// decided to remove and has not yet tainted: decisions made after it
	// count the node as going.
	Leaving bool
}

// Name is the Node's name, or the claim's while it has no Node.
func (n *StateNode) Name() string {
	if n.Node != nil {
		return n.Node.Name
	}
	return n.NodeClaim.Name
}

// InFlight is a claim without its Node yet.
func (n *StateNode) InFlight() bool { return n.Node == nil }

// NodePool names the owning NodePool, or "" for unmanaged nodes.
func (n *StateNode) NodePool() string {
	if n.NodeClaim != nil {
		return n.NodeClaim.Labels[v1.NodePoolLabelKey]
	}
	return n.Node.Labels[v1.NodePoolLabelKey]
}

// Deleting is true when the Node or claim is going away, is tainted for
// disruption or is Leaving; such nodes are no scheduling target and their
// pods need a new home.
func (n *StateNode) Deleting() bool {
	if n.Leaving {
		return true
	}
	if n.NodeClaim != nil && n.NodeClaim.DeletionTimestamp != nil {
		return true
	}
	if n.Node != nil {
		if n.Node.DeletionTimestamp != nil {
			return true
		}
		return v1.HasDisruptedTaint(n.Node)
	}
	return false
}

// IsNodeReady reports whether the Node's Ready condition is True.
func IsNodeReady(node *corev1.Node) bool {
	for _, cond := range node.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}

// Labels are the Node's labels, or for an in-flight claim its labels.
func (n *StateNode) Labels() map[string]string {
	if n.Node != nil {
		return n.Node.Labels
	}
	return n.NodeClaim.Labels
}

// Taints are the Node's taints, or the claim's (startup taints excluded:
// pods need not tolerate them).
func (n *StateNode) Taints() []corev1.Taint {
	if n.Node != nil {
		var out []corev1.Taint
		for _, t := range n.Node.Spec.Taints {
			if !isEphemeralOrStartup(t, n.NodeClaim) {
				out = append(out, t)
			}
		}
		return out
	}
	return n.NodeClaim.Spec.Taints
}

// isEphemeralOrStartup reports taints that go away on their own once the
// node initializes; pods are placed as if they were gone.
func isEphemeralOrStartup(t corev1.Taint, claim *v1.NodeClaim) bool {
	if claim == nil {
		return false
	}
	for _, e := range v1.KnownEphemeralTaints {
		if t.MatchTaint(&e) {
			return true
		}
	}
	for _, s := range claim.Spec.StartupTaints {
		if t.MatchTaint(&s) {
			return true
		}
	}
	return false
}

// Allocatable is the Node's allocatable; before the Node exists, the
// claim's launched allocatable, and before launch the claim's requests
// (exactly what was planned onto it).
func (n *StateNode) Allocatable() corev1.ResourceList {
	if n.Node != nil && len(n.Node.Status.Allocatable) > 0 {
		return n.Node.Status.Allocatable
	}
	if len(n.NodeClaim.Status.Allocatable) > 0 {
		return n.NodeClaim.Status.Allocatable
	}
	return n.NodeClaim.Spec.Resources.Requests
}

// Initialized is true for unmanaged Nodes and for claims marked Initialized.
func (n *StateNode) Initialized() bool {
	if n.NodeClaim == nil {
		return true
	}
	return n.Node != nil && n.Node.Labels[v1.NodeInitializedLabelKey] == "true"
}

// Snapshot is one consistent view for a scheduling pass.
type Snapshot struct {
	Nodes []*StateNode
	// Pending are pods without a node and not nominated anywhere; the
	// provisioner decides which are provisionable.
	Pending    []*corev1.Pod
	DaemonSets []*appsv1.DaemonSet
	NodePools  []*v1.NodePool
	// NamespaceLabels are every namespace's labels, for pod affinity terms
	// that pick namespaces by namespaceSelector.
	NamespaceLabels map[string]map[string]string
	// LimitRanges are each namespace's LimitRanges by name: their
	// defaults become the requests of the DaemonSet pods to come.
	LimitRanges map[string][]*corev1.LimitRange
}

// Snapshot lists everything from the informers. Objects are shared with
// the cache: callers must not modify them.
func (c *Cluster) Snapshot(ctx context.Context) (*Snapshot, error) {
	// Nodes and claims first, pods last: a pod that binds meanwhile then shows
	// up bound (to a Node the snapshot may lack) rather than pending.
	nodes := &corev1.NodeList{}
	if err := c.kube.List(ctx, nodes, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing nodes: %w", err)
	}
	claims := &v1.NodeClaimList{}
	if err := c.kube.List(ctx, claims, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing nodeclaims: %w", err)
	}
	pools := &v1.NodePoolList{}
	if err := c.kube.List(ctx, pools, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing nodepools: %w", err)
	}
	dss := &appsv1.DaemonSetList{}
	if err := c.kube.List(ctx, dss, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing daemonsets: %w", err)
	}
	namespaces := &corev1.NamespaceList{}
	if err := c.kube.List(ctx, namespaces, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing namespaces: %w", err)
	}
	limitRanges := &corev1.LimitRangeList{}
	if err := c.kube.List(ctx, limitRanges, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing limitranges: %w", err)
	}
	podList := &corev1.PodList{}
	if err := c.kube.List(ctx, podList, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing pods: %w", err)
	}
	snap := &Snapshot{NamespaceLabels: make(map[string]map[string]string, len(namespaces.Items))}
	for i := range namespaces.Items {
		snap.NamespaceLabels[namespaces.Items[i].Name] = namespaces.Items[i].Labels
	}
	snap.LimitRanges = LimitRangesByNamespace(limitRanges.Items)
	for i := range pools.Items {
		snap.NodePools = append(snap.NodePools, &pools.Items[i])
	}
	for i := range dss.Items {
		snap.DaemonSets = append(snap.DaemonSets, &dss.Items[i])
	}
	all := c.withCreated(claims.Items)
	c.mu.Lock()
	defer c.mu.Unlock()
	snap.Nodes = Join(nodes.Items, all)
	pending := BindPods(snap.Nodes, podList.Items)
	index := byName(snap.Nodes)
	keep := map[types.UID]bool{}
	// Bound pods first, then nominations: kube-scheduler does not follow
	// them, so a registered node may have filled up with other pods. A
	// nomination that no longer fits its node is dropped at once and the
	// pod solved again, instead of waiting out the TTL.
	used := map[*StateNode]corev1.ResourceList{}
	for _, pod := range pending {
		if nom, ok := c.liveNomination(pod.UID); ok {
			if n, ok := index[nom.Target]; ok && !n.Deleting() && stillFits(n, pod, used) {
				keep[pod.UID] = true
				n.Nominated = append(n.Nominated, pod)
				continue
			}
		}
		snap.Pending = append(snap.Pending, pod)
	}
	c.forget(keep)
	return snap, nil
}

// LimitRangesByNamespace groups lrs by namespace, each group by name: the
// apiserver applies a namespace's LimitRanges in no set order, and this one
// is stable.
func LimitRangesByNamespace(lrs []corev1.LimitRange) map[string][]*corev1.LimitRange {
	out := map[string][]*corev1.LimitRange{}
	for i := range lrs {
		out[lrs[i].Namespace] = append(out[lrs[i].Namespace], &lrs[i])
	}
	for _, group := range out {
		sort.Slice(group, func(i, j int) bool { return group[i].Name < group[j].Name })
	}
	return out
}

// stillFits is true while n can take pod next to its bound pods and the
// nominated pods already kept. A claim without a Node always fits: nothing
// but its nominated pods can land there yet.
func stillFits(n *StateNode, pod *corev1.Pod, used map[*StateNode]corev1.ResourceList) bool {
	if n.Node == nil {
		return true
	}
	u, ok := used[n]
	if !ok {
		u = corev1.ResourceList{}
		for _, p := range n.Pods {
			addRequests(u, p)
		}
		used[n] = u
	}
	next := u.DeepCopy()
	addRequests(next, pod)
	alloc := n.Allocatable()
	for name, q := range next {
		if a, ok := alloc[name]; ok && q.Cmp(a) > 0 {
			return false
		}
	}
	used[n] = next
	return true
}

func addRequests(into corev1.ResourceList, pod *corev1.Pod) {
	for name, q := range scheduling.PodRequests(pod) {
		sum := into[name]
		sum.Add(q)
		into[name] = sum
	}
	pods := into[corev1.ResourcePods]
	pods.Add(*resource.NewQuantity(1, resource.DecimalSI))
	into[corev1.ResourcePods] = pods
}

// withCreated adds claims created by this process that the informer has
// not shown yet, as they were created. Once the informer shows a claim
// (TrackClaims) its copy is dropped, so a claim deleted right after
// creation stays no longer than the informer's lag. No API reads: under
// load they cost more than the lag they cover.
func (c *Cluster) withCreated(items []v1.NodeClaim) []*v1.NodeClaim {
	out := make([]*v1.NodeClaim, 0, len(items))
	seen := make(map[string]bool, len(items))
	for i := range items {
		out = append(out, &items[i])
		seen[items[i].Name] = true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock.Now()
	for name, cc := range c.created {
		switch {
		case seen[name] || now.Sub(cc.at) > createdTTL:
			delete(c.created, name)
		default:
			out = append(out, cc.claim)
		}
	}
	return out
}

// byName indexes nodes by their Node's name and their claim's.
func byName(nodes []*StateNode) map[string]*StateNode {
	out := make(map[string]*StateNode, len(nodes))
	for _, n := range nodes {
		out[n.Name()] = n
		if n.NodeClaim != nil {
			out[n.NodeClaim.Name] = n
		}
	}
	return out
}

// BindPods adds each active pod bound to a Node of nodes to that node's
// Pods and returns the active pods bound nowhere yet. A pod bound to a Node
// nodes lacks is neither: it is placed, on a node this view has not seen.
func BindPods(nodes []*StateNode, podList []corev1.Pod) []*corev1.Pod {
	index := byName(nodes)
	var pending []*corev1.Pod
	for i := range podList {
		pod := &podList[i]
		if pods.IsTerminal(pod) {
			continue
		}
		if pod.Spec.NodeName != "" {
			if n, ok := index[pod.Spec.NodeName]; ok && n.Node != nil {
				n.Pods = append(n.Pods, pod)
			}
			continue
		}
		pending = append(pending, pod)
	}
	return pending
}

// Join pairs claims with Nodes by providerID; unmatched claims are in
// flight, unmatched Nodes unmanaged. Sorted by name for determinism.
func Join(nodes []corev1.Node, claims []*v1.NodeClaim) []*StateNode {
	byProvider := map[string]*v1.NodeClaim{}
	var out []*StateNode
	for _, cl := range claims {
		if cl.Status.ProviderID != "" {
			byProvider[cl.Status.ProviderID] = cl
		}
	}
	matched := map[*v1.NodeClaim]bool{}
	for i := range nodes {
		n := &StateNode{Node: &nodes[i]}
		if cl, ok := byProvider[nodes[i].Spec.ProviderID]; ok && nodes[i].Spec.ProviderID != "" {
			n.NodeClaim = cl
			matched[cl] = true
		}
		out = append(out, n)
	}
	for _, cl := range claims {
		if !matched[cl] {
			out = append(out, &StateNode{NodeClaim: cl})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out
}
