package operator

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/metrics"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/pods"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
)

// nodeLabels are the label names of the per-node series: Karpenter's
// well-known node labels (the part after the domain, snake_case), then
// node_name, phase and managed.
var nodeLabels, nodeLabelKeys = wellKnownMetricLabels()

func wellKnownMetricLabels() (names []string, keys map[string]string) {
	keys = map[string]string{}
	for _, k := range v1.WellKnownLabels {
		if k == v1.LabelNodeClass { // not one of Karpenter's well-known labels
			continue
		}
		_, name, ok := strings.Cut(k, "/")
		if !ok {
			continue
		}
		name = strings.ReplaceAll(strings.ToLower(name), "-", "_")
		keys[name] = k
	}
	for name := range keys {
		names = append(names, name)
	}
	sort.Strings(names)
	return append(names, "node_name", "phase", "managed"), keys
}

// podStateLabels are karpenter_pods_state's label names.
var podStateLabels = []string{"name", "namespace", "owner", "node", "scheduled", metrics.LabelNodePool, metrics.LabelZone, "arch",
	metrics.LabelCapacityType, "instance_type", "phase", "ready", "managed"}

// StateFamily is one family of the per-node or per-pod series. Its series
// are not kept one by one: Collect emits them from the snapshot
// Workload.Refresh last took. Kept as labelled series, every node's six
// families by resource type held dozens of label pairs each, about a
// quarter of a megabyte per node: hundreds of megabytes at a few thousand
// nodes. A snapshot holds each node's label values once.
type StateFamily struct {
	desc *prometheus.Desc
	// byResource: the family's last label is resource_type.
	byResource bool
}

func nodeFamily(name, help string) *StateFamily {
	return &StateFamily{
		desc:       prometheus.NewDesc(prometheus.BuildFQName(metrics.Namespace, "nodes", name), help, append(append([]string{}, nodeLabels...), metrics.LabelResourceType), nil),
		byResource: true,
	}
}

var (
	// NodeAllocatable and the other per-node series are Karpenter's; CPU
	// in cores, other resources in their unit.
	NodeAllocatable         = nodeFamily("allocatable", "Node allocatable, by resource type and the node's well-known labels.")
	NodeTotalPodRequests    = nodeFamily("total_pod_requests", "Requests of the pods bound to the node (DaemonSet pods included).")
	NodeTotalPodLimits      = nodeFamily("total_pod_limits", "Limits of the pods bound to the node (DaemonSet pods included).")
	NodeTotalDaemonRequests = nodeFamily("total_daemon_requests", "Requests of the DaemonSet pods bound to the node.")
	NodeTotalDaemonLimits   = nodeFamily("total_daemon_limits", "Limits of the DaemonSet pods bound to the node.")
	NodeSystemOverhead      = nodeFamily("system_overhead", "Node capacity minus allocatable: what the kubelet and the system reserve.")
	// PodState is 1 per pod, its labels describing the pod and its node.
	PodState = &StateFamily{desc: prometheus.NewDesc(prometheus.BuildFQName(metrics.Namespace, "pods", "state"),
		"1 per pod, labelled with its name, namespace, owner, node, phase, readiness and its node's NodePool, zone, architecture, capacity type and instance type.",
		podStateLabels, nil)}
)

func init() {
	crmetrics.Registry.MustRegister(NodeAllocatable, NodeTotalPodRequests, NodeTotalPodLimits, NodeTotalDaemonRequests,
		NodeTotalDaemonLimits, NodeSystemOverhead, PodState)
}

// stateSample is one series of a family.
type stateSample struct {
	values   []string // label values; a node's samples share one slice
	resource string   // the resource_type value of a byResource family
	value    float64
}

// workloadSnapshot is every family's series at one Refresh.
type workloadSnapshot map[*StateFamily][]stateSample

// workloadState is the snapshot Collect reads; Refresh replaces it whole,
// so a scrape sees one refresh or the next, never a mix.
var workloadState atomic.Pointer[workloadSnapshot]

// Describe implements prometheus.Collector.
func (f *StateFamily) Describe(ch chan<- *prometheus.Desc) { ch <- f.desc }

// Collect implements prometheus.Collector.
func (f *StateFamily) Collect(ch chan<- prometheus.Metric) {
	snap := workloadState.Load()
	if snap == nil {
		return
	}
	for _, s := range (*snap)[f] {
		values := s.values
		if f.byResource {
			values = append(values[:len(values):len(values)], s.resource)
		}
		ch <- prometheus.MustNewConstMetric(f.desc, prometheus.GaugeValue, s.value, values...)
	}
}

// workloadPeriod is how often the per-node and per-pod series are rebuilt.
const workloadPeriod = 5 * time.Second

// Workload rebuilds the per-node and per-pod series from the manager's
// cache every few seconds. It runs on every replica.
type Workload struct {
	Reader client.Reader
}

// NeedLeaderElection is false: followers serve the series too.
func (w *Workload) NeedLeaderElection() bool { return false }

