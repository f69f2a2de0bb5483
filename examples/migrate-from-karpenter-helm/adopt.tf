# Step 2 of the migration (README.md): Terraform forgets how the objects were
# managed before and adopts them, unchanged, into joist resources.

# Forget the Helm release. `helm uninstall karpenter` (step 1) already
# stopped the controller; destroying the release from Terraform could take
# CRDs, and with them every NodePool and NodeClaim, along.
removed {
  from = helm_release.karpenter

  lifecycle {
    destroy = false
  }
}

# Forget the kubectl_manifest resources that wrote the EC2NodeClass and the
# NodePool; the objects stay in the cluster and are imported below.
removed {
  from = kubectl_manifest.karpenter_node_class

  lifecycle {
    destroy = false
  }
}

removed {
  from = kubectl_manifest.karpenter_node_pool

  lifecycle {
    destroy = false
  }
}

# Adopt the objects by name: the ones kubectl_manifest wrote, and the
# "batch" NodePool applied with kubectl outside Terraform.
import {
  to = joist_ec2_node_class.default
  id = "default"
}

import {
  to = joist_node_pool.default
  id = "default"
}

import {
  to = joist_node_pool.batch
  id = "batch"
}
