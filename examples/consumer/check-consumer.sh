#!/usr/bin/env bash
#===- check-consumer.sh - Build the consumer against an installed Nabla ----===#
#
# Usage: check-consumer.sh BUILD_DIR SOURCE_DIR WORK_DIR
# Installs BUILD_DIR into WORK_DIR/prefix, configures and builds
# examples/consumer against it with find_package(Nabla), and runs it on the
# seed kernel; the installed nabla-opt must run too (its RUNPATH finds
# libMLIR without LD_LIBRARY_PATH). Run by ctest as `consumer-example`.
#
#===----------------------------------------------------------------------===#
set -euo pipefail
build=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
cmake --install "$build" --prefix "$work/prefix" > "$work/install.log"
test -f "$work/prefix/lib/cmake/nabla/NablaConfig.cmake"
# A clean install tree: headers and generated .inc files, no build folders.
test -z "$(find "$work/prefix/include" -name CMakeFiles)"
env -u LD_LIBRARY_PATH "$work/prefix/bin/nabla-opt" --version | tee "$work/version.txt"
grep -q '^nabla-opt (Nabla) [0-9]' "$work/version.txt"
# The compiler Nabla was built with: its static libraries may carry its
# sanitizer instrumentation (NABLA_SANITIZE), which only its runtimes satisfy.
cxx=$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")
cmake -G Ninja -S "$src/examples/consumer" -B "$work/build" \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$work/prefix" \
  ${cxx:+-DCMAKE_CXX_COMPILER="$cxx"} > "$work/configure.log"
cmake --build "$work/build" > "$work/build.log"
"$work/build/nabla-consumer" "$src/examples/mul_kernel.mlir" | tee "$work/out.txt"
grep -qx 'nabla.autodiff of @mul in @grad_mul_kernel' "$work/out.txt"
grep -qx 'derivative requests: 1' "$work/out.txt"
# ... and ran the default pipeline: differentiate, then Vulkan SPIR-V.
grep -qx 'gpu.binary @kernels with 1 object(s)' "$work/out.txt"
# A mistyped pipeline option is an error before anything runs.
if "$work/build/nabla-consumer" "$src/examples/mul_kernel.mlir" \
     'builtin.module(nabla-to-spirv{workgroup_size=64})' \
     > "$work/typo.txt" 2>&1; then
  echo "a mistyped pipeline was accepted" >&2
  exit 1
fi
grep -q "cannot parse the pipeline" "$work/typo.txt"
# The installed Python package imports from a clean directory and runs a
# kernel, with only its install folder on the path.
site=$(find "$work/prefix/lib" -maxdepth 3 -type d -name nabla -path '*-packages/nabla' | head -1)
test -n "$site"
(cd / && env -u LD_LIBRARY_PATH PYTHONPATH="$(dirname "$site")" /usr/bin/python3 -c "
import numpy as np, nabla
k = nabla.Module.parse(open('$src/examples/mul_kernel.mlir').read()).kernel('mul_kernel')
a = np.arange(8, dtype=np.float32)
out = k(a, 8, grid=1, block=64)
assert np.array_equal(out[0], a * a), out[0]
print('installed nabla', nabla.__version__)
") | tee "$work/python.txt"
grep -q '^installed nabla [0-9]' "$work/python.txt"
# The installed nabla-run runs a host program with the installed wrappers.
test -f "$work/prefix/lib/libnabla_mgpu.so"
env -u LD_LIBRARY_PATH "$work/prefix/bin/nabla-run" \
  "$src/test/Integration/host/all-reduce-kinds.mlir" --entry=main \
  | tee "$work/host.txt"
grep -q '^\[91,  1296,' "$work/host.txt"
