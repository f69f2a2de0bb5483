// Package provider is the Terraform side of Joist: provider configuration,
// one file per resource and data source, conversions between Terraform
// values and the Karpenter-compatible API objects, plan-time validation and
// previews.
package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
)

var _ provider.Provider = (*JoistProvider)(nil)

// JoistProvider is the joist provider.
type JoistProvider struct {
	version string
}

// JoistProviderModel is the provider block.
type JoistProviderModel struct {
	ClusterName types.String `tfsdk:"cluster_name"`
	Kubernetes  types.Object `tfsdk:"kubernetes"`
	AWS         types.Object `tfsdk:"aws"`
	// FailOnUnplaceablePods: see the schema.
	FailOnUnplaceablePods types.Bool `tfsdk:"fail_on_unplaceable_pods"`
}

// New returns a constructor of the provider at the given version.
func New(version string) func() provider.Provider {
	return func() provider.Provider { return &JoistProvider{version: version} }
}

func (p *JoistProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "joist"
	resp.Version = p.version
}

func (p *JoistProvider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Joist manages just-in-time node autoscaling for Amazon EKS: Karpenter-compatible " +
			"NodePools and EC2NodeClasses, the controller that runs them, and its AWS wiring.",
		Attributes: map[string]schema.Attribute{
			"cluster_name": schema.StringAttribute{
				MarkdownDescription: "Name of the EKS cluster the provider manages autoscaling for.",
				Optional:            true,
			},
			"kubernetes": kubernetesSchema(),
			"aws":        awsSchema(),
			"fail_on_unplaceable_pods": schema.BoolAttribute{
				MarkdownDescription: "Fail a plan whose `joist_node_pool` change would leave pods with no node pool " +
					"that admits them (`planned_impact.pods_without_pool` above 0). Defaults to `false`: such a plan " +
					"warns and may be applied.",
				Optional: true,
			},
		},
	}
}

// Configure records the settings; clients are built on first use, so
// unknown values (a cluster created in the same apply) do not fail planning.
func (p *JoistProvider) Configure(ctx context.Context, req provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	var cfg JoistProviderModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() {
		return
	}
	c := &clients{clusterName: cfg.ClusterName.ValueString(), clusterKnown: !cfg.ClusterName.IsUnknown(),
		kubeKnown: !cfg.Kubernetes.IsUnknown(), awsKnown: !cfg.AWS.IsUnknown(),
		failOnUnplaceablePods: cfg.FailOnUnplaceablePods.ValueBool()}
	opts := basetypes.ObjectAsOptions{UnhandledUnknownAsEmpty: true}
	if c.kubeKnown && !cfg.Kubernetes.IsNull() {
		c.kube = &kubernetesModel{}
		resp.Diagnostics.Append(cfg.Kubernetes.As(ctx, c.kube, opts)...)
		c.kubeKnown = c.kube.known()
	}
	if c.awsKnown && !cfg.AWS.IsNull() {
		c.aws = &awsModel{}
		resp.Diagnostics.Append(cfg.AWS.As(ctx, c.aws, opts)...)
		c.awsKnown = c.aws.known()
	}
	resp.ResourceData = c
	resp.DataSourceData = c
}

func (p *JoistProvider) Resources(_ context.Context) []func() resource.Resource {
	return []func() resource.Resource{NewNodePoolResource, NewEC2NodeClassResource, NewNodeOverlayResource, NewInterruptionQueueResource, NewNodeIAMRoleResource, NewControllerIAMRoleResource, NewControllerResource(p.version)}
}

func (p *JoistProvider) DataSources(_ context.Context) []func() datasource.DataSource {
	return []func() datasource.DataSource{NewNodePoolDataSource, NewEC2NodeClassDataSource, NewInstanceTypesDataSource, NewControllerPolicyDataSource}
}
