resource "joist_node_pool" "default" {
  name = "default"

  template = {
    metadata = {
      labels = { team = "platform" }
    }
    spec = {
      node_class_ref = {
        group = "karpenter.k8s.aws"
        kind  = "EC2NodeClass"
        name  = joist_ec2_node_class.default.name
      }
      requirements = [
        { key = "kubernetes.io/arch", operator = "In", values = ["amd64", "arm64"] },
        { key = "karpenter.sh/capacity-type", operator = "In", values = ["spot", "on-demand"] },
        { key = "karpenter.k8s.aws/instance-category", operator = "In", values = ["c", "m", "r"] },
        { key = "karpenter.k8s.aws/instance-generation", operator = "Gt", values = ["2"] },
      ]
      taints = [
        { key = "example.com/dedicated", value = "batch", effect = "NoSchedule" },
      ]
      expire_after = "720h"
    }
  }

  limits = {
    cpu    = "1000"
    memory = "1000Gi"
  }

  disruption = {
    consolidation_policy = "WhenEmptyOrUnderutilized"
    consolidate_after    = "1m"
    budgets = [
      { nodes = "10%" },
      # No drift replacements during business hours.
      { nodes = "0", reasons = ["Drifted"], schedule = "0 9 * * mon-fri", duration = "8h" },
    ]
  }

  # Destroy waits up to this long for the controller to drain the nodes.
  delete_timeout = "20m"
}
