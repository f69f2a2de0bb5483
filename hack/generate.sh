#!/usr/bin/env bash
# Regenerates the code and manifests derived from the API types in
# internal/runtime/apis: deepcopy functions (zz_generated.deepcopy.go) and the
# CRDs (internal/runtime/apis/crds/*.yaml, embedded into the binary).
# Idempotent: a second run changes nothing.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
controller_gen=${CONTROLLER_GEN:-$root/bin/controller-gen}
if [ ! -x "$controller_gen" ]; then
  echo "generate: $controller_gen is missing; run 'make tools' first" >&2
  exit 1
fi

cd "$root"
apis=./internal/runtime/apis/...
crds=internal/runtime/apis/crds

"$controller_gen" object paths="$apis"
# Remove the old manifests first so a renamed or deleted kind leaves no stale file.
rm -f "$crds"/*.yaml
"$controller_gen" crd paths="$apis" output:crd:artifacts:config="$crds"
# Validation markers cannot reach inside corev1.Taint; see the command's doc.
go run ./internal/runtime/apis/crds/internal/schemapatch "$crds"
echo "generate: deepcopy and CRDs up to date in internal/runtime/apis"
