package provider

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	k8sresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/joistdev/terraform-provider-joist/internal/controllerdeploy"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/crds"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/operator/settings"
)

var (
	_ resource.ResourceWithConfigure   = (*ControllerResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*ControllerResource)(nil)
	_ resource.ResourceWithImportState = (*ControllerResource)(nil)
)

// controllerCRDManifests are the CRDs joist_controller installs: the ones
// embedded in this binary.
var controllerCRDManifests = crds.Manifests

// ControllerImageRepository is where the controller image is published; its
// tag is the provider's version, so provider and controller never skew.
const ControllerImageRepository = "ghcr.io/joistdev/joist-controller"

// ControllerResource is joist_controller: the CRDs and the in-cluster
// objects that run the controller.
type ControllerResource struct {
	awsBase
	version string
}

// NewControllerResource returns the joist_controller resource constructor
// for a provider version (the default image tag).
func NewControllerResource(version string) func() resource.Resource {
	return func() resource.Resource { return &ControllerResource{version: version} }
}

type controllerModel struct {
	ID                        types.String `tfsdk:"id"`
	ClusterName               types.String `tfsdk:"cluster_name"`
	Namespace                 types.String `tfsdk:"namespace"`
	CreateNamespace           types.Bool   `tfsdk:"create_namespace"`
	ServiceAccount            types.String `tfsdk:"service_account"`
	CreateServiceAccount      types.Bool   `tfsdk:"create_service_account"`
	ServiceAccountAnnotations types.Map    `tfsdk:"service_account_annotations"`
	IRSARoleARN               types.String `tfsdk:"irsa_role_arn"`
	Image                     types.String `tfsdk:"image"`
	ImagePullPolicy           types.String `tfsdk:"image_pull_policy"`
	ImagePullSecrets          types.List   `tfsdk:"image_pull_secrets"`
	Replicas                  types.Int64  `tfsdk:"replicas"`
	CPURequest                types.String `tfsdk:"cpu_request"`
	CPULimit                  types.String `tfsdk:"cpu_limit"`
	MemoryRequest             types.String `tfsdk:"memory_request"`
	MemoryLimit               types.String `tfsdk:"memory_limit"`
	AWSRegion                 types.String `tfsdk:"aws_region"`
	FeatureGates              types.Map    `tfsdk:"feature_gates"`
	AWSFeatureGates           types.Map    `tfsdk:"aws_feature_gates"`
	ExtraEnv                  types.Map    `tfsdk:"extra_env"`
	DisruptionPaused          types.Bool   `tfsdk:"disruption_paused"`
	DisruptionBreaker         types.String `tfsdk:"disruption_breaker"`
	controllerSettingsModel
	controllerPodModel
	WaitForRollout types.Bool   `tfsdk:"wait_for_rollout"`
	WaitTimeout    types.String `tfsdk:"wait_timeout"`
	ForceDestroy   types.Bool   `tfsdk:"force_destroy"`
	CRDsSHA256     types.String `tfsdk:"crds_sha256"`
	InSync         types.Bool   `tfsdk:"in_sync"`
	Drift          types.List   `tfsdk:"drift"`
}

func (r *ControllerResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_controller"
}

