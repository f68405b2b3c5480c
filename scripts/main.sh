#!/usr/bin/env bash
#===- main.sh - Nabla's main job on the seed kernel -----------------------===#
#
# Builds Nabla, then on the seed kernel (examples/mul_kernel.mlir):
#   1. parses and verifies it (the nabla.autodiff request is checked against
#      its callee) and prints the round-tripped IR;
#   2. compiles its primal kernel for all four targets and validates every
#      artifact (ptxas, llvm-readelf, spirv-val, MSL content);
#   3. runs mul_kernel with nabla-run on the default device (lavapipe without
#      a GPU), printing input and output and checking output = input^2.
# The gradient kernel joins once nabla-differentiate exists.
#
#===----------------------------------------------------------------------===#
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$root/build}
bin=$build/bin
out=$build/main-job

"$root/scripts/build.sh" > "$build.log" 2>&1 || {
  cat "$build.log"
  exit 1
}
echo "== 1. nabla-opt examples/mul_kernel.mlir (round-tripped seed kernel) =="
"$bin/nabla-opt" "$root/examples/mul_kernel.mlir"

primal=$root/test/Integration/corpus/seed_primal.mlir
echo "== 2. nabla-compile $(basename "$primal") for every target =="
rm -rf "$out"
"$bin/nabla-compile" "$primal" --target=nvvm --chip=sm_90 -o "$out/nvvm"
"$bin/nabla-compile" "$primal" --target=rocdl --chip=gfx90a -o "$out/rocdl"
"$bin/nabla-compile" "$primal" --target=spirv --block=64 -o "$out/spirv"
"$bin/nabla-compile" "$primal" --target=metal --block=64 -o "$out/metal"
for f in "$out"/*/*; do
  printf '  %-40s %8d bytes\n' "${f#$out/}" "$(stat -c %s "$f")"
done
ptxas=$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)
if [ -x "$ptxas" ]; then
  "$ptxas" -arch=sm_90 "$out/nvvm/kernels.ptx" -o /dev/null && echo "  ptxas: kernels.ptx accepted for sm_90"
fi
/usr/lib/llvm-22/bin/llvm-readelf -h "$out/rocdl/kernels.hsaco" | grep -E "Machine|Flags" | sed 's/^ */  hsaco: /'
spirv-val --target-env vulkan1.1 "$out/spirv/kernels.spv" && echo "  spirv-val: kernels.spv valid for Vulkan 1.1"
grep -c "kernel void" "$out/metal/kernels.metal" | sed 's/^/  metal: kernels in MSL: /'

echo "== 3. nabla-run mul_kernel on the default device =="
/usr/bin/python3 -c "import numpy as np; np.save('$out/A.npy', np.linspace(-2, 2, 16, dtype=np.float32))"
/usr/bin/python3 -c "import numpy as np; print('input  A =', np.load('$out/A.npy'))"
"$bin/nabla-run" "$primal" --kernel=mul_kernel --grid=1 --block=64 \
  --arg="$out/A.npy" --arg=index:16 --out="$out/run"
/usr/bin/python3 - "$out" <<'PY'
import sys, numpy as np
out = sys.argv[1]
a, r = np.load(f"{out}/A.npy"), np.load(f"{out}/run/arg0.npy")
print("output A =", r)
ok = np.array_equal(r, a * a)
print("check: output == input**2:", "OK" if ok else "MISMATCH")
sys.exit(0 if ok else 1)
PY
