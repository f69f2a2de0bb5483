package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/mapdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	k8sresource "k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/joistdev/terraform-provider-joist/internal/controllerdeploy"
)

// controllerPodModel holds the attributes that shape the controller's
// Deployment, pod, Service, PodDisruptionBudget and ServiceMonitor: the
// inputs of Karpenter's Helm chart.
type controllerPodModel struct {
	AdditionalLabels              types.Map    `tfsdk:"additional_labels"`
	AdditionalAnnotations         types.Map    `tfsdk:"additional_annotations"`
	PodLabels                     types.Map    `tfsdk:"pod_labels"`
	PodAnnotations                types.Map    `tfsdk:"pod_annotations"`
	ServiceAnnotations            types.Map    `tfsdk:"service_annotations"`
	NodeSelector                  types.Map    `tfsdk:"node_selector"`
	Tolerations                   types.List   `tfsdk:"tolerations"`
	Affinity                      kubeJSON     `tfsdk:"affinity"`
	TopologySpreadConstraints     kubeJSON     `tfsdk:"topology_spread_constraints"`
	PriorityClassName             types.String `tfsdk:"priority_class_name"`
	SchedulerName                 types.String `tfsdk:"scheduler_name"`
	DNSPolicy                     types.String `tfsdk:"dns_policy"`
	DNSConfig                     kubeJSON     `tfsdk:"dns_config"`
	HostNetwork                   types.Bool   `tfsdk:"host_network"`
	TerminationGracePeriodSeconds types.Int64  `tfsdk:"termination_grace_period_seconds"`
	PodSecurityContext            kubeJSON     `tfsdk:"pod_security_context"`
	ContainerSecurityContext      kubeJSON     `tfsdk:"container_security_context"`
	InitContainers                kubeJSON     `tfsdk:"init_containers"`
	SidecarContainers             kubeJSON     `tfsdk:"sidecar_containers"`
	ExtraVolumes                  kubeJSON     `tfsdk:"extra_volumes"`
	ExtraVolumeMounts             kubeJSON     `tfsdk:"extra_volume_mounts"`
	EnvFrom                       kubeJSON     `tfsdk:"env_from"`
	MetricsPort                   types.Int64  `tfsdk:"metrics_port"`
	HealthProbePort               types.Int64  `tfsdk:"health_probe_port"`
	Strategy                      kubeJSON     `tfsdk:"strategy"`
	RevisionHistoryLimit          types.Int64  `tfsdk:"revision_history_limit"`
	PDBMaxUnavailable             types.String `tfsdk:"pdb_max_unavailable"`
	AdditionalClusterRoleRules    types.List   `tfsdk:"additional_cluster_role_rules"`
	ServiceMonitor                types.Object `tfsdk:"service_monitor"`
}

var (
	tolerationType = types.ObjectType{AttrTypes: map[string]attr.Type{
		"key": types.StringType, "operator": types.StringType, "value": types.StringType, "effect": types.StringType, "toleration_seconds": types.Int64Type,
	}}
	policyRuleType = types.ObjectType{AttrTypes: map[string]attr.Type{
		"api_groups": types.ListType{ElemType: types.StringType}, "resources": types.ListType{ElemType: types.StringType},
		"verbs": types.ListType{ElemType: types.StringType}, "resource_names": types.ListType{ElemType: types.StringType},
		"non_resource_urls": types.ListType{ElemType: types.StringType},
	}}
	serviceMonitorType = types.ObjectType{AttrTypes: map[string]attr.Type{
		"additional_labels": types.MapType{ElemType: types.StringType}, "relabelings": kubeJSONType{}, "metric_relabelings": kubeJSONType{},
		"endpoint_config": kubeJSONType{}, "sample_limit": types.Int64Type,
	}}
)

// chart names a Helm chart value in a description.
func chart(value string) string { return " `" + value + "` in Karpenter's Helm chart." }

// jsonAttr is a kubeJSON attribute decoding into sample's type.
func jsonAttr(what, doc string, sample any) schema.StringAttribute {
	return schema.StringAttribute{
		Optional: true, CustomType: kubeJSONType{}, MarkdownDescription: doc,
		Validators: []validator.String{kubeJSONValidator{sample: sample, what: what}},
	}
}

