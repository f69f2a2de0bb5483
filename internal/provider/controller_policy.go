package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

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
