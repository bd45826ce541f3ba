#!/usr/bin/env bash
# Sets up, builds and runs hpfreeze on the bundled example: prints codegen_meta.json.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh" >&2
build=${HPFREEZE_BUILD_DIR:-$root/build}
example=$root/testdata/example
exec "$build/apps/hpfreeze/hpfreeze" freeze --plan "$example/plan.json" --model "$example/model.json"
