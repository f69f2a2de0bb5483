package controllerdeploy

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func byKind(t *testing.T, objs []*unstructured.Unstructured, kind string) *unstructured.Unstructured {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == kind {
			return o
		}
	}
	t.Fatalf("no %s rendered", kind)
	return nil
}

func TestObjectsKeepTheControllerOffManagedNodes(t *testing.T) {
	objs, err := Objects(Spec{Image: "img:1", Settings: map[string]string{"CLUSTER_NAME": "demo", "INTERRUPTION_QUEUE": "demo"}, IRSARoleARN: "arn:aws:iam::1:role/x"})
	if err != nil {
		t.Fatal(err)
	}
	d := byKind(t, objs, "Deployment")
	replicas, _, _ := unstructured.NestedInt64(d.Object, "spec", "replicas")
	prio, _, _ := unstructured.NestedString(d.Object, "spec", "template", "spec", "priorityClassName")
	terms, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
	if replicas != 2 || prio != "system-cluster-critical" || len(terms) != 1 {
		t.Fatalf("replicas %d, priority %q, node selector terms %v", replicas, prio, terms)
	}
	expr := terms[0].(map[string]any)["matchExpressions"].([]any)[0].(map[string]any)
	if expr["key"] != "karpenter.sh/nodepool" || expr["operator"] != "DoesNotExist" {
		t.Errorf("node affinity %v does not exclude managed nodes", expr)
	}
	env, err := Env(d)
	if err != nil {
		t.Fatal(err)
	}
	if env["CLUSTER_NAME"] != "demo" || env["CPU_REQUESTS"] != "1000" || env["LEADER_ELECTION_NAMESPACE"] != "kube-system" {
		t.Errorf("env = %v", env)
	}
	if _, ok := env["MEMORY_LIMIT"]; ok {
		t.Errorf("MEMORY_LIMIT comes from the pod and is no Deployment setting; env = %v", env)
	}
	containers, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
	var memLimit any
	for _, e := range containers[0].(map[string]any)["env"].([]any) {
		if e := e.(map[string]any); e["name"] == "MEMORY_LIMIT" {
			memLimit, _, _ = unstructured.NestedFieldNoCopy(e, "valueFrom", "resourceFieldRef", "resource")
		}
	}
	if memLimit != "limits.memory" {
		t.Errorf("MEMORY_LIMIT does not follow the container's memory limit (resourceFieldRef %v)", memLimit)
	}
	sa := byKind(t, objs, "ServiceAccount")
	if sa.GetAnnotations()["eks.amazonaws.com/role-arn"] != "arn:aws:iam::1:role/x" {
		t.Errorf("ServiceAccount annotations %v", sa.GetAnnotations())
	}
	maxUnavailable, _, _ := unstructured.NestedInt64(byKind(t, objs, "PodDisruptionBudget").Object, "spec", "maxUnavailable")
	if maxUnavailable != 1 {
		t.Errorf("PDB maxUnavailable = %d", maxUnavailable)
	}
	for _, rule := range clusterRules {
		for _, v := range rule.Verbs {
			if v == "*" {
				t.Errorf("cluster rule %v grants every verb", rule)
			}
		}
		for _, r := range rule.Resources {
			if r == "*" || r == "secrets" {
				t.Errorf("cluster rule grants %s", r)
			}
		}
	}
}

func TestObjectsRejectMissingSettings(t *testing.T) {
	if _, err := Objects(Spec{Image: "img"}); err == nil || !strings.Contains(err.Error(), "cluster_name") {
		t.Errorf("missing CLUSTER_NAME: err = %v", err)
	}
	if _, err := Objects(Spec{Image: "img", Settings: map[string]string{"CLUSTER_NAME": "x", "bad name": "1"}}); err == nil {
		t.Error("a setting that is not an environment variable name was accepted")
	}
	if _, err := Objects(Spec{Image: "img", Settings: map[string]string{"CLUSTER_NAME": "x"}, CPURequest: "lots"}); err == nil {
		t.Error("an invalid CPU quantity was accepted")
	}
}

