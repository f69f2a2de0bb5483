package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

// series is one metric the controller serves under Karpenter's name (or a
// Joist-only one), with its type and label names.
type series struct {
	name   string
	typ    dto.MetricType
	labels []string
}

var (
	counter   = dto.MetricType_COUNTER
	gauge     = dto.MetricType_GAUGE
	histogram = dto.MetricType_HISTOGRAM
	summary   = dto.MetricType_SUMMARY
)

// karpenterSeries are Karpenter v1.15's series the controller serves: every
// one Karpenter documents as stable, and the others Joist has the data for.
// docs/guides/karpenter-compatibility.md lists the same names.
var karpenterSeries = []series{
	// stable
	{"karpenter_build_info", gauge, []string{"commit", "goarch", "goversion", "version"}},
	{"karpenter_cluster_state_node_count", gauge, nil},
	{"karpenter_cluster_state_synced", gauge, nil},
	{"karpenter_cluster_state_unsynced_time_seconds", gauge, nil},
	{"karpenter_interruption_deleted_messages_total", counter, nil},
	{"karpenter_interruption_message_queue_duration_seconds", histogram, nil},
	{"karpenter_interruption_received_messages_total", counter, []string{"message_type"}},
	{"karpenter_nodeclaims_created_total", counter, []string{"min_values_relaxed", "nodepool", "reason"}},
	{"karpenter_nodeclaims_terminated_total", counter, []string{"capacity_type", "nodepool", "zone"}},
	{"karpenter_nodepools_allowed_disruptions", gauge, []string{"nodepool", "reason"}},
	{"karpenter_nodepools_limit", gauge, []string{"nodepool", "resource_type"}},
	{"karpenter_nodepools_usage", gauge, []string{"nodepool", "resource_type"}},
	{"karpenter_nodes_created_total", counter, []string{"nodepool", "zone"}},
	{"karpenter_nodes_terminated_total", counter, []string{"nodepool", "zone"}},
	{"karpenter_pods_startup_duration_seconds", summary, nil},
	{"karpenter_scheduler_scheduling_duration_seconds", histogram, []string{"controller"}},
	{"karpenter_voluntary_disruption_decisions_total", counter, []string{"consolidation_type", "decision", "reason"}},
	// beta and alpha
	{"karpenter_cloudprovider_duration_seconds", histogram, []string{"controller", "method", "provider"}},
	{"karpenter_cloudprovider_errors_total", counter, []string{"controller", "error", "method", "nodepool", "provider"}},
	{"karpenter_nodeclaims_disrupted_total", counter, []string{"capacity_type", "consolidation_policy", "nodepool", "reason", "termination_mode"}},
	{"karpenter_nodeclaims_instance_termination_duration_seconds", histogram, []string{"nodepool"}},
	{"karpenter_nodeclaims_termination_duration_seconds", histogram, []string{"nodepool"}},
	{"karpenter_nodes_drained_total", counter, []string{"nodepool"}},
	{"karpenter_nodes_lifetime_duration_seconds", histogram, []string{"nodepool"}},
	{"karpenter_nodes_termination_duration_seconds", summary, []string{"nodepool"}},
	{"karpenter_pods_disruption_initiated_total", counter, []string{"capacity_type", "consolidation_policy", "nodepool", "reason", "termination_mode"}},
	{"karpenter_pods_drained_total", counter, []string{"reason"}},
	{"karpenter_pods_eviction_requests_total", counter, []string{"code"}},
	{"karpenter_scheduler_unschedulable_pods_count", gauge, []string{"controller"}},
	{"karpenter_voluntary_disruption_consolidation_timeouts_total", counter, []string{"consolidation_type"}},
	{"karpenter_voluntary_disruption_decision_evaluation_duration_seconds", histogram, []string{"consolidation_type", "reason"}},
	{"karpenter_voluntary_disruption_eligible_nodes", gauge, []string{"reason"}},
	{"karpenter_voluntary_disruption_failed_validations_total", counter, []string{"consolidation_type"}},
	{"karpenter_voluntary_disruption_queue_failures_total", counter, []string{"consolidation_type", "decision", "reason"}},
}