// podAttributes are the controllerPodModel attributes.
func podAttributes() map[string]schema.Attribute {
	stringMapAttr := func(doc string) schema.MapAttribute {
		return schema.MapAttribute{Optional: true, ElementType: types.StringType, MarkdownDescription: doc}
	}
	affinity := jsonAttr("a Kubernetes Affinity",
		"The pods' affinity, as JSON (`jsonencode({ nodeAffinity = ... })`). A pod (anti-)affinity term without a `labelSelector` gets the controller pods' labels."+
			chart("affinity")+" Defaults to the chart's: not on nodes Joist manages (`karpenter.sh/nodepool DoesNotExist`; it would be consolidating the node it runs on) and one replica per node.",
		&corev1.Affinity{})
	affinity.Computed, affinity.Default = true, stringdefault.StaticString(kubeJSONOf(controllerdeploy.DefaultAffinity()).ValueString())
	spread := jsonAttr("a list of Kubernetes TopologySpreadConstraints",
		"The pods' topology spread constraints, as JSON; a constraint without a `labelSelector` gets the controller pods' labels."+
			chart("topologySpreadConstraints")+" Defaults to the chart's: spread over zones with a skew of at most 1.",
		&[]corev1.TopologySpreadConstraint{})
	spread.Computed, spread.Default = true, stringdefault.StaticString(kubeJSONOf(controllerdeploy.DefaultTopologySpreadConstraints()).ValueString())
	var defaultTolerations []attr.Value
	for _, t := range controllerdeploy.DefaultTolerations {
		defaultTolerations = append(defaultTolerations, tolerationValue(t))
	}
	list := func(doc string) schema.ListAttribute {
		return schema.ListAttribute{Optional: true, ElementType: types.StringType, MarkdownDescription: doc}
	}
	return map[string]schema.Attribute{
		"additional_labels":      stringMapAttr("Labels added to every object joist_controller writes." + chart("additionalLabels")),
		"additional_annotations": stringMapAttr("Annotations added to every object joist_controller writes." + chart("additionalAnnotations")),
		"pod_labels":             stringMapAttr("Labels added to the controller's pods." + chart("podLabels")),
		"pod_annotations":        stringMapAttr("Annotations added to the controller's pods." + chart("podAnnotations")),
		"service_annotations":    stringMapAttr("Annotations of the metrics Service." + chart("service.annotations")),
		"node_selector": schema.MapAttribute{
			Optional: true, Computed: true, ElementType: types.StringType,
			Default:             mapdefault.StaticValue(types.MapValueMust(types.StringType, map[string]attr.Value{corev1.LabelOSStable: types.StringValue("linux")})),
			MarkdownDescription: "Node labels the controller's pods require; `{}` for none." + chart("nodeSelector") + " Defaults to `{ \"kubernetes.io/os\" = \"linux\" }`, as in the chart.",
		},
		"tolerations": schema.ListNestedAttribute{
			Optional: true, Computed: true, Default: listdefault.StaticValue(types.ListValueMust(tolerationType, defaultTolerations)),
			MarkdownDescription: "Taints the controller's pods tolerate; `[]` for none." + chart("tolerations") +
				" Defaults to the chart's: `CriticalAddonsOnly` (Exists), for nodes kept for cluster add-ons.",
			NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
				"key": schema.StringAttribute{Optional: true, MarkdownDescription: "Taint key; empty with `operator = \"Exists\"` matches every taint."},
				"operator": schema.StringAttribute{Optional: true, MarkdownDescription: "`Equal` (Kubernetes' default) or `Exists`.",
					Validators: []validator.String{stringvalidator.OneOf("Equal", "Exists")}},
				"value": schema.StringAttribute{Optional: true, MarkdownDescription: "Taint value, with `Equal`."},
				"effect": schema.StringAttribute{Optional: true, MarkdownDescription: "`NoSchedule`, `PreferNoSchedule` or `NoExecute`; unset matches all.",
					Validators: []validator.String{stringvalidator.OneOf("NoSchedule", "PreferNoSchedule", "NoExecute")}},
				"toleration_seconds": schema.Int64Attribute{Optional: true, MarkdownDescription: "How long a `NoExecute` taint is tolerated."},
			}},
		},
		"affinity":                    affinity,
		"topology_spread_constraints": spread,
		"priority_class_name": schema.StringAttribute{
			Optional: true, Computed: true, Default: stringdefault.StaticString(controllerdeploy.DefaultPriorityClassName),
			MarkdownDescription: "PriorityClass of the pods; `\"\"` for none." + chart("priorityClassName") + " Defaults to `system-cluster-critical`, as in the chart.",
		},
		"scheduler_name": schema.StringAttribute{
			Optional: true, Computed: true, Default: stringdefault.StaticString(corev1.DefaultSchedulerName),
			MarkdownDescription: "Scheduler that places the pods." + chart("schedulerName") + " Defaults to `default-scheduler`.",
		},
		"dns_policy": schema.StringAttribute{
			Optional: true, Computed: true, Default: stringdefault.StaticString(string(corev1.DNSClusterFirst)),
			MarkdownDescription: "DNS policy of the pods: `ClusterFirst`, `Default` (the node's resolver, so the controller does not depend on CoreDNS, " +
				"as the EKS module's Karpenter example sets), `ClusterFirstWithHostNet` or `None`." + chart("dnsPolicy") + " Defaults to `ClusterFirst`.",
			Validators: []validator.String{stringvalidator.OneOf("ClusterFirst", "Default", "ClusterFirstWithHostNet", "None")},
		},
		"dns_config": jsonAttr("a Kubernetes PodDNSConfig", "DNS settings of the pods, as JSON (`nameservers`, `searches`, `options`)."+chart("dnsConfig"), &corev1.PodDNSConfig{}),
		"host_network": schema.BoolAttribute{
			Optional: true, Computed: true, Default: booldefault.StaticBool(false),
			MarkdownDescription: "Run the pods in the node's network namespace (needed with some custom CNIs)." + chart("hostNetwork") + " Defaults to false.",
		},
		"termination_grace_period_seconds": schema.Int64Attribute{
			Optional: true, Validators: []validator.Int64{int64validator.AtLeast(0)},
			MarkdownDescription: "How long a stopping pod may take before it is killed; unset is Kubernetes' 30 seconds." + chart("terminationGracePeriodSeconds"),
		},
		"pod_security_context": jsonAttr("a Kubernetes PodSecurityContext",
			"The pods' security context, as JSON; unset runs as the image's non-root user 65532 with fsGroup 65532 and the RuntimeDefault seccomp profile."+chart("podSecurityContext"),
			&corev1.PodSecurityContext{}),
		"container_security_context": jsonAttr("a Kubernetes SecurityContext",
			"`appArmorProfile`, `seLinuxOptions` and `seccompProfile` of the controller container, as JSON; the rest of its security context stays fixed "+
				"(no privilege escalation, read-only root file system, every capability dropped)."+chart("controller.securityContext"),
			&controllerContainerSecurity{}),
		"init_containers": jsonAttr("a list of Kubernetes Containers", "Init containers run before the controller, as JSON."+chart("initContainers"), &[]corev1.Container{}),
		"sidecar_containers": jsonAttr("a list of Kubernetes Containers",
			"Containers run beside the controller, as JSON, each with its own `volumeMounts`."+chart("controller.sidecarContainer")+" (and `controller.sidecarVolumeMounts`)",
			&[]corev1.Container{}),
		"extra_volumes":       jsonAttr("a list of Kubernetes Volumes", "More volumes of the pods, as JSON."+chart("extraVolumes"), &[]corev1.Volume{}),
		"extra_volume_mounts": jsonAttr("a list of Kubernetes VolumeMounts", "More volume mounts of the controller container, as JSON."+chart("controller.extraVolumeMounts"), &[]corev1.VolumeMount{}),
		"env_from":            jsonAttr("a list of Kubernetes EnvFromSources", "ConfigMaps and Secrets whose keys become the controller's environment, as JSON."+chart("controller.envFrom"), &[]corev1.EnvFromSource{}),
		"metrics_port": schema.Int64Attribute{
			Optional: true, Computed: true, Default: int64default.StaticInt64(controllerdeploy.MetricsPort), Validators: []validator.Int64{int64validator.Between(1, 65535)},
			MarkdownDescription: "Port of the Prometheus `/metrics` endpoint (`METRICS_PORT`) and of the metrics Service." + chart("controller.metrics.port") + " Defaults to 8080.",
		},
		"health_probe_port": schema.Int64Attribute{
			Optional: true, Computed: true, Default: int64default.StaticInt64(controllerdeploy.HealthProbePort), Validators: []validator.Int64{int64validator.Between(1, 65535)},
			MarkdownDescription: "Port of `/healthz` and `/readyz` (`HEALTH_PROBE_PORT`)." + chart("controller.healthProbe.port") + " Defaults to 8081.",
		},
		"strategy": jsonAttr("a Kubernetes DeploymentStrategy",
			"The Deployment's update strategy, as JSON; unset replaces one replica at a time without a surge (replicas need distinct nodes)."+chart("strategy"),
			&appsv1.DeploymentStrategy{}),
		"revision_history_limit": schema.Int64Attribute{
			Optional: true, Computed: true, Default: int64default.StaticInt64(10), Validators: []validator.Int64{int64validator.AtLeast(0)},
			MarkdownDescription: "Old ReplicaSets kept for rollback." + chart("revisionHistoryLimit") + " Defaults to 10.",
		},
		"pdb_max_unavailable": schema.StringAttribute{
			Optional: true, Computed: true, Default: stringdefault.StaticString("1"), Validators: []validator.String{intOrPercentValidator{}},
			MarkdownDescription: "`maxUnavailable` of the PodDisruptionBudget: a number or a percentage." + chart("podDisruptionBudget.maxUnavailable") + " Defaults to `1`.",
		},
		"additional_cluster_role_rules": schema.ListNestedAttribute{
			Optional: true, MarkdownDescription: "Rules added to the controller's ClusterRole." + chart("additionalClusterRoleRules"),
			NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
				"api_groups":        list("API groups (`\"\"` is the core group)."),
				"resources":         list("Resources."),
				"verbs":             schema.ListAttribute{Required: true, ElementType: types.StringType, MarkdownDescription: "Verbs.", Validators: []validator.List{listvalidator.SizeAtLeast(1)}},
				"resource_names":    list("Names the rule is limited to."),
				"non_resource_urls": list("Non-resource URLs (`/metrics`)."),
			}},
		},
		"service_monitor": schema.SingleNestedAttribute{
			Optional: true,
			MarkdownDescription: "A Prometheus Operator ServiceMonitor for the metrics Service; set it (even `{}`) to create one. The " +
				"`monitoring.coreos.com/v1` CRD must be installed." + chart("serviceMonitor"),
			Attributes: map[string]schema.Attribute{
				"additional_labels": stringMapAttr("Labels of the ServiceMonitor (for the Prometheus that selects it)." + chart("serviceMonitor.additionalLabels")),
				"relabelings":       jsonAttr("a list of relabelling rules", "Relabelings of the endpoint, as JSON."+chart("serviceMonitor.relabelings"), &[]map[string]any{}),
				"metric_relabelings": jsonAttr("a list of relabelling rules", "Metric relabelings of the endpoint, as JSON."+chart("serviceMonitor.metricRelabelings"),
					&[]map[string]any{}),
				"endpoint_config": jsonAttr("an endpoint configuration", "More fields of the endpoint (`interval`, `scrapeTimeout`, ...), as JSON."+chart("serviceMonitor.endpointConfig"),
					&map[string]any{}),
				"sample_limit": schema.Int64Attribute{Optional: true, MarkdownDescription: "Per-scrape limit on samples." + chart("serviceMonitor.sampleLimit"),
					Validators: []validator.Int64{int64validator.AtLeast(0)}},
			},
		},
	}
}

