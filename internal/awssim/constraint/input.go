package constraint

import (
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"strconv"
	"strings"
)

// JSON is the input of a JSON-protocol request: its body's top-level
// object, members under their model names.
type JSON map[string]json.RawMessage

// Lookup reads a member; null is absent. A value of the wrong JSON type
// keeps its JSON text, which a range check then rejects.
func (j JSON) Lookup(member, typ string) (Value, bool) {
	raw, ok := j[member]
	if !ok || strings.TrimSpace(string(raw)) == "null" {
		return Value{}, false
	}
	switch typ {
	case "string":
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return Value{Text: s}, true
		}
	case "list":
		var l []json.RawMessage
		if json.Unmarshal(raw, &l) == nil {
			return Value{Count: len(l)}, true
		}
	case "map":
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) == nil {
			return Value{Count: len(m)}, true
		}
	}
	return Value{Text: strings.TrimSpace(string(raw))}, true
}

// QueryForm is the input of an awsQuery request (IAM, STS): scalars under
// the member name, lists as Member.member.N, maps as Member.entry.N.key|value,
// structures as Member.Field; an empty list is sent as the bare member name.
type QueryForm url.Values

// Lookup reads a member.
func (f QueryForm) Lookup(member, typ string) (Value, bool) {
	switch typ {
	case "list", "map", "structure":
		element := map[string]string{"list": ".member.", "map": ".entry.", "structure": "."}[typ]
		_, bare := f[member]
		indices := map[string]bool{}
		for key := range f {
			rest, ok := strings.CutPrefix(key, member+element)
			if !ok {
				continue
			}
			index, _, _ := strings.Cut(rest, ".")
			indices[index] = true
		}
		if !bare && len(indices) == 0 {
			return Value{}, false
		}
		return Value{Count: len(indices)}, true
	}
	v, ok := f[member]
	if !ok || len(v) == 0 {
		return Value{}, false
	}
	return Value{Text: v[0]}, true
}

// Fields is the input of a request decoded into a struct whose field names
// are the model's member names (the AWS SDK's input types): a nil pointer,
// slice or map and an empty enum string are absent.
func Fields(v any) Input { return fields{reflect.Indirect(reflect.ValueOf(v))} }

type fields struct{ v reflect.Value }

func (f fields) Lookup(member, _ string) (Value, bool) {
	fv := f.v.FieldByName(member)
	if !fv.IsValid() {
		return Value{}, false
	}
	switch fv.Kind() {
	case reflect.Pointer, reflect.Interface:
		if fv.IsNil() {
			return Value{}, false
		}
		fv = fv.Elem()
	case reflect.Slice, reflect.Map:
		if fv.IsNil() {
			return Value{}, false
		}
		return Value{Count: fv.Len()}, true
	case reflect.String:
		if fv.Len() == 0 {
			return Value{}, false
		}
	}
	switch fv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return Value{Text: strconv.FormatInt(fv.Int(), 10)}, true
	case reflect.String:
		return Value{Text: fv.String()}, true
	case reflect.Slice, reflect.Map:
		return Value{Count: fv.Len()}, true
	}
	return Value{Text: fmt.Sprint(fv.Interface())}, true
}

// Values is an input already read into values by member name.
type Values map[string]Value

// Lookup reads a member.
func (m Values) Lookup(member, _ string) (Value, bool) {
	v, ok := m[member]
	return v, ok
}
