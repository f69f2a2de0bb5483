resource "joist_ec2_node_class" "default" {
  name = "default"
  role = "KarpenterNodeRole-my-cluster"

  ami_selector_terms = [{ alias = "al2023@latest" }]
  subnet_selector_terms = [
    { tags = { "karpenter.sh/discovery" = "my-cluster" } },
  ]
  security_group_selector_terms = [
    { tags = { "karpenter.sh/discovery" = "my-cluster" } },
  ]

  tags = { team = "platform" }

  kubelet = {
    max_pods        = 110
    system_reserved = { cpu = "100m", memory = "256Mi" }
  }

  block_device_mappings = [{
    device_name = "/dev/xvda"
    root_volume = true
    ebs         = { volume_size = "100Gi", volume_type = "gp3", encrypted = true }
  }]

  metadata_options = { http_tokens = "required", http_put_response_hop_limit = 1 }
}

# What the selectors resolved to (AMIs, subnets, security groups) changes with
# every AMI release: read it with the joist_ec2_node_class data source.
output "ready" {
  value = joist_ec2_node_class.default.ready
}
