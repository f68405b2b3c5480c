#!/usr/bin/env bash
#===- build.sh - Install dependencies, configure and build Nabla ----------===#
#
# Idempotent: installs missing Debian packages, configures build/ once (Ninja,
# Release) and builds everything. BUILD_DIR overrides the build directory.
#
#===----------------------------------------------------------------------===#
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$root/build}

"$root/scripts/install-deps.sh"
if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release
fi
cmake --build "$build"
