# Joist on one cluster: AWS wiring, the controller, one EC2NodeClass and two
# NodePools. The AWS side (region, credentials, endpoint) comes from the
# standard environment: AWS_REGION, AWS_PROFILE or AWS_ACCESS_KEY_ID, and
# AWS_ENDPOINT_URL for the local sandbox.

provider "joist" {
  cluster_name = var.cluster_name

  kubernetes = {
    config_path = var.kubeconfig_path
  }
}

# The role the nodes run as, with its EKS access entry.
resource "joist_node_iam_role" "this" {
  cluster_name = var.cluster_name
}

# SQS queue and EventBridge rules for spot interruptions, scheduled changes,
# rebalance recommendations and instance state changes.
resource "joist_interruption_queue" "this" {
  name = var.cluster_name
}

# The controller's least-privilege role, trusted by EKS Pod Identity and
# associated with the controller's service account.
resource "joist_controller_iam_role" "this" {
  cluster_name            = var.cluster_name
  node_role_arn           = joist_node_iam_role.this.arn
  interruption_queue_name = joist_interruption_queue.this.name
}

# CRDs, RBAC and the controller Deployment, from the same release as the
# provider. Taking the service account from the role keeps the two in step
# and creates the Pod Identity association before the controller starts.
resource "joist_controller" "this" {
  cluster_name       = var.cluster_name
  namespace          = joist_controller_iam_role.this.namespace
  service_account    = joist_controller_iam_role.this.service_account
  interruption_queue = joist_interruption_queue.this.name

  feature_gates = {
    SpotToSpotConsolidation = var.spot_to_spot_consolidation
  }
}

resource "joist_ec2_node_class" "default" {
  name = "default"
  role = joist_node_iam_role.this.name

  ami_selector_terms = [{ alias = "al2023@latest" }]
  subnet_selector_terms = [{
    tags = { "karpenter.sh/discovery" = var.cluster_name }
  }]
  security_group_selector_terms = [{
    tags = { "karpenter.sh/discovery" = var.cluster_name }
  }]

  # The CRDs come with the controller; on destroy the controller must still
  # run to release the node class.
  depends_on = [joist_controller.this]
}

# General purpose capacity. Both capacity types are allowed, and the
# controller launches spot whenever a spot offering fits, falling back to
# on-demand when spot has no capacity.
resource "joist_node_pool" "general" {
  name = "general-purpose"

  template = {
    spec = {
      node_class_ref = {
        group = "karpenter.k8s.aws"
        kind  = "EC2NodeClass"
        name  = joist_ec2_node_class.default.name
      }
      requirements = [
        { key = "karpenter.sh/capacity-type", operator = "In", values = ["spot", "on-demand"] },
        { key = "kubernetes.io/arch", operator = "In", values = ["amd64", "arm64"] },
        { key = "karpenter.k8s.aws/instance-category", operator = "In", values = ["c", "m", "r"] },
        { key = "karpenter.k8s.aws/instance-generation", operator = "Gt", values = ["4"] },
      ]
      expire_after = "720h"
    }
  }

  limits = {
    cpu    = "200"
    memory = "800Gi"
  }

  disruption = {
    consolidation_policy = "WhenEmptyOrUnderutilized"
    consolidate_after    = var.consolidate_after
    budgets              = [{ nodes = "10%" }]
  }
}

# On-demand nodes reserved for workloads that must not be interrupted: only
# pods that tolerate the taint (and select the label) land here.
resource "joist_node_pool" "on_demand" {
  name = "on-demand"

  template = {
    metadata = {
      labels = { "workload-class" = "critical" }
    }
    spec = {
      node_class_ref = {
        group = "karpenter.k8s.aws"
        kind  = "EC2NodeClass"
        name  = joist_ec2_node_class.default.name
      }
      requirements = [
        { key = "karpenter.sh/capacity-type", operator = "In", values = ["on-demand"] },
        { key = "kubernetes.io/arch", operator = "In", values = ["amd64"] },
        { key = "karpenter.k8s.aws/instance-category", operator = "In", values = ["m"] },
      ]
      taints = [
        { key = "workload-class", value = "critical", effect = "NoSchedule" },
      ]
    }
  }

  limits = {
    cpu = "64"
  }

  disruption = {
    consolidation_policy = "WhenEmpty"
    consolidate_after    = "10m"
    budgets = [
      { nodes = "1" },
    ]
  }
}
