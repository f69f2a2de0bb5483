#!/usr/bin/env bash
# Fails when docs/ differs from what `make docs` generates from the provider's
# schemas, templates/ and examples/, so the registry pages never lag the code.
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ ! -x bin/tfplugindocs ]]; then
	echo "docs-check: bin/tfplugindocs is missing; run 'make tools'" >&2
	exit 1
fi

# The same invocation as the docs target of the GNUmakefile.
bin/tfplugindocs generate --provider-name joist --rendered-provider-name Joist

changes=$(git status --porcelain -- docs/)
if [[ -n "$changes" ]]; then
	echo "docs-check: docs/ is out of date with the schemas, templates/ or examples/:" >&2
	echo "$changes" >&2
	echo "docs-check: run 'make docs' and commit docs/" >&2
	exit 1
fi
echo "docs-check: docs/ is up to date"
