package controllerdeploy

import (
	"fmt"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// nodePoolLabel marks nodes the controller manages; it must not run on them.
const nodePoolLabel = "karpenter.sh/nodepool"

func labels() map[string]string {
	return map[string]string{"app.kubernetes.io/name": Name, "app.kubernetes.io/managed-by": "terraform-provider-joist"}
}

func selector() map[string]string { return map[string]string{"app.kubernetes.io/name": Name} }

// Objects renders the objects in apply order (RBAC before the Deployment
// that needs it). CRDs are applied separately, before these.
func Objects(s Spec) ([]*unstructured.Unstructured, error) {
	s = s.withDefaults()
	if err := s.Validate(); err != nil {
		return nil, err
	}
	cpu, err := resource.ParseQuantity(s.CPURequest)
	if err != nil {
		return nil, fmt.Errorf("cpu_request %q: %w", s.CPURequest, err)
	}
	mem, err := resource.ParseQuantity(s.MemoryRequest)
	if err != nil {
		return nil, fmt.Errorf("memory_request %q: %w", s.MemoryRequest, err)
	}
	meta := func(name, ns string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels()}
	}
	sa := &corev1.ServiceAccount{TypeMeta: tm("v1", "ServiceAccount"), ObjectMeta: meta(s.ServiceAccount, s.Namespace)}
	if s.IRSARoleARN != "" {
		sa.Annotations = map[string]string{"eks.amazonaws.com/role-arn": s.IRSARoleARN}
	}
	subject := []rbacv1.Subject{{Kind: "ServiceAccount", Name: s.ServiceAccount, Namespace: s.Namespace}}
	objs := []runtime.Object{
		sa,
		&rbacv1.ClusterRole{TypeMeta: tm("rbac.authorization.k8s.io/v1", "ClusterRole"), ObjectMeta: meta(Name, ""), Rules: clusterRules},
		&rbacv1.ClusterRoleBinding{
			TypeMeta: tm("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"), ObjectMeta: meta(Name, ""),
			RoleRef: rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: Name}, Subjects: subject,
		},
		&rbacv1.Role{TypeMeta: tm("rbac.authorization.k8s.io/v1", "Role"), ObjectMeta: meta(Name, s.Namespace), Rules: namespaceRules},
		&rbacv1.RoleBinding{
			TypeMeta: tm("rbac.authorization.k8s.io/v1", "RoleBinding"), ObjectMeta: meta(Name, s.Namespace),
			RoleRef: rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: Name}, Subjects: subject,
		},
		deployment(s, cpu, mem),
		&policyv1.PodDisruptionBudget{
			TypeMeta: tm("policy/v1", "PodDisruptionBudget"), ObjectMeta: meta(Name, s.Namespace),
			Spec: policyv1.PodDisruptionBudgetSpec{
				MaxUnavailable: ptr(intstr.FromInt32(1)), Selector: &metav1.LabelSelector{MatchLabels: selector()},
			},
		},
		&corev1.Service{
			TypeMeta: tm("v1", "Service"), ObjectMeta: meta(Name, s.Namespace),
			Spec: corev1.ServiceSpec{
				Type: corev1.ServiceTypeClusterIP, Selector: selector(),
				Ports: []corev1.ServicePort{{Name: "http-metrics", Port: MetricsPort, TargetPort: intstr.FromString("http-metrics"), Protocol: corev1.ProtocolTCP}},
			},
		},
	}
	out := make([]*unstructured.Unstructured, 0, len(objs))
	for _, o := range objs {
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err != nil {
			return nil, err
		}
		clean(u)
		out = append(out, &unstructured.Unstructured{Object: u})
	}
	return out, nil
}

// clean drops the empty creationTimestamp and status typed objects carry,
// which are not part of what is applied.
func clean(u map[string]any) {
	delete(u, "status")
	if m, ok := u["metadata"].(map[string]any); ok {
		delete(m, "creationTimestamp")
	}
	if spec, ok := u["spec"].(map[string]any); ok {
		if tpl, ok := spec["template"].(map[string]any); ok {
			if m, ok := tpl["metadata"].(map[string]any); ok {
				delete(m, "creationTimestamp")
			}
		}
	}
}

func tm(apiVersion, kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: apiVersion, Kind: kind}
}

func ptr[T any](v T) *T { return &v }

