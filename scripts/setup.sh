#!/usr/bin/env bash
# Installs the Debian packages hpfreeze needs to build, test and benchmark.
# Idempotent: only missing packages are installed. Works as root, uses sudo otherwise.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config python3 make time
  libcli11-dev libsimdjson-dev rapidjson-dev libspdlog-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  clang libclang-rt-14-dev
  help2man bash-completion hyperfine git groff-base
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "setup: installing ${missing[*]}" >&2
if [ "$(id -u)" -eq 0 ]; then sudo=(); else sudo=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
