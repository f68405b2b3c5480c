#!/usr/bin/env bash
#===- fuzz.sh - Build and run Nabla's libFuzzer targets -------------------===#
#
# Usage: scripts/fuzz.sh [SECONDS] [TARGET...]     fuzz each TARGET for SECONDS
#        scripts/fuzz.sh --replay [TARGET...]      replay seeds and crashers
#        scripts/fuzz.sh --list                    print the targets
#
# Configures and builds build-fuzz/ (clang-22, NABLA_FUZZ=ON, NABLA_SANITIZE=ON,
# Release with line tables), niced. Seeds each target's corpus from the test
# suite (every test/**/*.mlir and examples/*.mlir split at `// -----`, each
# chunk keeping its file's RUN lines, which carry the pipeline options the
# targets read), for llvm-ir from every test/**/*.ll and the CUDA/HIP sources
# of test/Integration/frontends compiled by clang-22 (each also with a
# `; target=nvvm|rocdl|metal` line), or from test/Fuzz/seeds/<target>/, then
# runs each target
# for SECONDS (default 60) on one core (no -fork/-jobs), restarting after a
# crash until the time is spent (at most 3 crashes per target). Corpora grow
# in fuzz-corpus/<target>/ (gitignored); crashers, leaks and timeouts are
# copied to test/Fuzz/crashers/<target>/ (committed). Prints executions,
# exec/s and crashes per target.
#
# --replay runs every seed and every saved crasher once per target (what CI
# runs): it fails if any input still crashes. FUZZ_BUILD_DIR overrides
# build-fuzz/, FUZZ_CORPUS_DIR fuzz-corpus/.
#
#===----------------------------------------------------------------------===#
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${FUZZ_BUILD_DIR:-$root/build-fuzz}
corpora=${FUZZ_CORPUS_DIR:-$root/fuzz-corpus}
fuzzdir=$root/test/Fuzz

mlir_targets="parse differentiate reloc nvvm rocdl spirv metal"
runtime_targets="npy manifest launch-args spirv-binary"
all_targets="parse differentiate reloc npy manifest launch-args spirv-binary nvvm rocdl spirv metal llvm-ir"

mode=fuzz
seconds=60
case "${1:-}" in
--replay) mode=replay; shift ;;
--list) echo "$all_targets"; exit 0 ;;
-h|--help) sed -n '3,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
[0-9]*) seconds=$1; shift ;;
esac
targets=${*:-$all_targets}
for t in $targets; do
  case " $all_targets " in *" $t "*) ;; *) echo "fuzz.sh: unknown target '$t' (targets: $all_targets)" >&2; exit 2 ;; esac
done

# LeakSanitizer runs after every input; UBSan findings are fatal (the build
# uses -fno-sanitize-recover). The suppressions cover LLVM's intentional
# leaks at exit and the Vulkan loader (scripts/sanitizer/lsan.supp).
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:symbolize=1:detect_stack_use_after_return=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$root/scripts/sanitizer/lsan.supp:print_suppressions=0}
export ASAN_SYMBOLIZER_PATH=${ASAN_SYMBOLIZER_PATH:-/usr/lib/llvm-22/bin/llvm-symbolizer}

#--- Build -------------------------------------------------------------------#
start=$(date +%s)
if [ ! -f "$build/build.ninja" ]; then
  nice -n 19 cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DCMAKE_C_FLAGS=-gline-tables-only -DCMAKE_CXX_FLAGS=-gline-tables-only \
    -DNABLA_FUZZ=ON -DNABLA_SANITIZE=ON > "$build.configure.log" 2>&1 ||
    { cat "$build.configure.log"; exit 1; }
fi
nice -n 19 cmake --build "$build" --target nabla-fuzzers || exit 1
echo "== build-fuzz ready in $(( $(date +%s) - start ))s =="

