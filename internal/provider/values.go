package provider

import (
	"context"
	"encoding/json"
	"reflect"
	"regexp"
	"sort"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// stringMap converts a Terraform map of strings.
func stringMap(ctx context.Context, m types.Map, diags *diag.Diagnostics) map[string]string {
	out := map[string]string{}
	if m.IsNull() || m.IsUnknown() {
		return out
	}
	diags.Append(m.ElementsAs(ctx, &out, false)...)
	return out
}

// tagsValue is the state value of tags read from AWS: null when there are
// none and the configuration had none, so an untagged resource plans clean.
func tagsValue(prior types.Map, tags map[string]string) types.Map {
	if len(tags) == 0 && prior.IsNull() {
		return types.MapNull(types.StringType)
	}
	vals := make(map[string]attr.Value, len(tags))
	for k, v := range tags {
		vals[k] = types.StringValue(v)
	}
	return types.MapValueMust(types.StringType, vals)
}

func stringSet(values []string) types.Set {
	vals := make([]attr.Value, len(values))
	for i, v := range values {
		vals[i] = types.StringValue(v)
	}
	return types.SetValueMust(types.StringType, vals)
}

func stringList(values []string) types.List {
	vals := make([]attr.Value, len(values))
	for i, v := range values {
		vals[i] = types.StringValue(v)
	}
	return types.ListValueMust(types.StringType, vals)
}

// mustJSON marshals values built from maps, slices and strings.
func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func mustRegexp(expr string) *regexp.Regexp { return regexp.MustCompile(expr) }

// stateARNs are the known elements of a list of ARNs in state.
func stateARNs(l types.List) []string {
	var out []string
	for _, v := range l.Elements() {
		if s, ok := v.(types.String); ok && !s.IsUnknown() && !s.IsNull() {
			out = append(out, s.ValueString())
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func dedupe(sorted []string) []string {
	out := sorted[:0]
	for i, s := range sorted {
		if i == 0 || s != sorted[i-1] {
			out = append(out, s)
		}
	}
	return out
}

// optionalString is an optional attribute read back: null stays null when
// AWS holds the empty value.
func optionalString(prior types.String, live string) types.String {
	if live == "" && prior.IsNull() {
		return types.StringNull()
	}
	return types.StringValue(live)
}

// sameJSON reports whether two JSON texts hold the same value.
func sameJSON(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// setStrings converts a Terraform set of strings, sorted.
func setStrings(ctx context.Context, s types.Set, diags *diag.Diagnostics) []string {
	if s.IsNull() || s.IsUnknown() {
		return nil
	}
	var out []string
	diags.Append(s.ElementsAs(ctx, &out, false)...)
	sort.Strings(out)
	return out
}
