package provider

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/joistdev/terraform-provider-joist/internal/controllerdeploy"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/crds"
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
	ID                types.String `tfsdk:"id"`
	ClusterName       types.String `tfsdk:"cluster_name"`
	Namespace         types.String `tfsdk:"namespace"`
	CreateNamespace   types.Bool   `tfsdk:"create_namespace"`
	ServiceAccount    types.String `tfsdk:"service_account"`
	IRSARoleARN       types.String `tfsdk:"irsa_role_arn"`
	Image             types.String `tfsdk:"image"`
	Replicas          types.Int64  `tfsdk:"replicas"`
	CPURequest        types.String `tfsdk:"cpu_request"`
	MemoryRequest     types.String `tfsdk:"memory_request"`
	ClusterEndpoint   types.String `tfsdk:"cluster_endpoint"`
	InterruptionQueue types.String `tfsdk:"interruption_queue"`
	AWSRegion         types.String `tfsdk:"aws_region"`
	BatchIdleDuration types.String `tfsdk:"batch_idle_duration"`
	BatchMaxDuration  types.String `tfsdk:"batch_max_duration"`
	LogLevel          types.String `tfsdk:"log_level"`
	FeatureGates      types.Map    `tfsdk:"feature_gates"`
	ExtraEnv          types.Map    `tfsdk:"extra_env"`
	WaitForRollout    types.Bool   `tfsdk:"wait_for_rollout"`
	WaitTimeout       types.String `tfsdk:"wait_timeout"`
	ForceDestroy      types.Bool   `tfsdk:"force_destroy"`
	CRDsSHA256        types.String `tfsdk:"crds_sha256"`
	InSync            types.Bool   `tfsdk:"in_sync"`
	Drift             types.List   `tfsdk:"drift"`
}

// settingAttrs are the string attributes written as controller settings.
var settingAttrs = []struct{ attr, env string }{
	{"cluster_name", "CLUSTER_NAME"},
	{"cluster_endpoint", "CLUSTER_ENDPOINT"},
	{"interruption_queue", "INTERRUPTION_QUEUE"},
	{"aws_region", "AWS_REGION"},
	{"batch_idle_duration", "BATCH_IDLE_DURATION"},
	{"batch_max_duration", "BATCH_MAX_DURATION"},
	{"log_level", "LOG_LEVEL"},
}

// derivedEnv are settings the rendering adds itself.
var derivedEnv = map[string]bool{"CPU_REQUESTS": true, "LEADER_ELECTION_NAMESPACE": true, "METRICS_PORT": true, "HEALTH_PROBE_PORT": true, "FEATURE_GATES": true, "MEMORY_LIMIT": true}

func (m *controllerModel) settingValue(name string) *types.String {
	switch name {
	case "cluster_name":
		return &m.ClusterName
	case "cluster_endpoint":
		return &m.ClusterEndpoint
	case "interruption_queue":
		return &m.InterruptionQueue
	case "aws_region":
		return &m.AWSRegion
	case "batch_idle_duration":
		return &m.BatchIdleDuration
	case "batch_max_duration":
		return &m.BatchMaxDuration
	case "log_level":
		return &m.LogLevel
	}
	panic("unknown setting attribute " + name)
}

func (r *ControllerResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_controller"
}

