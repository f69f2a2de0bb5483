# The EC2NodeClass and NodePools as joist resources. Write them as the
# objects are in the cluster (`kubectl get ec2nodeclass,nodepool -o yaml`);
# `terraform plan` shows every difference, and for a NodePool change warns
# how many nodes it drifts (planned_disruption).

locals {
  # The role name inside the ARN (after any path).
  node_role_name = regex("[^/]+$", var.node_role_arn)
}

resource "joist_ec2_node_class" "default" {
  name = "default"
  role = local.node_role_name

  ami_selector_terms = [{ alias = "al2023@latest" }]
  subnet_selector_terms = [{
    tags = { "karpenter.sh/discovery" = var.cluster_name }
  }]
  security_group_selector_terms = [{
    tags = { "karpenter.sh/discovery" = var.cluster_name }
  }]
  tags = { "karpenter.sh/discovery" = var.cluster_name }

  depends_on = [joist_controller.this]
}

resource "joist_node_pool" "default" {
  name = "default"

  template = {
    spec = {
      node_class_ref = {
        group = "karpenter.k8s.aws"
        kind  = "EC2NodeClass"
        name  = joist_ec2_node_class.default.name
      }
      requirements = [
        { key = "karpenter.k8s.aws/instance-category", operator = "In", values = ["c", "m", "r"] },
        { key = "karpenter.k8s.aws/instance-cpu", operator = "In", values = ["4", "8", "16", "32"] },
        { key = "karpenter.k8s.aws/instance-hypervisor", operator = "In", values = ["nitro"] },
        { key = "karpenter.k8s.aws/instance-generation", operator = "Gt", values = ["5"] },
      ]
    }
  }

  limits = {
    cpu = "1000"
  }

  disruption = {
    consolidation_policy = "WhenEmpty"
    consolidate_after    = "30s"
  }
}

resource "joist_node_pool" "batch" {
  name = "batch"

  template = {
    metadata = {
      labels = { "workload" = "batch" }
    }
    spec = {
      node_class_ref = {
        group = "karpenter.k8s.aws"
        kind  = "EC2NodeClass"
        name  = joist_ec2_node_class.default.name
      }
      requirements = [
        { key = "karpenter.sh/capacity-type", operator = "In", values = ["spot"] },
        { key = "karpenter.k8s.aws/instance-category", operator = "In", values = ["c", "m"] },
      ]
      taints       = [{ key = "workload", value = "batch", effect = "NoSchedule" }]
      expire_after = "168h"
    }
  }

  disruption = {
    consolidation_policy = "WhenEmptyOrUnderutilized"
    consolidate_after    = "5m"
    budgets = [
      { nodes = "20%" },
      # No voluntary disruption during business hours (UTC).
      { nodes = "0", schedule = "0 8 * * 1-5", duration = "10h" },
    ]
  }
}
