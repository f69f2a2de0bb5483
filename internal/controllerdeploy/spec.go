package controllerdeploy

import (
	"fmt"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Spec is everything the objects are rendered from. Zero values take the
// defaults of Karpenter's Helm chart (the Default* values below), except
// where a field says otherwise.
type Spec struct {
	Namespace      string // default kube-system
	ServiceAccount string // default joist
	// ExistingServiceAccount uses the ServiceAccount as it is instead of
	// creating it (the chart's serviceAccount.create = false).
	ExistingServiceAccount bool
	// ServiceAccountAnnotations are added to the ServiceAccount's.
	ServiceAccountAnnotations map[string]string
	Image                     string
	// ImagePullPolicy: default IfNotPresent.
	ImagePullPolicy  corev1.PullPolicy
	ImagePullSecrets []string
	Replicas         int32
	// IRSARoleARN annotates the ServiceAccount for IRSA; empty with Pod Identity.
	IRSARoleARN string
	// Settings are the controller's environment (operator setting names:
	// CLUSTER_NAME, INTERRUPTION_QUEUE, ...), written in name order.
	Settings map[string]string
	// EnvFrom are more sources of environment variables (the chart's
	// controller.envFrom).
	EnvFrom []corev1.EnvFromSource
	// CPURequest and MemoryRequest size the container; CPU_REQUESTS is
	// derived from CPURequest. MemoryLimit defaults to MemoryRequest;
	// CPULimit to none.
	CPURequest, MemoryRequest string
	CPULimit, MemoryLimit     string
	// RolloutToken changes the pod template when it changes (the CRD
	// bundle's hash), so the controller restarts on new APIs.
	RolloutToken string
	// DisruptionPaused pauses voluntary disruption cluster-wide, through
	// the ConfigMap the controller reads on every pass (no restart).
	DisruptionPaused bool
	// DisruptionBreaker is the cluster-wide breaker's "<failures>/<window>";
	// "" is the controller's default.
	DisruptionBreaker string

	// AdditionalLabels and AdditionalAnnotations go on every object.
	AdditionalLabels, AdditionalAnnotations map[string]string
	// PodLabels and PodAnnotations go on the pod template.
	PodLabels, PodAnnotations map[string]string
	// ServiceAnnotations go on the metrics Service.
	ServiceAnnotations map[string]string

	// Scheduling: nil takes the chart's defaults; an empty non-nil value
	// sets none.
	NodeSelector              map[string]string
	Tolerations               []corev1.Toleration
	Affinity                  *corev1.Affinity
	TopologySpreadConstraints []corev1.TopologySpreadConstraint
	// PriorityClassName: nil takes system-cluster-critical; "" sets none.
	PriorityClassName *string
	// SchedulerName: "" is the cluster's default scheduler.
	SchedulerName string
	// DNSPolicy: "" is ClusterFirst.
	DNSPolicy corev1.DNSPolicy
	DNSConfig *corev1.PodDNSConfig
	// HostNetwork binds the pod to the node's network (custom CNIs).
	HostNetwork bool
	// TerminationGracePeriodSeconds: nil is Kubernetes' default (30).
	TerminationGracePeriodSeconds *int64
	// PodSecurityContext: nil takes the default (non-root user 65532,
	// fsGroup 65532, RuntimeDefault seccomp).
	PodSecurityContext *corev1.PodSecurityContext
	// ContainerSecurityContext adds appArmorProfile, seLinuxOptions and
	// seccompProfile to the controller container's fixed, hardened context.
	ContainerSecurityContext *corev1.SecurityContext

	// Pod contents beyond the controller container.
	InitContainers    []corev1.Container
	SidecarContainers []corev1.Container
	ExtraVolumes      []corev1.Volume
	ExtraVolumeMounts []corev1.VolumeMount

	// MetricsPort and HealthProbePort: 0 takes 8080 and 8081.
	MetricsPort, HealthProbePort int32

	// Deployment rollout: nil takes RollingUpdate with maxUnavailable 1
	// and maxSurge 0 (replicas need distinct nodes).
	Strategy *appsv1.DeploymentStrategy
	// RevisionHistoryLimit: nil takes 10.
	RevisionHistoryLimit *int32
	// PDBMaxUnavailable: nil takes 1.
	PDBMaxUnavailable *intstr.IntOrString

	// AdditionalClusterRoleRules are appended to the controller's ClusterRole.
	AdditionalClusterRoleRules []rbacv1.PolicyRule

	// ServiceMonitor, when set, adds a Prometheus Operator ServiceMonitor
	// for the metrics Service.
	ServiceMonitor *ServiceMonitor
}

// ServiceMonitor is the chart's serviceMonitor values.
type ServiceMonitor struct {
	AdditionalLabels  map[string]string
	Relabelings       []map[string]any
	MetricRelabelings []map[string]any
	// EndpointConfig is merged into the endpoint (the chart's
	// serviceMonitor.endpointConfig); port and path stay the metrics'.
	EndpointConfig map[string]any
	SampleLimit    *int64
}

// Name of every object (and of the container).
const Name = "joist"

// Default ports of the controller.
const (
	MetricsPort     = 8080
	HealthProbePort = 8081
)

// RolloutAnnotation carries Spec.RolloutToken on the pod template.
const RolloutAnnotation = "joist.dev/crds-sha256"

// The chart's defaults, as the objects carry them.
var (
	// DefaultNodeSelector keeps the controller on Linux nodes.
	DefaultNodeSelector = map[string]string{corev1.LabelOSStable: "linux"}
	// DefaultTolerations let it run on nodes reserved for critical add-ons.
	DefaultTolerations = []corev1.Toleration{{Key: "CriticalAddonsOnly", Operator: corev1.TolerationOpExists}}
	// DefaultPriorityClassName keeps it from being preempted.
	DefaultPriorityClassName = "system-cluster-critical"
)

// DefaultAffinity keeps the controller off the nodes it manages (it would
// be consolidating the node it runs on) and its replicas on distinct nodes.
func DefaultAffinity() *corev1.Affinity {
	return &corev1.Affinity{
		NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
				{Key: nodePoolLabel, Operator: corev1.NodeSelectorOpDoesNotExist},
			}}},
		}},
		PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
			TopologyKey: corev1.LabelHostname,
		}}},
	}
}

