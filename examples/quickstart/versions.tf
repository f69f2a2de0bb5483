terraform {
  required_version = ">= 1.8"

  required_providers {
    joist = {
      source = "joistdev/joist"
    }
  }
}
