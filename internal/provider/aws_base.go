package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// awsBase is what the AWS-backed resources and data sources share: the
// provider's lazily built clients.
type awsBase struct {
	clients *clients
}

func (b *awsBase) configureData(data any, diags *diag.Diagnostics) {
	if data == nil {
		return
	}
	c, ok := data.(*clients)
	if !ok {
		diags.AddError("Unexpected provider data", fmt.Sprintf("got %T", data))
		return
	}
	b.clients = c
}

func (b *awsBase) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	b.configureData(req.ProviderData, &resp.Diagnostics)
}

// awsConfig returns the SDK configuration or adds a diagnostic.
func (b *awsBase) awsConfig(ctx context.Context, diags *diag.Diagnostics) (aws.Config, bool) {
	if b.clients == nil {
		diags.AddError("Provider not configured", "the joist provider block was not configured")
		return aws.Config{}, false
	}
	cfg, err := b.clients.AWS(ctx)
	if err != nil {
		diags.AddError("AWS configuration", err.Error())
		return aws.Config{}, false
	}
	return cfg, true
}

// clusterName is the attribute's value, else the provider's cluster_name.
func (b *awsBase) clusterName(v types.String) string {
	if !v.IsNull() && !v.IsUnknown() && v.ValueString() != "" {
		return v.ValueString()
	}
	if b.clients != nil {
		return b.clients.clusterName
	}
	return ""
}

// accountID asks STS who the credentials belong to.
func accountID(ctx context.Context, cfg aws.Config) (string, error) {
	out, err := sts.NewFromConfig(cfg).GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	if err != nil {
		return "", fmt.Errorf("sts:GetCallerIdentity (needed for the account ID): %w", err)
	}
	return aws.ToString(out.Account), nil
}

// partitionOf is the ARN partition of a region.
func partitionOf(region string) string {
	switch {
	case strings.HasPrefix(region, "cn-"):
		return "aws-cn"
	case strings.HasPrefix(region, "us-gov-"):
		return "aws-us-gov"
	}
	return "aws"
}

// dnsSuffixOf is the service-principal DNS suffix of a partition.
func dnsSuffixOf(partition string) string {
	if partition == "aws-cn" {
		return "amazonaws.com.cn"
	}
	return "amazonaws.com"
}

// isAWSCode reports whether err is an AWS API error with one of codes.
func isAWSCode(err error, codes ...string) bool {
	var api smithy.APIError
	if !errors.As(err, &api) {
		return false
	}
	for _, c := range codes {
		if api.ErrorCode() == c {
			return true
		}
	}
	return false
}
