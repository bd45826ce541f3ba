#!/usr/bin/env bash
# Runs a command as root: as it is when this shell is root already (a minimal Debian or a
# container has no sudo), else through sudo.
#
#   scripts/as-root.sh COMMAND [ARG...]
#
# The one place of that rule: README's install lines, scripts/setup.sh and .ci/run use it.
set -euo pipefail
if [ $# -eq 0 ]; then
  sed -n '2,5p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
[ "$(id -u)" -eq 0 ] && exec "$@"
if ! command -v sudo >/dev/null; then
  echo "as-root.sh: $1 needs root: this user is not root and there is no sudo; run it as root" >&2
  exit 1
fi
exec sudo "$@"
