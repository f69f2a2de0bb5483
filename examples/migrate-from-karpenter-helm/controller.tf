# Joist's own controller, role and queue. The Karpenter controller role and
# interruption queue are left alone: remove them with the configuration that
# created them once Joist runs.

resource "joist_interruption_queue" "this" {
  name = "joist-${var.cluster_name}"
}

# Trusted by EKS Pod Identity, associated with kube-system/joist: the
# Karpenter controller's role and service account are not reused.
resource "joist_controller_iam_role" "this" {
  cluster_name            = var.cluster_name
  node_role_arn           = var.node_role_arn
  interruption_queue_name = joist_interruption_queue.this.name
}

resource "joist_controller" "this" {
  cluster_name       = var.cluster_name
  namespace          = joist_controller_iam_role.this.namespace
  service_account    = joist_controller_iam_role.this.service_account
  interruption_queue = joist_interruption_queue.this.name
}
