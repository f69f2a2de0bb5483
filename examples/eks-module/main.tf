# An EKS cluster from the terraform-aws-modules EKS module with Joist as its
# node autoscaler. The cluster gets one small managed node group for the
# controller and the cluster add-ons; every other node is Joist's.

provider "aws" {
  region = var.region
}

data "aws_availability_zones" "available" {
  filter {
    name   = "opt-in-status"
    values = ["opt-in-not-required"]
  }
}

locals {
  vpc_cidr = "10.0.0.0/16"
  azs      = slice(data.aws_availability_zones.available.names, 0, 3)

  # Subnets and the node security group carry this tag; the EC2NodeClass
  # selects them by it.
  discovery_tags = { "karpenter.sh/discovery" = var.name }
}

module "vpc" {
  source  = "terraform-aws-modules/vpc/aws"
  version = "~> 6.0"

  name = var.name
  cidr = local.vpc_cidr

  azs             = local.azs
  private_subnets = [for i, _ in local.azs : cidrsubnet(local.vpc_cidr, 4, i)]
  public_subnets  = [for i, _ in local.azs : cidrsubnet(local.vpc_cidr, 8, i + 48)]
  intra_subnets   = [for i, _ in local.azs : cidrsubnet(local.vpc_cidr, 8, i + 52)]

  enable_nat_gateway = true
  single_nat_gateway = true

  public_subnet_tags = { "kubernetes.io/role/elb" = 1 }
  private_subnet_tags = merge(local.discovery_tags, {
    "kubernetes.io/role/internal-elb" = 1
  })
}

module "eks" {
  source  = "terraform-aws-modules/eks/aws"
  version = "~> 21.0"

  name               = var.name
  kubernetes_version = var.kubernetes_version

  # Terraform's identity administers the cluster, so the joist provider can
  # install the controller and write NodePools with the same credentials.
  enable_cluster_creator_admin_permissions = true
  endpoint_public_access                   = true

  addons = {
    coredns                = {}
    eks-pod-identity-agent = { before_compute = true }
    kube-proxy             = {}
    vpc-cni                = { before_compute = true }
  }

  vpc_id                   = module.vpc.vpc_id
  subnet_ids               = module.vpc.private_subnets
  control_plane_subnet_ids = module.vpc.intra_subnets

  # Capacity for the controller itself: it must not run on nodes it manages.
  eks_managed_node_groups = {
    system = {
      instance_types = ["m7i.large"]
      min_size       = 2
      max_size       = 3
      desired_size   = 2
    }
  }

  # Nodes Joist launches join through an access entry for the node role.
  access_entries = {
    joist_nodes = {
      principal_arn = joist_node_iam_role.this.arn
      type          = "EC2_LINUX"
    }
  }

  node_security_group_tags = local.discovery_tags
}
