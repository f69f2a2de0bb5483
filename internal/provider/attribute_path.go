package provider

import (
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/joistdev/terraform-provider-joist/internal/provider/crdschema"
	"github.com/joistdev/terraform-provider-joist/internal/provider/validate"
)

// attributePath maps a manifest path to the Terraform attribute holding it:
// metadata.name is `name`, spec fields are top-level attributes named in
// snake_case. ok is false for paths above any attribute (spec itself).
func attributePath(p validate.Path) (path.Path, bool) {
	if len(p) >= 2 && p[0].Field == "metadata" && p[1].Field == "name" {
		return path.Root("name"), true
	}
	if len(p) < 2 || p[0].Field != "spec" {
		return path.Empty(), false
	}
	out := path.Root(crdschema.TFName(p[1].Field))
	for _, s := range p[2:] {
		switch {
		case s.IsIndex:
			out = out.AtListIndex(s.Index)
		case s.IsKey:
			out = out.AtMapKey(s.Key)
		default:
			out = out.AtName(crdschema.TFName(s.Field))
		}
	}
	return out, true
}
