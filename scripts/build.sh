#!/usr/bin/env bash
# Configures and builds hpfreeze.
#
#   scripts/build.sh [TARGET...]        (no target: everything the configuration enables)
#
# Environment: HPFREEZE_BUILD_DIR (default build/), HPFREEZE_CMAKE_ARGS (extra -D flags),
# CMAKE_BUILD_TYPE (default Release). CMake's configure chatter is kept out of the terminal
# unless configuring fails.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${HPFREEZE_BUILD_DIR:-$root/build}
log=$(mktemp "${TMPDIR:-/tmp}/hpfreeze-configure.XXXXXX.log")
# shellcheck disable=SC2086
if ! cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE="${CMAKE_BUILD_TYPE:-Release}" \
  ${HPFREEZE_CMAKE_ARGS:-} >"$log" 2>&1; then
  cat "$log" >&2
  rm -f "$log"
  exit 1
fi
rm -f "$log"
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build "$build" -j "$(nproc)" "${targets[@]}"