func (r *ControllerResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	replace := []planmodifier.String{stringplanmodifier.RequiresReplace()}
	duration := []validator.String{durationValidator{}}
	attrs := map[string]schema.Attribute{
		"id":           schema.StringAttribute{Computed: true, MarkdownDescription: "The namespace.", PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
		"cluster_name": schema.StringAttribute{Optional: true, Computed: true, MarkdownDescription: "`CLUSTER_NAME`: the EKS cluster; defaults to the provider's `cluster_name`." + chart("settings.clusterName")},
		"namespace": schema.StringAttribute{
			Optional: true, Computed: true, Default: stringdefault.StaticString("kube-system"), PlanModifiers: replace,
			MarkdownDescription: "Namespace of the controller (the Helm release's namespace). Defaults to `kube-system`.",
		},
		"create_namespace": schema.BoolAttribute{
			Optional: true, Computed: true, Default: booldefault.StaticBool(false),
			MarkdownDescription: "Create the namespace (and delete it on destroy).",
		},
		"service_account": schema.StringAttribute{
			Optional: true, Computed: true, Default: stringdefault.StaticString("joist"), PlanModifiers: replace,
			MarkdownDescription: "ServiceAccount name; must match `joist_controller_iam_role.service_account`." + chart("serviceAccount.name") + " Defaults to `joist`.",
		},
		"create_service_account": schema.BoolAttribute{
			Optional: true, Computed: true, Default: booldefault.StaticBool(true),
			MarkdownDescription: "Create the ServiceAccount (default); `false` uses an existing one of that name, which then carries its own annotations." + chart("serviceAccount.create"),
		},
		"service_account_annotations": schema.MapAttribute{
			Optional: true, ElementType: types.StringType,
			MarkdownDescription: "Annotations of the ServiceAccount (with IRSA, `irsa_role_arn` adds `eks.amazonaws.com/role-arn`)." + chart("serviceAccount.annotations"),
		},
		"irsa_role_arn": schema.StringAttribute{Optional: true, MarkdownDescription: "Role for IRSA (`joist_controller_iam_role.arn` with `oidc_provider_arn`); leave unset with EKS Pod Identity."},
		"image": schema.StringAttribute{
			Optional: true, Computed: true,
			MarkdownDescription: "Controller image. Defaults to `" + ControllerImageRepository + ":<provider version>`; override for mirrors." +
				chart("controller.image.repository") + " (and `.tag`, `.digest`: write `repository:tag@digest`)",
		},
		"image_pull_policy": schema.StringAttribute{
			Optional: true, Computed: true, Default: stringdefault.StaticString(string(corev1.PullIfNotPresent)),
			Validators:          []validator.String{stringvalidator.OneOf("Always", "IfNotPresent", "Never")},
			MarkdownDescription: "`Always`, `IfNotPresent` or `Never`." + chart("imagePullPolicy") + " Defaults to `IfNotPresent`.",
		},
		"image_pull_secrets": schema.ListAttribute{
			Optional: true, ElementType: types.StringType,
			MarkdownDescription: "Names of Secrets in the namespace with registry credentials for the image." + chart("imagePullSecrets") + " (there, objects with a `name`)",
		},
		"replicas": schema.Int64Attribute{
			Optional: true, Computed: true, Default: int64default.StaticInt64(2), Validators: []validator.Int64{int64validator.AtLeast(1)},
			MarkdownDescription: "Replicas (one leads, others stand by); they need distinct nodes." + chart("replicas") + " Defaults to 2.",
		},
		"cpu_request": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString("1"), Validators: []validator.String{quantityValidator{}},
			MarkdownDescription: "CPU request of the controller container; also `CPU_REQUESTS`, which sizes its concurrency." + chart("controller.resources.requests.cpu") + " Defaults to `1`."},
		"cpu_limit": schema.StringAttribute{Optional: true, Validators: []validator.String{quantityValidator{}},
			MarkdownDescription: "CPU limit of the controller container, at least `cpu_request`; unset is none." + chart("controller.resources.limits.cpu")},
		"memory_request": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString("1Gi"), Validators: []validator.String{quantityValidator{}},
			MarkdownDescription: "Memory request of the controller container." + chart("controller.resources.requests.memory") + " Defaults to `1Gi`."},
		"memory_limit": schema.StringAttribute{Optional: true, Computed: true, Validators: []validator.String{quantityValidator{}},
			MarkdownDescription: "Memory limit of the controller container, at least `memory_request`; the Go heap's soft limit is 90% of it (`MEMORY_LIMIT`)." +
				chart("controller.resources.limits.memory") + " Defaults to `memory_request`."},
		"disruption_paused": schema.BoolAttribute{
			Optional: true, Computed: true, Default: booldefault.StaticBool(false),
			MarkdownDescription: "Pause voluntary disruption (emptiness, drift, consolidation) of every node pool; expiry, interruption and node repair go on. " +
				"Written to the ConfigMap `" + v1.DisruptionSettingsConfigMap + "` in `namespace`, which the controller reads on every disruption pass: " +
				"it takes effect within a pass, without a restart, and each node pool's `DisruptionPaused` condition shows it. A Joist extension; defaults to `false`.",
		},
		"disruption_breaker": schema.StringAttribute{
			Optional: true, Validators: []validator.String{breakerPolicyValidator{}},
			MarkdownDescription: "When the cluster-wide disruption circuit breaker opens, as `<failures>/<window>`: after that many " +
				"replacements fail within the window across all node pools, every pool's voluntary disruption halts (each pool's " +
				"`DisruptionHalted` condition). Unset is `10/1h`. Written to the ConfigMap `" + v1.DisruptionSettingsConfigMap + "` and read live. A Joist extension.",
		},
		"aws_region": schema.StringAttribute{Optional: true, Computed: true, MarkdownDescription: "`AWS_REGION` of the controller; defaults to the provider's AWS region when known."},
		"feature_gates": schema.MapAttribute{Optional: true, ElementType: types.BoolType,
			MarkdownDescription: "`FEATURE_GATES`, by Karpenter's gate names, e.g. `{ SpotToSpotConsolidation = true }`; a gate left out keeps Karpenter's default. " +
				"`terraform plan` rejects gates the controller does not know and turning on a gate whose feature Joist does not have." + chart("settings.featureGates") + " (there in camelCase)"},
		"aws_feature_gates": schema.MapAttribute{Optional: true, ElementType: types.BoolType,
			MarkdownDescription: "`AWS_FEATURE_GATES`, by Karpenter's gate names (`" + strings.Join(settings.AWSGateNames(), "`, `") + "`), all off by default. " +
				"Joist's controller implements none of them: `terraform plan` rejects turning one on." + chart("settings.awsFeatureGates")},
		"extra_env": schema.MapAttribute{Optional: true, ElementType: types.StringType, Sensitive: controllerSecrets["extra_env"],
			MarkdownDescription: "More environment variables of the controller container (proxies, `AWS_STS_REGIONAL_ENDPOINTS`, ...). A controller setting with its own " +
				"attribute is refused here: set the attribute, which `terraform plan` checks." + chart("controller.env") +
				" Sensitive: a proxy URL or token here is hidden in plans, and the configuration Joist records on the Deployment keeps only its SHA-256."},
		"wait_for_rollout": schema.BoolAttribute{
			Optional: true, Computed: true, Default: booldefault.StaticBool(true),
			MarkdownDescription: "Wait until the Deployment is Available after create and update. Defaults to true.",
		},
		"wait_timeout": schema.StringAttribute{
			Optional: true, Computed: true, Default: stringdefault.StaticString("10m"), Validators: duration,
			MarkdownDescription: "How long create and update wait for the CRDs and the rollout (Go duration). Defaults to `10m`. When the rollout does " +
				"not finish in time, the error quotes each pod's problem: the scheduler's reason, or a container's waiting reason " +
				"(`ImagePullBackOff`, `CrashLoopBackOff`, ...) with its last exit code and last log lines.",
		},
		"force_destroy": schema.BoolAttribute{
			Optional: true, Computed: true, Default: booldefault.StaticBool(false),
			MarkdownDescription: "Remove the controller even while NodeClaims exist; their instances are then no longer managed.",
		},
		"crds_sha256": schema.StringAttribute{Computed: true, MarkdownDescription: "Hash of the installed CRD bundle; a provider upgrade with new CRDs changes it."},
		"in_sync":     schema.BoolAttribute{Computed: true, MarkdownDescription: "Whether every object matches what the provider wrote."},
		"drift":       schema.ListAttribute{Computed: true, ElementType: types.StringType, MarkdownDescription: "Objects changed or missing since apply."},
	}
	for k, v := range settingAttributes() {
		attrs[k] = v
	}
	for k, v := range podAttributes() {
		attrs[k] = v
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "Installs and upgrades the Joist controller in the cluster, as Karpenter's Helm chart does: the NodePool, NodeClaim and " +
			"EC2NodeClass CRDs embedded in this provider (server-side apply, field manager " +
			"`terraform-provider-joist`, waiting until Established), a ServiceAccount (annotated for IRSA, or " +
			"used by an EKS Pod Identity association), least-privilege RBAC, and a Deployment of this provider's " +
			"own binary in `controller` mode (image tag = provider version), a PodDisruptionBudget, a metrics " +
			"Service and, optionally, a Prometheus Operator ServiceMonitor. Every value of the chart has an attribute " +
			"(named in its description) with the chart's default, and every Karpenter v1.15 setting is a typed attribute " +
			"that `terraform plan` checks with the controller's own rules, so a controller that would refuse to start is " +
			"refused at plan; a setting Joist's controller does not implement is accepted only at its default. " +
			"Apply waits until the rollout is Available, and reports why when it is not. Changes made to the objects outside Terraform show in " +
			"the plan as `in_sync` going back to true, with `drift` naming the objects. Destroy refuses while " +
			"NodeClaims exist (delete the NodePools first so their nodes are drained), unless `force_destroy`; " +
			"the CRDs are left in place so no NodePool is deleted with them.\n\n" +
			"To run the controller outside the cluster with exactly these settings (as the sandbox does, where " +
			"pods do not run containers), read the Deployment's environment (`kubectl -n kube-system get " +
			"deploy joist -o jsonpath='{.spec.template.spec.containers[0].env}'`) and start " +
			"`terraform-provider-joist controller` with those variables and `KUBECONFIG` set.\n\n" +
			"Import with the namespace: the configuration applied last is read back from the Deployment's `" + controllerConfigAnnotation + "` annotation.",
		Attributes: attrs,
	}
}

