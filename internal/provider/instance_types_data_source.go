package provider

import (
	"context"
	"maps"
	"math"
	"slices"
	"sort"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	corev1 "k8s.io/api/core/v1"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/requirements"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/instancetype"
)

var _ datasource.DataSourceWithConfigure = (*InstanceTypesDataSource)(nil)

// InstanceTypesDataSource is data.joist_instance_types: the EC2 instance
// types and offerings a set of NodePool requirements admits, with prices.
type InstanceTypesDataSource struct {
	clients *clients
}

// NewInstanceTypesDataSource returns the joist_instance_types data source.
func NewInstanceTypesDataSource() datasource.DataSource { return &InstanceTypesDataSource{} }

type instanceTypesModel struct {
	Requirements  []requirementModel `tfsdk:"requirements"`
	InstanceTypes types.List         `tfsdk:"instance_types"`
}

type requirementModel struct {
	Key      types.String `tfsdk:"key"`
	Operator types.String `tfsdk:"operator"`
	Values   []string     `tfsdk:"values"`
}

var instanceTypeObject = types.ObjectType{AttrTypes: map[string]attr.Type{
	"name":            types.StringType,
	"architecture":    types.StringType,
	"vcpus":           types.Int64Type,
	"memory_mib":      types.Int64Type,
	"zones":           types.ListType{ElemType: types.StringType},
	"capacity_types":  types.ListType{ElemType: types.StringType},
	"on_demand_price": types.Float64Type,
	"spot_price":      types.Float64Type,
	"price":           types.Float64Type,
}}

func (d *InstanceTypesDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_instance_types"
}

func (d *InstanceTypesDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "What a set of NodePool requirements resolves to in the provider's AWS region: " +
			"the instance types and offerings (zone, capacity type) they admit, with hourly prices, cheapest " +
			"first. Prices are the Pricing API's on-demand prices (the embedded table where that API is out " +
			"of reach) and the latest spot prices.",
		Attributes: map[string]schema.Attribute{
			"requirements": schema.ListNestedAttribute{
				Optional:            true,
				MarkdownDescription: "Requirements as a NodePool's `template.spec.requirements` (well-known labels such as `kubernetes.io/arch`, `karpenter.k8s.aws/instance-category`, `topology.kubernetes.io/zone`, `karpenter.sh/capacity-type`).",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"key":      schema.StringAttribute{Required: true, MarkdownDescription: "Label key."},
					"operator": schema.StringAttribute{Required: true, MarkdownDescription: "`In`, `NotIn`, `Exists`, `DoesNotExist`, `Gt`, `Lt`, `Gte` or `Lte`."},
					"values":   schema.ListAttribute{Optional: true, ElementType: types.StringType, MarkdownDescription: "Values of the key."},
				}},
			},
			"instance_types": schema.ListNestedAttribute{
				Computed:            true,
				MarkdownDescription: "The admitted instance types, cheapest admitted offering first.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"name":            schema.StringAttribute{Computed: true, MarkdownDescription: "Instance type, such as `m5.large`."},
					"architecture":    schema.StringAttribute{Computed: true, MarkdownDescription: "`amd64` or `arm64`."},
					"vcpus":           schema.Int64Attribute{Computed: true, MarkdownDescription: "Default vCPUs."},
					"memory_mib":      schema.Int64Attribute{Computed: true, MarkdownDescription: "Memory in MiB."},
					"zones":           schema.ListAttribute{Computed: true, ElementType: types.StringType, MarkdownDescription: "Zones with an admitted offering."},
					"capacity_types":  schema.ListAttribute{Computed: true, ElementType: types.StringType, MarkdownDescription: "Admitted capacity types (`on-demand`, `spot`)."},
					"on_demand_price": schema.Float64Attribute{Computed: true, MarkdownDescription: "Hourly on-demand price in USD; null when unknown."},
					"spot_price":      schema.Float64Attribute{Computed: true, MarkdownDescription: "Lowest hourly spot price among the admitted zones; null when unknown."},
					"price":           schema.Float64Attribute{Computed: true, MarkdownDescription: "Price of the cheapest admitted offering; the list is sorted by it."},
				}},
			},
		},
	}
}

func (d *InstanceTypesDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	if c, ok := req.ProviderData.(*clients); ok {
		d.clients = c
	}
}

