package provider

import (
	"context"

	dsschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/policy"
)

// policyParams resolves the policy's scope; region, account and partition
// come from the AWS configuration when not given.
func (b *awsBase) policyParams(ctx context.Context, cluster, nodeRole, queue, region, account, partition string, diags *diag.Diagnostics) (policy.Params, bool) {
	p := policy.Params{ClusterName: cluster, NodeRoleARN: nodeRole, QueueName: queue, Region: region, AccountID: account, Partition: partition}
	if p.Region == "" || p.AccountID == "" {
		cfg, ok := b.awsConfig(ctx, diags)
		if !ok {
			return p, false
		}
		if p.Region == "" {
			p.Region = cfg.Region
		}
		if p.AccountID == "" {
			id, err := accountID(ctx, cfg)
			if err != nil {
				diags.AddError("Finding the AWS account", err.Error()+"; or set account_id")
				return p, false
			}
			p.AccountID = id
		}
	}
	if p.Partition == "" {
		p.Partition = partitionOf(p.Region)
	}
	if p.ClusterName == "" {
		diags.AddAttributeError(path.Root("cluster_name"), "Missing cluster name", "set cluster_name here or in the provider block")
		return p, false
	}
	return p, true
}

// queueKeyDescription documents interruption_queue_kms_key_arn on the role
// and the policy data source alike.
const queueKeyDescription = "ARN of the KMS key the interruption queue is encrypted with (`joist_interruption_queue.kms_master_key_id` " +
	"when that is a key ARN; for an alias, `data.aws_kms_alias.<name>.target_key_arn`). With it the policy grants `kms:Decrypt` " +
	"on that key only, and only through SQS (`kms:ViaService`): SQS decrypts each message with its reader's permission, so " +
	"without this grant the controller receives nothing from an SSE-KMS queue. The key's policy must delegate to IAM (as a " +
	"key's default policy does). An alias or a bare key ID is refused: IAM matches a key grant on the key's ARN only. " +
	"Not needed for SQS-managed encryption. Requires `interruption_queue_name`."

func queueKeyAttribute() schema.StringAttribute {
	return schema.StringAttribute{Optional: true, MarkdownDescription: queueKeyDescription, Validators: []validator.String{keyARNValidator{}}}
}

func dataQueueKeyAttribute() dsschema.StringAttribute {
	return dsschema.StringAttribute{Optional: true, MarkdownDescription: queueKeyDescription, Validators: []validator.String{keyARNValidator{}}}
}

// keyARNValidator refuses at plan time what policy.CheckKeyARN refuses.
type keyARNValidator struct{}

func (keyARNValidator) Description(context.Context) string { return "a KMS key ARN" }
func (v keyARNValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}
func (keyARNValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if err := policy.CheckKeyARN(req.ConfigValue.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Not a KMS key ARN", req.Path.String()+": "+err.Error())
	}
}
