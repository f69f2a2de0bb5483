variable "cluster_name" {
  description = "Name of the EKS cluster; subnets and security groups tagged karpenter.sh/discovery=<name> are the nodes'."
  type        = string
  default     = "joist-sandbox"
}

variable "kubeconfig_path" {
  description = "Kubeconfig of the cluster's API server."
  type        = string
  default     = "../../.sandbox/kubeconfig"
}
