#!/usr/bin/env bash
#===- test.sh - Build Nabla and run every test ----------------------------===#
#
# Builds, then runs the lit suite (FileCheck/verify-diagnostics tests under
# test/), ctest (GoogleTest unit tests, the installed-package consumer
# example) and the integration tests (pytest: kernels run on the default
# Vulkan device, lavapipe without a GPU, against numpy references). Prints
# every summary; exits non-zero if anything failed.
#
#===----------------------------------------------------------------------===#
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$root/build}

start=$(date +%s)
"$root/scripts/build.sh"
echo "== build finished in $(( $(date +%s) - start ))s =="

status=0
echo "== lit =="
/usr/lib/llvm-22/bin/lit -sv "$build/test" || status=1
echo "== ctest =="
(cd "$build" && ctest --output-on-failure -j2) || status=1
echo "== integration (pytest, kernels on the default device) =="
NABLA_BIN="$build/bin" /usr/bin/python3 -m pytest -q -p no:cacheprovider \
  "$root/test/Integration" || status=1
echo "== python package (pytest) =="
PYTHONPATH="$build/python" /usr/bin/python3 -m pytest -q -p no:cacheprovider \
  "$root/python/tests" || status=1
echo "== total $(( $(date +%s) - start ))s, status $status =="
exit $status
