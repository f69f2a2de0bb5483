package provider

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/defaults"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/joistdev/terraform-provider-joist/internal/controllerdeploy"
)

// controllerConfigAnnotation holds, on the controller's Deployment, the
// joist_controller configuration applied last (as Helm keeps a release's
// values), so an import recovers exactly what was configured: many inputs
// (affinity, volumes) cannot be told apart from the apiserver's defaults in
// the live objects.
const controllerConfigAnnotation = "joist.dev/terraform-config"

// controllerComputed are the attributes that are not configuration.
var controllerComputed = map[string]bool{"id": true, "crds_sha256": true, "in_sync": true, "drift": true}

// controllerSecrets are the attributes that can carry credentials (proxy
// URLs with a password, tokens): Sensitive in the schema, and recorded in
// the configuration annotation only as a SHA-256 under secretHashesKey, so
// the annotation (readable by whoever can read Deployments) holds no
// secret. Import reads them back from the container's environment.
var controllerSecrets = map[string]bool{"extra_env": true}

// secretHashesKey holds, in the configuration annotation, the hashes of
// the controllerSecrets attributes; it is no attribute, so import ignores it.
const secretHashesKey = "sensitive_sha256"

// controllerConfig is m's configuration as JSON.
func controllerConfig(ctx context.Context, schemaType attr.Type, m *controllerModel) (string, error) {
	obj, d := types.ObjectValueFrom(ctx, schemaType.(types.ObjectType).AttrTypes, m)
	if d.HasError() {
		return "", fmt.Errorf("%v", d)
	}
	out, hashes := map[string]any{}, map[string]string{}
	for name, v := range obj.Attributes() {
		if controllerComputed[name] {
			continue
		}
		raw, err := v.ToTerraformValue(ctx)
		if err != nil {
			return "", err
		}
		j, err := tfJSON(raw)
		if err != nil {
			return "", fmt.Errorf("%s: %w", name, err)
		}
		if controllerSecrets[name] {
			if j != nil {
				b, _ := json.Marshal(j)
				hashes[name] = fmt.Sprintf("%x", sha256.Sum256(b))
			}
			continue
		}
		out[name] = j
	}
	if len(hashes) > 0 {
		out[secretHashesKey] = hashes
	}
	b, err := json.Marshal(out)
	return string(b), err
}

// tfJSON is a known Terraform value as JSON data, as Terraform's state
// holds it.
func tfJSON(v tftypes.Value) (any, error) {
	if v.IsNull() {
		return nil, nil
	}
	if !v.IsKnown() {
		return nil, fmt.Errorf("value not known")
	}
	switch {
	case v.Type().Is(tftypes.String):
		var s string
		err := v.As(&s)
		return s, err
	case v.Type().Is(tftypes.Bool):
		var b bool
		err := v.As(&b)
		return b, err
	case v.Type().Is(tftypes.Number):
		f := new(big.Float)
		if err := v.As(&f); err != nil {
			return nil, err
		}
		return json.Number(f.Text('g', -1)), nil
	case v.Type().Is(tftypes.Object{}), v.Type().Is(tftypes.Map{}):
		var m map[string]tftypes.Value
		if err := v.As(&m); err != nil {
			return nil, err
		}
		out := map[string]any{}
		for k, e := range m {
			j, err := tfJSON(e)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			out[k] = j
		}
		return out, nil
	case v.Type().Is(tftypes.List{}), v.Type().Is(tftypes.Set{}), v.Type().Is(tftypes.Tuple{}):
		var l []tftypes.Value
		if err := v.As(&l); err != nil {
			return nil, err
		}
		out := make([]any, len(l))
		for i, e := range l {
			j, err := tfJSON(e)
			if err != nil {
				return nil, err
			}
			out[i] = j
		}
		return out, nil
	}
	return nil, fmt.Errorf("unsupported type %s", v.Type())
}

