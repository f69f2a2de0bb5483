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

variable "consolidate_after" {
  description = "How long a general-purpose node must go without pod changes before consolidation may remove or replace it."
  type        = string
  default     = "1m"
}

variable "spot_to_spot_consolidation" {
  description = "Let consolidation replace a spot node with a cheaper spot node (the SpotToSpotConsolidation feature gate, off by default as in Karpenter)."
  type        = bool
  default     = false
}
