package validate

import (
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// TestEveryCRDRuleHasAGoVersion fails when the API types gain a CEL rule
// that rules.go does not implement, or rules.go keeps one no CRD has.
func TestEveryCRDRuleHasAGoVersion(t *testing.T) {
	v, err := New()
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	var walk func(s *apiextensionsv1.JSONSchemaProps, p string)
	walk = func(s *apiextensionsv1.JSONSchemaProps, p string) {
		for _, r := range s.XValidations {
			used[r.Rule] = true
			if _, ok := celRules[r.Rule]; !ok {
				t.Errorf("%s: rule %q has no Go version in rules.go", p, r.Rule)
			}
			if r.Message == "" {
				t.Errorf("%s: rule %q has no message to show users", p, r.Rule)
			}
		}
		for name, prop := range s.Properties {
			walk(&prop, p+"."+name)
		}
		if s.Items != nil && s.Items.Schema != nil {
			walk(s.Items.Schema, p+"[]")
		}
		if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
			walk(s.AdditionalProperties.Schema, p+"{}")
		}
	}
	if len(v.schemas) != 3 {
		t.Fatalf("want 3 kinds, have %d", len(v.schemas))
	}
	for gvk, s := range v.schemas {
		walk(s, gvk.Kind)
	}
	for r := range celRules {
		if !used[r] {
			t.Errorf("rules.go implements %q, which no CRD has", r)
		}
	}
}
