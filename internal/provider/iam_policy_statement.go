package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// This file holds the IAM policy statements users add to a role's trust
// policy, a role's permissions and the interruption queue's policy: one
// typed schema (the fields of the EKS module's statement objects and of
// aws_iam_policy_document), rendered to IAM's JSON and read back from it.

// statementKind says where statements go, which decides the fields they
// need.
type statementKind int

const (
	permissionStatements statementKind = iota // identity policy: resources, no principals
	trustStatements                           // trust policy: principals, no resources
	resourceStatements                        // resource policy (SQS): principals and resources
)

var (
	principalType = types.ObjectType{AttrTypes: map[string]attr.Type{"type": types.StringType, "identifiers": types.ListType{ElemType: types.StringType}}}
	conditionType = types.ObjectType{AttrTypes: map[string]attr.Type{
		"test": types.StringType, "variable": types.StringType, "values": types.ListType{ElemType: types.StringType},
	}}
	statementType = types.ObjectType{AttrTypes: map[string]attr.Type{
		"sid": types.StringType, "effect": types.StringType,
		"actions": types.ListType{ElemType: types.StringType}, "not_actions": types.ListType{ElemType: types.StringType},
		"resources": types.ListType{ElemType: types.StringType}, "not_resources": types.ListType{ElemType: types.StringType},
		"principals": types.ListType{ElemType: principalType}, "not_principals": types.ListType{ElemType: principalType},
		"conditions": types.ListType{ElemType: conditionType},
	}}
)

// statementsAttribute is a list of statements; doc says where they go.
func statementsAttribute(doc string) schema.ListNestedAttribute {
	strs := func(d string) schema.ListAttribute {
		return schema.ListAttribute{Optional: true, ElementType: types.StringType, MarkdownDescription: d}
	}
	principals := func(d string) schema.ListNestedAttribute {
		return schema.ListNestedAttribute{Optional: true, MarkdownDescription: d, NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
			"type":        schema.StringAttribute{Required: true, MarkdownDescription: "`AWS`, `Service`, `Federated` or `*`."},
			"identifiers": schema.ListAttribute{Required: true, ElementType: types.StringType, MarkdownDescription: "ARNs, service principals or `*`."},
		}}}
	}
	return schema.ListNestedAttribute{
		Optional: true, MarkdownDescription: doc,
		NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
			"sid": schema.StringAttribute{Optional: true, MarkdownDescription: "Statement ID.",
				Validators: []validator.String{stringvalidator.RegexMatches(mustRegexp(`^[A-Za-z0-9]+$`), "must be letters and digits")}},
			"effect": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString("Allow"),
				MarkdownDescription: "`Allow` (default) or `Deny`.", Validators: []validator.String{stringvalidator.OneOf("Allow", "Deny")}},
			"actions":        strs("Actions (`Action`)."),
			"not_actions":    strs("Actions not matched (`NotAction`)."),
			"resources":      strs("Resource ARNs (`Resource`)."),
			"not_resources":  strs("Resource ARNs not matched (`NotResource`)."),
			"principals":     principals("Principals (`Principal`)."),
			"not_principals": principals("Principals not matched (`NotPrincipal`)."),
			"conditions": schema.ListNestedAttribute{Optional: true, MarkdownDescription: "Conditions (`Condition`).", NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
				"test":     schema.StringAttribute{Required: true, MarkdownDescription: "Condition operator, e.g. `StringEquals`."},
				"variable": schema.StringAttribute{Required: true, MarkdownDescription: "Condition key, e.g. `aws:SourceAccount`."},
				"values":   schema.ListAttribute{Required: true, ElementType: types.StringType, MarkdownDescription: "Values.", Validators: []validator.List{listvalidator.SizeAtLeast(1)}},
			}}},
		}},
	}
}

type principalModel struct {
	Type        types.String `tfsdk:"type"`
	Identifiers types.List   `tfsdk:"identifiers"`
}

