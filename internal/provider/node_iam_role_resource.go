package provider

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

var (
	_ resource.ResourceWithConfigure   = (*NodeIAMRoleResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*NodeIAMRoleResource)(nil)
	_ resource.ResourceWithImportState = (*NodeIAMRoleResource)(nil)
)

// NodeIAMRoleResource is joist_node_iam_role: the role Joist-launched nodes
// run with, its policies and its EKS access entry.
type NodeIAMRoleResource struct{ awsBase }

// NewNodeIAMRoleResource returns the joist_node_iam_role resource.
func NewNodeIAMRoleResource() resource.Resource { return &NodeIAMRoleResource{} }

type nodeIAMRoleModel struct {
	ID                   types.String `tfsdk:"id"`
	Name                 types.String `tfsdk:"name"`
	ClusterName          types.String `tfsdk:"cluster_name"`
	CreateRole           types.Bool   `tfsdk:"create_role"`
	Path                 types.String `tfsdk:"path"`
	Description          types.String `tfsdk:"description"`
	PermissionsBoundary  types.String `tfsdk:"permissions_boundary"`
	Tags                 types.Map    `tfsdk:"tags"`
	AttachCNIPolicy      types.Bool   `tfsdk:"attach_cni_policy"`
	AttachSSMPolicy      types.Bool   `tfsdk:"attach_ssm_policy"`
	AdditionalPolicyARNs types.Set    `tfsdk:"additional_policy_arns"`
	AccessEntryType      types.String `tfsdk:"access_entry_type"`
	ARN                  types.String `tfsdk:"arn"`
	AssumeRolePolicy     types.String `tfsdk:"assume_role_policy"`
	PolicyARNs           types.Set    `tfsdk:"policy_arns"`
	AccessEntryARN       types.String `tfsdk:"access_entry_arn"`
	NamePrefix           types.String `tfsdk:"name_prefix"`
	MaxSessionDuration   types.Int64  `tfsdk:"max_session_duration"`
	ClusterIPFamily      types.String `tfsdk:"cluster_ip_family"`
}

func (r *NodeIAMRoleResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_node_iam_role"
}

