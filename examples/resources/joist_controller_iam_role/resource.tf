# The controller's role, trusted by EKS Pod Identity (the association for
# kube-system/joist is created), with the least-privilege policy.
resource "joist_controller_iam_role" "controller" {
  cluster_name            = "demo"
  node_role_arn           = joist_node_iam_role.nodes.arn
  interruption_queue_name = joist_interruption_queue.demo.name
}

# With IRSA instead, and the policy as customer managed policies.
resource "joist_controller_iam_role" "irsa" {
  cluster_name            = "demo"
  name                    = "demo-joist-irsa"
  node_role_arn           = joist_node_iam_role.nodes.arn
  interruption_queue_name = joist_interruption_queue.demo.name
  oidc_provider_arn       = "arn:aws:iam::123456789012:oidc-provider/oidc.eks.us-west-2.amazonaws.com/id/EXAMPLED539D4633E53DE1B71EXAMPLE"
  policy_type             = "managed"
  permissions_boundary    = "arn:aws:iam::123456789012:policy/boundary"
}
