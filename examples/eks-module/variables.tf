variable "name" {
  description = "Name of the cluster, its VPC and the Joist resources."
  type        = string
  default     = "joist-example"
}

variable "region" {
  description = "AWS region."
  type        = string
  default     = "us-west-2"
}

variable "kubernetes_version" {
  description = "Kubernetes version of the EKS control plane."
  type        = string
  default     = "1.33"
}