// nodeLabels are the label names of Karpenter's per-node series: its
// well-known node labels after the domain, in snake_case, then node_name,
// phase and managed.
var nodeLabels = []string{
	"arch", "capacity_reservation_id", "capacity_reservation_interruptible", "capacity_reservation_type", "capacity_type",
	"instance_accelerator_count", "instance_accelerator_manufacturer", "instance_accelerator_name", "instance_capability_flex",
	"instance_category", "instance_cpu", "instance_cpu_manufacturer", "instance_cpu_sustained_clock_speed_mhz",
	"instance_ebs_bandwidth", "instance_encryption_in_transit_supported", "instance_family", "instance_generation",
	"instance_gpu_count", "instance_gpu_manufacturer", "instance_gpu_memory", "instance_gpu_name", "instance_hypervisor",
	"instance_local_nvme", "instance_memory", "instance_network_bandwidth", "instance_size", "instance_tenancy",
	"instance_type", "managed", "node_name", "nodepool", "os", "phase", "placement_group_id", "placement_group_partition",
	"region", "resource_type", "windows_build", "zone", "zone_id",
}

func init() {
	for _, name := range []string{"allocatable", "total_pod_requests", "total_pod_limits", "total_daemon_requests", "total_daemon_limits", "system_overhead"} {
		karpenterSeries = append(karpenterSeries, series{"karpenter_nodes_" + name, gauge, nodeLabels})
	}
	karpenterSeries = append(karpenterSeries, series{"karpenter_pods_state", gauge,
		[]string{"arch", "capacity_type", "instance_type", "managed", "name", "namespace", "node", "nodepool", "owner", "phase", "ready", "scheduled", "zone"}})
}

// joistSeries are Joist's own.
var joistSeries = []series{
	{"joist_nodeclaims_launched_total", counter, []string{"nodepool"}},
	{"joist_nodeclaims_registered_total", counter, []string{"nodepool"}},
	{"joist_nodeclaims_initialized_total", counter, []string{"nodepool"}},
	{"joist_scheduler_pending_pods", gauge, nil},
	{"joist_cloudprovider_aws_api_calls_total", counter, []string{"operation", "service"}},
	{"joist_cloudprovider_aws_api_duration_seconds", histogram, []string{"operation", "service"}},
}