// durationValidator checks Go durations at plan time.
type durationValidator struct{}

func (durationValidator) Description(context.Context) string {
	return "a Go duration such as 10s or 5m"
}
func (v durationValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}
func (durationValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if _, err := time.ParseDuration(req.ConfigValue.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid duration", fmt.Sprintf("%q: write a Go duration such as 10s, 5m or 1h30m", req.ConfigValue.ValueString()))
	}
}

func (r *ControllerResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	var plan controllerModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	unset := func(name string) bool {
		var v attr.Value
		resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root(name), &v)...)
		return v == nil || v.IsNull()
	}
	if unset("cluster_name") {
		if c := r.clusterName(types.StringNull()); c != "" {
			plan.ClusterName = types.StringValue(c)
		} else if r.clients == nil || r.clients.clusterKnown {
			resp.Diagnostics.AddAttributeError(path.Root("cluster_name"), "Missing cluster name", "set cluster_name here or in the provider block")
			return
		}
	}
	if unset("image") {
		plan.Image = types.StringValue(ControllerImageRepository + ":" + r.imageTag())
	}
	if unset("memory_limit") {
		plan.MemoryLimit = plan.MemoryRequest
	}
	if unset("aws_region") {
		plan.AWSRegion = types.StringNull()
		if r.clients != nil && r.clients.awsKnown {
			if c, err := r.clients.AWS(ctx); err == nil {
				plan.AWSRegion = types.StringValue(c.Region)
			}
		}
	}
	r.checkPlan(ctx, &plan, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	var prior controllerModel
	if !req.State.Raw.IsNull() {
		resp.Diagnostics.Append(req.State.Get(ctx, &prior)...)
	}
	// Moving the controller to another namespace: the Lease there is its
	// own until the old one is destroyed; apply checks again.
	if req.State.Raw.IsNull() || prior.Namespace.Equal(plan.Namespace) {
		r.planLeaderCheck(ctx, &plan, &resp.Diagnostics)
	}
	if resp.Diagnostics.HasError() {
		return
	}
	_, hash, err := r.crds()
	if err != nil {
		resp.Diagnostics.AddError("Reading the embedded CRDs", err.Error())
		return
	}
	plan.CRDsSHA256 = types.StringValue(hash)
	plan.InSync = types.BoolValue(true)
	plan.Drift = stringList(nil)
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
}

