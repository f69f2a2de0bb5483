resource "joist_controller" "this" {
  cluster_name       = "demo"
  namespace          = joist_controller_iam_role.controller.namespace
  service_account    = joist_controller_iam_role.controller.service_account
  interruption_queue = joist_interruption_queue.demo.name

  batch_idle_duration = "1s"
  batch_max_duration  = "10s"
  log_level           = "info"
  feature_gates       = { SpotToSpotConsolidation = true }
}
