package provider

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	k8sresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/joistdev/terraform-provider-joist/internal/controllerdeploy"
)

// chartInputs is a joist_controller with every Helm chart input away from
// its default; vary changes some of them.
func chartInputs(vary map[string]string) string {
	inputs := map[string]string{
		"image_pull_policy":                `"Always"`,
		"image_pull_secrets":               `["regcred"]`,
		"cpu_request":                      `"500m"`,
		"cpu_limit":                        `"2"`,
		"memory_request":                   `"512Mi"`,
		"memory_limit":                     `"1Gi"`,
		"service_account_annotations":      `{ team = "platform" }`,
		"additional_labels":                `{ env = "acc" }`,
		"additional_annotations":           `{ owner = "sre" }`,
		"pod_labels":                       `{ tier = "system" }`,
		"pod_annotations":                  `{ "example.com/scrape" = "true" }`,
		"service_annotations":              `{ svc = "metrics" }`,
		"node_selector":                    `{ "joist.dev/acc-system" = "true" }`,
		"tolerations":                      `[{ key = "dedicated", operator = "Equal", value = "system", effect = "NoSchedule" }]`,
		"affinity":                         `jsonencode({ podAntiAffinity = { requiredDuringSchedulingIgnoredDuringExecution = [{ topologyKey = "kubernetes.io/hostname" }] } })`,
		"topology_spread_constraints":      `jsonencode([{ maxSkew = 1, topologyKey = "topology.kubernetes.io/zone", whenUnsatisfiable = "ScheduleAnyway" }])`,
		"priority_class_name":              `"system-node-critical"`,
		"dns_policy":                       `"Default"`,
		"termination_grace_period_seconds": `60`,
		"extra_volumes":                    `jsonencode([{ name = "scratch", emptyDir = {} }])`,
		"extra_volume_mounts":              `jsonencode([{ name = "scratch", mountPath = "/scratch" }])`,
		"env_from":                         `jsonencode([{ configMapRef = { name = "joist-extra", optional = true } }])`,
		"pdb_max_unavailable":              `"50%"`,
		"revision_history_limit":           `3`,
		"additional_cluster_role_rules":    `[{ api_groups = [""], resources = ["configmaps"], verbs = ["get", "list"] }]`,
		"service_monitor":                  `{ additional_labels = { release = "prom" }, sample_limit = 1000 }`,
		"vm_memory_overhead_percent":       `0.1`,
		"reserved_enis":                    `1`,
		"preference_policy":                `"Ignore"`,
		"min_values_policy":                `"BestEffort"`,
		"kube_client_qps":                  `100`,
		"kube_client_burst":                `150`,
		"log_level":                        `"debug"`,
		"node_cost":                        `0.01`,
	}
	for k, v := range vary {
		if v == "" {
			delete(inputs, k)
		} else {
			inputs[k] = v
		}
	}
	var b strings.Builder
	for _, k := range sortedKeysOf(inputs) {
		fmt.Fprintf(&b, "  %s = %s\n", k, inputs[k])
	}
	return awsProviderBlock() + `
resource "joist_controller" "test" {
  interruption_queue = "acc"
  wait_timeout       = "3m"
` + b.String() + "}\n"
}

func sortedKeysOf(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }

// wrapped matches the phrases in order as terraform prints them: wrapped
// at any space, with anything between phrases.
func wrapped(phrases ...string) *regexp.Regexp {
	var parts []string
	for _, p := range phrases {
		var words []string
		for _, w := range strings.Fields(p) {
			words = append(words, regexp.QuoteMeta(w))
		}
		parts = append(parts, strings.Join(words, `\s+`))
	}
	return regexp.MustCompile(strings.Join(parts, `[\s\S]*`))
}

// serviceMonitorCRD installs a stand-in for the Prometheus Operator's
// ServiceMonitor CRD (any spec), as a cluster with the operator has.
func serviceMonitorCRD(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "servicemonitors.monitoring.coreos.com"},
		"spec": map[string]any{
			"group": "monitoring.coreos.com", "scope": "Namespaced",
			"names": map[string]any{"plural": "servicemonitors", "singular": "servicemonitor", "kind": "ServiceMonitor", "listKind": "ServiceMonitorList"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true, "schema": map[string]any{
				"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true},
			}}},
		},
	}}
	crds := testCluster.kube.Resource(crdGVR)
	if _, err := crds.Create(ctx, crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	if err := controllerdeploy.WaitEstablished(ctx, testCluster.kube, []*unstructured.Unstructured{crd}); err != nil {
		t.Fatal(err)
	}
}

