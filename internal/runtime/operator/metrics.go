package operator

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/metrics"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/pods"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
)

// The operator serves Karpenter's cluster-wide series: the build, the
// cluster state, pod startup times, and the per-node and per-pod gauges
// Karpenter's capacity dashboard reads. Controllers' own series are beside
// them (package metrics and each controller).

var (
	// BuildInfo is 1, labelled with the build.
	BuildInfo = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: metrics.Namespace, Name: "build_info",
		Help: "A constant 1, labelled by the version, Go version, architecture and commit of the running binary.",
	}, []string{"version", "goversion", "goarch", "commit"})
	clusterStateNodeCount = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: metrics.Namespace, Subsystem: "cluster_state", Name: "node_count",
		Help: "Nodes in the cluster state (Nodes and NodeClaims, one per provider ID).",
	})
	clusterStateSynced = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: metrics.Namespace, Subsystem: "cluster_state", Name: "synced",
		Help: "1 when the cluster state (the controller's informer caches) is synced with the apiserver, else 0.",
	})
	clusterStateUnsyncedTime = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: metrics.Namespace, Subsystem: "cluster_state", Name: "unsynced_time_seconds",
		Help: "How long the cluster state has not been synced, in seconds.",
	})
	podStartupDuration = prometheus.NewSummary(prometheus.SummaryOpts{
		Namespace: metrics.Namespace, Subsystem: "pods", Name: "startup_duration_seconds",
		Help:       "Time from a pod's creation to its Ready condition, for pods seen becoming Ready.",
		Objectives: metrics.SummaryObjectives(),
	})
)

// SetBuildInfo records the binary's version; the commit comes from the Go
// build information when the build stamped it.
func SetBuildInfo(version string) {
	commit := "unspecified"
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" && s.Value != "" {
				commit = s.Value
			}
		}
	}
	BuildInfo.Reset()
	BuildInfo.WithLabelValues(version, runtime.Version(), runtime.GOARCH, commit).Set(1)
}

// clusterStatePeriod is how often the cluster state series are refreshed.
const clusterStatePeriod = 10 * time.Second

// ClusterState refreshes the cluster state series from the manager's
// cache. It runs on every replica: each serves its own view.
type ClusterState struct {
	Reader client.Reader
}

// NeedLeaderElection is false: followers report their state too.
func (c *ClusterState) NeedLeaderElection() bool { return false }

// Start refreshes until ctx ends. Runnables start once the caches have
// synced, and the state is read from those caches, so it is synced from
// then on.
func (c *ClusterState) Start(ctx context.Context) error {
	clusterStateSynced.Set(1)
	clusterStateUnsyncedTime.Set(0)
	for {
		if n, err := CountStateNodes(ctx, c.Reader); err == nil {
			clusterStateNodeCount.Set(float64(n))
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(clusterStatePeriod):
		}
	}
}

// CountStateNodes counts Nodes and NodeClaims as one per provider ID
// (NodeClaims not launched yet count one each).
func CountStateNodes(ctx context.Context, r client.Reader) (int, error) {
	nodes := &corev1.NodeList{}
	if err := r.List(ctx, nodes); err != nil {
		return 0, err
	}
	claims := &v1.NodeClaimList{}
	if err := r.List(ctx, claims); err != nil {
		return 0, err
	}
	ids := map[string]bool{}
	n := 0
	for i := range nodes.Items {
		if id := nodes.Items[i].Spec.ProviderID; id == "" || !ids[id] {
			ids[id] = id != ""
			n++
		}
	}
	for i := range claims.Items {
		if id := claims.Items[i].Status.ProviderID; id == "" || !ids[id] {
			ids[id] = id != ""
			n++
		}
	}
	return n, nil
}

// watchPodStartup observes karpenter_pods_startup_duration_seconds for
// every pod seen turning Ready: the time from its creation to the Ready
// transition. Pods already Ready when first seen (after a restart) are not
// counted, as in Karpenter.
func watchPodStartup(ctx context.Context, informers cache.Informers) error {
	inf, err := informers.GetInformer(ctx, &corev1.Pod{})
	if err != nil {
		return err
	}
	_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		UpdateFunc: func(oldObj, newObj any) {
			o, ok1 := oldObj.(*corev1.Pod)
			n, ok2 := newObj.(*corev1.Pod)
			if !ok1 || !ok2 {
				return
			}
			if _, was := readySince(o); was {
				return
			}
			if at, is := readySince(n); is {
				podStartupDuration.Observe(at.Sub(n.CreationTimestamp.Time).Seconds())
			}
		},
	})
	return err
}

func readySince(pod *corev1.Pod) (time.Time, bool) {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return c.LastTransitionTime.Time, true
		}
	}
	return time.Time{}, false
}

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

func nodeGauge(name, help string) *prometheus.GaugeVec {
	return prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: metrics.Namespace, Subsystem: "nodes", Name: name, Help: help},
		append(append([]string{}, nodeLabels...), metrics.LabelResourceType))
}

