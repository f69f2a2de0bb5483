package provider

import (
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// roleInputs names, per role resource, what its shared attributes stand
// for: the default name and the EKS module's inputs they replace.
type roleInputs struct {
	// Name describes the name's default and its module input, after "Role name. ".
	Name string
	// NamePrefix, MaxSessionDuration, Description, Boundary and Tags are the
	// module's inputs, as a phrase ending the description.
	NamePrefix, MaxSessionDuration, Description, Boundary, Tags string
	// Path is the whole description of path (what else it places).
	Path string
}

// roleAttributes are the attributes joist_node_iam_role and
// joist_controller_iam_role share: naming, IAM's role properties and what
// IAM computes. Each resource adds its own.
func roleAttributes(in roleInputs) map[string]schema.Attribute {
	replace := []planmodifier.String{stringplanmodifier.RequiresReplace()}
	known := []planmodifier.String{stringplanmodifier.UseStateForUnknown()}
	return map[string]schema.Attribute{
		"id": schema.StringAttribute{Computed: true, MarkdownDescription: "The role name.", PlanModifiers: known},
		"name": schema.StringAttribute{
			Optional: true, Computed: true, PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace(), stringplanmodifier.UseStateForUnknown()},
			MarkdownDescription: "Role name. " + in.Name,
			Validators:          []validator.String{stringvalidator.LengthBetween(1, 64), stringvalidator.ConflictsWith(path.MatchRoot("name_prefix"))},
		},
		"name_prefix": schema.StringAttribute{
			Optional: true, PlanModifiers: replace,
			MarkdownDescription: "Create the role with a unique name beginning with this prefix (at most 38 characters) instead of `name`. " + in.NamePrefix,
			Validators:          []validator.String{stringvalidator.LengthBetween(1, 64-uniqueSuffixLength), stringvalidator.RegexMatches(iamName, "may hold letters, digits and +=,.@_-")},
		},
		"max_session_duration": schema.Int64Attribute{
			Optional: true, Computed: true, Default: int64default.StaticInt64(defaultMaxSessionDuration),
			Validators:          []validator.Int64{int64validator.Between(3600, 43200)},
			MarkdownDescription: "Longest session the role's credentials last, 3600 to 43200 seconds. Defaults to 3600, as IAM. " + in.MaxSessionDuration,
		},
		"path": schema.StringAttribute{
			Optional: true, Computed: true, Default: stringdefault.StaticString("/"), PlanModifiers: replace,
			MarkdownDescription: in.Path,
		},
		"description":          schema.StringAttribute{Optional: true, MarkdownDescription: "Role description. " + in.Description},
		"permissions_boundary": schema.StringAttribute{Optional: true, MarkdownDescription: "ARN of a managed policy used as the role's permissions boundary. " + in.Boundary},
		"tags":                 schema.MapAttribute{Optional: true, ElementType: types.StringType, MarkdownDescription: in.Tags},
		"arn":                  schema.StringAttribute{Computed: true, MarkdownDescription: "Role ARN.", PlanModifiers: known},
		"assume_role_policy":   schema.StringAttribute{Computed: true, MarkdownDescription: "The role's trust policy."},
	}
}

// withAttributes adds own to shared; a name in both is a programming error.
func withAttributes(shared, own map[string]schema.Attribute) map[string]schema.Attribute {
	for k, v := range own {
		if _, dup := shared[k]; dup {
			panic("attribute " + k + " is already shared")
		}
		shared[k] = v
	}
	return shared
}