func (r *NodeIAMRoleResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	replace := []planmodifier.String{stringplanmodifier.RequiresReplace()}
	resp.Schema = schema.Schema{
		MarkdownDescription: "The IAM role Joist-launched nodes run with (EC2NodeClass `role`), trusted by " +
			"`ec2.amazonaws.com`, with `AmazonEKSWorkerNodePolicy` and `AmazonEC2ContainerRegistryPullOnly` " +
			"(plus, by default, `AmazonEKS_CNI_Policy` and `AmazonSSMManagedInstanceCore`) attached, and an EKS " +
			"access entry so nodes can join the cluster. With `create_role = false` an existing role named " +
			"`name` is used as is: only the access entry is managed. The role's attached policies are exactly " +
			"the ones configured: policies attached outside Terraform show in the plan and are detached on " +
			"apply. Import with the role name. A role, or its access entry, that live instances run with is never deleted: the apply stops before either, and the plan warns how many NodeClaims run with a role that a change replaces.",
		Attributes: withAttributes(roleAttributes(roleInputs{
			Name: "Defaults to `JoistNodeRole-<cluster_name>`, or a unique name beginning with `name_prefix`; required with `create_role = false`. " +
				"`node_iam_role_name` in the EKS module's `karpenter` submodule (and, with `create_node_iam_role = false`, `node_iam_role_arn`).",
			NamePrefix:         "`node_iam_role_use_name_prefix` in the EKS module.",
			MaxSessionDuration: "`node_iam_role_max_session_duration` in the EKS module.",
			Path:               "IAM path of the role. Defaults to `/`. `node_iam_role_path` in the EKS module.",
			Description:        "`node_iam_role_description` in the EKS module.",
			Boundary:           "`node_iam_role_permissions_boundary` in the EKS module.",
			Tags:               "Tags of the role. `tags` and `node_iam_role_tags` in the EKS module.",
		}), map[string]schema.Attribute{
			"cluster_ip_family": schema.StringAttribute{
				Optional: true, Computed: true, Default: stringdefault.StaticString("ipv4"),
				Validators: []validator.String{stringvalidator.OneOf("ipv4", "ipv6")},
				MarkdownDescription: "IP family of the cluster's pods: with `ipv6`, `attach_cni_policy` attaches the account's `AmazonEKS_CNI_IPv6_Policy` " +
					"(which must exist; the EKS module creates it with `create_cni_ipv6_iam_policy`) instead of `AmazonEKS_CNI_Policy`. Defaults to `ipv4`. `cluster_ip_family` in the EKS module.",
			},
			"cluster_name": schema.StringAttribute{
				Optional: true, MarkdownDescription: "EKS cluster the nodes join; defaults to the provider's `cluster_name`.",
				PlanModifiers: replace,
			},
			"create_role": schema.BoolAttribute{
				Optional: true, Computed: true, Default: booldefault.StaticBool(true),
				MarkdownDescription: "Create the role (default). `false` uses the existing role `name` (bring your own role) and manages only the access entry. `create_node_iam_role` in the EKS module.",
				PlanModifiers:       []planmodifier.Bool{boolplanmodifier.RequiresReplace()},
			},
			"attach_cni_policy": schema.BoolAttribute{
				Optional: true, Computed: true, Default: booldefault.StaticBool(true),
				MarkdownDescription: "Attach `AmazonEKS_CNI_Policy` (leave on unless the VPC CNI uses its own role through IRSA or Pod Identity). `node_iam_role_attach_cni_policy` in the EKS module.",
			},
			"attach_ssm_policy": schema.BoolAttribute{
				Optional: true, Computed: true, Default: booldefault.StaticBool(true),
				MarkdownDescription: "Attach `AmazonSSMManagedInstanceCore`, for Session Manager access to nodes.",
			},
			"additional_policy_arns": schema.SetAttribute{Optional: true, ElementType: types.StringType, MarkdownDescription: "More managed policies to attach. `node_iam_role_additional_policies` in the EKS module (there a map)."},
			"access_entry_type": schema.StringAttribute{
				Optional: true, Computed: true, Default: stringdefault.StaticString("EC2_LINUX"),
				MarkdownDescription: "Type of the EKS access entry that lets nodes join: `EC2_LINUX` (default), `EC2_WINDOWS`, or `NONE` when nodes are mapped another way (the `aws-auth` ConfigMap). " +
					"`access_entry_type` and `create_access_entry` in the EKS module.",
				Validators: []validator.String{stringvalidator.OneOf("EC2_LINUX", "EC2_WINDOWS", "NONE")},
			},
			"policy_arns":      schema.SetAttribute{Computed: true, ElementType: types.StringType, MarkdownDescription: "Managed policies attached to the role."},
			"access_entry_arn": schema.StringAttribute{Computed: true, MarkdownDescription: "ARN of the access entry; empty when `access_entry_type` is `NONE`."},
		}),
	}
}

func (r *NodeIAMRoleResource) partition(ctx context.Context, diags *diag.Diagnostics) string {
	cfg, ok := r.awsConfig(ctx, diags)
	if !ok {
		return "aws"
	}
	return partitionOf(cfg.Region)
}

// nodeTrustPolicy lets EC2 instances assume the role.
func nodeTrustPolicy(partition string) string {
	return trustPolicy(map[string]any{
		"Principal": map[string]any{"Service": "ec2." + dnsSuffixOf(partition)},
		"Action":    "sts:AssumeRole",
	})
}

// wantPolicies are the managed policies the configuration attaches.
func (m *nodeIAMRoleModel) wantPolicies(ctx context.Context, partition, account string, diags *diag.Diagnostics) []string {
	aws := func(name string) string { return "arn:" + partition + ":iam::aws:policy/" + name }
	want := []string{aws("AmazonEKSWorkerNodePolicy"), aws("AmazonEC2ContainerRegistryPullOnly")}
	switch {
	case !m.AttachCNIPolicy.ValueBool():
	case m.ClusterIPFamily.ValueString() == "ipv6":
		// No AWS managed policy exists for IPv6: the account's own, by its
		// documented name.
		want = append(want, ipv6CNIPolicyARN(partition, account))
	default:
		want = append(want, aws("AmazonEKS_CNI_Policy"))
	}
	if m.AttachSSMPolicy.ValueBool() {
		want = append(want, aws("AmazonSSMManagedInstanceCore"))
	}
	if !m.AdditionalPolicyARNs.IsNull() && !m.AdditionalPolicyARNs.IsUnknown() {
		var extra []string
		diags.Append(m.AdditionalPolicyARNs.ElementsAs(ctx, &extra, false)...)
		want = append(want, extra...)
	}
	sort.Strings(want)
	return dedupe(want)
}

