# The controller policy, for IAM managed outside this configuration.
data "joist_controller_policy" "this" {
  cluster_name            = "demo"
  node_role_arn           = "arn:aws:iam::123456789012:role/JoistNodeRole-demo"
  interruption_queue_name = "demo"
}

resource "aws_iam_role_policy" "joist" {
  role   = "my-controller-role"
  name   = "JoistControllerPolicy"
  policy = data.joist_controller_policy.this.json
}