func (d *InstanceTypesDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m instanceTypesModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	var in []corev1.NodeSelectorRequirement
	for _, r := range m.Requirements {
		in = append(in, corev1.NodeSelectorRequirement{Key: r.Key.ValueString(), Operator: corev1.NodeSelectorOperator(r.Operator.ValueString()), Values: r.Values})
	}
	reqs, err := requirements.FromNodeSelectorRequirements(in, nil)
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("requirements"), "Invalid requirements", err.Error())
		return
	}
	cfg, err := d.clients.AWS(ctx)
	if err != nil {
		resp.Diagnostics.AddError("AWS access for joist_instance_types", err.Error())
		return
	}
	admitted, err := resolveInstanceTypes(ctx, cfg, reqs)
	if err != nil {
		resp.Diagnostics.AddError("Listing EC2 instance types", err.Error())
		return
	}
	elems := make([]attr.Value, 0, len(admitted))
	for _, it := range admitted {
		elems = append(elems, it.value())
	}
	m.InstanceTypes = types.ListValueMust(instanceTypeObject, elems)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// admittedType is an instance type and the offerings requirements admit.
type admittedType struct {
	name, arch       string
	vcpus, memoryMiB int64
	zones, capTypes  []string
	onDemand, spot   *float64
	price            float64
}

func (a *admittedType) value() attr.Value {
	f := func(p *float64) attr.Value {
		if p == nil {
			return types.Float64Null()
		}
		return types.Float64Value(*p)
	}
	list := func(s []string) attr.Value {
		v, _ := types.ListValueFrom(context.Background(), types.StringType, s)
		return v
	}
	return types.ObjectValueMust(instanceTypeObject.AttrTypes, map[string]attr.Value{
		"name": types.StringValue(a.name), "architecture": types.StringValue(a.arch),
		"vcpus": types.Int64Value(a.vcpus), "memory_mib": types.Int64Value(a.memoryMiB),
		"zones": list(a.zones), "capacity_types": list(a.capTypes),
		"on_demand_price": f(a.onDemand), "spot_price": f(a.spot), "price": types.Float64Value(a.price),
	})
}

// resolveInstanceTypes lists the region's instance types and keeps the
// offerings reqs admit, by the rule the runtime launches with.
func resolveInstanceTypes(ctx context.Context, cfg aws.Config, reqs requirements.Requirements) ([]*admittedType, error) {
	catalog := instancetype.NewFromConfig(cfg)
	prices := catalog.Prices()
	// Only the prices of admitted capacity types are worth their API calls.
	capacityTypes := reqs.Get(v1.CapacityTypeLabelKey)
	if capacityTypes.Has(v1.CapacityTypeOnDemand) {
		if err := prices.UpdateOnDemandPricing(ctx); err != nil {
			tflog.Warn(ctx, "on-demand prices from the Pricing API unavailable; using the embedded table", map[string]any{"error": err.Error()})
		}
	}
	if capacityTypes.Has(v1.CapacityTypeSpot) {
		if err := prices.UpdateSpotPricing(ctx); err != nil {
			tflog.Warn(ctx, "spot prices unavailable", map[string]any{"error": err.Error()})
		}
	}
	types, err := catalog.Catalog(ctx, "linux")
	if err != nil {
		return nil, err
	}
	admit := instancetype.Admit(reqs)
	var out []*admittedType
	for _, it := range types {
		if !admit.Type(it) {
			continue
		}
		a := &admittedType{name: it.Name, arch: it.Labels[corev1.LabelArchStable], price: math.Inf(1)}
		if info, ok := catalog.Info(it.Name); ok {
			if info.VCpuInfo != nil {
				a.vcpus = int64(aws.ToInt32(info.VCpuInfo.DefaultVCpus))
			}
			if info.MemoryInfo != nil {
				a.memoryMiB = aws.ToInt64(info.MemoryInfo.SizeInMiB)
			}
		}
		if p, ok := prices.OnDemandPrice(it.Name); ok {
			a.onDemand = &p
		}
		zones, capTypes := map[string]bool{}, map[string]bool{}
		for _, o := range it.Offerings {
			if !admit.Offering(o, "") {
				continue
			}
			zones[o.Zone], capTypes[o.CapacityType] = true, true
			a.price = math.Min(a.price, o.Price)
			if o.CapacityType == v1.CapacityTypeSpot && (a.spot == nil || o.Price < *a.spot) {
				p := o.Price
				a.spot = &p
			}
		}
		if len(zones) == 0 {
			continue
		}
		a.zones = slices.Sorted(maps.Keys(zones))
		for _, ct := range []string{v1.CapacityTypeOnDemand, v1.CapacityTypeSpot} {
			if capTypes[ct] {
				a.capTypes = append(a.capTypes, ct)
			}
		}
		out = append(out, a)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].price != out[j].price {
			return out[i].price < out[j].price
		}
		return out[i].name < out[j].name
	})
	return out, nil
}
