#!/usr/bin/env bash
#===- main.sh - Nabla's main job on the seed kernel -----------------------===#
#
# Builds Nabla, then on the seed kernel (examples/mul_kernel.mlir):
#   1. parses and verifies it (the nabla.autodiff request is checked against
#      its callee) and prints the round-tripped IR;
#   2. differentiates it and compiles it (mul_kernel and grad_mul_kernel) for
#      all four targets, validating every artifact (ptxas, llvm-readelf,
#      spirv-val, MSL content);
#   3. runs mul_kernel with nabla-run on the default device (lavapipe without
#      a GPU), printing input and output and checking output = input^2;
#   4. runs grad_mul_kernel, prints the gradient next to 2·A·dA with the max
#      error, and checks it against central finite differences in float64 of
#      <M(A), w>, M(A) = A*A.
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

primal=$root/examples/mul_kernel.mlir
echo "== 2. nabla-compile $(basename "$primal") (differentiated) for every target =="
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
grep -o "kernel void [a-z_]*" "$out/metal/kernels.metal" | sed 's/^/  metal: /'

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

echo "== 4. nabla-run grad_mul_kernel (reverse mode) and the finite-difference check =="
/usr/bin/python3 - "$out" "$bin" "$primal" <<'PY'
import subprocess, sys, numpy as np
out, bin, kernel = sys.argv[1:4]
rng = np.random.default_rng(0)
a = rng.uniform(-2, 2, 16).astype(np.float32)
w = rng.standard_normal(16).astype(np.float32)   # cotangent of the final A
np.save(f"{out}/a.npy", a); np.save(f"{out}/w.npy", w)
subprocess.run([f"{bin}/nabla-run", kernel, "--kernel=grad_mul_kernel", "--grid=1",
                "--block=64", f"--arg={out}/a.npy", f"--arg={out}/w.npy",
                "--arg=index:16", f"--out={out}/grad"], check=True)
g = np.load(f"{out}/grad/arg1.npy").astype(np.float64)
print("A      =", a)
print("dA in  =", w)
print("dA out =", g.astype(np.float32))
expected = 2 * a.astype(np.float64) * w
print("2·A·dA =", expected.astype(np.float32))
err = np.abs(g - expected).max()
print(f"max |dA out - 2·A·dA| = {err:.3g}")
v = rng.standard_normal(16)
eps, a64 = 1e-6, a.astype(np.float64)
fd = (np.dot((a64 + eps * v) ** 2 - (a64 - eps * v) ** 2, w)) / (2 * eps)
ad = np.dot(v, g)
ok = np.isclose(ad, fd, rtol=1e-5) and err <= 1e-5 * np.abs(expected).max()
print(f"check: <v, J^T w> = {ad:.6f}, finite differences = {fd:.6f}:",
      "OK" if ok else "MISMATCH")
sys.exit(0 if ok else 1)
PY