func (r *NodeIAMRoleResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	var plan nodeIAMRoleModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	cluster := r.clusterName(plan.ClusterName)
	if plan.Name.IsUnknown() && !plan.NamePrefix.IsNull() {
		if !plan.CreateRole.ValueBool() {
			resp.Diagnostics.AddAttributeError(path.Root("name_prefix"), "Name prefix without a role to create", "create_role = false uses an existing role: set name to it instead of name_prefix")
		}
	} else if plan.Name.IsUnknown() {
		if !plan.CreateRole.ValueBool() {
			resp.Diagnostics.AddAttributeError(path.Root("name"), "Missing role name", "create_role = false uses an existing role: set name to it")
			return
		}
		if cluster == "" {
			if plan.ClusterName.IsUnknown() {
				return
			}
			resp.Diagnostics.AddAttributeError(path.Root("cluster_name"), "Missing cluster name",
				"set cluster_name here or in the provider block, or set name")
			return
		}
		plan.Name = types.StringValue("JoistNodeRole-" + cluster)
	}
	if plan.AccessEntryType.ValueString() != "NONE" && cluster == "" && !plan.ClusterName.IsUnknown() {
		resp.Diagnostics.AddAttributeError(path.Root("cluster_name"), "Missing cluster name",
			"the access entry needs the EKS cluster: set cluster_name here or in the provider block, or access_entry_type = \"NONE\"")
		return
	}
	// The partition comes from the region: plan the policies once the AWS
	// settings are known (they may come from resources created in this run).
	if plan.CreateRole.ValueBool() && !plan.AdditionalPolicyARNs.IsUnknown() && r.clients != nil && r.clients.awsKnown {
		partition := r.partition(ctx, &resp.Diagnostics)
		plan.AssumeRolePolicy = types.StringValue(nodeTrustPolicy(partition))
		account := ""
		if plan.ClusterIPFamily.ValueString() == "ipv6" && plan.AttachCNIPolicy.ValueBool() {
			account = r.account(ctx, &resp.Diagnostics)
		}
		plan.PolicyARNs = stringSet(plan.wantPolicies(ctx, partition, account, &resp.Diagnostics))
	}
	var state *nodeIAMRoleModel
	if !req.State.Raw.IsNull() {
		state = &nodeIAMRoleModel{}
		resp.Diagnostics.Append(req.State.Get(ctx, state)...)
	}
	if plan.AccessEntryType.ValueString() == "NONE" {
		plan.AccessEntryARN = types.StringValue("")
	} else if state != nil && state.AccessEntryType.Equal(plan.AccessEntryType) && state.AccessEntryARN.ValueString() != "" {
		plan.AccessEntryARN = state.AccessEntryARN
	}
	if state != nil {
		r.checkNodesKeepAccess(ctx, state, &plan, &resp.Diagnostics)
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
}

// replacedBy names the attribute whose change replaces the role, or "".
func (m *nodeIAMRoleModel) replacedBy(plan *nodeIAMRoleModel) string {
	switch {
	case !plan.Name.IsUnknown() && !m.Name.Equal(plan.Name):
		return "name"
	case !m.NamePrefix.Equal(plan.NamePrefix):
		return "name_prefix"
	case !m.Path.Equal(plan.Path):
		return "path"
	case !m.ClusterName.Equal(plan.ClusterName):
		return "cluster_name"
	case !m.CreateRole.Equal(plan.CreateRole):
		return "create_role"
	}
	return ""
}

// checkNodesKeepAccess tells, at plan time, what a change that replaces
// the role or its access entry does to the nodes running with the role,
// counted from the NodeClaims in the cluster. Replacing is a warning: the
// apply itself refuses to delete a role, or its entry, that live instances
// use (releaseRole). Changing the entry's type is a warning too: EKS keeps
// one entry per role and cannot change its type, so the entry is deleted
// and created again. Removing the entry (NONE) is an error, unless the
// aws-auth ConfigMap maps the role: every node would leave the cluster.
func (r *NodeIAMRoleResource) checkNodesKeepAccess(ctx context.Context, state, plan *nodeIAMRoleModel, diags *diag.Diagnostics) {
	attr := state.replacedBy(plan)
	oldType, newType := state.AccessEntryType.ValueString(), plan.AccessEntryType.ValueString()
	entryChange := attr == "" && !plan.AccessEntryType.IsUnknown() && oldType != newType && oldType != "NONE"
	if (attr == "" && !entryChange) || r.clients == nil || !r.clients.awsKnown || !r.clients.kubeKnown {
		return
	}
	use, err := r.claimsUsingRole(ctx, state.Name.ValueString())
	if err != nil {
		diags.AddWarning("Could not count the nodes running with the node role",
			fmt.Sprintf("this change replaces role %s or its access entry, which takes the nodes running with it out of the cluster: %v", state.Name.ValueString(), err))
		return
	}
	if use.Claims == 0 {
		return
	}
	switch {
	case attr != "":
		diags.AddAttributeWarning(path.Root(attr), "Replacing a node role that nodes run with", fmt.Sprintf(
			"%s. Changing %s replaces the role, and deleting it, or its access entry, would take those nodes out of the cluster at once: "+
				"the apply stops before deleting either while live instances run with the role. To move the nodes to a new role without an outage, "+
				"give it a new name (or name_prefix) and set lifecycle { create_before_destroy = true }: the new role and its entry are created first, "+
				"node classes move to it, the controller replaces their nodes, and an apply after that deletes this role. "+
				"A change that keeps the name (path, cluster_name or create_role with a fixed name) cannot create the new role beside this one: "+
				"move the nodes to another role first.", use, attr))
	case newType == "NONE":
		mapped, err := awsAuthMaps(ctx, r.clients, state.ARN.ValueString())
		if err != nil || !mapped {
			diags.AddAttributeError(path.Root("access_entry_type"), "Removing the access entry of nodes", fmt.Sprintf(
				"%s. access_entry_type = \"NONE\" deletes the role's access entry, and the aws-auth ConfigMap does not map the role (%v): "+
					"every one of those nodes would leave the cluster. Map the role in aws-auth first, or move the nodes to another role.", use, errOr(err, "no mapRoles entry")))
			return
		}
		diags.AddAttributeWarning(path.Root("access_entry_type"), "Removing the access entry of nodes", fmt.Sprintf(
			"%s. Their cluster access comes from the aws-auth ConfigMap once the access entry is deleted, as long as the cluster's authentication mode reads it.", use))
	default:
		diags.AddAttributeWarning(path.Root("access_entry_type"), "Replacing the access entry of nodes", fmt.Sprintf(
			"%s. EKS keeps one access entry per role and cannot change its type, so the entry is deleted and created again as %s: "+
				"those nodes cannot authenticate between the two calls, and the old entry is put back if the new one cannot be created.", use, newType))
	}
}

// claimsUsingRole counts the NodeClaims running with role.
func (r *NodeIAMRoleResource) claimsUsingRole(ctx context.Context, role string) (*roleClaims, error) {
	cfg, err := r.clients.AWS(ctx)
	if err != nil {
		return nil, err
	}
	kube, err := r.clients.Kubernetes(ctx)
	if err != nil {
		return nil, err
	}
	return claimsUsingRole(ctx, iam.NewFromConfig(cfg), kube, role)
}

func (m *nodeIAMRoleModel) spec(ctx context.Context, partition string, diags *diag.Diagnostics) roleSpec {
	return roleSpec{
		Name: m.Name.ValueString(), Path: m.Path.ValueString(), Description: m.Description.ValueString(),
		Boundary: m.PermissionsBoundary.ValueString(), Trust: nodeTrustPolicy(partition), Tags: stringMap(ctx, m.Tags, diags),
		MaxSessionDuration: m.MaxSessionDuration.ValueInt64(),
	}
}

func (r *NodeIAMRoleResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	defer settlePartial(&resp.State, &resp.Diagnostics)
	var plan nodeIAMRoleModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	cfg, ok := r.awsConfig(ctx, &resp.Diagnostics)
	if resp.Diagnostics.HasError() || !ok {
		return
	}
	c := iam.NewFromConfig(cfg)
	partition := partitionOf(cfg.Region)
	if plan.Name.IsUnknown() {
		plan.Name = types.StringValue(uniqueName(plan.NamePrefix.ValueString()))
	}
	name := plan.Name.ValueString()
	if plan.CreateRole.ValueBool() {
		if _, err := createRole(ctx, c, plan.spec(ctx, partition, &resp.Diagnostics)); err != nil {
			resp.Diagnostics.AddAttributeError(path.Root("name"), "Creating the node role", err.Error())
			return
		}
		plan.ID = types.StringValue(name)
		resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
		if err := syncAttachments(ctx, c, name, nil, plan.wantPolicies(ctx, partition, r.accountIf(ctx, &plan, cfg, &resp.Diagnostics), &resp.Diagnostics)); err != nil {
			resp.Diagnostics.AddError("Attaching the node role's policies", err.Error())
			return
		}
	}
	live, err := readRole(ctx, c, name)
	if err == nil && live == nil {
		err = fmt.Errorf("role %s does not exist; create it or leave create_role at true", name)
	}
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("name"), "Reading the node role", err.Error())
		return
	}
	plan.ID = types.StringValue(name)
	if t := plan.AccessEntryType.ValueString(); t != "NONE" {
		if err := r.createAccessEntry(ctx, eks.NewFromConfig(cfg), r.clusterName(plan.ClusterName), live.ARN, t); err != nil {
			resp.Diagnostics.AddAttributeError(path.Root("access_entry_type"), "Creating the node access entry", err.Error())
		}
	}
	r.fill(ctx, cfg, &plan, live, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *NodeIAMRoleResource) createAccessEntry(ctx context.Context, c *eks.Client, cluster, principal, entryType string) error {
	_, err := c.CreateAccessEntry(ctx, &eks.CreateAccessEntryInput{ClusterName: aws.String(cluster), PrincipalArn: aws.String(principal), Type: aws.String(entryType)})
	if err != nil {
		return fmt.Errorf("eks:CreateAccessEntry %s in cluster %s: %w", principal, cluster, err)
	}
	return nil
}

