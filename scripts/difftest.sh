#!/usr/bin/env bash
#===- difftest.sh - Differential testing of random kernels -------------===#
#
# Runs N random kernels (default 200) from seed SEED (default 1): each runs on
# the default Vulkan device through nabla-run and on the host through
# upstream mlir-opt + mlir-runner (threads as loops), outputs compared within
# the tolerances of test/Difftest/check.py; differentiable kernels also run
# their gradient kernel against float64 finite differences. Prints the
# outcome per kernel class; exits non-zero on any failure. Failures are saved
# and minimized under build/difftest/failures/<seed>/ (--keep also adds the
# minimized case to test/Difftest/regressions/). More options:
# test/Difftest/difftest.py --help. See docs/Reliability.md.
#
#   scripts/difftest.sh [N] [SEED] [options]
#
#===----------------------------------------------------------------------===#
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export NABLA_BIN=${NABLA_BIN:-${BUILD_DIR:-$root/build}/bin}
exec /usr/bin/python3 "$root/test/Difftest/difftest.py" "$@"