// labelControllerNodes puts the label the configuration selects on the
// nodes of controllerNodes.
func labelControllerNodes(t *testing.T) {
	t.Helper()
	for i := 1; i <= 2; i++ {
		patch := []byte(`{"metadata":{"labels":{"joist.dev/acc-system":"true"}}}`)
		nodes := testCluster.kube.Resource(k8sschema.GroupVersionResource{Version: "v1", Resource: "nodes"})
		if _, err := nodes.Patch(context.Background(), fmt.Sprintf("acc-controller-%d", i), k8stypes.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// liveObject reads one of joist_controller's objects.
func liveObject(gvr k8sschema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, error) {
	if namespace == "" {
		return testCluster.kube.Resource(gvr).Get(context.Background(), name, metav1.GetOptions{})
	}
	return testCluster.kube.Resource(gvr).Namespace(namespace).Get(context.Background(), name, metav1.GetOptions{})
}

// checkChartInputs finds each input in the object it configures.
func checkChartInputs(tier, cpuLimit, overhead string, tolerationSeconds int64, sampleLimit int64) resource.TestCheckFunc {
	return func(*terraform.State) error {
		d, err := liveObject(deploymentsGVR, "kube-system", controllerdeploy.Name)
		if err != nil {
			return err
		}
		var dep appsv1.Deployment
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(d.Object, &dep); err != nil {
			return err
		}
		pod, c := dep.Spec.Template.Spec, dep.Spec.Template.Spec.Containers[0]
		var problems []string
		expect := func(ok bool, format string, args ...any) {
			if !ok {
				problems = append(problems, fmt.Sprintf(format, args...))
			}
		}
		expect(dep.Labels["env"] == "acc" && dep.Annotations["owner"] == "sre", "Deployment metadata %v %v", dep.Labels, dep.Annotations)
		expect(dep.Spec.Template.Labels["tier"] == tier && dep.Spec.Template.Annotations["example.com/scrape"] == "true", "pod metadata %v %v", dep.Spec.Template.Labels, dep.Spec.Template.Annotations)
		expect(c.ImagePullPolicy == corev1.PullAlways && len(pod.ImagePullSecrets) == 1 && pod.ImagePullSecrets[0].Name == "regcred", "image pull %s %v", c.ImagePullPolicy, pod.ImagePullSecrets)
		expect(c.Resources.Requests.Cpu().String() == "500m" && c.Resources.Limits.Cpu().String() == cpuLimit &&
			c.Resources.Requests.Memory().String() == "512Mi" && c.Resources.Limits.Memory().String() == "1Gi", "resources %v", c.Resources)
		expect(pod.NodeSelector["joist.dev/acc-system"] == "true" && len(pod.NodeSelector) == 1, "node selector %v", pod.NodeSelector)
		wantTol := corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "system", Effect: corev1.TaintEffectNoSchedule}
		if tolerationSeconds > 0 {
			wantTol.Effect, wantTol.TolerationSeconds = corev1.TaintEffectNoExecute, &tolerationSeconds
		}
		expect(len(pod.Tolerations) == 1 && pod.Tolerations[0].MatchToleration(&wantTol) &&
			(tolerationSeconds == 0 || pod.Tolerations[0].TolerationSeconds != nil && *pod.Tolerations[0].TolerationSeconds == tolerationSeconds), "tolerations %v", pod.Tolerations)
		expect(pod.Affinity != nil && pod.Affinity.NodeAffinity == nil && pod.Affinity.PodAntiAffinity != nil &&
			pod.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].LabelSelector != nil, "affinity %+v", pod.Affinity)
		expect(len(pod.TopologySpreadConstraints) == 1 && pod.TopologySpreadConstraints[0].WhenUnsatisfiable == corev1.ScheduleAnyway, "spread %v", pod.TopologySpreadConstraints)
		expect(pod.PriorityClassName == "system-node-critical" && pod.DNSPolicy == corev1.DNSDefault, "priority %q dns %q", pod.PriorityClassName, pod.DNSPolicy)
		expect(pod.TerminationGracePeriodSeconds != nil && *pod.TerminationGracePeriodSeconds == 60, "grace %v", pod.TerminationGracePeriodSeconds)
		expect(len(pod.Volumes) == 1 && pod.Volumes[0].EmptyDir != nil && len(c.VolumeMounts) == 1 && c.VolumeMounts[0].MountPath == "/scratch", "volumes %v mounts %v", pod.Volumes, c.VolumeMounts)
		expect(len(c.EnvFrom) == 1 && c.EnvFrom[0].ConfigMapRef != nil && c.EnvFrom[0].ConfigMapRef.Name == "joist-extra", "envFrom %v", c.EnvFrom)
		expect(dep.Spec.RevisionHistoryLimit != nil && *dep.Spec.RevisionHistoryLimit == 3, "revision history %v", dep.Spec.RevisionHistoryLimit)
		env, err := controllerdeploy.Env(d)
		if err != nil {
			return err
		}
		for k, v := range map[string]string{"VM_MEMORY_OVERHEAD_PERCENT": overhead, "RESERVED_ENIS": "1", "PREFERENCE_POLICY": "Ignore", "MIN_VALUES_POLICY": "BestEffort",
			"KUBE_CLIENT_QPS": "100", "KUBE_CLIENT_BURST": "150", "LOG_LEVEL": "debug", "CPU_REQUESTS": "500", "BATCH_IDLE_DURATION": "1s", "BATCH_MAX_DURATION": "10s",
			"NODE_COST": "0.01"} {
			expect(env[k] == v, "env %s = %q, want %q", k, env[k], v)
		}
		sa, err := liveObject(serviceAccountsGVR, "kube-system", "joist")
		if err != nil {
			return err
		}
		expect(sa.GetAnnotations()["team"] == "platform" && sa.GetLabels()["env"] == "acc", "ServiceAccount %v %v", sa.GetAnnotations(), sa.GetLabels())
		svc, err := liveObject(k8sschema.GroupVersionResource{Version: "v1", Resource: "services"}, "kube-system", controllerdeploy.Name)
		if err != nil {
			return err
		}
		expect(svc.GetAnnotations()["svc"] == "metrics", "Service annotations %v", svc.GetAnnotations())
		pdb, err := liveObject(k8sschema.GroupVersionResource{Group: "policy", Version: "v1", Resource: "poddisruptionbudgets"}, "kube-system", controllerdeploy.Name)
		if err != nil {
			return err
		}
		mu, _, _ := unstructured.NestedString(pdb.Object, "spec", "maxUnavailable")
		expect(mu == "50%", "PDB maxUnavailable %q", mu)
		cr, err := liveObject(k8sschema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}, "", controllerdeploy.Name)
		if err != nil {
			return err
		}
		rules, _, _ := unstructured.NestedSlice(cr.Object, "rules")
		last, _ := rules[len(rules)-1].(map[string]any)
		expect(fmt.Sprint(last["resources"]) == "[configmaps]", "last ClusterRole rule %v", last)
		sm, err := liveObject(controllerdeploy.ServiceMonitorGVR, "kube-system", controllerdeploy.Name)
		switch {
		case sampleLimit == 0:
			expect(apierrors.IsNotFound(err), "ServiceMonitor still there after service_monitor was removed (err %v)", err)
		case err != nil:
			return err
		default:
			limit, _, _ := unstructured.NestedInt64(sm.Object, "spec", "sampleLimit")
			expect(sm.GetLabels()["release"] == "prom" && limit == sampleLimit, "ServiceMonitor labels %v sampleLimit %d", sm.GetLabels(), limit)
		}
		if len(problems) > 0 {
			return fmt.Errorf("%s", strings.Join(problems, "\n"))
		}
		return nil
	}
}