// testMetrics: a NodePool's life (provisioning, a NodeClaim deleted by
// hand and drained, emptiness consolidation) and then one scrape of the
// controller, which must serve every listed series with its type and
// label names, under the names the compatibility guide lists.
func testMetrics(t *testing.T) {
	const pool = "metrics"
	// A class of its own: the disruption group's "default" may still be
	// going away when this scenario starts.
	nodeClass(t, pool)
	ns := scenarioNamespace(t, "e2e-metrics")
	consolidatingPool(t, pool, "10s", func(np *v1.NodePool) {
		np.Spec.Template.Spec.NodeClassRef.Name = pool
		np.Spec.Limits = v1.Limits(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100")})
	})
	spec := podSpec(pool, requests("1", "1.5Gi"))
	spec.Containers[0].Resources.Limits = requests("1", "1.5Gi")
	d := deployment(ns, "pause", 2, spec)
	create(t, d)
	// A DaemonSet on the pool's nodes, with limits, for the per-node daemon
	// series (in its own namespace: waitRunning counts the deployment's).
	dsNS := scenarioNamespace(t, "e2e-metrics-ds")
	dsSpec := podSpec(pool, requests("10m", "16Mi"))
	dsSpec.Containers[0].Resources.Limits = requests("10m", "16Mi")
	dsLabels := map[string]string{"app": "metrics-ds"}
	create(t, &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: dsNS, Name: "metrics-ds"},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: dsLabels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: dsLabels}, Spec: dsSpec},
		},
	})
	waitRunning(t, ns, 2)

	// A NodeClaim deleted by hand is drained: its pod is evicted.
	claims := claimsOf(t, pool)
	if len(claims) == 0 {
		t.Fatal("no nodeclaim for the running pods")
	}
	if err := w.kube.Delete(context.Background(), &claims[0]); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the deleted nodeclaim gone", func() (bool, string) {
		for _, c := range claimsOf(t, pool) {
			if c.Name == claims[0].Name {
				return false, "still there"
			}
		}
		return true, ""
	})
	waitRunning(t, ns, 2)
	// The per-node and per-pod gauges have series only while the pool has
	// nodes and pods: scrape them now, before emptiness removes both.
	var during map[string]*dto.MetricFamily
	eventually(t, "the per-pod and per-node daemon series served", func() (bool, string) {
		during = metricFamilies(t)
		for _, name := range []string{"karpenter_pods_state", "karpenter_nodes_total_daemon_requests", "karpenter_nodes_total_daemon_limits"} {
			if _, ok := during[name]; !ok {
				return false, name + " not served yet"
			}
		}
		return true, ""
	})
	// No pods left: emptiness removes the nodes.
	scale(t, d, 0)
	eventually(t, "the pool's nodes removed by emptiness", func() (bool, string) {
		n := len(claimsOf(t, pool))
		return n == 0, fmt.Sprintf("%d nodeclaims", n)
	})

	families := metricFamilies(t)
	for _, s := range append(append([]series{}, karpenterSeries...), joistSeries...) {
		f, ok := families[s.name]
		if !ok {
			f, ok = during[s.name]
		}
		if !ok {
			t.Errorf("%s is not served", s.name)
			continue
		}
		if f.GetType() != s.typ {
			t.Errorf("%s is a %s, want a %s", s.name, f.GetType(), s.typ)
		}
		var seen []string
		found := false
		for _, m := range f.GetMetric() {
			var names []string
			for _, l := range m.GetLabel() {
				names = append(names, l.GetName())
			}
			sort.Strings(names)
			found = found || slices.Equal(names, s.labels)
			seen = append(seen, strings.Join(names, ","))
		}
		if !found {
			t.Errorf("%s has label sets %q, want {%s}", s.name, seen, strings.Join(s.labels, ","))
		}
	}
	// Series of the scenario's pool, not only of other scenarios.
	for _, want := range []string{
		`karpenter_nodeclaims_created_total{min_values_relaxed="false",nodepool="metrics",reason="provisioned"}`,
		`karpenter_nodepools_limit{nodepool="metrics",resource_type="cpu"}`,
		`karpenter_voluntary_disruption_decisions_total{consolidation_type="empty",decision="delete",reason="empty"}`,
		`karpenter_pods_drained_total{reason="Forceful Termination"}`,
	} {
		if v, ok, err := w.controller.metric(want); err != nil || !ok || v == 0 {
			t.Errorf("%s = %v (present %v, err %v), want above 0", want, v, ok, err)
		}
	}

	// The compatibility guide lists every Karpenter series served.
	_, file, _, _ := runtime.Caller(0)
	guide, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", "docs", "guides", "karpenter-compatibility.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range karpenterSeries {
		if !strings.Contains(string(guide), "`"+s.name+"`") {
			t.Errorf("docs/guides/karpenter-compatibility.md does not list %s", s.name)
		}
	}
	// And every series its served table lists is one checked above, or one
	// served from its first event on.
	servedTable, _, _ := strings.Cut(string(guide), "| Karpenter series not served |")
	for _, line := range strings.Split(servedTable, "\n") {
		if !strings.HasPrefix(line, "| `karpenter_") {
			continue
		}
		name := strings.Trim(strings.Fields(line)[1], "`")
		if !slices.Contains(lateSeries, name) && !slices.ContainsFunc(karpenterSeries, func(s series) bool { return s.name == name }) {
			t.Errorf("docs/guides/karpenter-compatibility.md lists %s as served; this scenario does not check it", name)
		}
	}
}

// lateSeries are served from their first event on: an impaired instance, a
// node repair, a move in a Balanced pool. Other scenarios check them.
var lateSeries = []string{
	"karpenter_interruption_instance_status_unhealthy_total",
	"karpenter_nodeclaims_unhealthy_disrupted_total",
	"karpenter_consolidation_moves_total",
	"karpenter_consolidation_score",
}

// metricFamilies reads the leader's /metrics whole.
func metricFamilies(t *testing.T) map[string]*dto.MetricFamily {
	t.Helper()
	p, err := w.controller.leader()
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + p.MetricsAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parsing /metrics: %v", err)
	}
	return families
}