// replaceAccessEntry changes the type of principal's entry from old to
// want (either may be NONE: no entry). EKS keeps one entry per principal
// and cannot change its type, so the new entry can only follow the old
// one's delete, in the next call; when it cannot be created the old one is
// put back, so a failed apply does not leave the nodes without an entry.
func (r *NodeIAMRoleResource) replaceAccessEntry(ctx context.Context, c *eks.Client, cluster, principal, old, want string) error {
	if old != "NONE" {
		if _, err := c.DeleteAccessEntry(ctx, &eks.DeleteAccessEntryInput{ClusterName: aws.String(cluster), PrincipalArn: aws.String(principal)}); err != nil && !isAWSCode(err, "ResourceNotFoundException") {
			return fmt.Errorf("eks:DeleteAccessEntry: %w", err)
		}
	}
	if want == "NONE" {
		return nil
	}
	err := r.createAccessEntry(ctx, c, cluster, principal, want)
	if err == nil || old == "NONE" {
		return err
	}
	if restore := r.createAccessEntry(ctx, c, cluster, principal, old); restore != nil {
		return fmt.Errorf("%w; putting the %s entry back failed too, so nodes running with the role cannot join or stay in the cluster: %v", err, old, restore)
	}
	return fmt.Errorf("%w; the %s entry was put back", err, old)
}