// Start rebuilds until ctx ends.
func (w *Workload) Start(ctx context.Context) error {
	for {
		if err := w.Refresh(ctx); err != nil && ctx.Err() == nil {
			return fmt.Errorf("node and pod metrics: %w", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(workloadPeriod):
		}
	}
}

// Refresh rebuilds the series once.
func (w *Workload) Refresh(ctx context.Context) error {
	nodes := &corev1.NodeList{}
	if err := w.Reader.List(ctx, nodes, client.UnsafeDisableDeepCopy); err != nil {
		return err
	}
	podList := &corev1.PodList{}
	if err := w.Reader.List(ctx, podList, client.UnsafeDisableDeepCopy); err != nil {
		return err
	}
	claims := &v1.NodeClaimList{}
	if err := w.Reader.List(ctx, claims, client.UnsafeDisableDeepCopy); err != nil {
		return err
	}
	managed := map[string]bool{}
	for i := range claims.Items {
		if id := claims.Items[i].Status.ProviderID; id != "" {
			managed[id] = true
		}
	}
	byName := map[string]*corev1.Node{}
	for i := range nodes.Items {
		byName[nodes.Items[i].Name] = &nodes.Items[i]
	}
	type usage struct{ requests, limits, daemonRequests, daemonLimits corev1.ResourceList }
	used := map[string]*usage{}
	out := workloadSnapshot{}
	for i := range podList.Items {
		pod := &podList.Items[i]
		node := byName[pod.Spec.NodeName]
		out[PodState] = append(out[PodState], stateSample{values: podLabelValues(pod, node), value: 1})
		if node == nil || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
			continue
		}
		u := used[node.Name]
		if u == nil {
			u = &usage{corev1.ResourceList{}, corev1.ResourceList{}, corev1.ResourceList{}, corev1.ResourceList{}}
			used[node.Name] = u
		}
		req, lim := scheduling.PodRequests(pod), podLimits(pod)
		scheduling.AddResources(u.requests, req)
		scheduling.AddResources(u.limits, lim)
		if pods.IsOwnedByDaemonSet(pod) {
			scheduling.AddResources(u.daemonRequests, req)
			scheduling.AddResources(u.daemonLimits, lim)
		}
	}
	for i := range nodes.Items {
		node := &nodes.Items[i]
		values := nodeLabelValues(node, managed[node.Spec.ProviderID])
		u := used[node.Name]
		if u == nil {
			u = &usage{}
		}
		overhead := corev1.ResourceList{}
		for name, c := range node.Status.Capacity {
			if a, ok := node.Status.Allocatable[name]; ok {
				c.Sub(a)
				overhead[name] = c
			}
		}
		for f, list := range map[*StateFamily]corev1.ResourceList{
			NodeAllocatable: node.Status.Allocatable, NodeSystemOverhead: overhead,
			NodeTotalPodRequests: u.requests, NodeTotalPodLimits: u.limits,
			NodeTotalDaemonRequests: u.daemonRequests, NodeTotalDaemonLimits: u.daemonLimits,
		} {
			for name, q := range list {
				out[f] = append(out[f], stateSample{values: values, resource: metrics.ResourceType(name), value: metrics.ResourceValue(name, &q)})
			}
		}
	}
	workloadState.Store(&out)
	return nil
}

// nodeLabelValues are a node's values of nodeLabels, in order. The
// strings are the informer cache's own, not copies.
func nodeLabelValues(node *corev1.Node, managed bool) []string {
	out := make([]string, 0, len(nodeLabels))
	for _, name := range nodeLabels[:len(nodeLabels)-3] {
		out = append(out, node.Labels[nodeLabelKeys[name]])
	}
	return append(out, node.Name, string(node.Status.Phase), strconv.FormatBool(managed))
}

// podLabelValues are a pod's values of podStateLabels, in order.
func podLabelValues(pod *corev1.Pod, node *corev1.Node) []string {
	owner := ""
	if len(pod.OwnerReferences) > 0 {
		o := pod.OwnerReferences[0]
		owner = fmt.Sprintf("/apis/%s/namespaces/%s/%ss/%s", o.APIVersion, pod.Namespace, strings.ToLower(o.Kind), o.Name)
	}
	ready := false
	for _, c := range pod.Status.Conditions {
		ready = ready || (c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue)
	}
	var on map[string]string
	if node != nil {
		on = node.Labels
	}
	return []string{pod.Name, pod.Namespace, owner, pod.Spec.NodeName, strconv.FormatBool(pod.Spec.NodeName != ""),
		on[v1.NodePoolLabelKey], on[corev1.LabelTopologyZone], on[corev1.LabelArchStable], on[v1.CapacityTypeLabelKey],
		on[corev1.LabelInstanceTypeStable], string(pod.Status.Phase), strconv.FormatBool(ready), strconv.FormatBool(on[v1.NodePoolLabelKey] != "")}
}

// podLimits is the pod's effective limits: the larger of the summed
// containers' and each init container's, plus the pod overhead.
func podLimits(pod *corev1.Pod) corev1.ResourceList {
	out := corev1.ResourceList{}
	for _, c := range pod.Spec.Containers {
		scheduling.AddResources(out, c.Resources.Limits)
	}
	for _, c := range pod.Spec.InitContainers {
		out = scheduling.MaxResources(out, c.Resources.Limits)
	}
	scheduling.AddResources(out, pod.Spec.Overhead)
	return out
}
