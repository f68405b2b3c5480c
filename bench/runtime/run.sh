#!/usr/bin/env bash
#===- run.sh - Runtime benchmark: launch latency and copy bandwidth -------===#
#
# Usage: bench/runtime/run.sh [BUILD_DIR] [extra bench_runtime flags]
# Compiles kernels.mlir for SPIR-V (and NVVM when a CUDA device is present),
# then measures on lavapipe (and CUDA): see bench_runtime.cpp.
#
#===----------------------------------------------------------------------===#
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=${1:-$here/../../build}
shift || true
cmake --build "$build" --target bench_runtime >/dev/null
out=$build/bench-runtime
rm -rf "$out"
"$build/bin/nabla-compile" "$here/kernels.mlir" --target=spirv --block=256 -o "$out/spirv"
"$build/bench/runtime/bench_runtime" "$out/spirv" --target=vulkan "$@"
if [ -e /dev/nvidia0 ]; then
  "$build/bin/nabla-compile" "$here/kernels.mlir" --target=nvvm -o "$out/nvvm"
  "$build/bench/runtime/bench_runtime" "$out/nvvm" --target=cuda "$@"
fi
