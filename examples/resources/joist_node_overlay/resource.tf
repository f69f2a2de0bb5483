# A savings plan makes m5 on-demand capacity 30% cheaper for this account:
# the controller prefers it over types that are cheaper at list price.
resource "joist_node_overlay" "savings_plan" {
  name   = "m5-savings-plan"
  weight = 10

  requirements = [
    { key = "karpenter.k8s.aws/instance-family", operator = "In", values = ["m5"] },
    { key = "karpenter.sh/capacity-type", operator = "In", values = ["on-demand"] },
  ]

  price_adjustment = "-30%"
}

# A device plugin on every node of the default pool registers
# example.com/fuse; pods requesting it get nodes of that pool.
resource "joist_node_overlay" "fuse_devices" {
  name = "fuse-devices"

  requirements = [
    { key = "karpenter.sh/nodepool", operator = "In", values = [joist_node_pool.default.name] },
  ]

  capacity = {
    "example.com/fuse" = "1"
  }
}
