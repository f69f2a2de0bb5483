output "node_class_ready" {
  description = "Whether the controller resolved the EC2NodeClass's AMIs, subnets and security groups."
  value       = joist_ec2_node_class.default.ready
}

output "node_class_status" {
  description = "What the EC2NodeClass's selectors resolved to."
  value       = joist_ec2_node_class.default.status
}

output "node_pools" {
  description = "Names of the NodePools."
  value       = [joist_node_pool.general.name, joist_node_pool.on_demand.name]
}
