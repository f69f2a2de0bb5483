// Package crdschema derives Terraform schemas and values from the OpenAPI
// schemas of the embedded CRDs, so the Terraform surface covers every field
// of the API, carries its documentation and defaults, and converts to and
// from the manifests the apiserver stores without per-field code.
package crdschema

import (
	"encoding/json"
	"sort"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/joistdev/terraform-provider-joist/internal/provider/validate"
)

// Kind is the Terraform shape of a CRD node.
type Kind int

const (
	String Kind = iota
	Int
	Bool
	StringMap
	// JSONMap is an open object (any key, any value: the EC2NodeClass's
	// kubelet) as a map of strings, each value JSON text.
	JSONMap
	StringList
	Object
	ObjectList
)

// Node is a CRD property as Terraform sees it.
type Node struct {
	// Field is the CRD field name; Name the Terraform attribute name.
	Field, Name string
	Kind        Kind
	Description string
	// Required: the CRD requires the field and gives no default.
	Required bool
	// Default is the CRD default with the defaults nested inside it applied,
	// as the apiserver stores it; nil without one.
	Default any
	// Children of an Object or ObjectList, by Terraform name order.
	Children []*Node
	// Schema is the CRD schema of the node.
	Schema *apiextensionsv1.JSONSchemaProps
	// Sensitive fields can hold secrets: Terraform hides their values in
	// plans and output.
	Sensitive bool
}

// sensitiveFields are the API fields that can hold secrets: user data often
// carries bootstrap tokens and credentials.
var sensitiveFields = map[string]bool{"userData": true}

// Children returns the Terraform nodes of the properties of an object schema.
func Children(s *apiextensionsv1.JSONSchemaProps) []*Node {
	names := make([]string, 0, len(s.Properties))
	for name := range s.Properties {
		names = append(names, name)
	}
	sort.Strings(names)
	nodes := make([]*Node, 0, len(names))
	for _, name := range names {
		prop := s.Properties[name]
		nodes = append(nodes, newNode(name, &prop, contains(s.Required, name)))
	}
	return nodes
}

func newNode(field string, s *apiextensionsv1.JSONSchemaProps, required bool) *Node {
	n := &Node{Field: field, Name: TFName(field), Schema: s, Description: describe(s), Sensitive: sensitiveFields[field]}
	switch {
	case s.Type == "integer":
		n.Kind = Int
	case s.Type == "boolean":
		n.Kind = Bool
	case s.Type == "array" && s.Items != nil && s.Items.Schema != nil && s.Items.Schema.Type == "object":
		n.Kind = ObjectList
		n.Children = Children(s.Items.Schema)
	case s.Type == "array":
		n.Kind = StringList
	case s.Type == "object" && len(s.Properties) > 0:
		n.Kind = Object
		n.Children = Children(s)
	case s.Type == "object" && s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil &&
		s.AdditionalProperties.Schema.XPreserveUnknownFields != nil && *s.AdditionalProperties.Schema.XPreserveUnknownFields:
		n.Kind = JSONMap
		n.Description = strings.TrimSpace(n.Description + " In Terraform each value is JSON text: `\"110\"` is the number 110, `jsonencode([...])` or `jsonencode({...})` a list or map; a value that is not JSON is a string.")
	case s.Type == "object":
		n.Kind = StringMap
	default:
		n.Kind = String
	}
	if s.Default != nil {
		var d any
		if err := json.Unmarshal(s.Default.Raw, &d); err == nil {
			// Store the default as the apiserver does, with the defaults
			// nested inside it applied.
			validate.ApplyDefaults(s, d)
			n.Default = d
		}
	}
	n.Required = required && n.Default == nil
	return n
}

func describe(s *apiextensionsv1.JSONSchemaProps) string {
	d := strings.Join(strings.Fields(s.Description), " ")
	if len(s.Enum) > 0 {
		var vals []string
		for _, e := range s.Enum {
			vals = append(vals, "`"+strings.Trim(string(e.Raw), `"`)+"`")
		}
		d += " One of " + strings.Join(vals, ", ") + "."
	}
	if s.Default != nil {
		d += " Defaults to `" + string(s.Default.Raw) + "`."
	}
	return strings.TrimSpace(d)
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
