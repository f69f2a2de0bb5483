output "node_class_ready" {
  description = "Whether the controller resolved the EC2NodeClass's AMIs, subnets and security groups (known once apply has waited for it)."
  value       = joist_ec2_node_class.default.ready
}

output "node_pools" {
  description = "Names of the NodePools."
  value       = [joist_node_pool.general.name, joist_node_pool.on_demand.name]
}

# What the EC2NodeClass resolved to (AMIs, subnets, security groups) changes
# with every AMI release; read it when needed, e.g. in `terraform console`:
#   data.joist_ec2_node_class.default.status.amis
data "joist_ec2_node_class" "default" {
  name = joist_ec2_node_class.default.name
}
