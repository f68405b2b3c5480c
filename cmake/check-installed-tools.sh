#!/usr/bin/env bash
#===- check-installed-tools.sh - Run Nabla's tools from an install prefix --===#
#
# Usage: check-installed-tools.sh BUILD_DIR SOURCE_DIR WORK_DIR LLVM_LIBRARY_DIR
# Installs BUILD_DIR into a temporary prefix, moves the prefix (an install must
# not depend on where it was made), and checks, with LD_LIBRARY_PATH unset:
#  - the installed binaries' RUNPATH holds $ORIGIN/../lib and the LLVM library
#    folder found at configure time; nabla-launch links no LLVM/MLIR at all;
#  - every tool's --version runs;
#  - nabla-run squares the seed kernel's buffer, and nabla-compile plus
#    nabla-launch do the same from a compiled directory (SPIR-V on the default
#    Vulkan device, lavapipe without a GPU).
# Run by ctest as `install-tools`.
#
#===----------------------------------------------------------------------===#
set -euo pipefail
build=$1 src=$2 work=$3 llvm_libdir=$4
python=/usr/bin/python3
[ -x "$python" ] || python=python3
unset LD_LIBRARY_PATH

rm -rf "$work" && mkdir -p "$work"
cmake --install "$build" --prefix "$work/staging" > "$work/install.log"
mv "$work/staging" "$work/prefix"
bin=$work/prefix/bin

fail() { echo "check-installed-tools: $*" >&2; exit 1; }

for tool in nabla-opt nabla-compile nabla-run; do
  runpath=$(readelf -d "$bin/$tool" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p')
  case ":$runpath:" in *':$ORIGIN/../lib:'*) ;; *) fail "$tool RUNPATH '$runpath' lacks \$ORIGIN/../lib";; esac
  case ":$runpath:" in *":$llvm_libdir:"*) ;; *) fail "$tool RUNPATH '$runpath' lacks $llvm_libdir";; esac
done
if readelf -d "$bin/nabla-launch" | grep -E 'libLLVM|libMLIR|RUNPATH|RPATH'; then
  fail "nabla-launch must link no LLVM/MLIR and need no RUNPATH"
fi

for tool in nabla-opt nabla-compile nabla-launch; do
  "$bin/$tool" --version > "$work/$tool.version"
  grep -q "^$tool (Nabla) [0-9]" "$work/$tool.version" ||
    fail "$tool --version printed: $(cat "$work/$tool.version")"
done

# mul_kernel squares A[i] for i < n = 16; the other 48 values stay as they are.
cd "$work"
"$python" -c "import numpy as np; np.save('a.npy', np.arange(64, dtype=np.float32) - 8)"
check() {
  "$python" -c "
import numpy as np, sys
a = np.arange(64, dtype=np.float32) - 8
a[:16] = a[:16] ** 2
r = np.load(sys.argv[1])
sys.exit(0 if r.dtype == np.float32 and np.array_equal(r, a) else 'wrong result: %s' % r)
" "$1"
}
"$bin/nabla-run" "$src/examples/mul_kernel.mlir" --kernel=mul_kernel --grid=1 \
  --block=64 --arg=a.npy --arg=index:16 --out=run
check run/arg0.npy
"$bin/nabla-compile" "$src/examples/mul_kernel.mlir" --target=spirv --block=64 -o compiled
"$bin/nabla-launch" compiled --kernel=mul_kernel --grid=1 --block=64 \
  --arg=a.npy --arg=index:16 --out=launch
check launch/arg0.npy
echo "check-installed-tools: OK"