// fill sets the computed attributes from the live role and access entry.
func (r *NodeIAMRoleResource) fill(ctx context.Context, cfg aws.Config, m *nodeIAMRoleModel, live *liveRole, diags *diag.Diagnostics) {
	m.ARN, m.Name, m.ID = types.StringValue(live.ARN), types.StringValue(live.Name), types.StringValue(live.Name)
	m.PolicyARNs = stringSet(live.Attached)
	m.AssumeRolePolicy = types.StringValue(live.Trust)
	if want := nodeTrustPolicy(partitionOf(cfg.Region)); sameJSON(live.Trust, want) {
		m.AssumeRolePolicy = types.StringValue(want)
	}
	if m.CreateRole.ValueBool() {
		m.MaxSessionDuration = types.Int64Value(live.MaxSessionDuration)
		m.Path = types.StringValue(live.Path)
		m.Description = optionalString(m.Description, live.Description)
		m.PermissionsBoundary = optionalString(m.PermissionsBoundary, live.Boundary)
		m.Tags = tagsValue(m.Tags, live.Tags)
	}
	m.AccessEntryARN = types.StringValue("")
	cluster := r.clusterName(m.ClusterName)
	if m.AccessEntryType.ValueString() == "NONE" || cluster == "" {
		return
	}
	out, err := eks.NewFromConfig(cfg).DescribeAccessEntry(ctx, &eks.DescribeAccessEntryInput{ClusterName: aws.String(cluster), PrincipalArn: aws.String(live.ARN)})
	switch {
	case isAWSCode(err, "ResourceNotFoundException"):
		// Gone: plan shows it as a change back to the configured type.
		m.AccessEntryType = types.StringValue("NONE")
	case err != nil:
		diags.AddError("Reading the node access entry", fmt.Sprintf("eks:DescribeAccessEntry %s: %v", live.ARN, err))
	default:
		m.AccessEntryType = types.StringValue(aws.ToString(out.AccessEntry.Type))
		m.AccessEntryARN = types.StringValue(aws.ToString(out.AccessEntry.AccessEntryArn))
	}
}

