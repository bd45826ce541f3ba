#!/usr/bin/env bash
# Sets up, builds and runs the whole test suite (what .ci/run calls).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh" test
# Tests are required here (not AUTO): a missing GoogleTest must fail, not skip the suite.
HPFREEZE_CMAKE_ARGS="-DHPFREEZE_BUILD_TESTS=ON ${HPFREEZE_CMAKE_ARGS:-}" "$root/scripts/build.sh"
build=${HPFREEZE_BUILD_DIR:-$root/build}
ctest --test-dir "$build" --output-on-failure -j "$(nproc)"
