# What the controller resolved an EC2NodeClass's selectors to. It changes
# with every AMI release, so it is read here, fresh at each plan, rather
# than kept in joist_ec2_node_class's state.
data "joist_ec2_node_class" "default" {
  name = "default"
}

output "node_amis" {
  value = [for ami in data.joist_ec2_node_class.default.status.amis : ami.id]
}

output "node_subnets" {
  value = [for s in data.joist_ec2_node_class.default.status.subnets : s.id]
}