func (r *ControllerResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	replace := []planmodifier.String{stringplanmodifier.RequiresReplace()}
	duration := []validator.String{durationValidator{}}
	resp.Schema = schema.Schema{
		MarkdownDescription: "Installs and upgrades the Joist controller in the cluster: the NodePool, NodeClaim and " +
			"EC2NodeClass CRDs embedded in this provider (server-side apply, field manager " +
			"`terraform-provider-joist`, waiting until Established), a ServiceAccount (annotated for IRSA, or " +
			"used by an EKS Pod Identity association), least-privilege RBAC, and a Deployment of this provider's " +
			"own binary in `controller` mode (image tag = provider version) with 2 replicas and leader election, a " +
			"PodDisruptionBudget, priority class `system-cluster-critical`, a node affinity that keeps it off " +
			"nodes Joist manages (`karpenter.sh/nodepool DoesNotExist`), zone spread and a metrics Service on " +
			"port 8080. Settings are the Deployment's environment (`CLUSTER_NAME`, `INTERRUPTION_QUEUE`, ...). " +
			"Apply waits until the rollout is Available. Changes made to the objects outside Terraform show in " +
			"the plan as `in_sync` going back to true, with `drift` naming the objects. Destroy refuses while " +
			"NodeClaims exist (delete the NodePools first so their nodes are drained), unless `force_destroy`; " +
			"the CRDs are left in place so no NodePool is deleted with them.\n\n" +
			"To run the controller outside the cluster with exactly these settings (as the sandbox does, where " +
			"pods do not run containers), read the Deployment's environment (`kubectl -n kube-system get " +
			"deploy joist -o jsonpath='{.spec.template.spec.containers[0].env}'`) and start " +
			"`terraform-provider-joist controller` with those variables and `KUBECONFIG` set.\n\n" +
			"Import with the namespace.",
		Attributes: map[string]schema.Attribute{
			"id":           schema.StringAttribute{Computed: true, MarkdownDescription: "The namespace.", PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
			"cluster_name": schema.StringAttribute{Optional: true, Computed: true, MarkdownDescription: "EKS cluster (`CLUSTER_NAME`); defaults to the provider's `cluster_name`."},
			"namespace": schema.StringAttribute{
				Optional: true, Computed: true, Default: stringdefault.StaticString("kube-system"), PlanModifiers: replace,
				MarkdownDescription: "Namespace of the controller. Defaults to `kube-system`.",
			},
			"create_namespace": schema.BoolAttribute{
				Optional: true, Computed: true, Default: booldefault.StaticBool(false),
				MarkdownDescription: "Create the namespace (and delete it on destroy).",
			},
			"service_account": schema.StringAttribute{
				Optional: true, Computed: true, Default: stringdefault.StaticString("joist"), PlanModifiers: replace,
				MarkdownDescription: "ServiceAccount name; must match `joist_controller_iam_role.service_account`. Defaults to `joist`.",
			},
			"irsa_role_arn": schema.StringAttribute{Optional: true, MarkdownDescription: "Role for IRSA (`joist_controller_iam_role.arn` with `oidc_provider_arn`); leave unset with EKS Pod Identity."},
			"image": schema.StringAttribute{
				Optional: true, Computed: true,
				MarkdownDescription: "Controller image. Defaults to `" + ControllerImageRepository + ":<provider version>`; override for mirrors.",
			},
			"replicas": schema.Int64Attribute{
				Optional: true, Computed: true, Default: int64default.StaticInt64(2),
				MarkdownDescription: "Replicas (one leads, others stand by). Defaults to 2; they need distinct nodes.",
			},
			"cpu_request":    schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString("1"), MarkdownDescription: "CPU request (also `CPU_REQUESTS`). Defaults to `1`."},
			"memory_request": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString("1Gi"), MarkdownDescription: "Memory request and limit. Defaults to `1Gi`."},
			"cluster_endpoint": schema.StringAttribute{
				Optional: true, MarkdownDescription: "API server endpoint written into node user data (`CLUSTER_ENDPOINT`); discovered with `eks:DescribeCluster` when unset.",
			},
			"interruption_queue": schema.StringAttribute{Optional: true, MarkdownDescription: "Interruption queue name (`joist_interruption_queue.name`); unset disables interruption handling."},
			"aws_region":         schema.StringAttribute{Optional: true, Computed: true, MarkdownDescription: "`AWS_REGION` of the controller; defaults to the provider's AWS region when known."},
			"batch_idle_duration": schema.StringAttribute{
				Optional: true, Validators: duration, MarkdownDescription: "`BATCH_IDLE_DURATION`: how long a provisioning batch waits after the last pending pod (controller default 1s).",
			},
			"batch_max_duration": schema.StringAttribute{
				Optional: true, Validators: duration, MarkdownDescription: "`BATCH_MAX_DURATION`: the longest a provisioning batch collects pods (controller default 10s).",
			},
			"log_level": schema.StringAttribute{
				Optional: true, Validators: []validator.String{stringvalidator.OneOf("debug", "info", "error")},
				MarkdownDescription: "`LOG_LEVEL`: `debug`, `info` (controller default) or `error`.",
			},
			"feature_gates": schema.MapAttribute{Optional: true, ElementType: types.BoolType, MarkdownDescription: "`FEATURE_GATES`, e.g. `{ SpotToSpotConsolidation = true }`."},
			"extra_env":     schema.MapAttribute{Optional: true, ElementType: types.StringType, MarkdownDescription: "More controller settings as environment variables (e.g. `VM_MEMORY_OVERHEAD_PERCENT`, `RESERVED_ENIS`)."},
			"wait_for_rollout": schema.BoolAttribute{
				Optional: true, Computed: true, Default: booldefault.StaticBool(true),
				MarkdownDescription: "Wait until the Deployment is Available after create and update. Defaults to true.",
			},
			"wait_timeout": schema.StringAttribute{
				Optional: true, Computed: true, Default: stringdefault.StaticString("10m"), Validators: duration,
				MarkdownDescription: "How long create and update wait for the CRDs and the rollout (Go duration). Defaults to `10m`.",
			},
			"force_destroy": schema.BoolAttribute{
				Optional: true, Computed: true, Default: booldefault.StaticBool(false),
				MarkdownDescription: "Remove the controller even while NodeClaims exist; their instances are then no longer managed.",
			},
			"crds_sha256": schema.StringAttribute{Computed: true, MarkdownDescription: "Hash of the installed CRD bundle; a provider upgrade with new CRDs changes it."},
			"in_sync":     schema.BoolAttribute{Computed: true, MarkdownDescription: "Whether every object matches what the provider wrote."},
			"drift":       schema.ListAttribute{Computed: true, ElementType: types.StringType, MarkdownDescription: "Objects changed or missing since apply."},
		},
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
		} else {
			resp.Diagnostics.AddAttributeError(path.Root("cluster_name"), "Missing cluster name", "set cluster_name here or in the provider block")
			return
		}
	}
	if unset("image") {
		plan.Image = types.StringValue(ControllerImageRepository + ":" + r.imageTag())
	}
	if unset("aws_region") {
		plan.AWSRegion = types.StringNull()
		if r.clients != nil && r.clients.awsKnown {
			if c, err := r.clients.AWS(ctx); err == nil {
				plan.AWSRegion = types.StringValue(c.Region)
			}
		}
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
	settings := map[string]string{}
	for _, s := range settingAttrs {
		if v := m.settingValue(s.attr); !v.IsNull() && !v.IsUnknown() && v.ValueString() != "" {
			settings[s.env] = v.ValueString()
		}
	}
	if !m.FeatureGates.IsNull() && !m.FeatureGates.IsUnknown() {
		gates := map[string]bool{}
		diags.Append(m.FeatureGates.ElementsAs(ctx, &gates, false)...)
		var pairs []string
		for k, v := range gates {
			pairs = append(pairs, fmt.Sprintf("%s=%t", k, v))
		}
		sort.Strings(pairs)
		if len(pairs) > 0 {
			settings["FEATURE_GATES"] = strings.Join(pairs, ",")
		}
	}
	for k, v := range stringMap(ctx, m.ExtraEnv, diags) {
		settings[k] = v
	}
	return controllerdeploy.Spec{
		Namespace: m.Namespace.ValueString(), ServiceAccount: m.ServiceAccount.ValueString(), Image: m.Image.ValueString(),
		Replicas: int32(m.Replicas.ValueInt64()), IRSARoleARN: m.IRSARoleARN.ValueString(), Settings: settings,
		CPURequest: m.CPURequest.ValueString(), MemoryRequest: m.MemoryRequest.ValueString(), RolloutToken: crdHash,
	}
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

// apply installs the CRDs and objects of plan and waits for them.
func (r *ControllerResource) apply(ctx context.Context, plan *controllerModel, diags *diag.Diagnostics) {
	dyn, ok := r.kube(ctx, diags)
	if !ok {
		return
	}
	timeout, _ := time.ParseDuration(plan.WaitTimeout.ValueString())
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	crdObjs, hash, err := r.crds()
	if err != nil {
		diags.AddError("Reading the embedded CRDs", err.Error())
		return
	}
	if err := controllerdeploy.Apply(ctx, dyn, crdObjs); err != nil {
		diags.AddError("Installing the CRDs", err.Error())
		return
	}
	if err := controllerdeploy.WaitEstablished(wctx, dyn, crdObjs); err != nil {
		diags.AddError("Waiting for the CRDs", err.Error())
		return
	}
	if plan.CreateNamespace.ValueBool() {
		if err := controllerdeploy.Apply(ctx, dyn, []*unstructured.Unstructured{namespaceObject(plan.Namespace.ValueString())}); err != nil {
			diags.AddAttributeError(path.Root("namespace"), "Creating the namespace", err.Error())
			return
		}
	}
	objs, err := controllerdeploy.Objects(plan.spec(ctx, hash, diags))
	if err != nil {
		diags.AddError("Rendering the controller objects", err.Error())
		return
	}
	if err := controllerdeploy.Apply(ctx, dyn, objs); err != nil {
		diags.AddError("Applying the controller objects", err.Error())
		return
	}
	if plan.WaitForRollout.ValueBool() {
		if err := controllerdeploy.WaitAvailable(wctx, dyn, plan.Namespace.ValueString()); err != nil {
			diags.AddError("Waiting for the controller", err.Error()+"; raise wait_timeout, or set wait_for_rollout = false")
			return
		}
	}
	plan.ID = plan.Namespace
	plan.CRDsSHA256 = types.StringValue(hash)
	r.readDrift(ctx, dyn, plan, diags)
}

// readDrift compares the live objects with the ones m renders.
func (r *ControllerResource) readDrift(ctx context.Context, dyn dynamic.Interface, m *controllerModel, diags *diag.Diagnostics) {
	crdObjs, _, err := r.crds()
	if err != nil {
		diags.AddError("Reading the embedded CRDs", err.Error())
		return
	}
	objs, err := controllerdeploy.Objects(m.spec(ctx, m.CRDsSHA256.ValueString(), diags))
	if err != nil {
		diags.AddError("Rendering the controller objects", err.Error())
		return
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
	r.applyPlan(ctx, req.Plan, &resp.State, &resp.Diagnostics)
}

func (r *ControllerResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	r.applyPlan(ctx, req.Plan, &resp.State, &resp.Diagnostics)
}

// applyPlan applies the planned configuration and records it as the state:
// creating and updating the controller are the same server-side apply.
func (r *ControllerResource) applyPlan(ctx context.Context, p tfsdk.Plan, state *tfsdk.State, diags *diag.Diagnostics) {
	var plan controllerModel
	diags.Append(p.Get(ctx, &plan)...)
	if diags.HasError() {
		return
	}
	r.apply(ctx, &plan, diags)
	if diags.HasError() {
		return
	}
	diags.Append(state.Set(ctx, &plan)...)
}

func (r *ControllerResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state controllerModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	dyn, ok := r.kube(ctx, &resp.Diagnostics)
	if resp.Diagnostics.HasError() || !ok {
		return
	}
	if state.Image.IsNull() {
		// Imported: the configuration comes from the Deployment.
		if !r.importFrom(ctx, dyn, &state, &resp.Diagnostics) {
			return
		}
	}
	r.readDrift(ctx, dyn, &state, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// importFrom fills m from the live Deployment.
func (r *ControllerResource) importFrom(ctx context.Context, dyn dynamic.Interface, m *controllerModel, diags *diag.Diagnostics) bool {
	ns := m.Namespace.ValueString()
	d, err := dyn.Resource(deploymentsGVR).Namespace(ns).Get(ctx, controllerdeploy.Name, metav1.GetOptions{})
	if err != nil {
		diags.AddError("Importing joist_controller", fmt.Sprintf("reading Deployment %s/%s: %v", ns, controllerdeploy.Name, err))
		return false
	}
	env, err := controllerdeploy.Env(d)
	if err != nil {
		diags.AddError("Importing joist_controller", err.Error())
		return false
	}
	for _, s := range settingAttrs {
		v := m.settingValue(s.attr)
		*v = types.StringNull()
		if e, ok := env[s.env]; ok {
			*v = types.StringValue(e)
		}
		delete(env, s.env)
	}
	if gates := env["FEATURE_GATES"]; gates != "" {
		vals := map[string]attr.Value{}
		for _, kv := range strings.Split(gates, ",") {
			k, v, _ := strings.Cut(kv, "=")
			vals[k] = types.BoolValue(v == "true")
		}
		m.FeatureGates = types.MapValueMust(types.BoolType, vals)
	}
	extra := map[string]attr.Value{}
	for k, v := range env {
		if !derivedEnv[k] {
			extra[k] = types.StringValue(v)
		}
	}
	m.ExtraEnv = types.MapNull(types.StringType)
	if len(extra) > 0 {
		m.ExtraEnv = types.MapValueMust(types.StringType, extra)
	}
	containers, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
	for _, c := range containers {
		cm, _ := c.(map[string]any)
		if cm["name"] == controllerdeploy.Name {
			m.Image = types.StringValue(fmt.Sprint(cm["image"]))
			if q, ok, _ := unstructured.NestedString(cm, "resources", "requests", "cpu"); ok {
				m.CPURequest = types.StringValue(q)
			}
			if q, ok, _ := unstructured.NestedString(cm, "resources", "requests", "memory"); ok {
				m.MemoryRequest = types.StringValue(q)
			}
		}
	}
	replicas, _, _ := unstructured.NestedInt64(d.Object, "spec", "replicas")
	m.Replicas = types.Int64Value(replicas)
	sa, _, _ := unstructured.NestedString(d.Object, "spec", "template", "spec", "serviceAccountName")
	m.ServiceAccount = types.StringValue(sa)
	hash, _, _ := unstructured.NestedString(d.Object, "spec", "template", "metadata", "annotations", controllerdeploy.RolloutAnnotation)
	m.CRDsSHA256 = types.StringValue(hash)
	m.IRSARoleARN = types.StringNull()
	if s, err := dyn.Resource(serviceAccountsGVR).Namespace(ns).Get(ctx, sa, metav1.GetOptions{}); err == nil {
		if arn := s.GetAnnotations()["eks.amazonaws.com/role-arn"]; arn != "" {
			m.IRSARoleARN = types.StringValue(arn)
		}
	}
	m.ID = types.StringValue(ns)
	m.CreateNamespace, m.WaitForRollout, m.ForceDestroy = types.BoolValue(false), types.BoolValue(true), types.BoolValue(false)
	m.WaitTimeout = types.StringValue("10m")
	return true
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
	objs, err := controllerdeploy.Objects(state.spec(ctx, state.CRDsSHA256.ValueString(), &resp.Diagnostics))
	if err != nil {
		resp.Diagnostics.AddError("Rendering the controller objects", err.Error())
		return
	}
	if state.CreateNamespace.ValueBool() {
		objs = append([]*unstructured.Unstructured{namespaceObject(state.Namespace.ValueString())}, objs...)
	}
	if err := controllerdeploy.Delete(ctx, dyn, objs); err != nil {
		resp.Diagnostics.AddError("Deleting the controller", err.Error())
	}
}

func (r *ControllerResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("namespace"), req.ID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
}