// checkPlan refuses at plan what would fail at apply or leave a controller
// that cannot start: settings the controller's parser rejects, settings it
// does not implement, and Deployment inputs that do not fit together.
func (r *ControllerResource) checkPlan(ctx context.Context, m *controllerModel, diags *diag.Diagnostics) {
	env := controllerEnvironment(ctx, m, diags)
	derived := settingsEnv{env: map[string]string{}, paths: map[string]path.Path{}}
	if !m.Namespace.IsUnknown() {
		derived.put("LEADER_ELECTION_NAMESPACE", m.Namespace.ValueString(), path.Root("namespace"))
	}
	for _, p := range []struct {
		env, attr string
		v         types.Int64
	}{{"METRICS_PORT", "metrics_port", m.MetricsPort}, {"HEALTH_PROBE_PORT", "health_probe_port", m.HealthProbePort}} {
		if !p.v.IsUnknown() && !p.v.IsNull() {
			derived.put(p.env, strconv.FormatInt(p.v.ValueInt64(), 10), path.Root(p.attr))
		}
	}
	if q, err := k8sresource.ParseQuantity(m.CPURequest.ValueString()); err == nil && !m.CPURequest.IsUnknown() {
		derived.put("CPU_REQUESTS", strconv.FormatInt(q.MilliValue(), 10), path.Root("cpu_request"))
	}
	if q, err := k8sresource.ParseQuantity(m.MemoryLimit.ValueString()); err == nil && !m.MemoryLimit.IsUnknown() {
		derived.put("MEMORY_LIMIT", strconv.FormatInt(q.Value(), 10), path.Root("memory_limit"))
	}
	checkSettings(env, derived, diags)
	if m.DisableLeaderElection.ValueBool() && m.Replicas.ValueInt64() > 1 {
		diags.AddAttributeError(path.Root("disable_leader_election"), "Leader election off with several replicas",
			fmt.Sprintf("with disable_leader_election = true every one of the %d replicas would act on the cluster at once: set replicas = 1, or keep leader election", m.Replicas.ValueInt64()))
	}
	for _, v := range []attr.Value{m.CPURequest, m.CPULimit, m.MemoryRequest, m.MemoryLimit, m.MetricsPort, m.HealthProbePort, m.IRSARoleARN,
		m.CreateServiceAccount, m.ServiceAccountAnnotations, m.SidecarContainers, m.InitContainers} {
		if v.IsUnknown() {
			return
		}
	}
	spec := m.spec(ctx, "", diags)
	spec.Image, spec.Settings = "check", map[string]string{"CLUSTER_NAME": "check"}
	if err := controllerdeploy.Check(spec); err != nil {
		msg := err.Error()
		if name, _, _ := strings.Cut(msg, " "); name != "" {
			if _, ok := controllerAttributeNames()[name]; ok {
				diags.AddAttributeError(path.Root(name), "Invalid joist_controller", msg)
				return
			}
		}
		diags.AddError("Invalid joist_controller", msg)
	}
}

