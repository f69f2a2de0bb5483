package provider

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// awsModel is the provider's aws block.
type awsModel struct {
	Region     types.String     `tfsdk:"region"`
	Profile    types.String     `tfsdk:"profile"`
	AssumeRole *assumeRoleModel `tfsdk:"assume_role"`
}

type assumeRoleModel struct {
	RoleARN     types.String `tfsdk:"role_arn"`
	SessionName types.String `tfsdk:"session_name"`
	ExternalID  types.String `tfsdk:"external_id"`
}

func awsSchema() schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{
		MarkdownDescription: "AWS access for data sources and for cleaning up instances on `force_destroy`. " +
			"Credentials, region and endpoints follow the AWS SDK's standard chain (environment variables " +
			"such as `AWS_REGION`, `AWS_PROFILE` and `AWS_ENDPOINT_URL`, shared config files, instance and " +
			"pod identities); the attributes here override it.",
		Optional: true,
		Attributes: map[string]schema.Attribute{
			"region":  schema.StringAttribute{Optional: true, MarkdownDescription: "AWS region, such as `us-west-2`."},
			"profile": schema.StringAttribute{Optional: true, MarkdownDescription: "Shared configuration profile."},
			"assume_role": schema.SingleNestedAttribute{
				Optional:            true,
				MarkdownDescription: "A role to assume with STS before calling AWS.",
				Attributes: map[string]schema.Attribute{
					"role_arn":     schema.StringAttribute{Required: true, MarkdownDescription: "ARN of the role."},
					"session_name": schema.StringAttribute{Optional: true, MarkdownDescription: "Session name; defaults to one the SDK chooses."},
					"external_id":  schema.StringAttribute{Optional: true, MarkdownDescription: "External ID the role's trust policy requires."},
				},
			},
		},
	}
}

func (m *awsModel) known() bool {
	if m == nil {
		return true
	}
	vals := []attr.Value{m.Region, m.Profile}
	if r := m.AssumeRole; r != nil {
		vals = append(vals, r.RoleARN, r.SessionName, r.ExternalID)
	}
	for _, v := range vals {
		if v.IsUnknown() {
			return false
		}
	}
	return true
}

// config loads the SDK configuration with the block's overrides.
func (m *awsModel) config(ctx context.Context) (aws.Config, error) {
	if m == nil {
		m = &awsModel{}
	}
	var opts []func(*config.LoadOptions) error
	if r := m.Region.ValueString(); r != "" {
		opts = append(opts, config.WithRegion(r))
	}
	if p := m.Profile.ValueString(); p != "" {
		opts = append(opts, config.WithSharedConfigProfile(p))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return aws.Config{}, fmt.Errorf("aws: loading the SDK configuration: %w", err)
	}
	if r := m.AssumeRole; r != nil {
		creds := stscreds.NewAssumeRoleProvider(sts.NewFromConfig(cfg), r.RoleARN.ValueString(), func(o *stscreds.AssumeRoleOptions) {
			if s := r.SessionName.ValueString(); s != "" {
				o.RoleSessionName = s
			}
			if id := r.ExternalID.ValueString(); id != "" {
				o.ExternalID = aws.String(id)
			}
		})
		cfg.Credentials = aws.NewCredentialsCache(creds)
	}
	if cfg.Region == "" {
		return aws.Config{}, fmt.Errorf("aws: no region: set aws.region in the provider block or AWS_REGION")
	}
	return cfg, nil
}
