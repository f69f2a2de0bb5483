package operator

import (
	"context"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/metrics"
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

func init() {
	crmetrics.Registry.MustRegister(BuildInfo, clusterStateNodeCount, clusterStateSynced, clusterStateUnsyncedTime, podStartupDuration)
}
