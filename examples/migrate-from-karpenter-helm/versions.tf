terraform {
  # import blocks need 1.5, removed blocks 1.7.
  required_version = ">= 1.8"

  required_providers {
    joist = {
      source = "joistdev/joist"
    }
    # Still needed for this apply: Terraform reads the state of the
    # resources the removed blocks forget with their own providers.
    helm = {
      source  = "hashicorp/helm"
      version = ">= 3.0"
    }
    kubectl = {
      source  = "alekc/kubectl"
      version = ">= 2.0"
    }
  }
}
