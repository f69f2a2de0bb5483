provider "joist" {
  cluster_name = var.cluster_name

  kubernetes = {
    config_path = var.kubeconfig_path
  }
}

provider "helm" {
  kubernetes = {
    config_path = var.kubeconfig_path
  }
}

provider "kubectl" {
  config_path      = var.kubeconfig_path
  load_config_file = true
}