// TestAccControllerChartInputs sets every input of Karpenter's Helm chart
// joist_controller has, finds each in the object it configures, changes
// them in place, removes the ServiceMonitor, and imports: every step ends
// with an empty plan.
func TestAccControllerChartInputs(t *testing.T) {
	awsSim(t)
	controllerNodes(t)
	labelControllerNodes(t)
	serviceMonitorCRD(t)
	changed := map[string]string{
		"pod_labels":                 `{ tier = "platform" }`,
		"cpu_limit":                  `"3"`,
		"vm_memory_overhead_percent": `0.05`,
		"tolerations":                `[{ key = "dedicated", operator = "Equal", value = "system", effect = "NoExecute", toleration_seconds = 300 }]`,
		"service_monitor":            `{ additional_labels = { release = "prom" }, sample_limit = 2000 }`,
	}
	removed := map[string]string{}
	for k, v := range changed {
		removed[k] = v
	}
	removed["service_monitor"] = ""
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: chartInputs(nil),
				Check:  checkChartInputs("system", "2", "0.1", 0, 1000),
			},
			{
				Config: chartInputs(changed),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(controllerAddr, plancheck.ResourceActionUpdate),
				}},
				Check: checkChartInputs("platform", "3", "0.05", 300, 2000),
			},
			{
				Config: chartInputs(removed),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(controllerAddr, plancheck.ResourceActionUpdate),
				}},
				Check: checkChartInputs("platform", "3", "0.05", 300, 0),
			},
			{ResourceName: controllerAddr, ImportState: true, ImportStateId: "kube-system", ImportStateVerify: true},
		},
	})
}

