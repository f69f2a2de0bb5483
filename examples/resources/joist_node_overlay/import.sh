# A NodeOverlay is imported by its name.
terraform import joist_node_overlay.savings_plan m5-savings-plan
