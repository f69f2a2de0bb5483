variable "cluster_name" {
  description = "Name of the EKS cluster Karpenter runs on."
  type        = string
}

variable "kubeconfig_path" {
  description = "Kubeconfig of the cluster."
  type        = string
  default     = "~/.kube/config"
}

variable "node_role_arn" {
  description = "ARN of the node role the existing EC2NodeClass uses (KarpenterNodeRole-<cluster> in Karpenter's getting-started). Keep it: a different role drifts every node."
  type        = string
}
