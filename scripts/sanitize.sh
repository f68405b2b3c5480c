#!/usr/bin/env bash
#===- sanitize.sh - Build with ASan+UBSan and run every test --------------===#
#
# Configures and builds build-san/ with clang-22 and NABLA_SANITIZE=ON
# (AddressSanitizer, LeakSanitizer, UndefinedBehaviorSanitizer; Release with
# line tables, niced), then runs the lit suite, ctest, the integration tests
# (tools from build-san/bin) and the Python package's tests (the extension
# needs the ASan runtime preloaded into Debian's python3).
#
# Every sanitizer report goes to build-san/sanitizer-logs/ (log_path) as well
# as failing its process: a test that expects a tool to fail (`not`, exit
# status 1) would otherwise hide it. The script fails if any test failed or
# any report was written, and prints the first frames of each report.
# Leak suppressions (third-party code only): scripts/sanitizer/lsan.supp.
# SAN_BUILD_DIR overrides build-san/.
#
#===----------------------------------------------------------------------===#
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${SAN_BUILD_DIR:-$root/build-san}
logs=$build/sanitizer-logs
asan_runtime=$(clang-22 -print-file-name=libclang_rt.asan-x86_64.so)

start=$(date +%s)
if [ ! -f "$build/build.ninja" ]; then
  nice -n 19 cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DCMAKE_C_FLAGS=-gline-tables-only -DCMAKE_CXX_FLAGS=-gline-tables-only \
    -DNABLA_SANITIZE=ON || exit 1
fi
# The build runs the unit tests to list them (gtest_discover_tests).
ASAN_OPTIONS=detect_leaks=0 nice -n 19 cmake --build "$build" || exit 1
echo "== build-san finished in $(( $(date +%s) - start ))s =="

rm -rf "$logs" && mkdir -p "$logs"
# Libraries stay loaded to the end (scripts/sanitizer/keep-loaded.c), so leak
# reports name the driver or layer that allocated.
keep_loaded=$build/sanitizer/libnabla-keep-loaded.so
mkdir -p "$build/sanitizer"
clang-22 -shared -fPIC -O2 -o "$keep_loaded" "$root/scripts/sanitizer/keep-loaded.c" || exit 1
export LD_PRELOAD=$keep_loaded
# abort_on_error: a finding is a signal, which `not` and expected exit
# statuses do not mistake for an ordinary failure.
# allow_user_poisoning=0: LLVM's header-only BumpPtrAllocator poisons slab tails
# when compiled with ASan; a slab started by Nabla's (instrumented) inline
# copy and continued by libMLIR's (uninstrumented) one reads as poisoned.
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:allow_user_poisoning=0:log_path=$logs/report:detect_stack_use_after_return=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:abort_on_error=1:log_path=$logs/report"
export LSAN_OPTIONS="suppressions=$root/scripts/sanitizer/lsan.supp:print_suppressions=0"
export ASAN_SYMBOLIZER_PATH=/usr/lib/llvm-22/bin/llvm-symbolizer
export UBSAN_SYMBOLIZER_PATH=$ASAN_SYMBOLIZER_PATH

status=0
step() { # name command...
  local s=$(date +%s) name=$1; shift
  echo "== $name =="
  nice -n 19 "$@" || status=1
  echo "== $name: $(( $(date +%s) - s ))s =="
}
step lit /usr/lib/llvm-22/bin/lit -sv "$build/test"
step ctest bash -c "cd '$build' && ctest --output-on-failure -j2"
# Tests that load the instrumented Python package or fake drivers into a
# plain python3 run with the Python package's tests below, where the ASan
# runtime is preloaded (the tools have their own, which a preload would clash
# with).
in_python="test/Integration/test_fake_drivers.py::test_python_times
test/Integration/test_fake_drivers.py::test_python_device_arrays_in_place
test/Integration/test_fake_drivers.py::test_fake_reports_leaks"
step "integration (pytest, tools from $build/bin)" \
  env NABLA_BIN="$build/bin" /usr/bin/python3 -m pytest -q -p no:cacheprovider \
  -k "not test_python_times and not test_python_device_arrays_in_place and not test_fake_reports_leaks" \
  "$root/test/Integration"
# Python's interpreter keeps its objects until exit by design: no leak check
# in the processes that load the extension (the tools still check theirs).
# The tools nabla.run_host starts get the tools' environment back
# (python/tests/test_host_programs.py): their own ASan runtime clashes with
# the preload (Python children keep it).
step "python package (pytest, ASan runtime preloaded)" \
  env LD_PRELOAD="$asan_runtime:$keep_loaded" PYTHONPATH="$build/python" \
  NABLA_BIN="$build/bin" NABLA_SANITIZE_CHILD_LD_PRELOAD="$keep_loaded" \
  NABLA_SANITIZE_CHILD_ASAN_OPTIONS="$ASAN_OPTIONS" \
  ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0:verify_asan_link_order=0" \
  /usr/bin/python3 -m pytest -q -p no:cacheprovider "$root/python/tests" \
  $(for t in $in_python; do echo "$root/$t"; done)

reports=$(ls "$logs" 2>/dev/null | wc -l)
echo "== sanitizer reports: $reports (in $logs) =="
for report in "$logs"/*; do
  [ -f "$report" ] || continue
  echo "-- $report"
  grep -m1 -E 'ERROR: |runtime error' "$report"
  grep -m6 -E '^ +#[0-9]+ ' "$report"
done
[ "$reports" = 0 ] || status=1
echo "== total $(( $(date +%s) - start ))s, status $status =="
exit $status
