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

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
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
	res, err := s.resources()
	if err != nil {
		return nil, err
	}
	meta := func(name, ns string, annotations ...map[string]string) metav1.ObjectMeta {
		m := metav1.ObjectMeta{Name: name, Namespace: ns, Labels: mergeLabels(s.AdditionalLabels, labels())}
		all := append([]map[string]string{s.AdditionalAnnotations}, annotations...)
		if a := mergeLabels(all...); len(a) > 0 {
			m.Annotations = a
		}
		return m
	}
	saAnnotations := map[string]string{}
	if s.IRSARoleARN != "" {
		saAnnotations["eks.amazonaws.com/role-arn"] = s.IRSARoleARN
	}
	subject := []rbacv1.Subject{{Kind: "ServiceAccount", Name: s.ServiceAccount, Namespace: s.Namespace}}
	var objs []runtime.Object
	if !s.ExistingServiceAccount {
		objs = append(objs, &corev1.ServiceAccount{TypeMeta: tm("v1", "ServiceAccount"), ObjectMeta: meta(s.ServiceAccount, s.Namespace, s.ServiceAccountAnnotations, saAnnotations)})
	}
	rules := append(append([]rbacv1.PolicyRule{}, clusterRules...), s.AdditionalClusterRoleRules...)
	objs = append(objs,
		&rbacv1.ClusterRole{TypeMeta: tm("rbac.authorization.k8s.io/v1", "ClusterRole"), ObjectMeta: meta(Name, ""), Rules: rules},
		&rbacv1.ClusterRoleBinding{
			TypeMeta: tm("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"), ObjectMeta: meta(Name, ""),
			RoleRef: rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: Name}, Subjects: subject,
		},
		&rbacv1.Role{TypeMeta: tm("rbac.authorization.k8s.io/v1", "Role"), ObjectMeta: meta(Name, s.Namespace), Rules: namespaceRules(s.LeaseName())},
		&rbacv1.RoleBinding{
			TypeMeta: tm("rbac.authorization.k8s.io/v1", "RoleBinding"), ObjectMeta: meta(Name, s.Namespace),
			RoleRef: rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: Name}, Subjects: subject,
		},
		deployment(s, res, meta(Name, s.Namespace)),
		&corev1.ConfigMap{
			TypeMeta: tm("v1", "ConfigMap"), ObjectMeta: meta(v1.DisruptionSettingsConfigMap, s.Namespace),
			Data: disruptionSettings(s),
		},
		&policyv1.PodDisruptionBudget{
			TypeMeta: tm("policy/v1", "PodDisruptionBudget"), ObjectMeta: meta(Name, s.Namespace),
			Spec: policyv1.PodDisruptionBudgetSpec{
				MaxUnavailable: s.PDBMaxUnavailable, Selector: &metav1.LabelSelector{MatchLabels: selector()},
			},
		},
		&corev1.Service{
			TypeMeta: tm("v1", "Service"), ObjectMeta: meta(Name, s.Namespace, s.ServiceAnnotations),
			Spec: corev1.ServiceSpec{
				Type: corev1.ServiceTypeClusterIP, Selector: selector(),
				Ports: []corev1.ServicePort{{Name: "http-metrics", Port: s.MetricsPort, TargetPort: intstr.FromString("http-metrics"), Protocol: corev1.ProtocolTCP}},
			},
		},
	)
	out := make([]*unstructured.Unstructured, 0, len(objs)+1)
	for _, o := range objs {
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err != nil {
			return nil, err
		}
		clean(u)
		out = append(out, &unstructured.Unstructured{Object: u})
	}
	if s.ServiceMonitor != nil {
		out = append(out, serviceMonitor(s, meta(Name, s.Namespace)))
	}
	return out, nil
}

// containerResources are the controller container's parsed quantities.
type containerResources struct {
	cpu, mem, cpuLimit, memLimit resource.Quantity
	hasCPULimit                  bool
}

