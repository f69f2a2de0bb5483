package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	k8sjson "sigs.k8s.io/json"
)

// kubeJSON is a string attribute holding a Kubernetes structure (an
// affinity, a list of volumes, ...) as JSON, written with jsonencode() in
// the Kubernetes API's own field names. Two texts that hold the same value
// are equal, so formatting never shows as a change.
type kubeJSONType struct{ basetypes.StringType }

var _ basetypes.StringTypable = kubeJSONType{}

func (t kubeJSONType) Equal(o attr.Type) bool {
	_, ok := o.(kubeJSONType)
	return ok
}

func (t kubeJSONType) String() string { return "kubeJSONType" }

func (t kubeJSONType) ValueFromString(_ context.Context, in basetypes.StringValue) (basetypes.StringValuable, diag.Diagnostics) {
	return kubeJSON{StringValue: in}, nil
}

func (t kubeJSONType) ValueFromTerraform(ctx context.Context, in tftypes.Value) (attr.Value, error) {
	v, err := t.StringType.ValueFromTerraform(ctx, in)
	if err != nil {
		return nil, err
	}
	s, ok := v.(basetypes.StringValue)
	if !ok {
		return nil, fmt.Errorf("unexpected value type %T", v)
	}
	return kubeJSON{StringValue: s}, nil
}

func (t kubeJSONType) ValueType(context.Context) attr.Value { return kubeJSON{} }

// kubeJSON is a value of kubeJSONType.
type kubeJSON struct{ basetypes.StringValue }

var _ basetypes.StringValuableWithSemanticEquals = kubeJSON{}

func (v kubeJSON) Type(context.Context) attr.Type { return kubeJSONType{} }

func (v kubeJSON) Equal(o attr.Value) bool {
	other, ok := o.(kubeJSON)
	return ok && v.StringValue.Equal(other.StringValue)
}

func (v kubeJSON) StringSemanticEquals(_ context.Context, newValuable basetypes.StringValuable) (bool, diag.Diagnostics) {
	n, ok := newValuable.(kubeJSON)
	if !ok {
		return false, nil
	}
	return sameJSON(v.ValueString(), n.ValueString()), nil
}

func kubeJSONNull() kubeJSON { return kubeJSON{StringValue: basetypes.NewStringNull()} }

// kubeJSONOf is the JSON of v (keys sorted, as jsonencode writes them).
func kubeJSONOf(v any) kubeJSON {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	var generic any
	if err := json.Unmarshal(b, &generic); err != nil {
		panic(err)
	}
	return kubeJSON{StringValue: basetypes.NewStringValue(mustJSON(generic))}
}

// decodeKubeJSON decodes v's text into out as the apiserver would, but
// refusing unknown and misspelt fields; a null value leaves out alone.
func decodeKubeJSON(v kubeJSON, out any) error {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	strict, err := k8sjson.UnmarshalStrict([]byte(v.ValueString()), out)
	if err != nil {
		return err
	}
	if len(strict) > 0 {
		var msgs []string
		for _, e := range strict {
			msgs = append(msgs, e.Error())
		}
		return fmt.Errorf("%s", strings.Join(msgs, "; "))
	}
	return nil
}

// kubeJSONValidator checks at plan time that the text decodes into the
// Kubernetes type of sample (a pointer to a zero value).
type kubeJSONValidator struct {
	sample any
	what   string // e.g. "a Kubernetes Affinity"
}

func (v kubeJSONValidator) Description(context.Context) string {
	return "JSON of " + v.what + ", in the Kubernetes API's field names"
}

func (v kubeJSONValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (v kubeJSONValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	out := reflect.New(reflect.TypeOf(v.sample).Elem()).Interface()
	if err := decodeKubeJSON(kubeJSON{StringValue: req.ConfigValue}, out); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid "+v.what,
			fmt.Sprintf("%s is not %s: %v. Write it with jsonencode() and the Kubernetes API's field names (camelCase).", req.Path, v.what, err))
	}
}