type conditionModel struct {
	Test     types.String `tfsdk:"test"`
	Variable types.String `tfsdk:"variable"`
	Values   types.List   `tfsdk:"values"`
}

type statementModel struct {
	Sid           types.String `tfsdk:"sid"`
	Effect        types.String `tfsdk:"effect"`
	Actions       types.List   `tfsdk:"actions"`
	NotActions    types.List   `tfsdk:"not_actions"`
	Resources     types.List   `tfsdk:"resources"`
	NotResources  types.List   `tfsdk:"not_resources"`
	Principals    types.List   `tfsdk:"principals"`
	NotPrincipals types.List   `tfsdk:"not_principals"`
	Conditions    types.List   `tfsdk:"conditions"`
}

// renderStatements turns the statements of attribute attrName into IAM
// statement objects, refusing at plan the ones IAM would refuse where they
// go. ok is false while a value is not known yet.
func renderStatements(ctx context.Context, l types.List, attrName string, kind statementKind, diags *diag.Diagnostics) (out []map[string]any, ok bool) {
	if l.IsNull() {
		return nil, true
	}
	if l.IsUnknown() {
		return nil, false
	}
	var items []statementModel
	diags.Append(l.ElementsAs(ctx, &items, false)...)
	if diags.HasError() {
		return nil, false
	}
	known := true
	for i, st := range items {
		p := path.Root(attrName).AtListIndex(i)
		bad := func(msg string) {
			diags.AddAttributeError(p, "Invalid policy statement", fmt.Sprintf("%s: %s", p, msg))
		}
		s := map[string]any{"Effect": "Allow"}
		if !st.Effect.IsNull() && !st.Effect.IsUnknown() {
			s["Effect"] = st.Effect.ValueString()
		}
		if !st.Sid.IsNull() {
			s["Sid"] = st.Sid.ValueString()
		}
		lists := []struct {
			key string
			v   types.List
		}{{"Action", st.Actions}, {"NotAction", st.NotActions}, {"Resource", st.Resources}, {"NotResource", st.NotResources}}
		for _, x := range lists {
			if x.v.IsUnknown() {
				known = false
				continue
			}
			if vals := listStrings(ctx, x.v, diags); !x.v.IsNull() {
				if len(vals) == 0 {
					bad(fmt.Sprintf("%s is empty", x.key))
				}
				s[x.key] = vals
			}
		}
		for _, x := range []struct {
			key string
			v   types.List
		}{{"Principal", st.Principals}, {"NotPrincipal", st.NotPrincipals}} {
			if x.v.IsUnknown() {
				known = false
				continue
			}
			if x.v.IsNull() {
				continue
			}
			var ps []principalModel
			diags.Append(x.v.ElementsAs(ctx, &ps, false)...)
			m := map[string][]string{}
			for _, pr := range ps {
				m[pr.Type.ValueString()] = append(m[pr.Type.ValueString()], listStrings(ctx, pr.Identifiers, diags)...)
			}
			if ids, star := m["*"]; star && len(m) == 1 && len(ids) == 1 && ids[0] == "*" {
				s[x.key] = "*"
			} else {
				s[x.key] = m
			}
		}
		if st.Conditions.IsUnknown() {
			known = false
		} else if !st.Conditions.IsNull() {
			var cs []conditionModel
			diags.Append(st.Conditions.ElementsAs(ctx, &cs, false)...)
			cond := map[string]map[string][]string{}
			for _, c := range cs {
				if cond[c.Test.ValueString()] == nil {
					cond[c.Test.ValueString()] = map[string][]string{}
				}
				cond[c.Test.ValueString()][c.Variable.ValueString()] = listStrings(ctx, c.Values, diags)
			}
			s["Condition"] = cond
		}
		_, act := s["Action"]
		_, notAct := s["NotAction"]
		_, res := s["Resource"]
		_, notRes := s["NotResource"]
		_, prin := s["Principal"]
		_, notPrin := s["NotPrincipal"]
		if known && act == notAct {
			bad("set exactly one of actions and not_actions")
		}
		switch kind {
		case permissionStatements:
			if prin || notPrin {
				bad("a role's permission policy names no principals: remove principals and not_principals")
			}
			if known && res == notRes {
				bad("set exactly one of resources and not_resources")
			}
		case trustStatements:
			if res || notRes {
				bad("a trust policy names no resources: remove resources and not_resources")
			}
			if known && prin == notPrin {
				bad("set exactly one of principals and not_principals: who may assume the role")
			}
		case resourceStatements:
			if known && prin == notPrin {
				bad("set exactly one of principals and not_principals")
			}
			if known && res == notRes {
				bad("set exactly one of resources and not_resources")
			}
		}
		out = append(out, s)
	}
	return out, known
}

