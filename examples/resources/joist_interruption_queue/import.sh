# The queue name.
terraform import joist_interruption_queue.demo demo