func deployment(s Spec, cpu, mem resource.Quantity) *appsv1.Deployment {
	env := []corev1.EnvVar{}
	settings := map[string]string{}
	for k, v := range s.Settings {
		settings[k] = v
	}
	if _, ok := settings["CPU_REQUESTS"]; !ok {
		settings["CPU_REQUESTS"] = strconv.FormatInt(cpu.MilliValue(), 10)
	}
	if _, ok := settings["LEADER_ELECTION_NAMESPACE"]; !ok {
		settings["LEADER_ELECTION_NAMESPACE"] = s.Namespace
	}
	if _, ok := settings["METRICS_PORT"]; !ok {
		settings["METRICS_PORT"] = strconv.Itoa(MetricsPort)
	}
	if _, ok := settings["HEALTH_PROBE_PORT"]; !ok {
		settings["HEALTH_PROBE_PORT"] = strconv.Itoa(HealthProbePort)
	}
	for _, k := range sortedKeys(settings) {
		env = append(env, corev1.EnvVar{Name: k, Value: settings[k]})
	}
	if _, ok := settings["MEMORY_LIMIT"]; !ok {
		// The Go heap's soft limit follows the container's memory limit.
		env = append(env, corev1.EnvVar{Name: "MEMORY_LIMIT", ValueFrom: &corev1.EnvVarSource{
			ResourceFieldRef: &corev1.ResourceFieldSelector{ContainerName: Name, Resource: "limits.memory", Divisor: resource.MustParse("1")},
		}})
	}
	probe := func(path string) *corev1.Probe {
		return &corev1.Probe{
			ProbeHandler:        corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromString("http")}},
			InitialDelaySeconds: 5, PeriodSeconds: 10, TimeoutSeconds: 30, SuccessThreshold: 1, FailureThreshold: 3,
		}
	}
	podLabels := selector()
	tpl := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: podLabels},
		Spec: corev1.PodSpec{
			ServiceAccountName: s.ServiceAccount,
			PriorityClassName:  "system-cluster-critical",
			DNSPolicy:          corev1.DNSClusterFirst,
			SecurityContext:    &corev1.PodSecurityContext{RunAsNonRoot: ptr(true), RunAsUser: ptr(int64(65532)), FSGroup: ptr(int64(65532)), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
			Tolerations:        []corev1.Toleration{{Key: "CriticalAddonsOnly", Operator: corev1.TolerationOpExists}},
			Affinity: &corev1.Affinity{
				// Never on a node the controller manages: it would be
				// consolidating the node it runs on.
				NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
					NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
						{Key: nodePoolLabel, Operator: corev1.NodeSelectorOpDoesNotExist},
					}}},
				}},
				PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
					TopologyKey: corev1.LabelHostname, LabelSelector: &metav1.LabelSelector{MatchLabels: podLabels},
				}}},
			},
			TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{
				MaxSkew: 1, TopologyKey: corev1.LabelTopologyZone, WhenUnsatisfiable: corev1.DoNotSchedule,
				LabelSelector: &metav1.LabelSelector{MatchLabels: podLabels},
			}},
			Containers: []corev1.Container{{
				Name: Name, Image: s.Image, Args: []string{"controller"}, Env: env,
				Ports: []corev1.ContainerPort{
					{Name: "http-metrics", ContainerPort: MetricsPort, Protocol: corev1.ProtocolTCP},
					{Name: "http", ContainerPort: HealthProbePort, Protocol: corev1.ProtocolTCP},
				},
				LivenessProbe: probe("/healthz"), ReadinessProbe: probe("/readyz"),
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: canonical(cpu), corev1.ResourceMemory: canonical(mem)},
					Limits:   corev1.ResourceList{corev1.ResourceMemory: canonical(mem)},
				},
				SecurityContext: &corev1.SecurityContext{
					AllowPrivilegeEscalation: ptr(false), ReadOnlyRootFilesystem: ptr(true),
					Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
				},
			}},
		},
	}
	if s.RolloutToken != "" {
		tpl.Annotations = map[string]string{RolloutAnnotation: s.RolloutToken}
	}
	return &appsv1.Deployment{
		TypeMeta:   tm("apps/v1", "Deployment"),
		ObjectMeta: metav1.ObjectMeta{Name: Name, Namespace: s.Namespace, Labels: labels()},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr(s.Replicas), RevisionHistoryLimit: ptr(int32(10)),
			Selector: &metav1.LabelSelector{MatchLabels: selector()},
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{
				MaxUnavailable: ptr(intstr.FromInt32(1)), MaxSurge: ptr(intstr.FromInt32(0)),
			}},
			Template: tpl,
		},
	}
}

// canonical re-parses a quantity so it renders as the apiserver stores it.
func canonical(q resource.Quantity) resource.Quantity { return resource.MustParse(q.String()) }

// Env is the controller's environment as written in a Deployment: what a
// harness that runs the controller outside the cluster (the sandbox, where
// kwok runs no containers) starts `terraform-provider-joist controller` with.
func Env(deploy *unstructured.Unstructured) (map[string]string, error) {
	var d appsv1.Deployment
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(deploy.Object, &d); err != nil {
		return nil, err
	}
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name != Name {
			continue
		}
		out := map[string]string{}
		for _, e := range c.Env {
			// Values from the pod's own fields (MEMORY_LIMIT) are the
			// kubelet's to fill in; they are no setting of the Deployment.
			if e.ValueFrom == nil {
				out[e.Name] = e.Value
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("deployment %s/%s has no %s container", d.Namespace, d.Name, Name)
}