func (s Spec) resources() (containerResources, error) {
	var r containerResources
	var err error
	if r.cpu, err = resource.ParseQuantity(s.CPURequest); err != nil {
		return r, fmt.Errorf("cpu_request %q: %w", s.CPURequest, err)
	}
	if r.mem, err = resource.ParseQuantity(s.MemoryRequest); err != nil {
		return r, fmt.Errorf("memory_request %q: %w", s.MemoryRequest, err)
	}
	if r.memLimit, err = resource.ParseQuantity(s.MemoryLimit); err != nil {
		return r, fmt.Errorf("memory_limit %q: %w", s.MemoryLimit, err)
	}
	if r.memLimit.Cmp(r.mem) < 0 {
		return r, fmt.Errorf("memory_limit %s is below memory_request %s: raise the limit or lower the request", s.MemoryLimit, s.MemoryRequest)
	}
	if s.CPULimit != "" {
		if r.cpuLimit, err = resource.ParseQuantity(s.CPULimit); err != nil {
			return r, fmt.Errorf("cpu_limit %q: %w", s.CPULimit, err)
		}
		if r.cpuLimit.Cmp(r.cpu) < 0 {
			return r, fmt.Errorf("cpu_limit %s is below cpu_request %s: raise the limit or lower the request", s.CPULimit, s.CPURequest)
		}
		r.hasCPULimit = true
	}
	return r, nil
}

// serviceMonitor renders the Prometheus Operator's ServiceMonitor, which
// has no Go type here: it is a custom resource of another project.
func serviceMonitor(s Spec, meta metav1.ObjectMeta) *unstructured.Unstructured {
	sm := s.ServiceMonitor
	endpoint := map[string]any{}
	for k, v := range sm.EndpointConfig {
		endpoint[k] = v
	}
	endpoint["port"], endpoint["path"] = "http-metrics", "/metrics"
	if len(sm.Relabelings) > 0 {
		endpoint["relabelings"] = toAnyList(sm.Relabelings)
	}
	if len(sm.MetricRelabelings) > 0 {
		endpoint["metricRelabelings"] = toAnyList(sm.MetricRelabelings)
	}
	spec := map[string]any{
		"namespaceSelector": map[string]any{"matchNames": []any{s.Namespace}},
		"selector":          map[string]any{"matchLabels": toAnyMap(selector())},
		"endpoints":         []any{endpoint},
	}
	if sm.SampleLimit != nil {
		spec["sampleLimit"] = *sm.SampleLimit
	}
	metadata := map[string]any{"name": meta.Name, "namespace": meta.Namespace, "labels": toAnyMap(mergeLabels(meta.Labels, sm.AdditionalLabels))}
	if len(meta.Annotations) > 0 {
		metadata["annotations"] = toAnyMap(meta.Annotations)
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": ServiceMonitorGVR.GroupVersion().String(), "kind": "ServiceMonitor", "metadata": metadata, "spec": spec,
	}}
}

func toAnyMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func toAnyList(l []map[string]any) []any {
	out := make([]any, len(l))
	for i, v := range l {
		out[i] = v
	}
	return out
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

func deployment(s Spec, res containerResources, meta metav1.ObjectMeta) *appsv1.Deployment {
	env := []corev1.EnvVar{}
	settings := map[string]string{}
	for k, v := range s.Settings {
		settings[k] = v
	}
	if _, ok := settings["CPU_REQUESTS"]; !ok {
		settings["CPU_REQUESTS"] = strconv.FormatInt(res.cpu.MilliValue(), 10)
	}
	if _, ok := settings["LEADER_ELECTION_NAMESPACE"]; !ok {
		settings["LEADER_ELECTION_NAMESPACE"] = s.Namespace
	}
	if _, ok := settings["METRICS_PORT"]; !ok {
		settings["METRICS_PORT"] = strconv.Itoa(int(s.MetricsPort))
	}
	if _, ok := settings["HEALTH_PROBE_PORT"]; !ok {
		settings["HEALTH_PROBE_PORT"] = strconv.Itoa(int(s.HealthProbePort))
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
	limits := corev1.ResourceList{corev1.ResourceMemory: canonical(res.memLimit)}
	if res.hasCPULimit {
		limits[corev1.ResourceCPU] = canonical(res.cpuLimit)
	}
	securityContext := &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr(false), ReadOnlyRootFilesystem: ptr(true),
		Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
	if c := s.ContainerSecurityContext; c != nil {
		securityContext.AppArmorProfile, securityContext.SELinuxOptions, securityContext.SeccompProfile = c.AppArmorProfile, c.SELinuxOptions, c.SeccompProfile
	}
	var pullSecrets []corev1.LocalObjectReference
	for _, name := range s.ImagePullSecrets {
		pullSecrets = append(pullSecrets, corev1.LocalObjectReference{Name: name})
	}
	affinity := s.Affinity.DeepCopy()
	for _, a := range []*[]corev1.PodAffinityTerm{podAffinityTerms(affinity, false), podAffinityTerms(affinity, true)} {
		for i := range *a {
			(*a)[i].LabelSelector = withSelector((*a)[i].LabelSelector)
		}
	}
	for _, w := range []*[]corev1.WeightedPodAffinityTerm{weightedTerms(affinity, false), weightedTerms(affinity, true)} {
		for i := range *w {
			(*w)[i].PodAffinityTerm.LabelSelector = withSelector((*w)[i].PodAffinityTerm.LabelSelector)
		}
	}
	spread := make([]corev1.TopologySpreadConstraint, len(s.TopologySpreadConstraints))
	for i, c := range s.TopologySpreadConstraints {
		c.LabelSelector = withSelector(c.LabelSelector)
		spread[i] = c
	}
	podLabels := mergeLabels(s.PodLabels, selector())
	annotations := mergeLabels(s.PodAnnotations)
	if s.RolloutToken != "" {
		annotations[RolloutAnnotation] = s.RolloutToken
	}
	if len(annotations) == 0 {
		annotations = nil
	}
	tpl := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: podLabels, Annotations: annotations},
		Spec: corev1.PodSpec{
			ServiceAccountName:            s.ServiceAccount,
			PriorityClassName:             *s.PriorityClassName,
			SchedulerName:                 s.SchedulerName,
			DNSPolicy:                     s.DNSPolicy,
			DNSConfig:                     s.DNSConfig,
			HostNetwork:                   s.HostNetwork,
			TerminationGracePeriodSeconds: s.TerminationGracePeriodSeconds,
			SecurityContext:               s.PodSecurityContext,
			ImagePullSecrets:              pullSecrets,
			NodeSelector:                  s.NodeSelector,
			Tolerations:                   s.Tolerations,
			Affinity:                      affinity,
			TopologySpreadConstraints:     spread,
			InitContainers:                s.InitContainers,
			Volumes:                       s.ExtraVolumes,
			Containers: append([]corev1.Container{{
				Name: Name, Image: s.Image, ImagePullPolicy: s.ImagePullPolicy, Args: []string{"controller"}, Env: env, EnvFrom: s.EnvFrom,
				Ports: []corev1.ContainerPort{
					{Name: "http-metrics", ContainerPort: s.MetricsPort, Protocol: corev1.ProtocolTCP},
					{Name: "http", ContainerPort: s.HealthProbePort, Protocol: corev1.ProtocolTCP},
				},
				LivenessProbe: probe("/healthz"), ReadinessProbe: probe("/readyz"),
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: canonical(res.cpu), corev1.ResourceMemory: canonical(res.mem)},
					Limits:   limits,
				},
				VolumeMounts: s.ExtraVolumeMounts,
				// A controller that exits writes no termination message:
				// the kubelet keeps its last log lines instead, and an
				// apply that waits for the rollout reports them.
				TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
				SecurityContext:          securityContext,
			}}, s.SidecarContainers...),
		},
	}
	return &appsv1.Deployment{
		TypeMeta:   tm("apps/v1", "Deployment"),
		ObjectMeta: meta,
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr(s.Replicas), RevisionHistoryLimit: s.RevisionHistoryLimit,
			Selector: &metav1.LabelSelector{MatchLabels: selector()},
			Strategy: *s.Strategy,
			Template: tpl,
		},
	}
}

// podAffinityTerms are the required terms of the pod (anti-)affinity, an
// empty slice when there is none.
func podAffinityTerms(a *corev1.Affinity, anti bool) *[]corev1.PodAffinityTerm {
	switch {
	case !anti && a.PodAffinity != nil:
		return &a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	case anti && a.PodAntiAffinity != nil:
		return &a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	}
	return &[]corev1.PodAffinityTerm{}
}

// weightedTerms are the preferred terms of the pod (anti-)affinity.
func weightedTerms(a *corev1.Affinity, anti bool) *[]corev1.WeightedPodAffinityTerm {
	switch {
	case !anti && a.PodAffinity != nil:
		return &a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution
	case anti && a.PodAntiAffinity != nil:
		return &a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution
	}
	return &[]corev1.WeightedPodAffinityTerm{}
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

// disruptionSettings are the cluster-wide disruption controls the
// controller reads live from its ConfigMap.
func disruptionSettings(s Spec) map[string]string {
	data := map[string]string{v1.DisruptionSettingsPausedKey: strconv.FormatBool(s.DisruptionPaused)}
	if s.DisruptionBreaker != "" {
		data[v1.DisruptionSettingsBreakerKey] = s.DisruptionBreaker
	}
	return data
}