// importFrom reads a joist_controller's configuration from the live
// Deployment in namespace: from its configuration annotation, or, for a
// Deployment written before the annotation existed, from its fields, with
// the defaults for the rest.
func (r *ControllerResource) importFrom(ctx context.Context, dyn dynamic.Interface, sch schema.Schema, ns string, diags *diag.Diagnostics) (*controllerModel, bool) {
	d, err := dyn.Resource(deploymentsGVR).Namespace(ns).Get(ctx, controllerdeploy.Name, metav1.GetOptions{})
	if err != nil {
		diags.AddError("Importing joist_controller", fmt.Sprintf("reading Deployment %s/%s: %v", ns, controllerdeploy.Name, err))
		return nil, false
	}
	config := d.GetAnnotations()[controllerConfigAnnotation]
	if config == "" {
		config, err = configFromFields(ctx, dyn, d)
	} else {
		config, err = withExtraEnv(config, d)
	}
	if err != nil {
		diags.AddError("Importing joist_controller", err.Error())
		return nil, false
	}
	typ := sch.Type().TerraformType(ctx)
	raw, err := (&tfprotov6.RawState{JSON: []byte(config)}).UnmarshalWithOpts(typ, tfprotov6.UnmarshalOpts{ValueFromJSONOpts: tftypes.ValueFromJSONOpts{IgnoreUndefinedAttributes: true}})
	if err != nil {
		diags.AddError("Importing joist_controller", fmt.Sprintf("the configuration recorded on Deployment %s/%s does not read: %v", ns, controllerdeploy.Name, err))
		return nil, false
	}
	state := tfsdk.State{Schema: sch, Raw: raw}
	applyDefaults(ctx, sch, &state, diags)
	var m controllerModel
	diags.Append(state.Get(ctx, &m)...)
	if diags.HasError() {
		return nil, false
	}
	hash, _, _ := unstructured.NestedString(d.Object, "spec", "template", "metadata", "annotations", controllerdeploy.RolloutAnnotation)
	m.ID, m.Namespace, m.CRDsSHA256 = types.StringValue(ns), types.StringValue(ns), types.StringValue(hash)
	return &m, true
}

// applyDefaults gives null top-level attributes their schema defaults:
// what a configuration that leaves them out plans.
func applyDefaults(ctx context.Context, sch schema.Schema, state *tfsdk.State, diags *diag.Diagnostics) {
	for name, a := range sch.Attributes {
		var cur attr.Value
		p := path.Root(name)
		diags.Append(state.GetAttribute(ctx, p, &cur)...)
		if cur == nil || !cur.IsNull() {
			continue
		}
		var v attr.Value
		switch a := a.(type) {
		case schema.StringAttribute:
			if a.Default != nil {
				resp := &defaults.StringResponse{}
				a.Default.DefaultString(ctx, defaults.StringRequest{}, resp)
				v = resp.PlanValue
				if a.CustomType != nil {
					v, _ = a.CustomType.(kubeJSONType).ValueFromString(ctx, resp.PlanValue)
				}
			}
		case schema.BoolAttribute:
			if a.Default != nil {
				resp := &defaults.BoolResponse{}
				a.Default.DefaultBool(ctx, defaults.BoolRequest{}, resp)
				v = resp.PlanValue
			}
		case schema.Int64Attribute:
			if a.Default != nil {
				resp := &defaults.Int64Response{}
				a.Default.DefaultInt64(ctx, defaults.Int64Request{}, resp)
				v = resp.PlanValue
			}
		case schema.Float64Attribute:
			if a.Default != nil {
				resp := &defaults.Float64Response{}
				a.Default.DefaultFloat64(ctx, defaults.Float64Request{}, resp)
				v = resp.PlanValue
			}
		case schema.ListAttribute:
			if a.Default != nil {
				resp := &defaults.ListResponse{}
				a.Default.DefaultList(ctx, defaults.ListRequest{}, resp)
				v = resp.PlanValue
			}
		case schema.ListNestedAttribute:
			if a.Default != nil {
				resp := &defaults.ListResponse{}
				a.Default.DefaultList(ctx, defaults.ListRequest{}, resp)
				v = resp.PlanValue
			}
		case schema.MapAttribute:
			if a.Default != nil {
				resp := &defaults.MapResponse{}
				a.Default.DefaultMap(ctx, defaults.MapRequest{}, resp)
				v = resp.PlanValue
			}
		}
		if v != nil {
			diags.Append(state.SetAttribute(ctx, p, v)...)
		}
	}
}

