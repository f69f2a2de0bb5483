#!/usr/bin/env bash
# Builds the tools module's binaries into bin/ (stripped), one at a time with
# progress, and records a stamp keyed on everything that decides their bytes.
# Up-to-date bin/ makes this a no-op.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
tools="$root/hack/tools"
bin="$root/bin"
k8s_version=v1.36.3

# name=package; etcd is a local main wrapping go.etcd.io/etcd/server/v3/etcdmain.
targets=(
  "etcd=./cmd/etcd"
  "kube-apiserver=k8s.io/kubernetes/cmd/kube-apiserver"
  "kube-controller-manager=k8s.io/kubernetes/cmd/kube-controller-manager"
  "kube-scheduler=k8s.io/kubernetes/cmd/kube-scheduler"
  "kubectl=k8s.io/kubernetes/cmd/kubectl"
  "kwok=sigs.k8s.io/kwok/cmd/kwok"
  "controller-gen=sigs.k8s.io/controller-tools/cmd/controller-gen"
  "tfplugindocs=github.com/hashicorp/terraform-plugin-docs/cmd/tfplugindocs"
)

stamp_key=$(cat "$tools/go.mod" "$tools/go.sum" "$tools/build.sh" "$tools"/cmd/*/*.go | sha256sum | cut -d' ' -f1)
stamp="$bin/.tools-stamp"

missing=0
for t in "${targets[@]}"; do [ -x "$bin/${t%%=*}" ] || missing=1; done
[ -s "$bin/kwok-stages.yaml" ] || missing=1
if [ "$missing" = 0 ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$stamp_key" ]; then
  echo "tools: bin/ is up to date"
  exit 0
fi

mkdir -p "$bin"
rm -f "$stamp"
# Kubernetes binaries report the version their release build would stamp;
# an unstamped v0.0.0 confuses version-skew checks in kubectl and clients.
ver_pkgs="k8s.io/component-base/version k8s.io/client-go/pkg/version"
ldx="-s -w"
minor=$(echo "$k8s_version" | cut -d. -f2)
for p in $ver_pkgs; do
  ldx="$ldx -X $p.gitVersion=$k8s_version -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
done

n=${#targets[@]}
i=0
start_all=$(date +%s)
cd "$tools"
for t in "${targets[@]}"; do
  i=$((i + 1))
  name=${t%%=*}
  pkg=${t#*=}
  start=$(date +%s)
  printf 'tools: [%d/%d] building %s ...\n' "$i" "$n" "$name"
  # Keep the progress visible on a cold build: a heartbeat every 30 s.
  ( while sleep 30; do printf 'tools:        still building %s (%ds)\n' "$name" $(( $(date +%s) - start )); done ) &
  beat=$!
  if ! CGO_ENABLED=0 go build -trimpath -ldflags "$ldx" -o "$bin/$name" "$pkg"; then
    kill "$beat" 2>/dev/null || true
    echo "tools: building $name ($pkg) failed" >&2
    exit 1
  fi
  kill "$beat" 2>/dev/null || true
  wait "$beat" 2>/dev/null || true
  printf 'tools: [%d/%d] %s done in %ds\n' "$i" "$n" "$name" $(( $(date +%s) - start ))
done
# kwok's own default stages, for the sandbox's kwok --config.
go run ./cmd/kwok-stages > "$bin/kwok-stages.yaml"
echo "$stamp_key" > "$stamp"
printf 'tools: all %d binaries in bin/ (%ds)\n' "$n" $(( $(date +%s) - start_all ))
