#!/usr/bin/env bash
# Sets up, builds and runs hpfreeze on the bundled example: prints codegen_meta.json.
# Installs only what building the binary needs and builds only the binary, so the first run
# is quick; scripts/test.sh adds the rest.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh" build
"$root/scripts/build.sh" hpfreeze >&2
build=${HPFREEZE_BUILD_DIR:-$root/build}
example=$root/testdata/example
exec "$build/apps/hpfreeze/hpfreeze" freeze --plan "$example/plan.json" --model "$example/model.json"
