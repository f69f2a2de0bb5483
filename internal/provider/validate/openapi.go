package validate

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// patterns caches the CRD's compiled regular expressions; RE2 reads every
// pattern the generated CRDs use.
var patterns sync.Map

func pattern(expr string) *regexp.Regexp {
	if re, ok := patterns.Load(expr); ok {
		return re.(*regexp.Regexp)
	}
	re := regexp.MustCompile(expr)
	patterns.Store(expr, re)
	return re
}

// walker checks a value against an OpenAPI v3 schema of a CRD the way the
// apiserver's schema validation and CEL rules do, collecting every error.
type walker struct {
	errs ErrorList
	// typeErrors counts values of the wrong type.
	typeErrors int
}

// blocking reports the errors after which the apiserver does not run CEL
// rules (unsupported, required, too long, too many, wrong type).
func (w *walker) blocking() bool {
	if w.typeErrors > 0 {
		return true
	}
	for _, e := range w.errs {
		switch e.Type {
		case ErrorTypeNotSupported, ErrorTypeRequired, ErrorTypeTooLong, ErrorTypeTooMany:
			return true
		}
	}
	return false
}

func (w *walker) add(p Path, typ ErrorType, format string, args ...any) {
	w.errs = append(w.errs, &Error{Path: p, Type: typ, Message: fmt.Sprintf(format, args...)})
}

// value checks v (present) at p against s; old is the value at the same
// path before the update, for transition rules (nil when there is none).
func (w *walker) value(s *apiextensionsv1.JSONSchemaProps, p Path, v, old any) {
	if v == nil {
		// null is pruned by the apiserver for non-nullable fields.
		return
	}
	if !w.typeOK(s, p, v) {
		return
	}
	switch t := v.(type) {
	case string:
		w.str(s, p, t)
	case map[string]any:
		w.object(s, p, t, old)
	case []any:
		w.array(s, p, t, old)
	case bool:
	default:
		w.number(s, p, v)
	}
}

func (w *walker) typeOK(s *apiextensionsv1.JSONSchemaProps, p Path, v any) bool {
	want := s.Type
	if s.XIntOrString {
		switch v.(type) {
		case string:
			return true
		default:
			if _, ok := asInt(v); ok {
				return true
			}
			w.add(p, ErrorTypeInvalid, "must be an integer or a string")
			w.typeErrors++
			return false
		}
	}
	var ok bool
	switch want {
	case "", "any":
		return true
	case "string":
		_, ok = v.(string)
	case "boolean":
		_, ok = v.(bool)
	case "object":
		_, ok = v.(map[string]any)
	case "array":
		_, ok = v.([]any)
	case "integer":
		_, ok = asInt(v)
	case "number":
		_, ok = asFloat(v)
	}
	if !ok {
		w.add(p, ErrorTypeInvalid, "must be of type %s", want)
		w.typeErrors++
	}
	return ok
}

func (w *walker) str(s *apiextensionsv1.JSONSchemaProps, p Path, v string) {
	if s.MaxLength != nil && int64(utf8.RuneCountInString(v)) > *s.MaxLength {
		w.add(p, ErrorTypeTooLong, "may not be longer than %d characters", *s.MaxLength)
	}
	if s.Pattern != "" && !pattern(s.Pattern).MatchString(v) {
		w.add(p, ErrorTypeInvalid, "%q does not match %q", v, s.Pattern)
	}
	if len(s.Enum) > 0 {
		var allowed []string
		for _, e := range s.Enum {
			var a string
			if err := json.Unmarshal(e.Raw, &a); err == nil {
				allowed = append(allowed, a)
			}
		}
		if !slices.Contains(allowed, v) {
			w.add(p, ErrorTypeNotSupported, "%q is not supported, use one of %s", v, quoteAll(allowed))
		}
	}
	if s.Format == "date-time" {
		if _, err := time.Parse(time.RFC3339, v); err != nil {
			w.add(p, ErrorTypeInvalid, "%q is not an RFC 3339 date-time such as 2006-01-02T15:04:05Z", v)
		}
	}
}

func (w *walker) number(s *apiextensionsv1.JSONSchemaProps, p Path, v any) {
	f, _ := asFloat(v)
	if s.Minimum != nil && f < *s.Minimum {
		w.add(p, ErrorTypeInvalid, "must be greater than or equal to %v", *s.Minimum)
	}
	if s.Maximum != nil && f > *s.Maximum {
		w.add(p, ErrorTypeInvalid, "must be less than or equal to %v", *s.Maximum)
	}
	if s.Format == "int32" && (f > math.MaxInt32 || f < math.MinInt32) {
		w.add(p, ErrorTypeInvalid, "must fit in 32 bits")
	}
}

