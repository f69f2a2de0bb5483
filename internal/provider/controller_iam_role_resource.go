package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/policy"
)

var (
	_ resource.ResourceWithConfigure   = (*ControllerIAMRoleResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*ControllerIAMRoleResource)(nil)
	_ resource.ResourceWithImportState = (*ControllerIAMRoleResource)(nil)
)

// ControllerIAMRoleResource is joist_controller_iam_role: the role the
// controller runs as, trusted through EKS Pod Identity or IRSA, with the
// least-privilege policy of internal/runtime/policy.
type ControllerIAMRoleResource struct{ awsBase }

// NewControllerIAMRoleResource returns the joist_controller_iam_role resource.
func NewControllerIAMRoleResource() resource.Resource { return &ControllerIAMRoleResource{} }

type controllerIAMRoleModel struct {
	ID                       types.String `tfsdk:"id"`
	Name                     types.String `tfsdk:"name"`
	ClusterName              types.String `tfsdk:"cluster_name"`
	Path                     types.String `tfsdk:"path"`
	Description              types.String `tfsdk:"description"`
	PermissionsBoundary      types.String `tfsdk:"permissions_boundary"`
	Tags                     types.Map    `tfsdk:"tags"`
	NodeRoleARN              types.String `tfsdk:"node_role_arn"`
	InterruptionQueueName    types.String `tfsdk:"interruption_queue_name"`
	InterruptionQueueKeyARN  types.String `tfsdk:"interruption_queue_kms_key_arn"`
	Namespace                types.String `tfsdk:"namespace"`
	ServiceAccount           types.String `tfsdk:"service_account"`
	OIDCProviderARN          types.String `tfsdk:"oidc_provider_arn"`
	CreatePodIdentity        types.Bool   `tfsdk:"create_pod_identity_association"`
	PolicyType               types.String `tfsdk:"policy_type"`
	ARN                      types.String `tfsdk:"arn"`
	AssumeRolePolicy         types.String `tfsdk:"assume_role_policy"`
	PolicyDocuments          types.List   `tfsdk:"policy_documents"`
	ManagedPolicyARNs        types.List   `tfsdk:"managed_policy_arns"`
	PodIdentityAssociationID types.String `tfsdk:"pod_identity_association_id"`
	NamePrefix               types.String `tfsdk:"name_prefix"`
	MaxSessionDuration       types.Int64  `tfsdk:"max_session_duration"`
	TrustPolicyStatements    types.List   `tfsdk:"trust_policy_statements"`
	PolicyStatements         types.List   `tfsdk:"policy_statements"`
	AdditionalPolicyARNs     types.Set    `tfsdk:"additional_policy_arns"`
	SSMParameterARNs         types.List   `tfsdk:"ssm_parameter_arns"`
}

func (r *ControllerIAMRoleResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_controller_iam_role"
}

