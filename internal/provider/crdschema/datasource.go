package crdschema

import (
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
)

// DataSourceAttributes are read-only data source attributes for nodes.
func DataSourceAttributes(nodes []*Node) map[string]schema.Attribute {
	out := make(map[string]schema.Attribute, len(nodes))
	for _, n := range nodes {
		out[n.Name] = dataSourceAttribute(n)
	}
	return out
}

func dataSourceAttribute(n *Node) schema.Attribute {
	desc := n.Description
	switch n.Kind {
	case Int:
		return schema.Int64Attribute{MarkdownDescription: desc, Computed: true}
	case Bool:
		return schema.BoolAttribute{MarkdownDescription: desc, Computed: true}
	case StringMap, JSONMap:
		return schema.MapAttribute{MarkdownDescription: desc, Computed: true, ElementType: n.Type().(basetypes.MapType).ElemType}
	case StringList:
		return schema.ListAttribute{MarkdownDescription: desc, Computed: true, ElementType: n.Type().(basetypes.ListType).ElemType}
	case Object:
		return schema.SingleNestedAttribute{MarkdownDescription: desc, Computed: true, Attributes: DataSourceAttributes(n.Children)}
	case ObjectList:
		return schema.ListNestedAttribute{MarkdownDescription: desc, Computed: true,
			NestedObject: schema.NestedAttributeObject{Attributes: DataSourceAttributes(n.Children)}}
	}
	return schema.StringAttribute{MarkdownDescription: desc, Computed: true}
}
