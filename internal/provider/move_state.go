package provider

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"sigs.k8s.io/yaml"

	"github.com/joistdev/terraform-provider-joist/internal/provider/crdschema"
)

// Resource types whose state a `moved` block may bring into joist_node_pool
// and joist_ec2_node_class: the generic manifest resources of the
// kubernetes and kubectl providers.
const (
	kubernetesManifestType = "kubernetes_manifest"
	kubectlManifestType    = "kubectl_manifest"
)

// stateMovers takes over a kubernetes_manifest or kubectl_manifest of the
// resource's kind. Only Terraform state changes: the object stays as it is
// in the cluster, and the next refresh reads it. extra holds the values of
// the resource's own attributes (force_destroy and the like).
func (r *manifestResource) stateMovers(extra map[string]attr.Value) []resource.StateMover {
	return []resource.StateMover{{StateMover: func(ctx context.Context, req resource.MoveStateRequest, resp *resource.MoveStateResponse) {
		if req.SourceTypeName != kubernetesManifestType && req.SourceTypeName != kubectlManifestType {
			return
		}
		if req.SourceRawState == nil {
			resp.Diagnostics.AddError("Moving "+req.SourceTypeName, "the source has no state")
			return
		}
		var raw map[string]any
		if err := json.Unmarshal(req.SourceRawState.JSON, &raw); err != nil {
			resp.Diagnostics.AddError("Moving "+req.SourceTypeName, "reading its state: "+err.Error())
			return
		}
		obj, err := manifestFromState(req.SourceTypeName, raw)
		if err != nil {
			resp.Diagnostics.AddError("Moving "+req.SourceTypeName, err.Error())
			return
		}
		apiVersion, _ := obj["apiVersion"].(string)
		kind, _ := obj["kind"].(string)
		if apiVersion != r.kind.gvk.GroupVersion().String() || kind != r.kind.gvk.Kind {
			resp.Diagnostics.AddError("Moving "+req.SourceTypeName,
				fmt.Sprintf("it manages a %s %s; %s manages %s %s objects: move it to the matching joist resource",
					apiVersion, kind, r.typeName, r.kind.gvk.GroupVersion(), r.kind.gvk.Kind))
			return
		}
		meta, _ := obj["metadata"].(map[string]any)
		name, _ := meta["name"].(string)
		if name == "" {
			resp.Diagnostics.AddError("Moving "+req.SourceTypeName, "its manifest has no metadata.name")
			return
		}
		spec, _ := obj["spec"].(map[string]any)
		attrs := crdschema.DecodeObject(r.kind.spec, spec, nil)
		for k, v := range extra {
			attrs[k] = v
		}
		attrs["name"], attrs["id"] = types.StringValue(name), types.StringValue(name)
		status, _ := obj["status"].(map[string]any)
		if _, ok := resp.TargetState.Schema.GetAttributes()["status"]; ok {
			attrs["status"] = types.ObjectValueMust(crdschema.ObjectType(r.kind.status).AttrTypes, crdschema.DecodeObject(r.kind.status, status, nil))
		}
		attrs["ready"] = types.BoolValue(conditionTrue(status, "Ready"))
		rawState, diags := rawOf(ctx, resp.TargetState.Schema.Type(), attrs)
		resp.Diagnostics.Append(diags...)
		if !diags.HasError() {
			resp.TargetState.Raw = rawState
		}
	}}}
}

// manifestFromState finds the object in a manifest resource's state:
// kubernetes_manifest keeps it in `object` (as applied, with defaults) and
// `manifest` (as written), as dynamic values ({"value": ..., "type": ...});
// kubectl_manifest keeps the YAML in `yaml_body`.
func manifestFromState(sourceType string, state map[string]any) (map[string]any, error) {
	if sourceType == kubectlManifestType {
		body, _ := state["yaml_body"].(string)
		if body == "" {
			return nil, fmt.Errorf("its state has no yaml_body")
		}
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(body), &obj); err != nil {
			return nil, fmt.Errorf("its yaml_body is not a manifest: %w", err)
		}
		return obj, nil
	}
	for _, attr := range []string{"object", "manifest"} {
		v := state[attr]
		if wrapped, ok := v.(map[string]any); ok {
			if inner, ok := wrapped["value"]; ok {
				if _, typed := wrapped["type"]; typed {
					v = inner
				}
			}
		}
		if obj, ok := v.(map[string]any); ok && len(obj) > 0 {
			return obj, nil
		}
	}
	return nil, fmt.Errorf("its state has neither object nor manifest")
}
