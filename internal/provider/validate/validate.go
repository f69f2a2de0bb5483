// Package validate checks NodePool, NodeClaim and EC2NodeClass manifests
// against the rules of their CRDs (OpenAPI schema and CEL) without an
// apiserver, so that Terraform can refuse a configuration at plan time with
// the verdict the apiserver would give at apply time.
//
// The OpenAPI part is read from the embedded CRDs themselves; the CEL rules
// run through the apiserver's own CEL validator (cel.go). A parity test runs
// the API packages' manifest cases through both this package and a real
// apiserver.
package validate

import (
	"encoding/json"
	"fmt"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/crds"
)

// ErrorType classifies an Error as the apiserver's field errors do.
type ErrorType string

const (
	ErrorTypeRequired     ErrorType = "Required value"
	ErrorTypeInvalid      ErrorType = "Invalid value"
	ErrorTypeNotSupported ErrorType = "Unsupported value"
	ErrorTypeTooLong      ErrorType = "Too long"
	ErrorTypeTooMany      ErrorType = "Too many"
	ErrorTypeDuplicate    ErrorType = "Duplicate value"
	ErrorTypeInternal     ErrorType = "Internal error"
)

// Error is one broken rule: where, and the rule's message.
type Error struct {
	Path    Path
	Type    ErrorType
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("%s: %s: %s", e.Path, e.Type, e.Message) }

// ErrorList is every broken rule of an object.
type ErrorList []*Error

func (l ErrorList) Error() string {
	msgs := make([]string, len(l))
	for i, e := range l {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "; ")
}

// Validator validates objects of the kinds of the embedded CRDs.
type Validator struct {
	schemas map[schema.GroupVersionKind]*apiextensionsv1.JSONSchemaProps
	rules   map[schema.GroupVersionKind]*celRules
}

// New reads the embedded CRDs.
func New() (*Validator, error) {
	defs, err := crds.CRDs()
	if err != nil {
		return nil, err
	}
	v := &Validator{schemas: map[schema.GroupVersionKind]*apiextensionsv1.JSONSchemaProps{}, rules: map[schema.GroupVersionKind]*celRules{}}
	for _, crd := range defs {
		for _, version := range crd.Spec.Versions {
			if version.Schema == nil || version.Schema.OpenAPIV3Schema == nil {
				continue
			}
			gvk := schema.GroupVersionKind{Group: crd.Spec.Group, Version: version.Name, Kind: crd.Spec.Names.Kind}
			v.schemas[gvk] = version.Schema.OpenAPIV3Schema
			if v.rules[gvk], err = newCELRules(version.Schema.OpenAPIV3Schema); err != nil {
				return nil, fmt.Errorf("%s: %w", gvk.Kind, err)
			}
		}
	}
	return v, nil
}

// Default returns a deep copy of obj with the CRD defaults applied to absent
// fields, as the apiserver stores it.
func (v *Validator) Default(obj map[string]any) (map[string]any, error) {
	s, err := v.schemaOf(obj)
	if err != nil {
		return nil, err
	}
	out := deepCopy(obj)
	ApplyDefaults(s, out)
	return out, nil
}

// Validate checks obj, and when old is not nil the transition rules from
// old to obj, after applying the CRD defaults to both. Only
// metadata.name is checked of the metadata.
func (v *Validator) Validate(obj, old map[string]any) ErrorList {
	s, err := v.schemaOf(obj)
	if err != nil {
		return ErrorList{{Path: Path{}.Child("kind"), Type: ErrorTypeInvalid, Message: err.Error()}}
	}
	obj = deepCopy(obj)
	ApplyDefaults(s, obj)
	var oldSpec any
	if old != nil {
		old = deepCopy(old)
		ApplyDefaults(s, old)
		oldSpec = old["spec"]
	}
	w := &walker{}
	metadata, _ := obj["metadata"].(map[string]any)
	name, _ := metadata["name"].(string)
	for _, msg := range validation.IsDNS1123Subdomain(name) {
		w.add(Path{}.Child("metadata").Child("name"), ErrorTypeInvalid, "%q is not a valid name: %s", name, msg)
	}
	for _, req := range s.Required {
		if obj[req] == nil {
			w.add(Path{}.Child(req), ErrorTypeRequired, "%s is required", req)
		}
	}
	if spec, ok := s.Properties["spec"]; ok && obj["spec"] != nil {
		w.value(&spec, Path{}.Child("spec"), obj["spec"], oldSpec)
	}
	if w.blocking() {
		// As the apiserver, skip the CEL rules when the object is not of the
		// schema's shape: they could not evaluate.
		return w.errs
	}
	return append(w.errs, v.rules[v.gvkOf(obj)].validate(withoutStatus(obj), withoutStatus(old))...)
}

func (v *Validator) gvkOf(obj map[string]any) schema.GroupVersionKind {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	return schema.FromAPIVersionAndKind(apiVersion, kind)
}

// withoutStatus is obj with only what a user writes: status is the
// controller's and has rules of its own the spec's validation does not run.
func withoutStatus(obj map[string]any) map[string]any {
	if obj == nil {
		return nil
	}
	out := make(map[string]any, len(obj))
	for k, val := range obj {
		if k != "status" {
			out[k] = val
		}
	}
	return out
}

func (v *Validator) schemaOf(obj map[string]any) (*apiextensionsv1.JSONSchemaProps, error) {
	gvk := v.gvkOf(obj)
	apiVersion, kind := gvk.ToAPIVersionAndKind()
	s, ok := v.schemas[gvk]
	if !ok {
		return nil, fmt.Errorf("no CRD for %s %s", apiVersion, kind)
	}
	return s, nil
}

func deepCopy(m map[string]any) map[string]any {
	raw, err := json.Marshal(m)
	if err != nil {
		panic(fmt.Sprintf("validate: object is not JSON: %v", err))
	}
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return normalizeNumbers(out).(map[string]any)
}

// SchemaOf returns the OpenAPI schema of group/version kind (nil if unknown).
func (v *Validator) SchemaOf(group, version, kind string) *apiextensionsv1.JSONSchemaProps {
	return v.schemas[schema.GroupVersionKind{Group: group, Version: version, Kind: kind}]
}
