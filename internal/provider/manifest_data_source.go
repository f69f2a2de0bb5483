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

var _ datasource.DataSourceWithConfigure = (*manifestDataSource)(nil)

// manifestDataSource is what data.joist_node_pool and
// data.joist_ec2_node_class share: a cluster-scoped object read by name,
// its spec with the apiserver's defaults and its status.
type manifestDataSource struct {
	kind     *kind
	typeName string // after the provider's name: "_node_pool"
	doc      string
	clients  *clients
}

func (d *manifestDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + d.typeName
}

func (d *manifestDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	k := d.kind.gvk.Kind
	attrs := crdschema.DataSourceAttributes(d.kind.spec)
	attrs["name"] = schema.StringAttribute{Required: true, MarkdownDescription: "Name of the " + k + "."}
	attrs["id"] = schema.StringAttribute{Computed: true, MarkdownDescription: "The " + k + "'s name."}
	attrs["status"] = schema.SingleNestedAttribute{Computed: true, MarkdownDescription: "What the controller last reported.",
		Attributes: crdschema.DataSourceAttributes(d.kind.status)}
	attrs["ready"] = schema.BoolAttribute{Computed: true, MarkdownDescription: "Whether the " + k + " is Ready."}
	resp.Schema = schema.Schema{MarkdownDescription: d.doc, Attributes: attrs}
}

func (d *manifestDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	if c, ok := req.ProviderData.(*clients); ok {
		d.clients = c
	}
}

func (d *manifestDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var name types.String
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("name"), &name)...)
	if resp.Diagnostics.HasError() {
		return
	}
	kube, err := d.clients.Kubernetes(ctx)
	if err != nil {
		resp.Diagnostics.AddError(fmt.Sprintf("Reading %s %s", d.kind.gvk.Kind, name.ValueString()), err.Error())
		return
	}
	live, err := kube.Resource(d.kind.gvr()).Get(ctx, name.ValueString(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		resp.Diagnostics.AddAttributeError(path.Root("name"), "No such "+d.kind.gvk.Kind, fmt.Sprintf("%s %q does not exist in the cluster", d.kind.gvk.Kind, name.ValueString()))
		return
	}
	if err != nil {
		resp.Diagnostics.AddError(fmt.Sprintf("Reading %s %s", d.kind.gvk.Kind, name.ValueString()), err.Error())
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
