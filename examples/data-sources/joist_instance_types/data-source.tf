# What a pool's requirements resolve to, cheapest first.
data "joist_instance_types" "graviton_spot" {
  requirements = [
    { key = "kubernetes.io/arch", operator = "In", values = ["arm64"] },
    { key = "karpenter.sh/capacity-type", operator = "In", values = ["spot"] },
    { key = "karpenter.k8s.aws/instance-cpu", operator = "Lte", values = ["8"] },
  ]
}

output "cheapest" {
  value = slice(data.joist_instance_types.graviton_spot.instance_types, 0, 3)
}
