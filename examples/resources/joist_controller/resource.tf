resource "joist_controller" "this" {
  cluster_name       = "demo"
  namespace          = joist_controller_iam_role.controller.namespace
  service_account    = joist_controller_iam_role.controller.service_account
  interruption_queue = joist_interruption_queue.demo.name

  # Controller settings, checked at plan with the controller's own rules.
  batch_idle_duration = "1s"
  batch_max_duration  = "10s"
  log_level           = "info"
  feature_gates       = { SpotToSpotConsolidation = true }

  # The Deployment, as the Helm chart's values shape it.
  dns_policy     = "Default" # the node's resolver: the controller does not depend on CoreDNS
  cpu_request    = "1"
  memory_request = "1Gi"
  memory_limit   = "1Gi"
  node_selector  = { "kubernetes.io/os" = "linux", "node-role" = "system" }
  tolerations    = [{ key = "CriticalAddonsOnly", operator = "Exists" }]
  pod_annotations = {
    "prometheus.io/scrape" = "true"
  }
}
