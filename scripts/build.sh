#!/usr/bin/env bash
# Configures and builds hpfreeze. Environment: HPFREEZE_BUILD_DIR (default build/),
# HPFREEZE_CMAKE_ARGS (extra -D flags), CMAKE_BUILD_TYPE (default Release).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${HPFREEZE_BUILD_DIR:-$root/build}
# shellcheck disable=SC2086
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE="${CMAKE_BUILD_TYPE:-Release}" \
  ${HPFREEZE_CMAKE_ARGS:-} >/dev/null
cmake --build "$build" -j "$(nproc)"
