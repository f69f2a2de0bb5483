# A NodePool is imported by its name.
terraform import joist_node_pool.default default
