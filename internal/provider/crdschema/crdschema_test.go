package crdschema

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/joistdev/terraform-provider-joist/internal/provider/validate"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/crds"
)

func TestTFName(t *testing.T) {
	for in, want := range map[string]string{
		"nodeClassRef":                "node_class_ref",
		"kmsKeyID":                    "kms_key_id",
		"associatePublicIPAddress":    "associate_public_ip_address",
		"clusterDNS":                  "cluster_dns",
		"cpuCFSQuota":                 "cpu_cfs_quota",
		"imageGCHighThresholdPercent": "image_gc_high_threshold_percent",
		"httpProtocolIPv6":            "http_protocol_ipv6",
		"ownerID":                     "owner_id",
		"amis":                        "amis",
		"expireAfter":                 "expire_after",
	} {
		if got := TFName(in); got != want {
			t.Errorf("TFName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestNamesAreUnique guards against two CRD fields of one object mapping to
// the same Terraform name, which would lose one of them.
func TestNamesAreUnique(t *testing.T) {
	defs, err := crds.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	var walk func(nodes []*Node, p string)
	walk = func(nodes []*Node, p string) {
		seen := map[string]string{}
		for _, n := range nodes {
			if other, ok := seen[n.Name]; ok {
				t.Errorf("%s: %s and %s both map to %s", p, other, n.Field, n.Name)
			}
			seen[n.Name] = n.Field
			walk(n.Children, p+"."+n.Field)
		}
	}
	for _, crd := range defs {
		walk(Children(crd.Spec.Versions[0].Schema.OpenAPIV3Schema), crd.Spec.Names.Kind)
	}
}

// TestManifestRoundTrip decodes the spec of every valid manifest of the API
// tests into Terraform values and encodes it back: nothing may be lost or
// changed, so every field the API has is reachable from Terraform.
func TestManifestRoundTrip(t *testing.T) {
	v, err := validate.New()
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("../../runtime/apis/crds/testdata/valid/*.yaml")
	if len(files) == 0 {
		t.Fatal("no manifests found")
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var c struct {
			Object map[string]any `json:"object"`
		}
		if err := yaml.Unmarshal(raw, &c); err != nil {
			t.Fatal(err)
		}
		apiVersion, _ := c.Object["apiVersion"].(string)
		group, version, _ := strings.Cut(apiVersion, "/")
		var spec *Node
		for _, n := range Children(v.SchemaOf(group, version, c.Object["kind"].(string))) {
			if n.Field == "spec" {
				spec = n
			}
		}
		want := c.Object["spec"]
		decoded := Decode(spec, want, nil)
		enc := &Encoder{}
		got, _ := enc.value(spec, decoded, validate.Path{}.Child("spec"))
		// Terraform carries int-or-string values (quantities) as strings.
		want = intOrStringAsString(spec.Schema, normal(want))
		if !reflect.DeepEqual(normal(got), want) {
			t.Errorf("%s: round trip changed the spec:\n got %v\nwant %v", f, normal(got), normal(want))
		}
	}
}

func intOrStringAsString(s *apiextensionsv1.JSONSchemaProps, v any) any {
	switch t := v.(type) {
	case float64:
		if s.XIntOrString {
			return toString(t)
		}
	case map[string]any:
		for k, c := range t {
			if p, ok := s.Properties[k]; ok {
				t[k] = intOrStringAsString(&p, c)
			} else if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
				t[k] = intOrStringAsString(s.AdditionalProperties.Schema, c)
			}
		}
	case []any:
		if s.Items == nil || s.Items.Schema == nil {
			// An open value (preserve-unknown-fields): nothing is int-or-string.
			return v
		}
		for i, c := range t {
			t[i] = intOrStringAsString(s.Items.Schema, c)
		}
	}
	return v
}

func normal(v any) any {
	raw, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(raw, &out)
	return out
}
