# Joist's own controller, role and queue. The Karpenter controller role and
# interruption queue are left alone: remove them with the configuration that
# created them once Joist runs.

resource "joist_interruption_queue" "this" {
  name = "joist-${var.cluster_name}"
}

resource "joist_controller_iam_role" "this" {
  cluster_name           = var.cluster_name
  node_role_arn          = var.node_role_arn
  interruption_queue_arn = joist_interruption_queue.this.arn
}

resource "joist_controller" "this" {
  cluster_name       = var.cluster_name
  role_arn           = joist_controller_iam_role.this.arn
  interruption_queue = joist_interruption_queue.this.name
}