// controllerAttributeNames are joist_controller's attributes.
func controllerAttributeNames() map[string]bool {
	resp := &resource.SchemaResponse{}
	(&ControllerResource{}).Schema(context.Background(), resource.SchemaRequest{}, resp)
	out := map[string]bool{}
	for name := range resp.Schema.Attributes {
		out[name] = true
	}
	return out
}

// imageTag is the provider version, the image's tag; development builds
// use the moving "latest".
func (r *ControllerResource) imageTag() string {
	switch r.version {
	case "", "dev", "test":
		return "latest"
	}
	return strings.TrimPrefix(r.version, "v")
}

func (r *ControllerResource) crds() ([]*unstructured.Unstructured, string, error) {
	manifests, err := controllerCRDManifests()
	if err != nil {
		return nil, "", err
	}
	return controllerdeploy.CRDs(manifests)
}

// spec renders the deployment spec of m.
func (m *controllerModel) spec(ctx context.Context, crdHash string, diags *diag.Diagnostics) controllerdeploy.Spec {
	env := controllerEnvironment(ctx, m, &diag.Diagnostics{})
	s := controllerdeploy.Spec{
		Namespace: m.Namespace.ValueString(), ServiceAccount: m.ServiceAccount.ValueString(), Image: m.Image.ValueString(),
		ExistingServiceAccount:    !m.CreateServiceAccount.IsNull() && !m.CreateServiceAccount.ValueBool(),
		ServiceAccountAnnotations: stringMap(ctx, m.ServiceAccountAnnotations, diags),
		ImagePullPolicy:           corev1.PullPolicy(m.ImagePullPolicy.ValueString()), ImagePullSecrets: listStrings(ctx, m.ImagePullSecrets, diags),
		Replicas: int32(m.Replicas.ValueInt64()), IRSARoleARN: m.IRSARoleARN.ValueString(), Settings: env.env,
		CPURequest: m.CPURequest.ValueString(), CPULimit: m.CPULimit.ValueString(),
		MemoryRequest: m.MemoryRequest.ValueString(), MemoryLimit: m.MemoryLimit.ValueString(), RolloutToken: crdHash,
		DisruptionPaused: m.DisruptionPaused.ValueBool(), DisruptionBreaker: m.DisruptionBreaker.ValueString(),
	}
	m.podSpec(ctx, &s, diags)
	return s
}

