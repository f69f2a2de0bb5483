# An EC2NodeClass is imported by its name.
terraform import joist_ec2_node_class.default default
