# The queue (named after the cluster) and its five EventBridge rules.
resource "joist_interruption_queue" "demo" {
  name = "demo"
}

output "interruption_queue_url" {
  value = joist_interruption_queue.demo.url
}