// objects renders what m installs besides the CRDs; the Deployment
// carries the configuration (for import).
func (m *controllerModel) objects(ctx context.Context, schemaType attr.Type, crdHash string, diags *diag.Diagnostics) []*unstructured.Unstructured {
	objs, err := controllerdeploy.Objects(m.spec(ctx, crdHash, diags))
	if err != nil {
		diags.AddError("Rendering the controller objects", err.Error())
		return nil
	}
	config, err := controllerConfig(ctx, schemaType, m)
	if err != nil {
		diags.AddError("Recording the configuration on the Deployment", err.Error())
		return nil
	}
	for _, o := range objs {
		if o.GetKind() == "Deployment" {
			a := o.GetAnnotations()
			if a == nil {
				a = map[string]string{}
			}
			a[controllerConfigAnnotation] = config
			o.SetAnnotations(a)
		}
	}
	return objs
}

func (r *ControllerResource) kube(ctx context.Context, diags *diag.Diagnostics) (dynamic.Interface, bool) {
	if r.clients == nil {
		diags.AddError("Provider not configured", "the joist provider block was not configured")
		return nil, false
	}
	dyn, err := r.clients.Kubernetes(ctx)
	if err != nil {
		diags.AddError("Kubernetes client", err.Error())
		return nil, false
	}
	return dyn, true
}

func namespaceObject(name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}}}
	return u
}

