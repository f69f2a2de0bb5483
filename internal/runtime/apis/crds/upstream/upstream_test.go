// Package upstream_test compares Joist's CRDs with Karpenter's, path by
// path, so an upstream release that changes its API shows up as a failing
// diff here rather than as a user's bug report.
package upstream_test

import (
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/crds"
)

// release is the Karpenter release vendored under testdata.
const release = "v1.15.1"

var update = flag.Bool("update-differences", false, "write the differences found to testdata/differences.yaml, keeping known reasons")

// difference is one documented deliberate difference.
type difference struct {
	// Diff is the difference as the comparison spells it.
	Diff string `json:"diff"`
	// Reason says why Joist differs.
	Reason string `json:"reason"`
}

// TestSchemasMatchKarpenter compares every schema property that decides
// what the apiserver accepts (fields, types, enums, bounds, patterns,
// required fields, defaults, list and map semantics, CEL rules) between
// Karpenter's CRDs and Joist's. Every difference must be listed, with its
// reason, in testdata/differences.yaml; a listed difference that no longer
// exists fails too, so the list stays true.
func TestSchemasMatchKarpenter(t *testing.T) {
	ours, err := crds.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*apiextensionsv1.CustomResourceDefinition{}
	for _, c := range ours {
		byName[c.Name] = c
	}
	files, err := filepath.Glob(filepath.Join("testdata", release, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no vendored CRDs under testdata/%s: %v", release, err)
	}
	var found []string
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		up := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(raw, up); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		own, ok := byName[up.Name]
		if !ok {
			found = append(found, up.Name+": Joist has no such CRD")
			continue
		}
		for _, uv := range up.Spec.Versions {
			var ov *apiextensionsv1.CustomResourceDefinitionVersion
			for i := range own.Spec.Versions {
				if own.Spec.Versions[i].Name == uv.Name {
					ov = &own.Spec.Versions[i]
				}
			}
			prefix := up.Spec.Names.Kind + "." + uv.Name
			if ov == nil {
				found = append(found, prefix+": Joist does not serve this version")
				continue
			}
			found = append(found, compare(prefix, uv.Schema.OpenAPIV3Schema, ov.Schema.OpenAPIV3Schema)...)
		}
	}
	sort.Strings(found)

	known := readDifferences(t)
	if *update {
		writeDifferences(t, found, known)
		return
	}
	for _, d := range found {
		reason, ok := known[d]
		if !ok {
			t.Errorf("undocumented difference from Karpenter %s: %s", release, d)
		} else if strings.TrimSpace(reason) == "" {
			t.Errorf("difference without a reason: %s", d)
		}
	}
	for d := range known {
		if !slices.Contains(found, d) {
			t.Errorf("testdata/differences.yaml lists a difference that no longer exists: %s", d)
		}
	}
}

