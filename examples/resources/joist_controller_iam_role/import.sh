# The role name.
terraform import joist_controller_iam_role.controller JoistController-demo