// TestAccControllerSettingsRejectedAtPlan: a controller that would refuse
// to start, or a setting it would ignore, fails terraform plan with the
// attribute and the fix.
func TestAccControllerSettingsRejectedAtPlan(t *testing.T) {
	steps := []resource.TestStep{}
	for _, tc := range []struct {
		config string
		want   *regexp.Regexp
	}{
		{`batch_idle_duration = "30s"`, wrapped(`BATCH_MAX_DURATION (--batch-max-duration): (10s) must not be shorter than BATCH_IDLE_DURATION`, "refuse to start")},
		{`vm_memory_overhead_percent = 7.5`, wrapped("VM_MEMORY_OVERHEAD_PERCENT", "0.075")},
		{`kube_client_burst = 10`, wrapped("KUBE_CLIENT_BURST", "KUBE_CLIENT_QPS")},
		{`node_cost = -0.01`, wrapped("node_cost", "at least 0")},
		{`feature_gates = { Teleport = true }`, wrapped(`unknown gate "Teleport"; known gates are`)},
		{`enable_zonal_shift = true`, wrapped(`ENABLE_ZONAL_SHIFT (--enable-zonal-shift) is "true": Joist does not act on this Karpenter setting`, `remove it or set it to "false"`)},
		{`ami_refresh_interval = "30s"`, wrapped("AMI_REFRESH_INTERVAL (--ami-refresh-interval): is 30s; it must be at least 1m")},
		{`feature_gates = { CapacityBuffer = true }`, wrapped("gate CapacityBuffer=true is not supported by Joist", "set CapacityBuffer=false")},
		{`aws_feature_gates = { NodeClassCEL = true }`, wrapped("gate NodeClassCEL=true is not supported by Joist")},
		{`aws_feature_gates = { Warp = false }`, wrapped(`unknown gate "Warp"; known gates are`)},
		{`extra_env = { BATCH_MAX_DURATION = "20s" }`, wrapped("set batch_max_duration instead")},
		{`disable_leader_election = true`, wrapped("every one of the 2 replicas")},
		{`memory_limit = "256Mi"`, wrapped("memory_limit 256Mi is below memory_request 1Gi")},
		{`metrics_port = 9000
  health_probe_port = 9000`, wrapped("must differ from METRICS_PORT")},
		{`affinity = jsonencode({ nodeAfinity = {} })`, wrapped(`unknown field "nodeAfinity"`)},
		{`dns_policy = "Sometimes"`, wrapped("value must be one of")},
	} {
		steps = append(steps, resource.TestStep{
			Config: providerBlock() + `
resource "joist_controller" "test" {
  cluster_name = "acc"
  ` + tc.config + `
}
`,
			PlanOnly: true, ExpectError: tc.want,
		})
	}
	resource.UnitTest(t, resource.TestCase{ProtoV6ProviderFactories: testAccProtoV6ProviderFactories, Steps: steps})
}

