// Command schemapatch adds to the generated CRDs the validation that
// kubebuilder markers cannot express: inside corev1.Taint (the effect enum,
// the key and value patterns) and on the values of a labels map (length and
// pattern). CEL rules could say the same, but a regular expression over
// unbounded lists, maps or strings exceeds the apiserver's CEL cost budget.
// It also adds the one rule the NodePool needs on a type it shares with the
// NodeClaim (the NodePool label as a requirement key), and the bounds of the
// values of its limits map (not negative).
//
// Usage (from hack/generate.sh): go run ./internal/runtime/apis/crds/internal/schemapatch DIR
package main

import (
	"fmt"
	"os"
	"path/filepath"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

const labelValue = `^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$`

// taintValue is a non-empty label value: what both Karpenter's pattern (a
// qualified name) and a Node's taint validation (a label value) accept.
const taintValue = `^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$`

const qualifiedName = `^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*(\/))?([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$`

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: schemapatch CRD_DIR")
		os.Exit(2)
	}
	if err := patchDir(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "schemapatch:", err)
		os.Exit(1)
	}
}

func patchDir(dir string) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return err
	}
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(raw, crd); err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		for i := range crd.Spec.Versions {
			if v := crd.Spec.Versions[i].Schema; v != nil && v.OpenAPIV3Schema != nil {
				walk(v.OpenAPIV3Schema)
				if crd.Spec.Names.Kind == "NodePool" {
					if err := restrictNodePoolKey(v.OpenAPIV3Schema); err != nil {
						return fmt.Errorf("%s: %w", file, err)
					}
					if err := nonNegativeLimits(v.OpenAPIV3Schema); err != nil {
						return fmt.Errorf("%s: %w", file, err)
					}
				}
			}
		}
		out, err := marshalWithoutStatus(crd)
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		if err := os.WriteFile(file, append([]byte("---\n"), out...), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// marshalWithoutStatus writes the CRD as controller-gen does, without the
// empty status the Go type would add.
func marshalWithoutStatus(crd *apiextensionsv1.CustomResourceDefinition) ([]byte, error) {
	raw, err := yaml.Marshal(crd)
	if err != nil {
		return nil, err
	}
	var doc map[string]interface{}
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	delete(doc, "status")
	return yaml.Marshal(doc)
}

// walk patches every list of taints and every labels map below s.
func walk(s *apiextensionsv1.JSONSchemaProps) {
	if s.Type == "array" && s.Items != nil && s.Items.Schema != nil && isTaint(s.Items.Schema) {
		patchTaint(s.Items.Schema)
	}
	for name, p := range s.Properties {
		walk(&p)
		if name == "labels" && p.Type == "object" && p.AdditionalProperties != nil && p.AdditionalProperties.Schema != nil {
			p.AdditionalProperties.Schema.MaxLength = ptr(int64(63))
			p.AdditionalProperties.Schema.Pattern = labelValue
		}
		s.Properties[name] = p
	}
	if s.Items != nil && s.Items.Schema != nil {
		walk(s.Items.Schema)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		walk(s.AdditionalProperties.Schema)
	}
}

func isTaint(s *apiextensionsv1.JSONSchemaProps) bool {
	for _, field := range []string{"key", "value", "effect", "timeAdded"} {
		if _, ok := s.Properties[field]; !ok {
			return false
		}
	}
	return len(s.Properties) == 4
}

func patchTaint(s *apiextensionsv1.JSONSchemaProps) {
	effect := s.Properties["effect"]
	effect.Enum = nil
	for _, e := range []string{"NoSchedule", "PreferNoSchedule", "NoExecute"} {
		effect.Enum = append(effect.Enum, apiextensionsv1.JSON{Raw: []byte(fmt.Sprintf("%q", e))})
	}
	s.Properties["effect"] = effect

	key := s.Properties["key"]
	key.Pattern = qualifiedName
	key.MinLength = ptr(int64(1))
	s.Properties["key"] = key

	// Karpenter checks taint values as qualified names, which the apiserver
	// refuses on a Node (taint values are label values): a value with a
	// prefix or over 63 characters would keep the node from registering.
	// Both rules hold for the name part of a qualified name of at most 63
	// characters, so that is what is accepted.
	value := s.Properties["value"]
	value.Pattern = taintValue
	value.MaxLength = ptr(int64(63))
	s.Properties["value"] = value
}

// restrictNodePoolKey refuses the NodePool label as a requirement key of a
// NodePool template. NodeClaims share the requirement type and may carry the
// key (the runtime adds it), so the rule cannot be a marker on the type.
func restrictNodePoolKey(root *apiextensionsv1.JSONSchemaProps) error {
	s := root
	for _, field := range []string{"spec", "template", "spec", "requirements"} {
		next, ok := s.Properties[field]
		if !ok {
			return fmt.Errorf("NodePool schema has no %s", field)
		}
		s = &next
	}
	// s is a copy of the requirements schema, but Items is a pointer into the CRD.
	key := s.Items.Schema.Properties["key"]
	key.XValidations = append(key.XValidations, apiextensionsv1.ValidationRule{
		Rule:    `self != "karpenter.sh/nodepool"`,
		Message: `label "karpenter.sh/nodepool" is restricted, the runtime sets it on each node`,
	})
	s.Items.Schema.Properties["key"] = key
	return nil
}

// nonNegativeQuantity is the quantity pattern of the generated schema
// without a leading minus sign.
const nonNegativeQuantity = `^\+?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$`

// nonNegativeLimits refuses a negative NodePool limit, limits.nodes
// included (Karpenter's CRD accepts one): its values, integers or quantity
// strings, get a minimum and a pattern without the minus sign. A CEL rule
// on the values of an unbounded map exceeds the apiserver's cost budget.
func nonNegativeLimits(root *apiextensionsv1.JSONSchemaProps) error {
	spec, ok := root.Properties["spec"]
	if !ok {
		return fmt.Errorf("NodePool schema has no spec")
	}
	limits, ok := spec.Properties["limits"]
	if !ok || limits.AdditionalProperties == nil || limits.AdditionalProperties.Schema == nil {
		return fmt.Errorf("NodePool schema has no spec.limits map")
	}
	// limits is a copy, but AdditionalProperties.Schema points into the CRD.
	value := limits.AdditionalProperties.Schema
	value.Pattern = nonNegativeQuantity
	value.Minimum = ptr(0.0)
	return nil
}

func ptr[T any](v T) *T { return &v }