// statementsValue reads IAM statement objects back into the attribute's
// value: the inverse of renderStatements for what it renders.
func statementsValue(raw []map[string]any) types.List {
	if len(raw) == 0 {
		return types.ListNull(statementType)
	}
	strList := func(v any) types.List {
		switch x := v.(type) {
		case nil:
			return types.ListNull(types.StringType)
		case string:
			return stringList([]string{x})
		case []any:
			var out []string
			for _, e := range x {
				out = append(out, fmt.Sprint(e))
			}
			return stringList(out)
		}
		return types.ListNull(types.StringType)
	}
	principals := func(v any) types.List {
		switch x := v.(type) {
		case nil:
			return types.ListNull(principalType)
		case string:
			return types.ListValueMust(principalType, []attr.Value{types.ObjectValueMust(principalType.AttrTypes, map[string]attr.Value{
				"type": types.StringValue("*"), "identifiers": stringList([]string{x}),
			})})
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			var vals []attr.Value
			for _, k := range keys {
				vals = append(vals, types.ObjectValueMust(principalType.AttrTypes, map[string]attr.Value{"type": types.StringValue(k), "identifiers": strList(x[k])}))
			}
			return types.ListValueMust(principalType, vals)
		}
		return types.ListNull(principalType)
	}
	var vals []attr.Value
	for _, s := range raw {
		sid := types.StringNull()
		if v, ok := s["Sid"].(string); ok {
			sid = types.StringValue(v)
		}
		conds := types.ListNull(conditionType)
		if c, ok := s["Condition"].(map[string]any); ok {
			var cv []attr.Value
			tests := make([]string, 0, len(c))
			for t := range c {
				tests = append(tests, t)
			}
			sort.Strings(tests)
			for _, t := range tests {
				kv, _ := c[t].(map[string]any)
				vars := make([]string, 0, len(kv))
				for k := range kv {
					vars = append(vars, k)
				}
				sort.Strings(vars)
				for _, k := range vars {
					cv = append(cv, types.ObjectValueMust(conditionType.AttrTypes, map[string]attr.Value{
						"test": types.StringValue(t), "variable": types.StringValue(k), "values": strList(kv[k]),
					}))
				}
			}
			conds = types.ListValueMust(conditionType, cv)
		}
		vals = append(vals, types.ObjectValueMust(statementType.AttrTypes, map[string]attr.Value{
			"sid": sid, "effect": types.StringValue(fmt.Sprint(s["Effect"])),
			"actions": strList(s["Action"]), "not_actions": strList(s["NotAction"]),
			"resources": strList(s["Resource"]), "not_resources": strList(s["NotResource"]),
			"principals": principals(s["Principal"]), "not_principals": principals(s["NotPrincipal"]),
			"conditions": conds,
		}))
	}
	return types.ListValueMust(statementType, vals)
}

// documentStatements are the statements of a policy document's JSON.
func documentStatements(doc string) []map[string]any {
	var d struct {
		Statement json.RawMessage
	}
	if json.Unmarshal([]byte(doc), &d) != nil {
		return nil
	}
	var list []map[string]any
	if json.Unmarshal(d.Statement, &list) == nil {
		return list
	}
	var one map[string]any
	if json.Unmarshal(d.Statement, &one) == nil {
		return []map[string]any{one}
	}
	return nil
}
