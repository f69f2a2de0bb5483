# The provider reaches the cluster's Kubernetes API and AWS. Values may come
# from resources created in the same apply (here an EKS cluster): the
# provider only connects when it reads or writes objects.
provider "joist" {
  cluster_name = aws_eks_cluster.main.name

  kubernetes = {
    host                   = aws_eks_cluster.main.endpoint
    cluster_ca_certificate = base64decode(aws_eks_cluster.main.certificate_authority[0].data)
    exec = {
      api_version = "client.authentication.k8s.io/v1beta1"
      command     = "aws"
      args        = ["eks", "get-token", "--cluster-name", aws_eks_cluster.main.name]
    }
  }

  aws = {
    region = "us-west-2"
    # assume_role = {
    #   role_arn     = "arn:aws:iam::123456789012:role/joist-admin"
    #   session_name = "terraform"
    # }
  }
}

# Or with a kubeconfig:
# provider "joist" {
#   kubernetes = {
#     config_path    = "~/.kube/config"
#     config_context = "my-cluster"
#   }
# }