// DefaultTopologySpreadConstraints spread the replicas over zones.
func DefaultTopologySpreadConstraints() []corev1.TopologySpreadConstraint {
	return []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: corev1.LabelTopologyZone, WhenUnsatisfiable: corev1.DoNotSchedule}}
}

// DefaultPodSecurityContext runs the pod as the image's non-root user.
func DefaultPodSecurityContext() *corev1.PodSecurityContext {
	return &corev1.PodSecurityContext{
		RunAsNonRoot: ptr(true), RunAsUser: ptr(int64(65532)), FSGroup: ptr(int64(65532)),
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

// DefaultStrategy replaces one replica at a time without a surge: the
// replicas need distinct nodes, so a surge pod could not schedule.
func DefaultStrategy() *appsv1.DeploymentStrategy {
	return &appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{
		MaxUnavailable: ptr(intstr.FromInt32(1)), MaxSurge: ptr(intstr.FromInt32(0)),
	}}
}

func (s Spec) withDefaults() Spec {
	if s.Namespace == "" {
		s.Namespace = "kube-system"
	}
	if s.ServiceAccount == "" {
		s.ServiceAccount = Name
	}
	if s.Replicas == 0 {
		s.Replicas = 2
	}
	if s.CPURequest == "" {
		s.CPURequest = "1"
	}
	if s.MemoryRequest == "" {
		s.MemoryRequest = "1Gi"
	}
	if s.MemoryLimit == "" {
		s.MemoryLimit = s.MemoryRequest
	}
	if s.ImagePullPolicy == "" {
		s.ImagePullPolicy = corev1.PullIfNotPresent
	}
	if s.NodeSelector == nil {
		s.NodeSelector = DefaultNodeSelector
	}
	if s.Tolerations == nil {
		s.Tolerations = DefaultTolerations
	}
	if s.Affinity == nil {
		s.Affinity = DefaultAffinity()
	}
	if s.TopologySpreadConstraints == nil {
		s.TopologySpreadConstraints = DefaultTopologySpreadConstraints()
	}
	if s.PriorityClassName == nil {
		s.PriorityClassName = &DefaultPriorityClassName
	}
	if s.PodSecurityContext == nil {
		s.PodSecurityContext = DefaultPodSecurityContext()
	}
	if s.MetricsPort == 0 {
		s.MetricsPort = MetricsPort
	}
	if s.HealthProbePort == 0 {
		s.HealthProbePort = HealthProbePort
	}
	if s.Strategy == nil {
		s.Strategy = DefaultStrategy()
	}
	if s.RevisionHistoryLimit == nil {
		s.RevisionHistoryLimit = ptr(int32(10))
	}
	if s.PDBMaxUnavailable == nil {
		s.PDBMaxUnavailable = ptr(intstr.FromInt32(1))
	}
	return s
}

// Validate names the wrong field and the fix.
func (s Spec) Validate() error {
	if s.Image == "" {
		return fmt.Errorf("image is empty: set image to the controller image")
	}
	if s.Settings["CLUSTER_NAME"] == "" {
		return fmt.Errorf("CLUSTER_NAME is empty: set cluster_name")
	}
	for k := range s.Settings {
		if k == "" || strings.ToUpper(k) != k || strings.ContainsAny(k, " =") {
			return fmt.Errorf("setting %q is not an environment variable name (UPPER_CASE)", k)
		}
	}
	if s.MetricsPort != 0 && s.MetricsPort == s.HealthProbePort {
		return fmt.Errorf("metrics_port and health_probe_port are both %d: give them different ports", s.MetricsPort)
	}
	if s.ExistingServiceAccount && (s.IRSARoleARN != "" || len(s.ServiceAccountAnnotations) > 0) {
		return fmt.Errorf("the ServiceAccount is not created (create_service_account = false), so irsa_role_arn and service_account_annotations cannot be set on it: annotate it where it is created")
	}
	for _, c := range append(append([]corev1.Container{}, s.InitContainers...), s.SidecarContainers...) {
		if c.Name == Name {
			return fmt.Errorf("container name %q is the controller's: name the init or sidecar container otherwise", Name)
		}
	}
	return nil
}

// Check reports what Objects would refuse in s: conflicting inputs and
// quantities that do not parse or fit together.
func Check(s Spec) error {
	s = s.withDefaults()
	if err := s.Validate(); err != nil {
		return err
	}
	_, err := s.resources()
	return err
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// withSelector gives each term without a label selector the pods' own, as
// the chart does for its affinity and topology spread values.
func withSelector(sel *metav1.LabelSelector) *metav1.LabelSelector {
	if sel != nil {
		return sel
	}
	return &metav1.LabelSelector{MatchLabels: selector()}
}
