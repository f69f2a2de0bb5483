package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/policy"
)

var _ datasource.DataSourceWithConfigure = (*ControllerPolicyDataSource)(nil)

// ControllerPolicyDataSource is data.joist_controller_policy: the
// controller's least-privilege IAM policy, for users who manage IAM
// elsewhere.
type ControllerPolicyDataSource struct{ awsBase }

// NewControllerPolicyDataSource returns the joist_controller_policy data source.
func NewControllerPolicyDataSource() datasource.DataSource { return &ControllerPolicyDataSource{} }

type controllerPolicyModel struct {
	ClusterName           types.String `tfsdk:"cluster_name"`
	NodeRoleARN           types.String `tfsdk:"node_role_arn"`
	InterruptionQueueName types.String `tfsdk:"interruption_queue_name"`
	InterruptionQueueKey  types.String `tfsdk:"interruption_queue_kms_key_arn"`
	SSMParameterARNs      types.List   `tfsdk:"ssm_parameter_arns"`
	Region                types.String `tfsdk:"region"`
	AccountID             types.String `tfsdk:"account_id"`
	Partition             types.String `tfsdk:"partition"`
	JSON                  types.String `tfsdk:"json"`
	ManagedDocuments      types.List   `tfsdk:"managed_policy_documents"`
	Actions               types.List   `tfsdk:"actions"`
}

func (d *ControllerPolicyDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_controller_policy"
}

func (d *ControllerPolicyDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.configureData(req.ProviderData, &resp.Diagnostics)
}

func (d *ControllerPolicyDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "The Joist controller's least-privilege IAM policy, as `joist_controller_iam_role` attaches " +
			"it: every mutating EC2 and IAM action is limited to resources tagged for the cluster " +
			"(`kubernetes.io/cluster/<name> = owned`, with `karpenter.sh/nodepool` or " +
			"`karpenter.k8s.aws/ec2nodeclass` present) in one region, `iam:PassRole` to the node role, SQS to the " +
			"interruption queue (and `kms:Decrypt` through SQS to its key, when it has one) and `eks:DescribeCluster` to the cluster. Region, account and partition default " +
			"to the provider's AWS credentials.",
		Attributes: map[string]schema.Attribute{
			"cluster_name":                   schema.StringAttribute{Optional: true, MarkdownDescription: "EKS cluster; defaults to the provider's `cluster_name`."},
			"node_role_arn":                  schema.StringAttribute{Required: true, MarkdownDescription: "ARN of the node role (`joist_node_iam_role.arn`); the only role the controller may pass."},
			"interruption_queue_name":        schema.StringAttribute{Optional: true, MarkdownDescription: "Interruption queue name; without it the policy grants no SQS access."},
			"interruption_queue_kms_key_arn": dataQueueKeyAttribute(),
			"ssm_parameter_arns": schema.ListAttribute{Optional: true, ElementType: types.StringType,
				MarkdownDescription: "SSM parameters the controller may read besides `/aws/service/*`, as `joist_controller_iam_role.ssm_parameter_arns`."},
			"region":     schema.StringAttribute{Optional: true, Computed: true, MarkdownDescription: "Region; defaults to the provider's."},
			"account_id": schema.StringAttribute{Optional: true, Computed: true, MarkdownDescription: "Account ID; defaults to the credentials' account (sts:GetCallerIdentity)."},
			"partition":  schema.StringAttribute{Optional: true, Computed: true, MarkdownDescription: "ARN partition; defaults to the region's (`aws`, `aws-cn`, `aws-us-gov`)."},
			"json":       schema.StringAttribute{Computed: true, MarkdownDescription: "The policy document (JSON), for an inline policy (within IAM's 10,240-character limit)."},
			"managed_policy_documents": schema.ListAttribute{
				Computed: true, ElementType: types.StringType,
				MarkdownDescription: "The policy split into documents that each fit a customer managed policy (6,144 characters).",
			},
			"actions": schema.ListAttribute{Computed: true, ElementType: types.StringType, MarkdownDescription: "Every action the policy grants, sorted."},
		},
	}
}

func (d *ControllerPolicyDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m controllerPolicyModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	p, ok := d.policyParams(ctx, d.clusterName(m.ClusterName), m.NodeRoleARN.ValueString(), m.InterruptionQueueName.ValueString(),
		m.Region.ValueString(), m.AccountID.ValueString(), m.Partition.ValueString(), &resp.Diagnostics)
	if !ok {
		return
	}
	p.SSMParameterARNs = listStrings(ctx, m.SSMParameterARNs, &resp.Diagnostics)
	p.QueueKMSKeyARN = m.InterruptionQueueKey.ValueString()
	doc, err := policy.Render(p)
	if err != nil {
		resp.Diagnostics.AddError("Rendering the controller policy", err.Error())
		return
	}
	parts, err := policy.Split(doc, policy.ManagedPolicyMaxSize)
	if err != nil {
		resp.Diagnostics.AddError("Splitting the controller policy", err.Error())
		return
	}
	var texts []string
	for _, part := range parts {
		texts = append(texts, part.JSON())
	}
	m.Region, m.AccountID, m.Partition = types.StringValue(p.Region), types.StringValue(p.AccountID), types.StringValue(p.Partition)
	m.JSON = types.StringValue(doc.JSON())
	m.ManagedDocuments = stringList(texts)
	m.Actions = stringList(doc.Actions())
	if doc.Size() > policy.InlinePolicyMaxSize {
		resp.Diagnostics.AddWarning("Controller policy exceeds the inline limit",
			fmt.Sprintf("the policy is %d characters, over IAM's %d for a role's inline policies; attach managed_policy_documents as managed policies", doc.Size(), policy.InlinePolicyMaxSize))
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}
