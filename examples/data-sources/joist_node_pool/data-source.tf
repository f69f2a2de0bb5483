# A NodePool managed elsewhere, with the apiserver's defaults and its status.
data "joist_node_pool" "default" {
  name = "default"
}

output "default_pool_nodes" {
  value = data.joist_node_pool.default.status.nodes
}
