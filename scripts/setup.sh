#!/usr/bin/env bash
# Installs the Debian packages hpfreeze needs, by what you are about to do:
#
#   scripts/setup.sh [build|test|fuzz|all]...     (default: all)
#
#   build  compiler, CMake, ninja and the five libraries: enough to build the binary
#          (and, with file, its .deb: `cmake --build build --target package`)
#   test   build + GoogleTest, Google Benchmark and the tools the test suite drives
#          (python3, make, git, help2man, man, groff, bash-completion, time, hyperfine,
#          util-linux;
#          for the packaging tests zsh, fish, lintian, python3-venv, python3-setuptools,
#          python3-wheel; pre-commit for the hook of .pre-commit-hooks.yaml)
#   fuzz   build + clang and its libFuzzer / sanitizer runtime
#
# Idempotent: only missing packages are installed. Works as root, uses sudo otherwise
# (scripts/as-root.sh). apt's
# and dpkg's output goes to a log file, shown only when the install fails.
set -euo pipefail

build=(build-essential cmake ninja-build pkg-config
       libcli11-dev libsimdjson-dev rapidjson-dev libspdlog-dev libfmt-dev libssl-dev)
# CPack's .deb runs file and dpkg-shlibdeps (dpkg-dev, from build-essential) for Depends.
build+=(file)
test=(libgtest-dev libgmock-dev libbenchmark-dev python3 make git time hyperfine
      help2man man-db groff-base bash-completion)
# setpriv, prlimit, unshare (the fault tests: an unprivileged user, RLIMIT_NPROC, a private
# mount namespace) and setarch (.ci/run's ThreadSanitizer step), essential in Debian.
test+=(util-linux)
# The packaging tests: the .deb's lintian, the zsh and fish completions, the exporter's
# offline venv install (docs/formats.md).
test+=(zsh fish lintian python3-venv python3-setuptools python3-wheel)
# The pre-commit hook (.pre-commit-hooks.yaml), run by pre-commit itself.
test+=(pre-commit)
fuzz=(clang libclang-rt-14-dev python3)

[ $# -eq 0 ] && set -- all
packages=()
for profile in "$@"; do
  case $profile in
    build) packages+=("${build[@]}") ;;
    test) packages+=("${build[@]}" "${test[@]}") ;;
    fuzz) packages+=("${build[@]}" "${fuzz[@]}") ;;
    all) packages+=("${build[@]}" "${test[@]}" "${fuzz[@]}") ;;
    *) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
  esac
done

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0
# De-duplicate, keeping the order.
mapfile -t missing < <(printf '%s\n' "${missing[@]}" | awk '!seen[$0]++')

echo "setup: installing ${#missing[@]} Debian packages: ${missing[*]}" >&2
as_root=$(dirname "$0")/as-root.sh
log=$(mktemp "${TMPDIR:-/tmp}/hpfreeze-setup.XXXXXX.log")
if ! { "$as_root" env DEBIAN_FRONTEND=noninteractive apt-get update -q &&
       "$as_root" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
         --no-install-recommends "${missing[@]}"; } >"$log" 2>&1; then
  tail -n 40 "$log" >&2
  echo "setup: apt-get failed; the whole log is $log" >&2
  exit 1
fi
rm -f "$log"
echo "setup: done" >&2