func TestFirstDifference(t *testing.T) {
	live := map[string]any{
		"spec": map[string]any{"replicas": int64(2), "extra": "defaulted", "list": []any{map[string]any{"a": "1", "b": "server"}}},
	}
	cases := []struct {
		want map[string]any
		diff string
	}{
		{map[string]any{"spec": map[string]any{"replicas": 2}}, ""},
		{map[string]any{"spec": map[string]any{"replicas": float64(2), "list": []any{map[string]any{"a": "1"}}}}, ""},
		{map[string]any{"spec": map[string]any{"replicas": 3}}, ".spec.replicas"},
		{map[string]any{"spec": map[string]any{"list": []any{map[string]any{"a": "2"}}}}, ".spec.list[0].a"},
		{map[string]any{"spec": map[string]any{"list": []any{}}}, ".spec.list"},
		{map[string]any{"spec": map[string]any{"missing": "x"}}, ".spec.missing"},
	}
	for _, c := range cases {
		if got := firstDifference(c.want, live, ""); got != c.diff {
			t.Errorf("firstDifference(%v) = %q, want %q", c.want, got, c.diff)
		}
	}
}

// TestObjectsCarryTheChartsInputs sets every input the Helm chart has and
// finds each in the object it configures.
func TestObjectsCarryTheChartsInputs(t *testing.T) {
	grace, limit := int64(45), int64(5000)
	none := ""
	objs, err := Objects(Spec{
		Image: "img:1", Settings: map[string]string{"CLUSTER_NAME": "demo"},
		ServiceAccountAnnotations: map[string]string{"team": "platform"},
		ImagePullPolicy:           corev1.PullAlways, ImagePullSecrets: []string{"regcred"},
		CPURequest: "500m", CPULimit: "2", MemoryRequest: "512Mi", MemoryLimit: "2Gi",
		AdditionalLabels: map[string]string{"env": "prod"}, AdditionalAnnotations: map[string]string{"owner": "sre"},
		PodLabels: map[string]string{"pod": "l"}, PodAnnotations: map[string]string{"pod": "a"},
		ServiceAnnotations: map[string]string{"svc": "a"},
		NodeSelector:       map[string]string{"role": "system"}, Tolerations: []corev1.Toleration{},
		Affinity:                  &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{TopologyKey: "zone"}}}},
		TopologySpreadConstraints: []corev1.TopologySpreadConstraint{},
		PriorityClassName:         &none, SchedulerName: "custom", DNSPolicy: corev1.DNSDefault, HostNetwork: true,
		TerminationGracePeriodSeconds: &grace,
		ExtraVolumes:                  []corev1.Volume{{Name: "token", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
		ExtraVolumeMounts:             []corev1.VolumeMount{{Name: "token", MountPath: "/var/token"}},
		MetricsPort:                   9090, HealthProbePort: 9091,
		PDBMaxUnavailable:          ptr(intstr.FromString("50%")),
		AdditionalClusterRoleRules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}}},
		ServiceMonitor:             &ServiceMonitor{AdditionalLabels: map[string]string{"release": "prom"}, SampleLimit: &limit},
	})
	if err != nil {
		t.Fatal(err)
	}
	d := byKind(t, objs, "Deployment")
	var dep appsv1.Deployment
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(d.Object, &dep); err != nil {
		t.Fatal(err)
	}
	pod, c := dep.Spec.Template.Spec, dep.Spec.Template.Spec.Containers[0]
	switch {
	case dep.Labels["env"] != "prod" || dep.Annotations["owner"] != "sre":
		t.Errorf("additional metadata %v %v", dep.Labels, dep.Annotations)
	case dep.Spec.Template.Labels["pod"] != "l" || dep.Spec.Template.Annotations["pod"] != "a":
		t.Errorf("pod metadata %v %v", dep.Spec.Template.Labels, dep.Spec.Template.Annotations)
	case c.ImagePullPolicy != corev1.PullAlways || len(pod.ImagePullSecrets) != 1 || pod.ImagePullSecrets[0].Name != "regcred":
		t.Errorf("image pull %s %v", c.ImagePullPolicy, pod.ImagePullSecrets)
	case c.Resources.Limits.Cpu().String() != "2" || c.Resources.Limits.Memory().String() != "2Gi" || c.Resources.Requests.Memory().String() != "512Mi":
		t.Errorf("resources %v", c.Resources)
	case pod.NodeSelector["role"] != "system" || len(pod.Tolerations) != 0 || len(pod.TopologySpreadConstraints) != 0:
		t.Errorf("scheduling %v %v %v", pod.NodeSelector, pod.Tolerations, pod.TopologySpreadConstraints)
	case pod.Affinity.NodeAffinity != nil || pod.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].LabelSelector.MatchLabels["app.kubernetes.io/name"] != Name:
		t.Errorf("affinity %+v: a term without a selector gets the pods'", pod.Affinity)
	case pod.PriorityClassName != "" || pod.SchedulerName != "custom" || pod.DNSPolicy != corev1.DNSDefault || !pod.HostNetwork || *pod.TerminationGracePeriodSeconds != 45:
		t.Errorf("pod settings %+v", pod)
	case len(pod.Volumes) != 1 || len(c.VolumeMounts) != 1:
		t.Errorf("volumes %v mounts %v", pod.Volumes, c.VolumeMounts)
	case c.Ports[0].ContainerPort != 9090 || c.Ports[1].ContainerPort != 9091 || c.TerminationMessagePolicy != corev1.TerminationMessageFallbackToLogsOnError:
		t.Errorf("container %+v", c)
	}
	env, _ := Env(d)
	if env["METRICS_PORT"] != "9090" || env["HEALTH_PROBE_PORT"] != "9091" || env["CPU_REQUESTS"] != "500" {
		t.Errorf("env %v", env)
	}
	if sa := byKind(t, objs, "ServiceAccount"); sa.GetAnnotations()["team"] != "platform" || sa.GetAnnotations()["owner"] != "sre" {
		t.Errorf("ServiceAccount annotations %v", sa.GetAnnotations())
	}
	if svc := byKind(t, objs, "Service"); svc.GetAnnotations()["svc"] != "a" {
		t.Errorf("Service annotations %v", svc.GetAnnotations())
	}
	if mu, _, _ := unstructured.NestedString(byKind(t, objs, "PodDisruptionBudget").Object, "spec", "maxUnavailable"); mu != "50%" {
		t.Errorf("PDB maxUnavailable %q", mu)
	}
	rules, _, _ := unstructured.NestedSlice(byKind(t, objs, "ClusterRole").Object, "rules")
	if last := rules[len(rules)-1].(map[string]any); last["resources"].([]any)[0] != "configmaps" {
		t.Errorf("additional rule missing: %v", last)
	}
	sm := byKind(t, objs, "ServiceMonitor")
	if sm.GetLabels()["release"] != "prom" {
		t.Errorf("ServiceMonitor labels %v", sm.GetLabels())
	}
	if l, _, _ := unstructured.NestedInt64(sm.Object, "spec", "sampleLimit"); l != 5000 {
		t.Errorf("sampleLimit %d", l)
	}
}

