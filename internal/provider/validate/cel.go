package validate

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
)

// celRules runs a CRD's x-kubernetes-validations with the apiserver's own
// CEL validator (the same library, cost limits and transition-rule
// semantics), so a rule is written once, in the API types, and plan time
// gives the verdict apply time would.
type celRules struct {
	schema    *structuralschema.Structural
	validator *cel.Validator
}

func newCELRules(s *apiextensionsv1.JSONSchemaProps) (*celRules, error) {
	internal := &apiextensions.JSONSchemaProps{}
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(s, internal, nil); err != nil {
		return nil, err
	}
	structural, err := structuralschema.NewStructural(internal)
	if err != nil {
		return nil, fmt.Errorf("CRD schema is not structural: %w", err)
	}
	return &celRules{schema: structural, validator: cel.NewValidator(structural, true, celconfig.PerCallLimit)}, nil
}

// validate evaluates every rule on obj (defaulted, as the apiserver
// evaluates them) and the transition rules against old when it is not nil.
func (r *celRules) validate(obj, old map[string]any) ErrorList {
	var oldObj any
	if old != nil {
		oldObj = old
	}
	errs, _ := r.validator.Validate(context.Background(), nil, r.schema, obj, oldObj, celconfig.RuntimeCELCostBudget)
	out := make(ErrorList, 0, len(errs))
	for _, e := range errs {
		typ := ErrorTypeInvalid
		if e.Type == field.ErrorTypeInternal {
			typ = ErrorTypeInternal
		}
		out = append(out, &Error{Path: r.path(e.Field), Type: typ, Message: e.Detail})
	}
	return out
}

// path reads the apiserver's spelling of a field path (spec.a[0].b[key])
// back into a Path, using the schema to tell list indexes from map keys.
func (r *celRules) path(s string) Path {
	var p Path
	node := r.schema
	for s != "" {
		switch {
		case s[0] == '.':
			s = s[1:]
		case s[0] == '[':
			end := strings.IndexByte(s, ']')
			if end < 0 {
				return append(p, Step{Field: s})
			}
			inner := s[1:end]
			s = s[end+1:]
			if node != nil && node.Type == "array" {
				i, _ := strconv.Atoi(inner)
				p = p.Index(i)
				node = node.Items
				continue
			}
			p = p.Key(inner)
			if node != nil && node.AdditionalProperties != nil {
				node = node.AdditionalProperties.Structural
			} else {
				node = nil
			}
		default:
			end := strings.IndexAny(s, ".[")
			if end < 0 {
				end = len(s)
			}
			name := s[:end]
			s = s[end:]
			p = p.Child(name)
			if node != nil {
				if child, ok := node.Properties[name]; ok {
					node = &child
				} else {
					node = nil
				}
			}
		}
	}
	return p
}
