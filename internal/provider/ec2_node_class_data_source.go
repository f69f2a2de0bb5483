package provider

import "github.com/hashicorp/terraform-plugin-framework/datasource"

// NewEC2NodeClassDataSource returns data.joist_ec2_node_class: an
// EC2NodeClass read by name, with what its selectors resolved to.
func NewEC2NodeClassDataSource() datasource.DataSource {
	return &manifestDataSource{kind: ec2NodeClassKind(), typeName: "_ec2_node_class",
		doc: "Reads a `karpenter.k8s.aws/v1` EC2NodeClass: its spec with the apiserver's defaults, and its status, what the " +
			"controller resolved its selectors to (AMIs, subnets, security groups, capacity reservations, instance profile) and " +
			"its conditions. The status changes as the world does (every AMI release, for an alias such as `al2023@latest`): " +
			"reading it here, fresh at every plan, keeps those changes out of `joist_ec2_node_class`'s state."}
}
