# The controller's namespace.
terraform import joist_controller.this kube-system