func (w *walker) object(s *apiextensionsv1.JSONSchemaProps, p Path, v map[string]any, old any) {
	oldMap, _ := old.(map[string]any)
	for _, req := range s.Required {
		if v[req] == nil {
			w.add(p.Child(req), ErrorTypeRequired, "%s is required", req)
		}
	}
	if s.MaxProperties != nil && int64(len(v)) > *s.MaxProperties {
		w.add(p, ErrorTypeTooMany, "must have at most %d entries, has %d", *s.MaxProperties, len(v))
	}
	for _, k := range sortedKeys(v) {
		if prop, ok := s.Properties[k]; ok {
			w.value(&prop, p.Child(k), v[k], lookup(oldMap, k))
			continue
		}
		if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
			w.value(s.AdditionalProperties.Schema, p.Key(k), v[k], lookup(oldMap, k))
		}
	}
}

func (w *walker) array(s *apiextensionsv1.JSONSchemaProps, p Path, v []any, old any) {
	if s.MaxItems != nil && int64(len(v)) > *s.MaxItems {
		w.add(p, ErrorTypeTooMany, "must have at most %d items, has %d", *s.MaxItems, len(v))
	}
	if s.MinItems != nil && int64(len(v)) < *s.MinItems {
		w.add(p, ErrorTypeInvalid, "must have at least %d items", *s.MinItems)
	}
	if s.XListType != nil && *s.XListType == "set" {
		seen := map[string]bool{}
		for i, item := range v {
			key, _ := json.Marshal(item)
			if seen[string(key)] {
				w.add(p.Index(i), ErrorTypeDuplicate, "Duplicate value: %s", key)
			}
			seen[string(key)] = true
		}
	}
	if s.Items == nil || s.Items.Schema == nil {
		return
	}
	// Transition rules inside atomic lists have no old value to compare with.
	for i, item := range v {
		w.value(s.Items.Schema, p.Index(i), item, nil)
	}
}

// ApplyDefaults sets the schema's defaults on absent fields, the way the
// apiserver defaults a custom resource before validating it: outer defaults
// first, then the defaults nested inside them.
func ApplyDefaults(s *apiextensionsv1.JSONSchemaProps, v any) {
	switch t := v.(type) {
	case map[string]any:
		for name, prop := range s.Properties {
			if _, ok := t[name]; !ok && prop.Default != nil {
				var d any
				if err := json.Unmarshal(prop.Default.Raw, &d); err == nil {
					t[name] = normalizeNumbers(d)
				}
			}
			if child, ok := t[name]; ok {
				ApplyDefaults(&prop, child)
			}
		}
		if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
			for k, child := range t {
				if _, known := s.Properties[k]; !known {
					ApplyDefaults(s.AdditionalProperties.Schema, child)
				}
			}
		}
	case []any:
		if s.Items != nil && s.Items.Schema != nil {
			for _, item := range t {
				ApplyDefaults(s.Items.Schema, item)
			}
		}
	}
}

// normalizeNumbers turns whole float64s from encoding/json into int64, the
// form unstructured objects carry integers in.
func normalizeNumbers(v any) any {
	switch t := v.(type) {
	case float64:
		if t == math.Trunc(t) {
			return int64(t)
		}
	case map[string]any:
		for k, c := range t {
			t[k] = normalizeNumbers(c)
		}
	case []any:
		for i, c := range t {
			t[i] = normalizeNumbers(c)
		}
	}
	return v
}

// Int reads an integer of a manifest: int64 from unstructured objects,
// float64 from encoding/json, json.Number.
func Int(v any) (int64, bool) { return asInt(v) }

func asInt(v any) (int64, bool) {
	switch t := v.(type) {
	case int64:
		return t, true
	case int:
		return int64(t), true
	case int32:
		return int64(t), true
	case float64:
		if t == math.Trunc(t) {
			return int64(t), true
		}
	case json.Number:
		i, err := t.Int64()
		return i, err == nil
	}
	return 0, false
}

func asFloat(v any) (float64, bool) {
	if i, ok := asInt(v); ok {
		return float64(i), true
	}
	switch t := v.(type) {
	case float64:
		return t, true
	case json.Number:
		f, err := t.Float64()
		return f, err == nil
	}
	return 0, false
}

func lookup(m map[string]any, k string) any {
	if m == nil {
		return nil
	}
	return m[k]
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func quoteAll(s []string) string {
	q := make([]string, len(s))
	for i, v := range s {
		q[i] = fmt.Sprintf("%q", v)
	}
	return strings.Join(q, ", ")
}
