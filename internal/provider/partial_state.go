package provider

import (
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// settlePartial is deferred by the Create and Update of resources that make
// several calls. When one call fails after an earlier one made something,
// the resource saves what exists so the next apply repairs it (Terraform
// marks a failed create tainted and replaces it); Terraform refuses a saved
// state with unknown values, so every value still unknown (an ARN never
// read back, rules never written) becomes null.
func settlePartial(state *tfsdk.State, diags *diag.Diagnostics) {
	if !diags.HasError() || state.Raw.IsNull() || state.Raw.IsFullyKnown() {
		return
	}
	raw, err := tftypes.Transform(state.Raw, func(_ *tftypes.AttributePath, v tftypes.Value) (tftypes.Value, error) {
		if !v.IsKnown() {
			return tftypes.NewValue(v.Type(), nil), nil
		}
		return v, nil
	})
	if err != nil {
		diags.AddError("Saving a partial result", "replacing unknown values with null: "+err.Error())
		return
	}
	state.Raw = raw
}
