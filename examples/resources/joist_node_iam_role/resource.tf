# The role Joist-launched nodes run with, mapped into the cluster by an EKS
# access entry (EC2_LINUX).
resource "joist_node_iam_role" "nodes" {
  cluster_name = "demo"

  # Defaults shown: the CNI policy (unless the VPC CNI has its own role) and
  # Session Manager access.
  attach_cni_policy = true
  attach_ssm_policy = true

  additional_policy_arns = ["arn:aws:iam::aws:policy/CloudWatchAgentServerPolicy"]
  tags                   = { team = "platform" }
}

# Bring your own role: only the access entry is managed.
resource "joist_node_iam_role" "existing" {
  cluster_name = "demo"
  name         = "platform-node-role"
  create_role  = false
}
