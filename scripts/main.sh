#!/usr/bin/env bash
#===- main.sh - Nabla's main job on the seed kernel -----------------------===#
#
# Builds Nabla, then runs nabla-opt on examples/mul_kernel.mlir (parse, verify
# the nabla.autodiff request against its callee, print the round-tripped IR).
#
#===----------------------------------------------------------------------===#
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$root/build}

"$root/scripts/build.sh" > "$build.log" 2>&1 || {
  cat "$build.log"
  exit 1
}
echo "== nabla-opt examples/mul_kernel.mlir (round-tripped seed kernel) =="
"$build/bin/nabla-opt" "$root/examples/mul_kernel.mlir"