// apply installs the CRDs and objects of plan and waits for them; prior
// (nil on create) is the state before, whose objects plan no longer
// renders are removed. written reports whether the objects were applied,
// even when waiting for them failed: the state must then record them.
func (r *ControllerResource) apply(ctx context.Context, schemaType attr.Type, plan, prior *controllerModel, diags *diag.Diagnostics) (written bool) {
	dyn, ok := r.kube(ctx, diags)
	if !ok {
		return false
	}
	if r.checkNoForeignLeader(ctx, dyn, plan, false, diags); diags.HasError() {
		return false
	}
	timeout, _ := time.ParseDuration(plan.WaitTimeout.ValueString())
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	crdObjs, hash, err := r.crds()
	if err != nil {
		diags.AddError("Reading the embedded CRDs", err.Error())
		return false
	}
	if err := controllerdeploy.Apply(ctx, dyn, crdObjs); err != nil {
		diags.AddError("Installing the CRDs", err.Error())
		return false
	}
	if err := controllerdeploy.WaitEstablished(wctx, dyn, crdObjs); err != nil {
		diags.AddError("Waiting for the CRDs", err.Error())
		return false
	}
	if plan.CreateNamespace.ValueBool() {
		if err := controllerdeploy.Apply(ctx, dyn, []*unstructured.Unstructured{namespaceObject(plan.Namespace.ValueString())}); err != nil {
			diags.AddAttributeError(path.Root("namespace"), "Creating the namespace", err.Error())
			return false
		}
	}
	objs := plan.objects(ctx, schemaType, hash, diags)
	if diags.HasError() {
		return false
	}
	plan.ID = plan.Namespace
	plan.CRDsSHA256 = types.StringValue(hash)
	if err := controllerdeploy.Apply(ctx, dyn, objs); err != nil {
		detail := err.Error()
		if strings.Contains(detail, "ServiceMonitor") && apierrors.IsNotFound(errors.Unwrap(err)) {
			detail += ": the Prometheus Operator's ServiceMonitor CRD (monitoring.coreos.com/v1) is not installed; install it, or remove service_monitor"
		}
		diags.AddError("Applying the controller objects", detail)
		// Some objects may be written: the state records them so the
		// next apply (a replacement, after a failed create) repairs them.
		return true
	}
	if prior != nil {
		r.removeStale(ctx, dyn, schemaType, prior, objs, diags)
		if diags.HasError() {
			return true
		}
	}
	if plan.WaitForRollout.ValueBool() {
		if err := controllerdeploy.WaitAvailable(wctx, dyn, plan.Namespace.ValueString()); err != nil {
			diags.AddError("Waiting for the controller", err.Error()+"\n\nRaise wait_timeout, or set wait_for_rollout = false.")
		}
	}
	r.readDrift(ctx, dyn, schemaType, plan, diags)
	return true
}

// removeStale deletes the objects prior rendered that objs no longer has
// (a ServiceMonitor turned off). A ServiceAccount is left: with
// create_service_account = false it is someone else's now.
func (r *ControllerResource) removeStale(ctx context.Context, dyn dynamic.Interface, schemaType attr.Type, prior *controllerModel, objs []*unstructured.Unstructured, diags *diag.Diagnostics) {
	old := prior.objects(ctx, schemaType, prior.CRDsSHA256.ValueString(), &diag.Diagnostics{})
	keep := map[string]bool{}
	for _, o := range objs {
		keep[o.GetKind()+"/"+o.GetNamespace()+"/"+o.GetName()] = true
	}
	var stale []*unstructured.Unstructured
	for _, o := range old {
		if !keep[o.GetKind()+"/"+o.GetNamespace()+"/"+o.GetName()] && o.GetKind() != "ServiceAccount" {
			stale = append(stale, o)
		}
	}
	if err := controllerdeploy.Delete(ctx, dyn, stale); err != nil {
		diags.AddError("Removing objects no longer configured", err.Error())
	}
}

// readDrift compares the live objects with the ones m renders.
func (r *ControllerResource) readDrift(ctx context.Context, dyn dynamic.Interface, schemaType attr.Type, m *controllerModel, diags *diag.Diagnostics) {
	crdObjs, _, err := r.crds()
	if err != nil {
		diags.AddError("Reading the embedded CRDs", err.Error())
		return
	}
	objs := m.objects(ctx, schemaType, m.CRDsSHA256.ValueString(), diags)
	if diags.HasError() {
		return
	}
	for _, o := range objs {
		// The recorded configuration is no object setting: comparing it
		// would only repeat what the other fields say.
		if a := o.GetAnnotations(); a != nil {
			delete(a, controllerConfigAnnotation)
			o.SetAnnotations(a)
		}
	}
	drift, err := controllerdeploy.Drift(ctx, dyn, append(crdObjs, objs...))
	if err != nil {
		diags.AddError("Reading the controller objects", err.Error())
		return
	}
	m.InSync = types.BoolValue(len(drift) == 0)
	m.Drift = stringList(drift)
}