// controllerContainerSecurity is the part of the controller container's
// security context users may set.
type controllerContainerSecurity struct {
	AppArmorProfile *corev1.AppArmorProfile `json:"appArmorProfile,omitempty"`
	SELinuxOptions  *corev1.SELinuxOptions  `json:"seLinuxOptions,omitempty"`
	SeccompProfile  *corev1.SeccompProfile  `json:"seccompProfile,omitempty"`
}

func tolerationValue(t corev1.Toleration) attr.Value {
	str := func(s string) types.String {
		if s == "" {
			return types.StringNull()
		}
		return types.StringValue(s)
	}
	seconds := types.Int64Null()
	if t.TolerationSeconds != nil {
		seconds = types.Int64Value(*t.TolerationSeconds)
	}
	return types.ObjectValueMust(tolerationType.AttrTypes, map[string]attr.Value{
		"key": str(t.Key), "operator": str(string(t.Operator)), "value": str(t.Value), "effect": str(string(t.Effect)), "toleration_seconds": seconds,
	})
}

// intOrPercentValidator accepts "1" or "50%".
type intOrPercentValidator struct{}

func (intOrPercentValidator) Description(context.Context) string { return "a number or a percentage" }
func (v intOrPercentValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}
func (intOrPercentValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	v := intstr.Parse(req.ConfigValue.ValueString())
	if _, err := intstr.GetScaledValueFromIntOrPercent(&v, 100, true); err != nil || (v.Type == intstr.Int && v.IntVal < 0) {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid number or percentage", fmt.Sprintf("%q: write a whole number such as 1 or a percentage such as 50%%", req.ConfigValue.ValueString()))
	}
}

