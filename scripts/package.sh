#!/usr/bin/env bash
# Sets up, builds and packages hpfreeze as Debian builds its own packages: the tree is
# configured with Debian's hardened flags (-DHPFREEZE_DEB_BUILDFLAGS=ON: what
# `DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags` gives; docs/development.md,
# "Packaging"), then its package target writes the two .debs. Prints their paths:
#
#   BUILD/hpfreeze_VERSION_ARCH.deb                 the binary and all but the exporter
#   BUILD/python3-hpfreeze-export_VERSION_all.deb   the Python exporter
#
# Environment as scripts/build.sh: HPFREEZE_BUILD_DIR (BUILD, default build/, the tree
# scripts/example.sh builds), HPFREEZE_CMAKE_ARGS (extra -D flags), CMAKE_BUILD_TYPE
# (default Release).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${HPFREEZE_BUILD_DIR:-$root/build}
"$root/scripts/setup.sh" build
HPFREEZE_CMAKE_ARGS="-DHPFREEZE_DEB_BUILDFLAGS=ON ${HPFREEZE_CMAKE_ARGS:-}" \
  "$root/scripts/build.sh" package >&2
version=$("$build/apps/hpfreeze/hpfreeze" --version)
version=${version#hpfreeze }
arch=$(dpkg --print-architecture)
for deb in "$build/hpfreeze_${version}_$arch.deb" "$build/python3-hpfreeze-export_${version}_all.deb"; do
  if [ ! -f "$deb" ]; then
    echo "package.sh: the package target wrote no $deb" >&2
    exit 1
  fi
  echo "$deb"
done