func (r *NodeIAMRoleResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state nodeIAMRoleModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	cfg, ok := r.awsConfig(ctx, &resp.Diagnostics)
	if resp.Diagnostics.HasError() || !ok {
		return
	}
	live, err := readRole(ctx, iam.NewFromConfig(cfg), state.Name.ValueString())
	if err != nil {
		resp.Diagnostics.AddError("Reading the node role", err.Error())
		return
	}
	if live == nil {
		resp.State.RemoveResource(ctx)
		return
	}
	if state.AttachCNIPolicy.IsNull() {
		state.importPolicies(partitionOf(cfg.Region), live.Attached)
		if prefix := namePrefixOf(live.Name); prefix != "" {
			state.NamePrefix = types.StringValue(prefix)
		}
	}
	r.fill(ctx, cfg, &state, live, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// importPolicies derives the policy attributes of an imported role from
// what is attached to it.
func (m *nodeIAMRoleModel) importPolicies(partition string, attached []string) {
	prefix := "arn:" + partition + ":iam::aws:policy/"
	known := map[string]bool{prefix + "AmazonEKSWorkerNodePolicy": true, prefix + "AmazonEC2ContainerRegistryPullOnly": true}
	cni, ssm := prefix+"AmazonEKS_CNI_Policy", prefix+"AmazonSSMManagedInstanceCore"
	m.AttachCNIPolicy, m.AttachSSMPolicy = types.BoolValue(false), types.BoolValue(false)
	m.ClusterIPFamily = types.StringValue("ipv4")
	var extra []string
	for _, a := range attached {
		switch {
		case a == cni:
			m.AttachCNIPolicy = types.BoolValue(true)
		case strings.HasSuffix(a, ":policy/"+ipv6CNIPolicyName):
			m.AttachCNIPolicy, m.ClusterIPFamily = types.BoolValue(true), types.StringValue("ipv6")
		case a == ssm:
			m.AttachSSMPolicy = types.BoolValue(true)
		case !known[a]:
			extra = append(extra, a)
		}
	}
	m.AdditionalPolicyARNs = types.SetNull(types.StringType)
	if len(extra) > 0 {
		m.AdditionalPolicyARNs = stringSet(extra)
	}
}

func (r *NodeIAMRoleResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	defer settlePartial(&resp.State, &resp.Diagnostics)
	var plan, state nodeIAMRoleModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	cfg, ok := r.awsConfig(ctx, &resp.Diagnostics)
	if resp.Diagnostics.HasError() || !ok {
		return
	}
	c := iam.NewFromConfig(cfg)
	name := state.Name.ValueString()
	live, err := readRole(ctx, c, name)
	if err == nil && live == nil {
		err = fmt.Errorf("role %s no longer exists", name)
	}
	if err != nil {
		resp.Diagnostics.AddError("Reading the node role", err.Error())
		return
	}
	if plan.CreateRole.ValueBool() {
		partition := partitionOf(cfg.Region)
		if err := updateRole(ctx, c, live, plan.spec(ctx, partition, &resp.Diagnostics)); err != nil {
			resp.Diagnostics.AddError("Updating the node role", err.Error())
			return
		}
		if err := syncAttachments(ctx, c, name, live.Attached, plan.wantPolicies(ctx, partition, r.accountIf(ctx, &plan, cfg, &resp.Diagnostics), &resp.Diagnostics)); err != nil {
			resp.Diagnostics.AddError("Updating the node role's policies", err.Error())
			return
		}
	}
	ec := eks.NewFromConfig(cfg)
	cluster := r.clusterName(plan.ClusterName)
	if old, want := state.AccessEntryType.ValueString(), plan.AccessEntryType.ValueString(); old != want {
		if err := r.replaceAccessEntry(ctx, ec, cluster, live.ARN, old, want); err != nil {
			resp.Diagnostics.AddAttributeError(path.Root("access_entry_type"), "Replacing the node access entry", err.Error())
			return
		}
	}
	if live, err = readRole(ctx, c, name); err != nil || live == nil {
		resp.Diagnostics.AddError("Reading the node role", fmt.Sprint(err))
		return
	}
	r.fill(ctx, cfg, &plan, live, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *NodeIAMRoleResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state nodeIAMRoleModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	cfg, ok := r.awsConfig(ctx, &resp.Diagnostics)
	if resp.Diagnostics.HasError() || !ok {
		return
	}
	// Proven before any change: the entry goes only when the role can.
	release, err := releaseRole(ctx, cfg, state.Name.ValueString(), r.clusterName(state.ClusterName), state.CreateRole.ValueBool())
	if err != nil {
		resp.Diagnostics.AddError("Deleting the node role", err.Error())
		return
	}
	if state.AccessEntryType.ValueString() != "NONE" && state.AccessEntryARN.ValueString() != "" {
		_, err := eks.NewFromConfig(cfg).DeleteAccessEntry(ctx, &eks.DeleteAccessEntryInput{
			ClusterName: aws.String(r.clusterName(state.ClusterName)), PrincipalArn: aws.String(state.ARN.ValueString()),
		})
		if err != nil && !isAWSCode(err, "ResourceNotFoundException") {
			resp.Diagnostics.AddError("Deleting the node access entry", fmt.Sprintf("eks:DeleteAccessEntry: %v", err))
			return
		}
	}
	if !state.CreateRole.ValueBool() {
		return
	}
	if err := deleteRole(ctx, iam.NewFromConfig(cfg), state.Name.ValueString(), release); err != nil {
		resp.Diagnostics.AddError("Deleting the node role", err.Error())
	}
}

// ipv6CNIPolicyName is the customer managed policy the EKS documentation
// has accounts create for the VPC CNI with IPv6.
const ipv6CNIPolicyName = "AmazonEKS_CNI_IPv6_Policy"

func ipv6CNIPolicyARN(partition, account string) string {
	return "arn:" + partition + ":iam::" + account + ":policy/" + ipv6CNIPolicyName
}

// account is the credentials' account, for the IPv6 CNI policy's ARN.
func (r *NodeIAMRoleResource) account(ctx context.Context, diags *diag.Diagnostics) string {
	cfg, ok := r.awsConfig(ctx, diags)
	if !ok {
		return ""
	}
	id, err := accountID(ctx, cfg)
	if err != nil {
		diags.AddAttributeError(path.Root("cluster_ip_family"), "Finding the AWS account", err.Error())
	}
	return id
}

// accountIf is the account when m's policies need it.
func (r *NodeIAMRoleResource) accountIf(ctx context.Context, m *nodeIAMRoleModel, cfg aws.Config, diags *diag.Diagnostics) string {
	if m.ClusterIPFamily.ValueString() != "ipv6" || !m.AttachCNIPolicy.ValueBool() {
		return ""
	}
	id, err := accountID(ctx, cfg)
	if err != nil {
		diags.AddAttributeError(path.Root("cluster_ip_family"), "Finding the AWS account", err.Error())
	}
	return id
}

func (r *NodeIAMRoleResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("name"), req.ID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("create_role"), true)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("path"), "/")...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("access_entry_type"), "EC2_LINUX")...)
}