// podSpec fills the Deployment inputs of s from m.
func (m *controllerPodModel) podSpec(ctx context.Context, s *controllerdeploy.Spec, diags *diag.Diagnostics) {
	decode := func(attrName string, v kubeJSON, out any) {
		if err := decodeKubeJSON(v, out); err != nil {
			diags.AddAttributeError(path.Root(attrName), "Invalid "+attrName, err.Error())
		}
	}
	s.AdditionalLabels, s.AdditionalAnnotations = stringMap(ctx, m.AdditionalLabels, diags), stringMap(ctx, m.AdditionalAnnotations, diags)
	s.PodLabels, s.PodAnnotations = stringMap(ctx, m.PodLabels, diags), stringMap(ctx, m.PodAnnotations, diags)
	s.ServiceAnnotations = stringMap(ctx, m.ServiceAnnotations, diags)
	if !m.NodeSelector.IsNull() {
		s.NodeSelector = stringMap(ctx, m.NodeSelector, diags)
	}
	if !m.Tolerations.IsNull() && !m.Tolerations.IsUnknown() {
		s.Tolerations = []corev1.Toleration{}
		var items []struct {
			Key               types.String `tfsdk:"key"`
			Operator          types.String `tfsdk:"operator"`
			Value             types.String `tfsdk:"value"`
			Effect            types.String `tfsdk:"effect"`
			TolerationSeconds types.Int64  `tfsdk:"toleration_seconds"`
		}
		diags.Append(m.Tolerations.ElementsAs(ctx, &items, false)...)
		for _, t := range items {
			tol := corev1.Toleration{Key: t.Key.ValueString(), Operator: corev1.TolerationOperator(t.Operator.ValueString()),
				Value: t.Value.ValueString(), Effect: corev1.TaintEffect(t.Effect.ValueString())}
			if !t.TolerationSeconds.IsNull() {
				tol.TolerationSeconds = ptrTo(t.TolerationSeconds.ValueInt64())
			}
			s.Tolerations = append(s.Tolerations, tol)
		}
	}
	if !m.Affinity.IsNull() {
		s.Affinity = &corev1.Affinity{}
		decode("affinity", m.Affinity, s.Affinity)
	}
	if !m.TopologySpreadConstraints.IsNull() {
		s.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{}
		decode("topology_spread_constraints", m.TopologySpreadConstraints, &s.TopologySpreadConstraints)
	}
	if !m.PriorityClassName.IsNull() {
		s.PriorityClassName = ptrTo(m.PriorityClassName.ValueString())
	}
	s.SchedulerName, s.DNSPolicy = m.SchedulerName.ValueString(), corev1.DNSPolicy(m.DNSPolicy.ValueString())
	if !m.DNSConfig.IsNull() {
		s.DNSConfig = &corev1.PodDNSConfig{}
		decode("dns_config", m.DNSConfig, s.DNSConfig)
	}
	s.HostNetwork = m.HostNetwork.ValueBool()
	if !m.TerminationGracePeriodSeconds.IsNull() {
		s.TerminationGracePeriodSeconds = ptrTo(m.TerminationGracePeriodSeconds.ValueInt64())
	}
	if !m.PodSecurityContext.IsNull() {
		s.PodSecurityContext = &corev1.PodSecurityContext{}
		decode("pod_security_context", m.PodSecurityContext, s.PodSecurityContext)
	}
	if !m.ContainerSecurityContext.IsNull() {
		var c controllerContainerSecurity
		decode("container_security_context", m.ContainerSecurityContext, &c)
		s.ContainerSecurityContext = &corev1.SecurityContext{AppArmorProfile: c.AppArmorProfile, SELinuxOptions: c.SELinuxOptions, SeccompProfile: c.SeccompProfile}
	}
	decode("init_containers", m.InitContainers, &s.InitContainers)
	decode("sidecar_containers", m.SidecarContainers, &s.SidecarContainers)
	decode("extra_volumes", m.ExtraVolumes, &s.ExtraVolumes)
	decode("extra_volume_mounts", m.ExtraVolumeMounts, &s.ExtraVolumeMounts)
	decode("env_from", m.EnvFrom, &s.EnvFrom)
	s.MetricsPort, s.HealthProbePort = int32(m.MetricsPort.ValueInt64()), int32(m.HealthProbePort.ValueInt64())
	if !m.Strategy.IsNull() {
		s.Strategy = &appsv1.DeploymentStrategy{}
		decode("strategy", m.Strategy, s.Strategy)
	}
	if !m.RevisionHistoryLimit.IsNull() {
		s.RevisionHistoryLimit = ptrTo(int32(m.RevisionHistoryLimit.ValueInt64()))
	}
	if !m.PDBMaxUnavailable.IsNull() {
		s.PDBMaxUnavailable = ptrTo(intstr.Parse(m.PDBMaxUnavailable.ValueString()))
	}
	if !m.AdditionalClusterRoleRules.IsNull() && !m.AdditionalClusterRoleRules.IsUnknown() {
		var rules []struct {
			APIGroups       types.List `tfsdk:"api_groups"`
			Resources       types.List `tfsdk:"resources"`
			Verbs           types.List `tfsdk:"verbs"`
			ResourceNames   types.List `tfsdk:"resource_names"`
			NonResourceURLs types.List `tfsdk:"non_resource_urls"`
		}
		diags.Append(m.AdditionalClusterRoleRules.ElementsAs(ctx, &rules, false)...)
		for _, r := range rules {
			s.AdditionalClusterRoleRules = append(s.AdditionalClusterRoleRules, rbacv1.PolicyRule{
				APIGroups: listStrings(ctx, r.APIGroups, diags), Resources: listStrings(ctx, r.Resources, diags), Verbs: listStrings(ctx, r.Verbs, diags),
				ResourceNames: listStrings(ctx, r.ResourceNames, diags), NonResourceURLs: listStrings(ctx, r.NonResourceURLs, diags),
			})
		}
	}
	if !m.ServiceMonitor.IsNull() && !m.ServiceMonitor.IsUnknown() {
		var sm struct {
			AdditionalLabels  types.Map   `tfsdk:"additional_labels"`
			Relabelings       kubeJSON    `tfsdk:"relabelings"`
			MetricRelabelings kubeJSON    `tfsdk:"metric_relabelings"`
			EndpointConfig    kubeJSON    `tfsdk:"endpoint_config"`
			SampleLimit       types.Int64 `tfsdk:"sample_limit"`
		}
		diags.Append(m.ServiceMonitor.As(ctx, &sm, basetypes.ObjectAsOptions{})...)
		out := &controllerdeploy.ServiceMonitor{AdditionalLabels: stringMap(ctx, sm.AdditionalLabels, diags)}
		decode("service_monitor", sm.Relabelings, &out.Relabelings)
		decode("service_monitor", sm.MetricRelabelings, &out.MetricRelabelings)
		decode("service_monitor", sm.EndpointConfig, &out.EndpointConfig)
		if !sm.SampleLimit.IsNull() {
			out.SampleLimit = ptrTo(sm.SampleLimit.ValueInt64())
		}
		s.ServiceMonitor = out
	}
}

func listStrings(ctx context.Context, l types.List, diags *diag.Diagnostics) []string {
	if l.IsNull() || l.IsUnknown() {
		return nil
	}
	var out []string
	diags.Append(l.ElementsAs(ctx, &out, false)...)
	return out
}

func ptrTo[T any](v T) *T { return &v }

// quantityValidator checks Kubernetes quantities (1, 500m, 1Gi) at plan time.
type quantityValidator struct{}

func (quantityValidator) Description(context.Context) string {
	return "a Kubernetes quantity such as 500m, 1 or 1Gi"
}
func (v quantityValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }
func (quantityValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if _, err := k8sresource.ParseQuantity(req.ConfigValue.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid quantity", fmt.Sprintf("%q: write a Kubernetes quantity such as 500m, 1 or 1Gi", req.ConfigValue.ValueString()))
	}
}