// extraEnv are the variables of the controller's environment that no
// attribute sets: extra_env's.
func extraEnv(env map[string]string) map[string]string {
	own := map[string]bool{}
	for _, s := range controllerSettings {
		own[s.env] = true
	}
	extra := map[string]string{}
	for k, v := range env {
		if derivedSettings[k] == "" && !own[k] {
			extra[k] = v
		}
	}
	return extra
}

// withExtraEnv completes a recorded configuration, which holds extra_env
// only as a hash, with extra_env read from the Deployment's container.
func withExtraEnv(config string, d *unstructured.Unstructured) (string, error) {
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(config))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return "", fmt.Errorf("the configuration recorded on Deployment %s/%s does not read: %w", d.GetNamespace(), d.GetName(), err)
	}
	if _, recorded := m["extra_env"]; recorded {
		return config, nil // recorded before secrets were hashed
	}
	env, err := controllerdeploy.Env(d)
	if err != nil {
		return "", err
	}
	if extra := extraEnv(env); len(extra) > 0 {
		m["extra_env"] = extra
	}
	b, err := json.Marshal(m)
	return string(b), err
}

// configFromFields reconstructs the configuration of a Deployment that
// has no configuration annotation from its fields: the settings from the
// environment, the image, resources, replicas and service account.
func configFromFields(ctx context.Context, dyn dynamic.Interface, d *unstructured.Unstructured) (string, error) {
	env, err := controllerdeploy.Env(d)
	if err != nil {
		return "", err
	}
	config := map[string]any{}
	for _, s := range controllerSettings {
		v, ok := env[s.env]
		if !ok {
			continue
		}
		delete(env, s.env)
		switch s.kind {
		case settingBool:
			b, _ := strconv.ParseBool(v)
			config[s.attr] = b
		case settingInt, settingFloat:
			config[s.attr] = json.Number(v)
		case settingList:
			config[s.attr] = strings.Split(v, ",")
		default:
			config[s.attr] = v
		}
	}
	for envName, attrName := range map[string]string{"CLUSTER_NAME": "cluster_name", "AWS_REGION": "aws_region"} {
		if v, ok := env[envName]; ok {
			config[attrName] = v
		}
	}
	if gates := env["FEATURE_GATES"]; gates != "" {
		vals := map[string]bool{}
		for _, kv := range strings.Split(gates, ",") {
			k, v, _ := strings.Cut(kv, "=")
			vals[k] = v == "true"
		}
		config["feature_gates"] = vals
	}
	if extra := extraEnv(env); len(extra) > 0 {
		config["extra_env"] = extra
	}
	containers, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
	for _, c := range containers {
		cm, _ := c.(map[string]any)
		if cm["name"] != controllerdeploy.Name {
			continue
		}
		config["image"] = fmt.Sprint(cm["image"])
		for attrName, field := range map[string][]string{
			"cpu_request": {"requests", "cpu"}, "memory_request": {"requests", "memory"}, "cpu_limit": {"limits", "cpu"}, "memory_limit": {"limits", "memory"},
		} {
			if q, ok, _ := unstructured.NestedString(cm, append([]string{"resources"}, field...)...); ok {
				config[attrName] = q
			}
		}
	}
	replicas, _, _ := unstructured.NestedInt64(d.Object, "spec", "replicas")
	config["replicas"] = replicas
	sa, _, _ := unstructured.NestedString(d.Object, "spec", "template", "spec", "serviceAccountName")
	config["service_account"] = sa
	if s, err := dyn.Resource(serviceAccountsGVR).Namespace(d.GetNamespace()).Get(ctx, sa, metav1.GetOptions{}); err == nil {
		if arn := s.GetAnnotations()["eks.amazonaws.com/role-arn"]; arn != "" {
			config["irsa_role_arn"] = arn
		}
	}
	b, err := json.Marshal(config)
	return string(b), err
}