func (r *ControllerIAMRoleResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	replace := []planmodifier.String{stringplanmodifier.RequiresReplace()}
	resp.Schema = schema.Schema{
		MarkdownDescription: "The IAM role the Joist controller runs as. By default it is trusted by EKS Pod Identity " +
			"and the pod identity association for `namespace`/`service_account` is created; with " +
			"`oidc_provider_arn` it is trusted through IRSA instead (pass `arn` to `joist_controller`'s " +
			"`irsa_role_arn`). Its policy is the least-privilege one `data.joist_controller_policy` renders, " +
			"inline (default) or as customer managed policies split to IAM's size limit. Changes made outside " +
			"Terraform to the trust policy, the policy documents or the association show in the next plan. " +
			"Import with the role name.",
		Attributes: withAttributes(roleAttributes(roleInputs{
			Name:               "Defaults to `JoistController-<cluster_name>`, or a unique name beginning with `name_prefix`. `iam_role_name` in the EKS module's `karpenter` submodule.",
			NamePrefix:         "`iam_role_use_name_prefix` (with `iam_role_name`) in the EKS module.",
			MaxSessionDuration: "`iam_role_max_session_duration` in the EKS module.",
			Path:               "IAM path of the role (and of managed policies). Defaults to `/`. `iam_role_path` and `iam_policy_path` in the EKS module.",
			Description:        "`iam_role_description` in the EKS module.",
			Boundary:           "`iam_role_permissions_boundary_arn` in the EKS module.",
			Tags:               "Tags of the role and its managed policies. `tags` and `iam_role_tags` in the EKS module.",
		}), map[string]schema.Attribute{
			"trust_policy_statements": statementsAttribute("Statements added to the role's trust policy, after the one for Pod Identity or IRSA (who else may assume the role). " +
				"`iam_role_source_assume_policy_documents` and `iam_role_override_assume_policy_documents` in the EKS module, as statements."),
			"policy_statements": statementsAttribute("Statements added to the role's permissions, in a document of their own " +
				"(inline policy `" + additionalPolicyName + "`, or the last managed policy). `iam_policy_statements` in the EKS module."),
			"additional_policy_arns": schema.SetAttribute{
				Optional: true, ElementType: types.StringType,
				MarkdownDescription: "Managed policies attached to the role besides its own. `iam_role_policies` in the EKS module.",
			},
			"ssm_parameter_arns": schema.ListAttribute{
				Optional: true, ElementType: types.StringType,
				MarkdownDescription: "ARNs of SSM parameters the controller may read besides `/aws/service/*` (which AMI aliases need), for " +
					"`ssmParameter` AMI selector terms. `ami_id_ssm_parameter_arns` in the EKS module (which replaces `/aws/service/*`; here it adds).",
				Validators: []validator.List{listvalidator.ValueStringsAre(stringvalidator.RegexMatches(mustRegexp(`^arn:aws[a-z-]*:ssm:`), "must be an SSM parameter ARN (arn:aws:ssm:<region>:<account>:parameter/...)"))},
			},
			"cluster_name":                   schema.StringAttribute{Optional: true, PlanModifiers: replace, MarkdownDescription: "EKS cluster; defaults to the provider's `cluster_name`."},
			"node_role_arn":                  schema.StringAttribute{Required: true, MarkdownDescription: "ARN of the node role (`joist_node_iam_role.arn`), the only role the controller may pass to EC2."},
			"interruption_queue_name":        schema.StringAttribute{Optional: true, MarkdownDescription: "Interruption queue (`joist_interruption_queue.name`); without it the role has no SQS access."},
			"interruption_queue_kms_key_arn": queueKeyAttribute(),
			"namespace": schema.StringAttribute{
				Optional: true, Computed: true, Default: stringdefault.StaticString("kube-system"),
				MarkdownDescription: "Namespace of the controller's ServiceAccount. Defaults to `kube-system`.",
			},
			"service_account": schema.StringAttribute{
				Optional: true, Computed: true, Default: stringdefault.StaticString("joist"),
				MarkdownDescription: "Name of the controller's ServiceAccount. Defaults to `joist`.",
			},
			"oidc_provider_arn": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "ARN of the cluster's IAM OIDC provider: trust the ServiceAccount through IRSA instead of EKS Pod Identity.",
				Validators:          []validator.String{stringvalidator.RegexMatches(oidcARN, "must be an IAM OIDC provider ARN (arn:aws:iam::<account>:oidc-provider/<issuer>)")},
			},
			"create_pod_identity_association": schema.BoolAttribute{
				Optional: true, Computed: true, Default: booldefault.StaticBool(true),
				MarkdownDescription: "With Pod Identity, create the association of the ServiceAccount with the role (default). Ignored with IRSA.",
			},
			"policy_type": schema.StringAttribute{
				Optional: true, Computed: true, Default: stringdefault.StaticString("inline"),
				MarkdownDescription: "`inline` (default) puts the policy on the role; `managed` creates customer managed policies `<name>-<n>`, each within 6,144 characters, and attaches them. " +
					"`enable_inline_policy` in the EKS module (whose default is managed).",
				Validators: []validator.String{stringvalidator.OneOf("inline", "managed")},
			},
			"policy_documents":            schema.ListAttribute{Computed: true, ElementType: types.StringType, MarkdownDescription: "The permission policy documents in effect, in order."},
			"managed_policy_arns":         schema.ListAttribute{Computed: true, ElementType: types.StringType, MarkdownDescription: "ARNs of the managed policies (`policy_type = \"managed\"`)."},
			"pod_identity_association_id": schema.StringAttribute{Computed: true, MarkdownDescription: "ID of the pod identity association; empty with IRSA."},
		}),
	}
}

