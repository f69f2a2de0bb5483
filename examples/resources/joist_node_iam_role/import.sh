# The role name.
terraform import joist_node_iam_role.nodes JoistNodeRole-demo