// compare walks both schemas from p and lists what differs. Descriptions
// and the status subtree are not compared: users do not write status.
func compare(p string, up, own *apiextensionsv1.JSONSchemaProps) []string {
	var out []string
	add := func(format string, args ...any) { out = append(out, p+": "+fmt.Sprintf(format, args...)) }
	switch {
	case up == nil && own == nil:
		return nil
	case up == nil:
		return []string{p + ": only in Joist"}
	case own == nil:
		return []string{p + ": missing in Joist"}
	}
	field := func(name, u, o string) {
		if u != o {
			add("%s is %s in Karpenter, %s in Joist", name, orNone(u), orNone(o))
		}
	}
	field("type", up.Type, own.Type)
	field("format", up.Format, own.Format)
	field("pattern", up.Pattern, own.Pattern)
	field("enum", enum(up), enum(own))
	field("default", raw(up.Default), raw(own.Default))
	field("minimum", num(up.Minimum), num(own.Minimum))
	field("maximum", num(up.Maximum), num(own.Maximum))
	field("minLength", intp(up.MinLength), intp(own.MinLength))
	field("maxLength", intp(up.MaxLength), intp(own.MaxLength))
	field("minItems", intp(up.MinItems), intp(own.MinItems))
	field("maxItems", intp(up.MaxItems), intp(own.MaxItems))
	field("minProperties", intp(up.MinProperties), intp(own.MinProperties))
	field("maxProperties", intp(up.MaxProperties), intp(own.MaxProperties))
	field("x-kubernetes-int-or-string", fmt.Sprint(up.XIntOrString), fmt.Sprint(own.XIntOrString))
	field("x-kubernetes-preserve-unknown-fields", boolp(up.XPreserveUnknownFields), boolp(own.XPreserveUnknownFields))
	field("x-kubernetes-list-type", strp(up.XListType), strp(own.XListType))
	field("x-kubernetes-list-map-keys", strings.Join(up.XListMapKeys, ","), strings.Join(own.XListMapKeys, ","))
	field("x-kubernetes-map-type", strp(up.XMapType), strp(own.XMapType))
	for _, r := range setDiff(up.Required, own.Required) {
		add("%s is required in Karpenter only", r)
	}
	for _, r := range setDiff(own.Required, up.Required) {
		add("%s is required in Joist only", r)
	}
	upRules, ownRules := rules(up), rules(own)
	for _, r := range setDiff(upRules, ownRules) {
		add("rule only in Karpenter: %s", r)
	}
	for _, r := range setDiff(ownRules, upRules) {
		add("rule only in Joist: %s", r)
	}
	names := map[string]bool{}
	for n := range up.Properties {
		names[n] = true
	}
	for n := range own.Properties {
		names[n] = true
	}
	for _, n := range slices.Sorted(maps.Keys(names)) {
		if n == "status" && strings.Count(p, ".") == 1 {
			continue
		}
		u, uok := up.Properties[n]
		o, ook := own.Properties[n]
		var up2, own2 *apiextensionsv1.JSONSchemaProps
		if uok {
			up2 = &u
		}
		if ook {
			own2 = &o
		}
		out = append(out, compare(p+"."+n, up2, own2)...)
	}
	out = append(out, compare(p+"[]", items(up), items(own))...)
	out = append(out, compare(p+"{}", additional(up), additional(own))...)
	return out
}

func items(s *apiextensionsv1.JSONSchemaProps) *apiextensionsv1.JSONSchemaProps {
	if s.Items == nil {
		return nil
	}
	return s.Items.Schema
}

func additional(s *apiextensionsv1.JSONSchemaProps) *apiextensionsv1.JSONSchemaProps {
	if s.AdditionalProperties == nil {
		return nil
	}
	return s.AdditionalProperties.Schema
}

func rules(s *apiextensionsv1.JSONSchemaProps) []string {
	var out []string
	for _, r := range s.XValidations {
		out = append(out, strings.Join(strings.Fields(r.Rule), " "))
	}
	return out
}

func setDiff(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	sort.Strings(out)
	return out
}

func enum(s *apiextensionsv1.JSONSchemaProps) string {
	var vals []string
	for _, e := range s.Enum {
		vals = append(vals, string(e.Raw))
	}
	sort.Strings(vals)
	return strings.Join(vals, ",")
}

func raw(j *apiextensionsv1.JSON) string {
	if j == nil {
		return ""
	}
	return string(j.Raw)
}

func num(f *float64) string {
	if f == nil {
		return ""
	}
	return fmt.Sprint(*f)
}

func intp(i *int64) string {
	if i == nil {
		return ""
	}
	return fmt.Sprint(*i)
}

func boolp(b *bool) string {
	if b == nil || !*b {
		return ""
	}
	return "true"
}

func strp(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func orNone(s string) string {
	if s == "" {
		return "unset"
	}
	return s
}

func readDifferences(t *testing.T) map[string]string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "differences.yaml"))
	if os.IsNotExist(err) {
		return map[string]string{}
	}
	if err != nil {
		t.Fatal(err)
	}
	var list []difference
	if err := yaml.UnmarshalStrict(raw, &list); err != nil {
		t.Fatalf("testdata/differences.yaml: %v", err)
	}
	out := map[string]string{}
	for _, d := range list {
		out[d.Diff] = d.Reason
	}
	return out
}

func writeDifferences(t *testing.T, found []string, known map[string]string) {
	t.Helper()
	list := make([]difference, 0, len(found))
	for _, d := range found {
		list = append(list, difference{Diff: d, Reason: known[d]})
	}
	raw, err := yaml.Marshal(list)
	if err != nil {
		t.Fatal(err)
	}
	header := "# Deliberate differences of Joist's CRDs from Karpenter " + release + "'s, each with its reason.\n" +
		"# Checked by upstream_test.go: every difference found must be here, and everything here must still differ.\n"
	if err := os.WriteFile(filepath.Join("testdata", "differences.yaml"), append([]byte(header), raw...), 0o644); err != nil {
		t.Fatal(err)
	}
}