// fakeKubelet plays the kubelet of one Node that kwok does not manage: it
// keeps the Node's heartbeat and gives each controller pod bound to it the
// status a kubelet reports for an image that cannot start (an image named
// "missing" cannot be pulled; one named "crash" exits at once with an
// error in its last log lines).
func fakeKubelet(t *testing.T, node string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	nodes := testCluster.kube.Resource(k8sschema.GroupVersionResource{Version: "v1", Resource: "nodes"})
	pods := testCluster.kube.Resource(k8sschema.GroupVersionResource{Version: "v1", Resource: "pods"})
	res := corev1.ResourceList{corev1.ResourceCPU: k8sresource.MustParse("4"), corev1.ResourceMemory: k8sresource.MustParse("16Gi"), corev1.ResourcePods: k8sresource.MustParse("58")}
	n := &corev1.Node{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
		ObjectMeta: metav1.ObjectMeta{Name: node, Labels: map[string]string{corev1.LabelHostname: node, "joist.dev/acc-kubelet": "true", corev1.LabelOSStable: "linux"}},
		Status:     corev1.NodeStatus{Capacity: res, Allocatable: res},
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(n)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := nodes.Create(ctx, &unstructured.Unstructured{Object: u}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() {
		cancel()
		<-done
		_ = nodes.Delete(context.Background(), node, metav1.DeleteOptions{})
	})
	heartbeat := func() {
		now := metav1.Now()
		status := map[string]any{"status": map[string]any{"conditions": []any{map[string]any{
			"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "fake kubelet",
			"lastHeartbeatTime": now.UTC().Format(time.RFC3339), "lastTransitionTime": now.UTC().Format(time.RFC3339),
		}}}}
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Node", "metadata": map[string]any{"name": node}}}
		u.Object["status"] = status["status"]
		_, _ = nodes.ApplyStatus(ctx, node, u, metav1.ApplyOptions{FieldManager: "fake-kubelet", Force: true})
	}
	go func() {
		defer close(done)
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		beats := 0
		for {
			if beats%10 == 0 {
				heartbeat()
			}
			beats++
			list, err := pods.Namespace("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + node})
			if err == nil {
				for _, p := range list.Items {
					if p.GetDeletionTimestamp() != nil {
						// The kubelet confirms a deleted pod's end.
						_ = pods.Namespace(p.GetNamespace()).Delete(ctx, p.GetName(), metav1.DeleteOptions{GracePeriodSeconds: ptrTo(int64(0))})
						continue
					}
					reportStartFailure(ctx, pods, &p)
				}
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
}

// reportStartFailure writes the status a kubelet reports for the pod's
// first container when its image cannot start.
func reportStartFailure(ctx context.Context, pods dynamic.NamespaceableResourceInterface, p *unstructured.Unstructured) {
	containers, _, _ := unstructured.NestedSlice(p.Object, "spec", "containers")
	if len(containers) == 0 {
		return
	}
	c, _ := containers[0].(map[string]any)
	image, _ := c["image"].(string)
	name, _ := c["name"].(string)
	cs := map[string]any{"name": name, "image": image, "imageID": "", "ready": false, "restartCount": int64(0)}
	switch {
	case strings.Contains(image, "missing"):
		cs["state"] = map[string]any{"waiting": map[string]any{"reason": "ImagePullBackOff", "message": `Back-off pulling image "` + image + `"`}}
	case strings.Contains(image, "crash"):
		cs["restartCount"] = int64(3)
		cs["state"] = map[string]any{"waiting": map[string]any{"reason": "CrashLoopBackOff", "message": "back-off 40s restarting failed container=" + name}}
		cs["lastState"] = map[string]any{"terminated": map[string]any{"exitCode": int64(1), "reason": "Error",
			"message": "{\"level\":\"info\",\"msg\":\"starting controller\"}\nerror: CLUSTER_NAME (--cluster-name): is required: set it to the name of the EKS cluster the controller manages"}}
	default:
		return
	}
	status := map[string]any{"phase": "Pending", "conditions": []any{
		map[string]any{"type": "PodScheduled", "status": "True"}, map[string]any{"type": "Ready", "status": "False", "reason": "ContainersNotReady"},
	}, "containerStatuses": []any{cs}}
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": p.GetName(), "namespace": p.GetNamespace()}, "status": status}}
	_, _ = pods.Namespace(p.GetNamespace()).ApplyStatus(ctx, p.GetName(), u, metav1.ApplyOptions{FieldManager: "fake-kubelet", Force: true})
}

// TestAccControllerReportsWhyItDoesNotStart: an image that cannot be
// pulled, and then one that exits at once, fail the apply within
// wait_timeout with the kubelet's reason, and for the crash the last log
// lines, in the error.
func TestAccControllerReportsWhyItDoesNotStart(t *testing.T) {
	awsSim(t)
	fakeKubelet(t, "acc-kubelet")
	config := func(image string) string {
		return awsProviderBlock() + fmt.Sprintf(`
resource "joist_controller" "broken" {
  namespace                   = "acc-broken"
  create_namespace            = true
  image                       = %q
  replicas                    = 1
  node_selector               = { "joist.dev/acc-kubelet" = "true" }
  tolerations                 = []
  affinity                    = jsonencode({})
  topology_spread_constraints = jsonencode([])
  wait_timeout                = "20s"
}
`, image)
	}
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:      config("registry.invalid/joist-missing:1"),
				ExpectError: wrapped("Waiting for the controller", "container joist of pod", `is waiting: ImagePullBackOff: Back-off pulling image "registry.invalid/joist-missing:1"`),
			},
			{
				Config:      config("registry.invalid/joist-crash:1"),
				ExpectError: wrapped("is waiting: CrashLoopBackOff", "(restarts: 3; last exit code 1, Error); last log lines:", "error: CLUSTER_NAME (--cluster-name): is required"),
			},
		},
	})
}