var (
	// NodeAllocatable and the other per-node series are Karpenter's; CPU
	// in cores, other resources in their unit.
	NodeAllocatable         = nodeGauge("allocatable", "Node allocatable, by resource type and the node's well-known labels.")
	NodeTotalPodRequests    = nodeGauge("total_pod_requests", "Requests of the pods bound to the node (DaemonSet pods included).")
	NodeTotalPodLimits      = nodeGauge("total_pod_limits", "Limits of the pods bound to the node (DaemonSet pods included).")
	NodeTotalDaemonRequests = nodeGauge("total_daemon_requests", "Requests of the DaemonSet pods bound to the node.")
	NodeTotalDaemonLimits   = nodeGauge("total_daemon_limits", "Limits of the DaemonSet pods bound to the node.")
	NodeSystemOverhead      = nodeGauge("system_overhead", "Node capacity minus allocatable: what the kubelet and the system reserve.")
	// PodState is 1 per pod, its labels describing the pod and its node.
	PodState = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: metrics.Namespace, Subsystem: "pods", Name: "state",
		Help: "1 per pod, labelled with its name, namespace, owner, node, phase, readiness and its node's NodePool, zone, architecture, capacity type and instance type.",
	}, []string{"name", "namespace", "owner", "node", "scheduled", metrics.LabelNodePool, metrics.LabelZone, "arch", metrics.LabelCapacityType, "instance_type", "phase", "ready", "managed"})
)

func init() {
	crmetrics.Registry.MustRegister(BuildInfo, clusterStateNodeCount, clusterStateSynced, clusterStateUnsyncedTime, podStartupDuration,
		NodeAllocatable, NodeTotalPodRequests, NodeTotalPodLimits, NodeTotalDaemonRequests,
		NodeTotalDaemonLimits, NodeSystemOverhead, PodState)
}

// workloadPeriod is how often the per-node and per-pod series are rebuilt.
const workloadPeriod = 5 * time.Second

// Workload rebuilds the per-node and per-pod series from the manager's
// cache every few seconds. It runs on every replica.
type Workload struct {
	Reader client.Reader
	shown  map[*prometheus.GaugeVec]map[string]prometheus.Labels
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

// sample is one series' labels and value.
type sample struct {
	labels prometheus.Labels
	value  float64
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
	out := map[*prometheus.GaugeVec][]sample{}
	for i := range podList.Items {
		pod := &podList.Items[i]
		node := byName[pod.Spec.NodeName]
		out[PodState] = append(out[PodState], sample{podLabels(pod, node), 1})
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
		labels := nodeLabelValues(node, managed[node.Spec.ProviderID])
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
		for vec, list := range map[*prometheus.GaugeVec]corev1.ResourceList{
			NodeAllocatable: node.Status.Allocatable, NodeSystemOverhead: overhead,
			NodeTotalPodRequests: u.requests, NodeTotalPodLimits: u.limits,
			NodeTotalDaemonRequests: u.daemonRequests, NodeTotalDaemonLimits: u.daemonLimits,
		} {
			for name, q := range list {
				l := prometheus.Labels{metrics.LabelResourceType: metrics.ResourceType(name)}
				for k, v := range labels {
					l[k] = v
				}
				out[vec] = append(out[vec], sample{l, metrics.ResourceValue(name, &q)})
			}
		}
	}
	w.show(out)
	return nil
}

// show sets the new samples and deletes the series no longer present, so
// a scrape never sees a vector emptied and refilled.
func (w *Workload) show(out map[*prometheus.GaugeVec][]sample) {
	if w.shown == nil {
		w.shown = map[*prometheus.GaugeVec]map[string]prometheus.Labels{}
	}
	for _, vec := range []*prometheus.GaugeVec{NodeAllocatable, NodeSystemOverhead, NodeTotalPodRequests, NodeTotalPodLimits,
		NodeTotalDaemonRequests, NodeTotalDaemonLimits, PodState} {
		now := map[string]prometheus.Labels{}
		for _, s := range out[vec] {
			vec.With(s.labels).Set(s.value)
			now[labelKey(s.labels)] = s.labels
		}
		for k, l := range w.shown[vec] {
			if _, ok := now[k]; !ok {
				vec.Delete(l)
			}
		}
		w.shown[vec] = now
	}
}

func labelKey(l prometheus.Labels) string {
	keys := make([]string, 0, len(l))
	for k, v := range l {
		keys = append(keys, k+"="+v)
	}
	sort.Strings(keys)
	return strings.Join(keys, "\x00")
}

func nodeLabelValues(node *corev1.Node, managed bool) prometheus.Labels {
	l := prometheus.Labels{"node_name": node.Name, "phase": string(node.Status.Phase), "managed": strconv.FormatBool(managed)}
	for name, key := range nodeLabelKeys {
		l[name] = node.Labels[key]
	}
	return l
}

func podLabels(pod *corev1.Pod, node *corev1.Node) prometheus.Labels {
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
	return prometheus.Labels{
		"name": pod.Name, "namespace": pod.Namespace, "owner": owner, "node": pod.Spec.NodeName,
		"scheduled": strconv.FormatBool(pod.Spec.NodeName != ""), "phase": string(pod.Status.Phase), "ready": strconv.FormatBool(ready),
		metrics.LabelNodePool: on[v1.NodePoolLabelKey], metrics.LabelZone: on[corev1.LabelTopologyZone],
		"arch": on[corev1.LabelArchStable], metrics.LabelCapacityType: on[v1.CapacityTypeLabelKey],
		"instance_type": on[corev1.LabelInstanceTypeStable], "managed": strconv.FormatBool(on[v1.NodePoolLabelKey] != ""),
	}
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
