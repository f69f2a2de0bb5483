package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/joistdev/terraform-provider-joist/internal/provider/crdschema"
)

var _ datasource.DataSourceWithConfigure = (*NodePoolDataSource)(nil)

// NodePoolDataSource is data.joist_node_pool: a NodePool read by name, for
// pools managed elsewhere.
type NodePoolDataSource struct {
	kind    *kind
	clients *clients
}

// NewNodePoolDataSource returns the joist_node_pool data source.
func NewNodePoolDataSource() datasource.DataSource { return &NodePoolDataSource{kind: nodePoolKind()} }

func (d *NodePoolDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_node_pool"
}

func (d *NodePoolDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	attrs := crdschema.DataSourceAttributes(d.kind.spec)
	attrs["name"] = schema.StringAttribute{Required: true, MarkdownDescription: "Name of the NodePool."}
	attrs["id"] = schema.StringAttribute{Computed: true, MarkdownDescription: "The NodePool's name."}
	attrs["status"] = schema.SingleNestedAttribute{Computed: true, MarkdownDescription: "What the controller last reported.",
		Attributes: crdschema.DataSourceAttributes(d.kind.status)}
	attrs["ready"] = schema.BoolAttribute{Computed: true, MarkdownDescription: "Whether the NodePool is Ready."}
	resp.Schema = schema.Schema{
		MarkdownDescription: "Reads a `karpenter.sh/v1` NodePool: its spec with the apiserver's defaults, and its status.",
		Attributes:          attrs,
	}
}

func (d *NodePoolDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	if c, ok := req.ProviderData.(*clients); ok {
		d.clients = c
	}
}

func (d *NodePoolDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var name types.String
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("name"), &name)...)
	if resp.Diagnostics.HasError() {
		return
	}
	kube, err := d.clients.Kubernetes(ctx)
	if err != nil {
		resp.Diagnostics.AddError("Reading node pool "+name.ValueString(), err.Error())
		return
	}
	live, err := kube.Resource(d.kind.gvr()).Get(ctx, name.ValueString(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		resp.Diagnostics.AddAttributeError(path.Root("name"), "No such node pool", fmt.Sprintf("NodePool %q does not exist in the cluster", name.ValueString()))
		return
	}
	if err != nil {
		resp.Diagnostics.AddError("Reading node pool "+name.ValueString(), err.Error())
		return
	}
	spec, _ := live.Object["spec"].(map[string]any)
	status, _ := live.Object["status"].(map[string]any)
	attrs := crdschema.DecodeObject(d.kind.spec, spec, nil)
	attrs["name"] = name
	attrs["id"] = name
	attrs["status"] = types.ObjectValueMust(crdschema.ObjectType(d.kind.status).AttrTypes, crdschema.DecodeObject(d.kind.status, status, nil))
	attrs["ready"] = types.BoolValue(conditionTrue(status, "Ready"))
	raw, diags := rawOf(ctx, req.Config.Schema.Type(), attrs)
	resp.Diagnostics.Append(diags...)
	resp.State.Raw = raw
}