#--- Seeds -------------------------------------------------------------------#
# Every lit test and example, split at `// -----`, each chunk prefixed with
# its file's RUN lines.
make_mlir_seeds() {
  local out=$1
  rm -rf "$out" && mkdir -p "$out"
  /usr/bin/python3 - "$root" "$out" <<'EOF'
import hashlib, os, sys
root, out = sys.argv[1], sys.argv[2]
paths = []
for base in ("test", "examples"):
    for folder, dirs, files in os.walk(os.path.join(root, base)):
        dirs[:] = [d for d in dirs if d not in ("Fuzz", "__pycache__")]
        paths += [os.path.join(folder, f) for f in files if f.endswith(".mlir")]
for path in sorted(paths):
    lines = open(path, encoding="utf-8", errors="replace").read().split("\n")
    run = [l for l in lines if l.lstrip().startswith("// RUN:")]
    chunk = []
    def flush():
        text = "\n".join(run + [l for l in chunk if not l.lstrip().startswith("// RUN:")])
        if text.strip():
            name = hashlib.sha1(text.encode()).hexdigest()[:16]
            open(os.path.join(out, name), "w").write(text + "\n")
    for line in lines:
        if line.startswith("// -----"):
            flush(); chunk = []
        else:
            chunk.append(line)
    flush()
EOF
}