func TestObjectsRejectConflictingInputs(t *testing.T) {
	base := func() Spec { return Spec{Image: "img", Settings: map[string]string{"CLUSTER_NAME": "x"}} }
	for name, tc := range map[string]struct {
		mutate func(*Spec)
		want   string
	}{
		"memory limit below request": {func(s *Spec) { s.MemoryRequest, s.MemoryLimit = "2Gi", "1Gi" }, "memory_limit"},
		"cpu limit below request":    {func(s *Spec) { s.CPURequest, s.CPULimit = "2", "1" }, "cpu_limit"},
		"same ports":                 {func(s *Spec) { s.MetricsPort, s.HealthProbePort = 9000, 9000 }, "health_probe_port"},
		"irsa on an existing SA":     {func(s *Spec) { s.ExistingServiceAccount, s.IRSARoleARN = true, "arn:aws:iam::1:role/x" }, "create_service_account"},
		"sidecar named joist":        {func(s *Spec) { s.SidecarContainers = []corev1.Container{{Name: Name}} }, "sidecar"},
	} {
		s := base()
		tc.mutate(&s)
		if _, err := Objects(s); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want one naming %s", name, err, tc.want)
		}
	}
}

func TestPodProblemsQuoteTheKubelet(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "joist-1"}, Status: corev1.PodStatus{
		ContainerStatuses: []corev1.ContainerStatus{{
			Name: Name, RestartCount: 4,
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 40s restarting failed container"}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: 1, Reason: "Error", Message: "starting\nerror: BATCH_IDLE_DURATION (--batch-idle-duration): \"soon\" is not a duration",
			}},
		}},
	}}
	got := strings.Join(PodProblems(pod), "\n")
	for _, want := range []string{"CrashLoopBackOff", "back-off 40s", "restarts: 4", "exit code 1", "BATCH_IDLE_DURATION"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
	unschedulable := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "joist-2"}, Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{
		Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable", Message: "0/3 nodes are available",
	}}}}
	if got := PodProblems(unschedulable); len(got) != 1 || !strings.Contains(got[0], "0/3 nodes are available") {
		t.Errorf("unschedulable: %v", got)
	}
}
