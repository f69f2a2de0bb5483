# The joist provider reaches the cluster the module creates. Values unknown
# until the cluster exists are fine: the provider contacts the API server only
# when it reads or writes objects.
provider "joist" {
  cluster_name = module.eks.cluster_name

  kubernetes = {
    host                   = module.eks.cluster_endpoint
    cluster_ca_certificate = base64decode(module.eks.cluster_certificate_authority_data)
    exec = {
      api_version = "client.authentication.k8s.io/v1beta1"
      command     = "aws"
      args        = ["eks", "get-token", "--cluster-name", module.eks.cluster_name, "--region", var.region]
    }
  }

  aws = {
    region = var.region
  }
}

# A second configuration for the resources that only talk to AWS. The node
# role feeds the module's access_entries, and the module's endpoint output
# waits for those entries: configuring these resources from the endpoint
# would be a dependency cycle.
provider "joist" {
  alias        = "aws"
  cluster_name = var.name

  aws = {
    region = var.region
  }
}

# The node role. Its access entry is the EKS module's (access_entries in
# main.tf), so the module owns every access entry of the cluster.
resource "joist_node_iam_role" "this" {
  provider = joist.aws

  cluster_name      = var.name
  access_entry_type = "NONE"
}

resource "joist_interruption_queue" "this" {
  provider = joist.aws

  name = var.name
}

# The controller's least-privilege role, trusted by EKS Pod Identity, with
# the association of the controller's service account (kube-system/joist by
# default). Its cluster_name comes from the module so the association is
# made once the cluster exists.
resource "joist_controller_iam_role" "this" {
  provider = joist.aws

  cluster_name            = module.eks.cluster_name
  node_role_arn           = joist_node_iam_role.this.arn
  interruption_queue_name = joist_interruption_queue.this.name
}

resource "joist_controller" "this" {
  cluster_name       = module.eks.cluster_name
  namespace          = joist_controller_iam_role.this.namespace
  service_account    = joist_controller_iam_role.this.service_account
  interruption_queue = joist_interruption_queue.this.name

  # The node's resolver, as the EKS module's Karpenter example sets: the
  # controller does not depend on CoreDNS, which itself may need nodes.
  dns_policy = "Default"

  # The managed node group and the Pod Identity agent must run before the
  # controller's pods start.
  depends_on = [module.eks]
}

resource "joist_ec2_node_class" "default" {
  name = "default"
  role = joist_node_iam_role.this.name

  ami_selector_terms            = [{ alias = "al2023@latest" }]
  subnet_selector_terms         = [{ tags = local.discovery_tags }]
  security_group_selector_terms = [{ tags = local.discovery_tags }]

  block_device_mappings = [{
    device_name = "/dev/xvda"
    ebs = {
      volume_size = "50Gi"
      volume_type = "gp3"
      encrypted   = true
    }
  }]

  depends_on = [joist_controller.this]
}

# Stateless services: spot first, consolidated when underutilized.
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
        { key = "karpenter.k8s.aws/instance-generation", operator = "Gt", values = ["5"] },
      ]
    }
  }

  limits = {
    cpu    = "500"
    memory = "2000Gi"
  }

  disruption = {
    consolidation_policy = "WhenEmptyOrUnderutilized"
    consolidate_after    = "1m"
    budgets              = [{ nodes = "10%" }]
  }
}

# Stateful and batch work on on-demand nodes, tainted so only pods that ask
# for them land here; never more than one node disrupted at a time.
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
        { key = "karpenter.k8s.aws/instance-category", operator = "In", values = ["m", "r"] },
      ]
      taints = [
        { key = "workload-class", value = "critical", effect = "NoSchedule" },
      ]
    }
  }

  limits = {
    cpu = "128"
  }

  disruption = {
    consolidation_policy = "WhenEmpty"
    consolidate_after    = "10m"
    budgets              = [{ nodes = "1" }]
  }
}
