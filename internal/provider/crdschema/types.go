package crdschema

import (
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// Type is the Terraform type of a node.
func (n *Node) Type() attr.Type {
	switch n.Kind {
	case Int:
		return types.Int64Type
	case Bool:
		return types.BoolType
	case StringMap, JSONMap:
		return types.MapType{ElemType: types.StringType}
	case StringList:
		return types.ListType{ElemType: types.StringType}
	case Object:
		return ObjectType(n.Children)
	case ObjectList:
		return types.ListType{ElemType: ObjectType(n.Children)}
	}
	return types.StringType
}

// ObjectType is the Terraform object type with one attribute per node.
func ObjectType(nodes []*Node) types.ObjectType {
	attrs := make(map[string]attr.Type, len(nodes))
	for _, c := range nodes {
		attrs[c.Name] = c.Type()
	}
	return types.ObjectType{AttrTypes: attrs}
}