var oidcARN = mustRegexp(`^arn:aws[a-z-]*:iam::\d{12}:oidc-provider/.+$`)

// inlinePolicyName names the inline policy; additionalPolicyName the
// inline policy of policy_statements (sorting after it).
const (
	inlinePolicyName     = "JoistControllerPolicy"
	additionalPolicyName = "JoistControllerPolicyAdditional"
)

// additionalDocumentID marks the document of policy_statements, so import
// finds it among managed policies.
const additionalDocumentID = "JoistControllerAdditionalStatements"

var iamName = mustRegexp(`^[\w+=,.@-]+$`)

func (m *controllerIAMRoleModel) podIdentity() bool {
	return m.OIDCProviderARN.IsNull() || m.OIDCProviderARN.ValueString() == ""
}

// controllerTrustPolicy is Pod Identity's or IRSA's trust of the
// controller, and the statements users add.
func controllerTrustPolicy(m *controllerIAMRoleModel, account string, extra []map[string]any) string {
	if m.podIdentity() {
		return trustPolicy(map[string]any{
			"Principal": map[string]any{"Service": "pods.eks.amazonaws.com"},
			"Action":    []string{"sts:AssumeRole", "sts:TagSession"},
			"Condition": map[string]any{"StringEquals": map[string]any{"aws:SourceAccount": account}},
		}, extra...)
	}
	provider := m.OIDCProviderARN.ValueString()
	_, issuer, _ := strings.Cut(provider, ":oidc-provider/")
	return trustPolicy(map[string]any{
		"Principal": map[string]any{"Federated": provider},
		"Action":    "sts:AssumeRoleWithWebIdentity",
		"Condition": map[string]any{"StringEquals": map[string]any{
			issuer + ":sub": "system:serviceaccount:" + m.Namespace.ValueString() + ":" + m.ServiceAccount.ValueString(),
			issuer + ":aud": "sts.amazonaws.com",
		}},
	}, extra...)
}

// desired renders the trust policy and permission documents for m.
func (r *ControllerIAMRoleResource) desired(ctx context.Context, m *controllerIAMRoleModel, diags *diag.Diagnostics) (trust string, docs []string, ok bool) {
	p, ok := r.policyParams(ctx, r.clusterName(m.ClusterName), m.NodeRoleARN.ValueString(), m.InterruptionQueueName.ValueString(), "", "", "", diags)
	if !ok {
		return "", nil, false
	}
	p.SSMParameterARNs = listStrings(ctx, m.SSMParameterARNs, diags)
	p.QueueKMSKeyARN = m.InterruptionQueueKeyARN.ValueString()
	trustExtra, ok1 := renderStatements(ctx, m.TrustPolicyStatements, "trust_policy_statements", trustStatements, diags)
	permExtra, ok2 := renderStatements(ctx, m.PolicyStatements, "policy_statements", permissionStatements, diags)
	if !ok1 || !ok2 || diags.HasError() {
		return "", nil, false
	}
	doc, err := policy.Render(p)
	if err != nil {
		diags.AddAttributeError(path.Root("node_role_arn"), "Rendering the controller policy", err.Error())
		return "", nil, false
	}
	limit := policy.InlinePolicyMaxSize
	if m.PolicyType.ValueString() == "managed" {
		limit = policy.ManagedPolicyMaxSize
	}
	parts, err := policy.Split(doc, limit)
	if err == nil && m.PolicyType.ValueString() == "inline" && len(parts) > 1 {
		err = fmt.Errorf("the policy is %d characters, over IAM's %d for inline policies; set policy_type = \"managed\"", doc.Size(), limit)
	}
	if err != nil {
		diags.AddAttributeError(path.Root("policy_type"), "Controller policy too large", err.Error())
		return "", nil, false
	}
	total := 0
	for _, part := range parts {
		docs = append(docs, part.JSON())
		total += len(part.JSON())
	}
	if len(permExtra) > 0 {
		extra := mustJSON(map[string]any{"Version": "2012-10-17", "Id": additionalDocumentID, "Statement": permExtra})
		if total+len(extra) > limit && m.PolicyType.ValueString() == "inline" || len(extra) > limit {
			diags.AddAttributeError(path.Root("policy_statements"), "Controller policy too large",
				fmt.Sprintf("policy_statements take %d characters; with the controller's %d that is over IAM's %d for %s policies: shorten them, or set policy_type = \"managed\"",
					len(extra), total, limit, m.PolicyType.ValueString()))
			return "", nil, false
		}
		docs = append(docs, extra)
	}
	return controllerTrustPolicy(m, p.AccountID, trustExtra), docs, true
}

