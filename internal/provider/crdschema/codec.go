package crdschema

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/joistdev/terraform-provider-joist/internal/provider/validate"
)

// Encoder turns Terraform values into manifest JSON. Null values are left
// out; unknown ones too, and their paths are recorded so that validation
// can leave them alone until they are known.
type Encoder struct {
	Unknown []validate.Path
}

// Object encodes the attributes named by nodes; p is the manifest path of
// the object (e.g. spec).
func (e *Encoder) Object(nodes []*Node, attrs map[string]attr.Value, p validate.Path) map[string]any {
	out := map[string]any{}
	for _, n := range nodes {
		v, ok := attrs[n.Name]
		if !ok {
			continue
		}
		if enc, present := e.value(n, v, p.Child(n.Field)); present {
			out[n.Field] = enc
		}
	}
	return out
}

func (e *Encoder) value(n *Node, v attr.Value, p validate.Path) (any, bool) {
	if v == nil || v.IsNull() {
		return nil, false
	}
	if v.IsUnknown() {
		e.Unknown = append(e.Unknown, p)
		return nil, false
	}
	switch n.Kind {
	case Int:
		return v.(basetypes.Int64Value).ValueInt64(), true
	case Bool:
		return v.(basetypes.BoolValue).ValueBool(), true
	case String:
		return v.(basetypes.StringValue).ValueString(), true
	case StringMap:
		return e.stringMap(v, p, func(s string) any { return s }), true
	case JSONMap:
		return e.stringMap(v, p, fromJSONText), true
	case StringList:
		out := []any{}
		for i, ev := range v.(basetypes.ListValue).Elements() {
			if ev.IsUnknown() {
				e.Unknown = append(e.Unknown, p.Index(i))
			}
			s, _ := ev.(basetypes.StringValue)
			out = append(out, s.ValueString())
		}
		return out, true
	case Object:
		return e.Object(n.Children, v.(basetypes.ObjectValue).Attributes(), p), true
	case ObjectList:
		out := []any{}
		for i, ev := range v.(basetypes.ListValue).Elements() {
			if ev.IsUnknown() {
				e.Unknown = append(e.Unknown, p.Index(i))
				out = append(out, map[string]any{})
				continue
			}
			out = append(out, e.Object(n.Children, ev.(basetypes.ObjectValue).Attributes(), p.Index(i)))
		}
		return out, true
	}
	return nil, false
}

// stringMap encodes a map of strings, each value through conv.
func (e *Encoder) stringMap(v attr.Value, p validate.Path, conv func(string) any) map[string]any {
	out := map[string]any{}
	for k, ev := range v.(basetypes.MapValue).Elements() {
		if ev.IsUnknown() {
			e.Unknown = append(e.Unknown, p.Key(k))
			continue
		}
		if !ev.IsNull() {
			out[k] = conv(ev.(basetypes.StringValue).ValueString())
		}
	}
	return out
}

// DecodeObject reads manifest JSON into attribute values for nodes. prior
// (may be nil) is the state the values replace: where the apiserver has
// dropped an empty map or list that the configuration spelled out, the
// prior empty value is kept so that an empty collection does not show as
// a change on every plan.
func DecodeObject(nodes []*Node, m map[string]any, prior map[string]attr.Value) map[string]attr.Value {
	out := make(map[string]attr.Value, len(nodes))
	for _, n := range nodes {
		var p attr.Value
		if prior != nil {
			p = prior[n.Name]
		}
		out[n.Name] = Decode(n, m[n.Field], p)
	}
	return out
}

// Decode reads one manifest value (nil when absent) as node n's type.
func Decode(n *Node, v any, prior attr.Value) attr.Value {
	if v == nil {
		if prior != nil && !prior.IsNull() && !prior.IsUnknown() && isEmptyCollection(prior) {
			return prior
		}
		return nullOf(n)
	}
	switch n.Kind {
	case Int:
		if i, ok := validate.Int(v); ok {
			return types.Int64Value(i)
		}
		return types.Int64Null()
	case Bool:
		b, _ := v.(bool)
		return types.BoolValue(b)
	case String:
		return types.StringValue(toString(v))
	case StringMap:
		m, _ := v.(map[string]any)
		elems := make(map[string]attr.Value, len(m))
		for k, ev := range m {
			elems[k] = types.StringValue(toString(ev))
		}
		return types.MapValueMust(types.StringType, elems)
	case JSONMap:
		m, _ := v.(map[string]any)
		elems := make(map[string]attr.Value, len(m))
		for k, ev := range m {
			elems[k] = types.StringValue(toJSONText(ev))
		}
		return types.MapValueMust(types.StringType, elems)
	case StringList:
		l, _ := v.([]any)
		elems := make([]attr.Value, len(l))
		for i, ev := range l {
			elems[i] = types.StringValue(toString(ev))
		}
		return types.ListValueMust(types.StringType, elems)
	case Object:
		m, _ := v.(map[string]any)
		return types.ObjectValueMust(ObjectType(n.Children).AttrTypes, DecodeObject(n.Children, m, priorAttrs(prior)))
	case ObjectList:
		l, _ := v.([]any)
		var priorElems []attr.Value
		if pl, ok := prior.(basetypes.ListValue); ok && !pl.IsNull() && !pl.IsUnknown() {
			priorElems = pl.Elements()
		}
		elemType := ObjectType(n.Children)
		elems := make([]attr.Value, len(l))
		for i, ev := range l {
			m, _ := ev.(map[string]any)
			var pe map[string]attr.Value
			if i < len(priorElems) {
				pe = priorAttrs(priorElems[i])
			}
			elems[i] = types.ObjectValueMust(elemType.AttrTypes, DecodeObject(n.Children, m, pe))
		}
		return types.ListValueMust(elemType, elems)
	}
	return nullOf(n)
}

func nullOf(n *Node) attr.Value {
	switch t := n.Type().(type) {
	case types.ObjectType:
		return types.ObjectNull(t.AttrTypes)
	case types.ListType:
		return types.ListNull(t.ElemType)
	case types.MapType:
		return types.MapNull(t.ElemType)
	}
	switch n.Kind {
	case Int:
		return types.Int64Null()
	case Bool:
		return types.BoolNull()
	}
	return types.StringNull()
}

func priorAttrs(v attr.Value) map[string]attr.Value {
	if o, ok := v.(basetypes.ObjectValue); ok && !o.IsNull() && !o.IsUnknown() {
		return o.Attributes()
	}
	return nil
}

func isEmptyCollection(v attr.Value) bool {
	switch t := v.(type) {
	case basetypes.MapValue:
		return len(t.Elements()) == 0
	case basetypes.ListValue:
		return len(t.Elements()) == 0
	}
	return false
}

// toString spells a manifest scalar as Terraform strings carry it: numbers
// of int-or-string fields (limits: {cpu: 100}) as their decimal text.
func toString(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64)
	case int64:
		return strconv.FormatInt(t, 10)
	}
	return fmt.Sprint(v)
}

// fromJSONText reads a JSONMap value: JSON text, or a plain string when it
// is not JSON ("1m30s", "systemd").
func fromJSONText(s string) any {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return s
	}
	return v
}

// toJSONText spells a manifest value as fromJSONText reads it back: a
// string as itself, anything else as compact JSON with sorted keys (as
// Terraform's jsonencode writes it).
func toJSONText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