# Every .ll of the test suite and clang-22's device IR of the frontend
# sources at -O1 and -O2, each as it is and with each other pipeline named.
make_llvm_seeds() {
  local out=$1 clang=${CLANG:-clang-22} tmp
  rm -rf "$out" && mkdir -p "$out"
  tmp=$(mktemp -d)
  find "$root/test" -name '*.ll' -exec cp {} "$tmp/" \;
  local src=$root/test/Integration/frontends
  if [ -d /usr/local/cuda/include ]; then
    for f in "$src"/*.cu; do
      for o in 1 2; do
        "$clang" -x cuda --cuda-device-only --cuda-gpu-arch=sm_80 \
          --cuda-path=/usr/local/cuda -nocudalib -O$o -S -emit-llvm \
          -Wno-unknown-cuda-version "$f" -o "$tmp/$(basename "$f" .cu).O$o.ll" 2>/dev/null
      done
    done
  fi
  for f in "$src"/*.hip; do
    "$clang" -x hip --cuda-device-only --offload-arch=gfx90a -nogpulib -nogpuinc \
      -O2 -S -emit-llvm -I"$src" "$f" -o "$tmp/$(basename "$f" .hip).hip.ll" 2>/dev/null
  done
  for f in "$tmp"/*.ll; do
    cp "$f" "$out/"
    for t in nvvm rocdl metal; do
      { echo "; target=$t"; cat "$f"; } > "$out/$(basename "$f" .ll).$t.ll"
    done
  done
  rm -rf "$tmp"
}

seeds_for() { # target -> seed directory
  local t=$1
  case " $mlir_targets " in
  *" $t "*) echo "$corpora/seeds/mlir" ;;
  *) [ "$t" = llvm-ir ] && echo "$corpora/seeds/llvm-ir" || echo "$fuzzdir/seeds/$t" ;;
  esac
}
dict_for() {
  case $1 in
  npy) echo "-dict=$fuzzdir/dicts/npy.dict" ;;
  manifest|launch-args) echo "-dict=$fuzzdir/dicts/manifest.dict" ;;
  spirv-binary) ;;
  llvm-ir) echo "-dict=$fuzzdir/dicts/llvm.dict" ;;
  *) echo "-dict=$fuzzdir/dicts/mlir.dict" ;;
  esac
}
flags_for() { # per-target limits: pipelines are slow, MLIR inputs are longer
  [ "$1" = llvm-ir ] && { echo "-timeout=60 -max_len=32768 -rss_limit_mb=6144"; return; }
  case " $mlir_targets " in
  *" $1 "*) echo "-timeout=60 -max_len=8192 -rss_limit_mb=6144" ;;
  *) echo "-timeout=10 -max_len=4096 -rss_limit_mb=2048" ;;
  esac
}
make_mlir_seeds "$corpora/seeds/mlir"
echo "== $(ls "$corpora/seeds/mlir" | wc -l) MLIR seeds from the test suite =="
case " $targets " in *" llvm-ir "*)
  make_llvm_seeds "$corpora/seeds/llvm-ir"
  echo "== $(ls "$corpora/seeds/llvm-ir" | wc -l) LLVM IR seeds ==" ;;
esac

#--- Replay ------------------------------------------------------------------#
if [ $mode = replay ]; then
  status=0
  for t in $targets; do
    bin=$build/bin/nabla-fuzz-$t
    log=$corpora/logs/replay-$t.log
    mkdir -p "$corpora/logs"
    s=$(date +%s)
    # -runs=0: execute the seed directory once, then stop.
    nice -n 19 "$bin" -runs=0 $(flags_for "$t") "$(seeds_for "$t")" > "$log" 2>&1
    rc=$?
    n=$(ls "$(seeds_for "$t")" | wc -l)
    crashed=0 failed=""
    for c in "$fuzzdir/crashers/$t"/*; do
      [ -f "$c" ] || continue
      [ "$(basename "$c")" = README.md ] && continue
      if ! nice -n 19 "$bin" $(flags_for "$t") "$c" >> "$log" 2>&1; then
        crashed=$((crashed + 1)); failed="$failed $(basename "$c")"
      fi
    done
    printf '%-14s seeds %4d: %s; crashers still crashing: %d%s (%ds)\n' "$t" "$n" \
      "$([ $rc = 0 ] && echo ok || echo "CRASH (see $log)")" "$crashed" "$failed" "$(( $(date +%s) - s ))"
    [ $rc = 0 ] && [ $crashed = 0 ] || status=1
  done
  exit $status
fi

#--- Fuzz --------------------------------------------------------------------#
# One summary per run (runs of different targets may overlap).
summary=$corpora/summary-$(date +%Y%m%d-%H%M%S)-$$.txt
: > "$summary"
status=0
for t in $targets; do
  bin=$build/bin/nabla-fuzz-$t
  corpus=$corpora/$t
  artifacts=$corpora/artifacts/$t
  mkdir -p "$corpus" "$artifacts" "$corpora/logs"
  deadline=$(( $(date +%s) + seconds ))
  execs=0 crashes=0 round=0 rate_sum=0 elapsed=0
  while :; do
    left=$(( deadline - $(date +%s) ))
    [ $left -gt 0 ] || break
    round=$((round + 1))
    log=$corpora/logs/$t-$round.log
    before=$(ls "$artifacts" | wc -l)
    s=$(date +%s)
    nice -n 19 "$bin" -max_total_time=$left -print_final_stats=1 \
      $(flags_for "$t") $(dict_for "$t") -artifact_prefix="$artifacts/" \
      "$corpus" "$(seeds_for "$t")" > "$log" 2>&1
    rc=$?
    elapsed=$(( elapsed + $(date +%s) - s ))
    runs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | tail -1 | awk '{print $2}')
    execs=$(( execs + ${runs:-0} ))
    if [ $rc != 0 ]; then
      crashes=$((crashes + 1)); status=1
      mkdir -p "$fuzzdir/crashers/$t"
      # Crashes, leaks, timeouts and out-of-memory inputs (not slow units).
      for a in $(ls "$artifacts" | grep -E "^(crash|leak|timeout|oom)-"); do cp -n "$artifacts/$a" "$fuzzdir/crashers/$t/"; done
      echo "-- $t: crash in round $round (log $log):"
      grep -m1 -E 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error|FINDING' "$log" || true
      grep -m8 -E '^ +#[0-9]+ ' "$log" || true
      grep -m1 'Test unit written to' "$log" || true
      [ $crashes -ge 3 ] && break
      [ "$(ls "$artifacts" | wc -l)" = "$before" ] && break   # no artifact: do not spin
    fi
  done
  rate=$([ $elapsed -gt 0 ] && echo $(( execs / elapsed )) || echo 0)
  line=$(printf '%-14s %10d execs in %5ds (%6d exec/s), corpus %5d, crashes %d' \
    "$t" "$execs" "$elapsed" "$rate" "$(ls "$corpus" | wc -l)" "$crashes")
  echo "$line" | tee -a "$summary"
done
echo "== summary (also in $summary) =="
cat "$summary"
exit $status