func (r *ControllerIAMRoleResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	var plan controllerIAMRoleModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	cluster := r.clusterName(plan.ClusterName)
	if plan.Name.IsUnknown() && cluster != "" && plan.NamePrefix.IsNull() {
		plan.Name = types.StringValue("JoistController-" + cluster)
	}
	for _, v := range []attr.Value{plan.TrustPolicyStatements, plan.PolicyStatements, plan.SSMParameterARNs} {
		if v.IsUnknown() {
			resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
			return
		}
	}
	for _, v := range []types.String{plan.NodeRoleARN, plan.InterruptionQueueName, plan.InterruptionQueueKeyARN, plan.OIDCProviderARN, plan.ClusterName, plan.Namespace, plan.ServiceAccount, plan.PolicyType} {
		if v.IsUnknown() {
			resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
			return
		}
	}
	if cluster == "" {
		resp.Diagnostics.AddAttributeError(path.Root("cluster_name"), "Missing cluster name", "set cluster_name here or in the provider block")
		return
	}
	if r.clients != nil && r.clients.awsKnown {
		trust, docs, ok := r.desired(ctx, &plan, &resp.Diagnostics)
		if !ok {
			return
		}
		plan.AssumeRolePolicy, plan.PolicyDocuments = types.StringValue(trust), stringList(docs)
	}
	if !req.State.Raw.IsNull() {
		var state controllerIAMRoleModel
		resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
		switch {
		case plan.PolicyType.ValueString() == "inline":
			plan.ManagedPolicyARNs = stringList(nil)
		case plan.PolicyType.Equal(state.PolicyType) && len(state.ManagedPolicyARNs.Elements()) == len(plan.PolicyDocuments.Elements()):
			plan.ManagedPolicyARNs = state.ManagedPolicyARNs
		default:
			plan.ManagedPolicyARNs = types.ListUnknown(types.StringType)
		}
		podID := plan.podIdentity() && plan.CreatePodIdentity.ValueBool()
		samePod := state.Namespace.Equal(plan.Namespace) && state.ServiceAccount.Equal(plan.ServiceAccount) && state.podIdentity() == plan.podIdentity()
		switch {
		case !podID:
			plan.PodIdentityAssociationID = types.StringValue("")
		case samePod && state.PodIdentityAssociationID.ValueString() != "":
			plan.PodIdentityAssociationID = state.PodIdentityAssociationID
		default:
			// Missing (deleted outside Terraform) or replaced: a new one comes.
			plan.PodIdentityAssociationID = types.StringUnknown()
		}
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
}

func (m *controllerIAMRoleModel) spec(ctx context.Context, trust string, diags *diag.Diagnostics) roleSpec {
	return roleSpec{
		Name: m.Name.ValueString(), Path: m.Path.ValueString(), Description: m.Description.ValueString(),
		Boundary: m.PermissionsBoundary.ValueString(), Trust: trust, Tags: stringMap(ctx, m.Tags, diags),
		MaxSessionDuration: m.MaxSessionDuration.ValueInt64(),
	}
}

func (r *ControllerIAMRoleResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	defer settlePartial(&resp.State, &resp.Diagnostics)
	var plan controllerIAMRoleModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	cfg, ok := r.awsConfig(ctx, &resp.Diagnostics)
	if resp.Diagnostics.HasError() || !ok {
		return
	}
	if plan.Name.IsUnknown() || plan.Name.ValueString() == "" {
		plan.Name = types.StringValue("JoistController-" + r.clusterName(plan.ClusterName))
		if !plan.NamePrefix.IsNull() {
			plan.Name = types.StringValue(uniqueName(plan.NamePrefix.ValueString()))
		}
	}
	trust, docs, ok := r.desired(ctx, &plan, &resp.Diagnostics)
	if !ok {
		return
	}
	c := iam.NewFromConfig(cfg)
	name := plan.Name.ValueString()
	if _, err := createRole(ctx, c, plan.spec(ctx, trust, &resp.Diagnostics)); err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("name"), "Creating the controller role", err.Error())
		return
	}
	plan.ID = types.StringValue(name)
	plan.ManagedPolicyARNs, plan.PodIdentityAssociationID = stringList(nil), types.StringValue("")
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	r.apply(ctx, cfg, &plan, nil, docs, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
		return
	}
	r.readInto(ctx, cfg, &plan, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

// apply writes the permission policies and the pod identity association.
// prior is the state before (nil on create).
func (r *ControllerIAMRoleResource) apply(ctx context.Context, cfg aws.Config, m *controllerIAMRoleModel, prior *controllerIAMRoleModel, docs []string, diags *diag.Diagnostics) {
	c := iam.NewFromConfig(cfg)
	name := m.Name.ValueString()
	live, err := readRole(ctx, c, name)
	if err != nil || live == nil {
		diags.AddError("Reading the controller role", fmt.Sprintf("role %s: %v", name, err))
		return
	}
	var managed []string
	if m.PolicyType.ValueString() == "inline" {
		want := map[string]string{inlinePolicyName: docs[0]}
		if len(docs) > 1 {
			want[additionalPolicyName] = docs[1]
		}
		if err := syncInline(ctx, c, name, live.Inline, want); err != nil {
			diags.AddError("Writing the controller policy", err.Error())
			return
		}
	} else {
		if managed, err = r.putManaged(ctx, c, m, live.ARN, docs, diags); err != nil {
			// The policies made so far stay in state, for destroy to find.
			m.ManagedPolicyARNs = stringList(append(stateARNs(m.ManagedPolicyARNs), managed...))
			diags.AddError("Writing the controller policies", err.Error())
			return
		}
		if err := syncInline(ctx, c, name, live.Inline, nil); err != nil {
			diags.AddError("Removing the inline controller policy", err.Error())
			return
		}
	}
	ours := ownedPolicyPrefix(m, live.ARN)
	additional := setStrings(ctx, m.AdditionalPolicyARNs, diags)
	var dropped []string
	if prior != nil {
		for _, a := range setStrings(ctx, prior.AdditionalPolicyARNs, diags) {
			if !contains(additional, a) {
				dropped = append(dropped, a)
			}
		}
	}
	var keep []string
	for _, a := range live.Attached {
		if !strings.HasPrefix(a, ours) && !contains(dropped, a) && !contains(additional, a) {
			keep = append(keep, a) // attached by someone else on purpose: leave it
		}
	}
	if err := syncAttachments(ctx, c, name, live.Attached, append(append(keep, managed...), additional...)); err != nil {
		diags.AddError("Attaching the controller policies", err.Error())
		return
	}
	for _, a := range live.Attached {
		if strings.HasPrefix(a, ours) && !contains(managed, a) {
			if _, err := c.DeletePolicy(ctx, &iam.DeletePolicyInput{PolicyArn: aws.String(a)}); err != nil && !isAWSCode(err, "NoSuchEntity") {
				diags.AddError("Deleting an unused controller policy", fmt.Sprintf("iam:DeletePolicy %s: %v", a, err))
				return
			}
		}
	}
	m.ManagedPolicyARNs = stringList(managed)
	r.applyPodIdentity(ctx, eks.NewFromConfig(cfg), m, prior, live.ARN, diags)
}

// readInto fills m's computed attributes from AWS; false when the role is gone.
func (r *ControllerIAMRoleResource) readInto(ctx context.Context, cfg aws.Config, m *controllerIAMRoleModel, diags *diag.Diagnostics) bool {
	c := iam.NewFromConfig(cfg)
	live, err := readRole(ctx, c, m.Name.ValueString())
	if err != nil {
		diags.AddError("Reading the controller role", err.Error())
		return true
	}
	if live == nil {
		return false
	}
	m.ID, m.ARN = types.StringValue(live.Name), types.StringValue(live.ARN)
	m.Path = types.StringValue(live.Path)
	m.Description = optionalString(m.Description, live.Description)
	m.PermissionsBoundary = optionalString(m.PermissionsBoundary, live.Boundary)
	m.Tags = tagsValue(m.Tags, live.Tags)
	m.MaxSessionDuration = types.Int64Value(live.MaxSessionDuration)
	if m.PolicyType.IsNull() {
		m.PolicyType = types.StringValue("inline")
		if len(live.Inline) == 0 {
			m.PolicyType = types.StringValue("managed")
		}
	}
	var trustWant string
	var docsWant []string
	if !m.NodeRoleARN.IsNull() {
		trustWant, docsWant, _ = r.desired(ctx, m, &diag.Diagnostics{})
	}
	m.AssumeRolePolicy = types.StringValue(canonical(live.Trust, trustWant))
	var docs, managed []string
	if m.PolicyType.ValueString() == "inline" {
		names := make([]string, 0, len(live.Inline))
		for n := range live.Inline {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			docs = append(docs, live.Inline[n])
		}
	} else {
		ours := ownedPolicyPrefix(m, live.ARN)
		for _, a := range live.Attached {
			if !strings.HasPrefix(a, ours) {
				continue
			}
			doc, err := defaultPolicyDocument(ctx, c, a)
			if err != nil {
				diags.AddError("Reading the controller policies", err.Error())
				return true
			}
			managed = append(managed, a)
			docs = append(docs, doc)
		}
		sort.Sort(byPart{managed, docs})
	}
	for i := range docs {
		if i < len(docsWant) {
			docs[i] = canonical(docs[i], docsWant[i])
		}
	}
	ours := ownedPolicyPrefix(m, live.ARN)
	var others []string
	for _, a := range live.Attached {
		if !strings.HasPrefix(a, ours) {
			others = append(others, a)
		}
	}
	if m.NodeRoleARN.IsNull() {
		m.importInputs(live.Trust, docs)
		m.AdditionalPolicyARNs = types.SetNull(types.StringType)
		if len(others) > 0 {
			m.AdditionalPolicyARNs = stringSet(others)
		}
		if prefix := namePrefixOf(live.Name); prefix != "" {
			m.NamePrefix = types.StringValue(prefix)
		}
	} else if !m.AdditionalPolicyARNs.IsNull() {
		// Configured policies detached outside Terraform show as a change.
		var still []string
		for _, a := range setStrings(ctx, m.AdditionalPolicyARNs, diags) {
			if contains(others, a) {
				still = append(still, a)
			}
		}
		m.AdditionalPolicyARNs = stringSet(still)
	}
	m.PolicyDocuments, m.ManagedPolicyARNs = stringList(docs), stringList(managed)
	m.PodIdentityAssociationID = types.StringValue("")
	if m.podIdentity() {
		r.readPodIdentity(ctx, eks.NewFromConfig(cfg), m, live.ARN, diags)
	}
	return true
}

func (r *ControllerIAMRoleResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state controllerIAMRoleModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	cfg, ok := r.awsConfig(ctx, &resp.Diagnostics)
	if resp.Diagnostics.HasError() || !ok {
		return
	}
	if !r.readInto(ctx, cfg, &state, &resp.Diagnostics) {
		resp.State.RemoveResource(ctx)
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func (r *ControllerIAMRoleResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	defer settlePartial(&resp.State, &resp.Diagnostics)
	var plan, state controllerIAMRoleModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	cfg, ok := r.awsConfig(ctx, &resp.Diagnostics)
	if resp.Diagnostics.HasError() || !ok {
		return
	}
	plan.ARN = state.ARN
	trust, docs, ok := r.desired(ctx, &plan, &resp.Diagnostics)
	if !ok {
		return
	}
	c := iam.NewFromConfig(cfg)
	live, err := readRole(ctx, c, plan.Name.ValueString())
	if err != nil || live == nil {
		resp.Diagnostics.AddError("Reading the controller role", fmt.Sprintf("role %s: %v", plan.Name.ValueString(), err))
		return
	}
	if err := updateRole(ctx, c, live, plan.spec(ctx, trust, &resp.Diagnostics)); err != nil {
		resp.Diagnostics.AddError("Updating the controller role", err.Error())
		return
	}
	r.apply(ctx, cfg, &plan, &state, docs, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	r.readInto(ctx, cfg, &plan, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *ControllerIAMRoleResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state controllerIAMRoleModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	cfg, ok := r.awsConfig(ctx, &resp.Diagnostics)
	if resp.Diagnostics.HasError() || !ok {
		return
	}
	release, err := releaseRole(ctx, cfg, state.Name.ValueString(), r.clusterName(state.ClusterName), true)
	if err != nil {
		resp.Diagnostics.AddError("Deleting the controller role", err.Error())
		return
	}
	if id := state.PodIdentityAssociationID.ValueString(); id != "" {
		_, err := eks.NewFromConfig(cfg).DeletePodIdentityAssociation(ctx, &eks.DeletePodIdentityAssociationInput{
			ClusterName: aws.String(r.clusterName(state.ClusterName)), AssociationId: aws.String(id),
		})
		if err != nil && !isAWSCode(err, "ResourceNotFoundException") {
			resp.Diagnostics.AddError("Deleting the pod identity association", err.Error())
			return
		}
	}
	c := iam.NewFromConfig(cfg)
	// The managed policies in state, and those of this role's naming that are
	// attached to it (an update that failed halfway made them after the state
	// was last saved).
	owned := stateARNs(state.ManagedPolicyARNs)
	live, err := readRole(ctx, c, state.Name.ValueString())
	if err != nil {
		resp.Diagnostics.AddError("Reading the controller role", err.Error())
		return
	}
	if live != nil {
		for _, a := range live.Attached {
			if strings.HasPrefix(a, ownedPolicyPrefix(&state, live.ARN)) && !contains(owned, a) {
				owned = append(owned, a)
			}
		}
	}
	if err := deleteRole(ctx, c, state.Name.ValueString(), release); err != nil {
		resp.Diagnostics.AddError("Deleting the controller role", err.Error())
		return
	}
	for _, arn := range owned {
		if err := deletePolicy(ctx, c, arn); err != nil {
			resp.Diagnostics.AddError("Deleting a controller policy", err.Error())
			return
		}
	}
}

func (r *ControllerIAMRoleResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("name"), req.ID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("path"), "/")...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("namespace"), "kube-system")...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("service_account"), "joist")...)
}

// importInputs recovers the configuration of an imported role from its
// trust policy (IRSA's OIDC provider) and its permission documents (the
// node role it may pass, the queue it may read).
func (m *controllerIAMRoleModel) importInputs(trust string, docs []string) {
	var t struct {
		Statement []struct {
			Principal struct{ Federated string }
		}
	}
	if json.Unmarshal([]byte(trust), &t) == nil && len(t.Statement) >= 1 && t.Statement[0].Principal.Federated != "" {
		m.OIDCProviderARN = types.StringValue(t.Statement[0].Principal.Federated)
	}
	if st := documentStatements(trust); len(st) > 1 {
		m.TrustPolicyStatements = statementsValue(st[1:])
	}
	for _, text := range docs {
		var marked struct{ Id string }
		if json.Unmarshal([]byte(text), &marked) == nil && marked.Id == additionalDocumentID {
			m.PolicyStatements = statementsValue(documentStatements(text))
			continue
		}
		var d policy.Document
		if json.Unmarshal([]byte(text), &d) != nil {
			continue
		}
		for _, st := range d.Statement {
			if len(st.Resource) == 0 {
				continue
			}
			switch st.Sid {
			case "AllowPassingInstanceRole":
				m.NodeRoleARN = types.StringValue(st.Resource[0])
			case "AllowSSMReadActions":
				if len(st.Resource) > 1 {
					m.SSMParameterARNs = stringList(st.Resource[1:])
				}
			case "AllowInterruptionQueueActions":
				m.InterruptionQueueName = types.StringValue(st.Resource[0][strings.LastIndex(st.Resource[0], ":")+1:])
			case "AllowInterruptionQueueDecryption":
				m.InterruptionQueueKeyARN = types.StringValue(st.Resource[0])
			}
		}
	}
}
