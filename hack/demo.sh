#!/usr/bin/env bash
# The demo: bring up the local sandbox and show it.
set -euo pipefail
cd "$(dirname "$0")/.."
bin/terraform-provider-joist sandbox up
echo
bin/kubectl --kubeconfig .sandbox/kubeconfig get nodes,pods -A
echo
echo "Stop it with: make demo-down"
