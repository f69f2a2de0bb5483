package crdschema

import (
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/mapdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/objectdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
)

// ResourceAttributes are resource schema attributes for nodes a user
// configures: required where the CRD requires a field without default,
// optional and computed with the CRD default where it has one, optional
// otherwise. Validation beyond types is left to the validate package, which
// runs the CRD's own rules.
func ResourceAttributes(nodes []*Node) map[string]schema.Attribute {
	out := make(map[string]schema.Attribute, len(nodes))
	for _, n := range nodes {
		out[n.Name] = resourceAttribute(n)
	}
	return out
}

func resourceAttribute(n *Node) schema.Attribute {
	optional := !n.Required
	computed := n.Default != nil
	var def attr.Value
	if computed {
		def = Decode(n, n.Default, nil)
	}
	desc := n.Description
	switch n.Kind {
	case Int:
		a := schema.Int64Attribute{MarkdownDescription: desc, Required: n.Required, Optional: optional, Computed: computed}
		if computed {
			a.Default = int64default.StaticInt64(def.(basetypes.Int64Value).ValueInt64())
		}
		return a
	case Bool:
		a := schema.BoolAttribute{MarkdownDescription: desc, Required: n.Required, Optional: optional, Computed: computed}
		if computed {
			a.Default = booldefault.StaticBool(def.(basetypes.BoolValue).ValueBool())
		}
		return a
	case StringMap, JSONMap:
		a := schema.MapAttribute{MarkdownDescription: desc, Required: n.Required, Optional: optional, Computed: computed, ElementType: n.Type().(basetypes.MapType).ElemType}
		if computed {
			a.Default = mapdefault.StaticValue(def.(basetypes.MapValue))
		}
		return a
	case StringList:
		a := schema.ListAttribute{MarkdownDescription: desc, Required: n.Required, Optional: optional, Computed: computed, ElementType: n.Type().(basetypes.ListType).ElemType}
		if computed {
			a.Default = listdefault.StaticValue(def.(basetypes.ListValue))
		}
		return a
	case Object:
		a := schema.SingleNestedAttribute{MarkdownDescription: desc, Required: n.Required, Optional: optional, Computed: computed, Attributes: ResourceAttributes(n.Children)}
		if computed {
			a.Default = objectdefault.StaticValue(def.(basetypes.ObjectValue))
		}
		return a
	case ObjectList:
		a := schema.ListNestedAttribute{MarkdownDescription: desc, Required: n.Required, Optional: optional, Computed: computed,
			NestedObject: schema.NestedAttributeObject{Attributes: ResourceAttributes(n.Children)}}
		if computed {
			a.Default = listdefault.StaticValue(def.(basetypes.ListValue))
		}
		return a
	}
	a := schema.StringAttribute{MarkdownDescription: desc, Required: n.Required, Optional: optional, Computed: computed, Sensitive: n.Sensitive}
	if computed {
		a.Default = stringdefault.StaticString(def.(basetypes.StringValue).ValueString())
	}
	return a
}

// ComputedResourceAttributes are read-only resource attributes for nodes
// (status).
func ComputedResourceAttributes(nodes []*Node) map[string]schema.Attribute {
	out := make(map[string]schema.Attribute, len(nodes))
	for _, n := range nodes {
		out[n.Name] = computedResourceAttribute(n)
	}
	return out
}

func computedResourceAttribute(n *Node) schema.Attribute {
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
		return schema.SingleNestedAttribute{MarkdownDescription: desc, Computed: true, Attributes: ComputedResourceAttributes(n.Children)}
	case ObjectList:
		return schema.ListNestedAttribute{MarkdownDescription: desc, Computed: true,
			NestedObject: schema.NestedAttributeObject{Attributes: ComputedResourceAttributes(n.Children)}}
	}
	return schema.StringAttribute{MarkdownDescription: desc, Computed: true}
}
