package provider

import "github.com/hashicorp/terraform-plugin-framework/datasource"

// NewNodePoolDataSource returns data.joist_node_pool: a NodePool read by
// name, for pools managed elsewhere.
func NewNodePoolDataSource() datasource.DataSource {
	return &manifestDataSource{kind: nodePoolKind(), typeName: "_node_pool",
		doc: "Reads a `karpenter.sh/v1` NodePool: its spec with the apiserver's defaults, and its status."}
}