func (r *ControllerResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan controllerModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	r.applyPlan(ctx, req.Plan.Schema.Type(), &plan, nil, &resp.State, &resp.Diagnostics)
}

func (r *ControllerResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, prior controllerModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &prior)...)
	if resp.Diagnostics.HasError() {
		return
	}
	r.applyPlan(ctx, req.Plan.Schema.Type(), &plan, &prior, &resp.State, &resp.Diagnostics)
}

// applyPlan applies the planned configuration and records it as the state:
// creating and updating the controller are the same server-side apply.
func (r *ControllerResource) applyPlan(ctx context.Context, schemaType attr.Type, plan, prior *controllerModel, state *tfsdk.State, diags *diag.Diagnostics) {
	if !r.apply(ctx, schemaType, plan, prior, diags) {
		return
	}
	if plan.InSync.IsUnknown() || plan.Drift.IsUnknown() {
		plan.InSync, plan.Drift = types.BoolValue(false), stringList(nil)
	}
	diags.Append(state.Set(ctx, plan)...)
}

func (r *ControllerResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state controllerModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	dyn, ok := r.kube(ctx, &resp.Diagnostics)
	if resp.Diagnostics.HasError() || !ok {
		return
	}
	schemaType := req.State.Schema.Type()
	if state.Image.IsNull() {
		// Imported: the configuration comes from the Deployment.
		sch, _ := req.State.Schema.(schema.Schema)
		imported, ok := r.importFrom(ctx, dyn, sch, state.Namespace.ValueString(), &resp.Diagnostics)
		if !ok {
			return
		}
		state = *imported
	}
	r.readDrift(ctx, dyn, schemaType, &state, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

var (
	deploymentsGVR     = k8sschema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	serviceAccountsGVR = k8sschema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}
)

func (r *ControllerResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state controllerModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	dyn, ok := r.kube(ctx, &resp.Diagnostics)
	if resp.Diagnostics.HasError() || !ok {
		return
	}
	claims, err := dyn.Resource(controllerdeploy.NodeClaims).List(ctx, metav1.ListOptions{})
	if err != nil {
		resp.Diagnostics.AddError("Listing NodeClaims", err.Error())
		return
	}
	if n := len(claims.Items); n > 0 && !state.ForceDestroy.ValueBool() {
		var names []string
		for _, c := range claims.Items {
			names = append(names, c.GetName())
		}
		if len(names) > 5 {
			names = append(names[:5], "...")
		}
		resp.Diagnostics.AddError("NodeClaims still exist",
			fmt.Sprintf("%d NodeClaims (%s) still exist; removing the controller now would leave their instances running unmanaged. "+
				"Destroy the joist_node_pool resources first (the controller drains and terminates their nodes), "+
				"or set force_destroy = true.", n, strings.Join(names, ", ")))
		return
	}
	objs := state.objects(ctx, req.State.Schema.Type(), state.CRDsSHA256.ValueString(), &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	if state.CreateNamespace.ValueBool() {
		objs = append([]*unstructured.Unstructured{namespaceObject(state.Namespace.ValueString())}, objs...)
	}
	if err := controllerdeploy.Delete(ctx, dyn, objs); err != nil {
		resp.Diagnostics.AddError("Deleting the controller", err.Error())
		return
	}
	if state.CreateNamespace.ValueBool() {
		// A namespace lingers while its objects go; a replacement that
		// recreated it before then would be refused.
		timeout, err := time.ParseDuration(state.WaitTimeout.ValueString())
		if err != nil {
			timeout = 10 * time.Minute
		}
		if err := controllerdeploy.WaitGone(ctx, dyn, namespaceObject(state.Namespace.ValueString()), timeout); err != nil {
			resp.Diagnostics.AddError("Deleting the namespace", err.Error())
		}
	}
}

func (r *ControllerResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("namespace"), req.ID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
}
