#!/usr/bin/env bash
# Builds and runs the libFuzzer targets of tests/fuzz (placement, freeze, model, encode, the
# meta readers check, thaw, report, diff, expand, the safetensors header reader checkpoint,
# and walk, the walk of check PATH... over trees it builds and changes).
#
#   scripts/fuzz.sh [-t SECONDS] [-j JOBS] [-b BUILD_DIR] [TARGET...]
#
# -t  run time per target (default 600; CI's smoke run uses 30)
# -j  targets run at once (default 1; CI uses 2, one per core), each in one process
# -b  build directory (default build-fuzz), configured with clang and -DHPFREEZE_FUZZ=ON
# The summary lists the targets in the order given, whatever order they finish in.
# Seeds come fresh from testdata/ each run (golden cases, placements, real-world metas,
# testdata/fuzz/seeds and testdata/fuzz/regressions); what the fuzzer learns is kept in
# BUILD_DIR/fuzz/<target>/corpus and reused by the next run. A crash or sanitizer report
# stops the target with exit 1 (the others still run) and leaves the input in
# BUILD_DIR/fuzz/<target>/crash-*: fix the bug, then copy the input to
# testdata/fuzz/regressions/<target>/ (replayed by ctest's fuzz_regressions_test).
# Environment: FUZZ_ARGS, extra libFuzzer flags; ASAN_OPTIONS (default below);
# HPFREEZE_CMAKE_ARGS, extra -D flags of the build (.ci/run: a unity build with precompiled
# headers).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=600
jobs=1
build=$root/build-fuzz
while getopts "t:j:b:h" opt; do
  case $opt in
    t) seconds=$OPTARG ;;
    j) jobs=$OPTARG ;;
    b) build=$OPTARG ;;
    *) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(placement freeze model encode check thaw report diff expand checkpoint walk)

"$root/scripts/setup.sh" fuzz
# shellcheck disable=SC2086
CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DHPFREEZE_FUZZ=ON -DHPFREEZE_BUILD_TESTS=OFF -DHPFREEZE_BUILD_BENCH=OFF \
  ${HPFREEZE_CMAKE_ARGS:-} >/dev/null
cmake --build "$build" -j 2 --target "${targets[@]/#/fuzz_}"

# Seed corpus of one target, rebuilt from testdata/ into $1.
make_seeds() {
  local target=$1 dir=$2
  rm -rf "$dir" && mkdir -p "$dir"
  local td=$root/testdata
  # Past crashes first: the smoke run replays them under clang's sanitizers, which see
  # more than the GCC ones of the ctest replay.
  cp "$td/fuzz/seeds/$target/"* "$td/fuzz/regressions/$target/"* "$dir/" 2>/dev/null || true
  case $target in
    placement)
      python3 - "$td" "$dir" <<'EOF'
import json, pathlib, sys
td, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
texts = [json.loads(l)["input"] for l in (td / "placements.jsonl").read_text().splitlines() if l]
texts += (td / "example" / "placements.txt").read_text().splitlines()
for i, t in enumerate(texts):
    (out / f"testdata-{i:04}").write_bytes(t.encode("utf-8", "surrogatepass"))
EOF
      ;;
    freeze | model)
      local file=plan.json
      [ "$target" = model ] && file=model.json
      for f in "$td"/cases/*/"$file" "$td/example/$file"; do
        cp "$f" "$dir/$(basename "$(dirname "$f")")-$file"
      done
      ;;
    check | thaw | report | diff)
      # Every meta of the repository: golden outputs, real-world metas, the check, report
      # and thaw test data.
      for f in "$td"/cases/*/expected.json; do
        cp "$f" "$dir/$(basename "$(dirname "$f")")-meta.json"
      done
      for f in "$td"/realworld/*.json "$td"/check/*meta*.json "$td"/check/syntax_error.json \
        "$td"/report/tiny/meta*.json "$td"/thaw/*.json; do
        cp "$f" "$dir/$(basename "$(dirname "$f")")-$(basename "$f")"
      done
      ;;
    expand)
      for f in "$td"/cases/*/plan.json "$td/example/plan.json" "$td/check/expand_plan.json"; do
        cp "$f" "$dir/$(basename "$(dirname "$f")")-plan.json"
      done
      ;;
    encode)
      for f in "$td"/cases/*/*.json "$td"/example/*.json "$td"/check/*.json; do
        cp "$f" "$dir/$(basename "$(dirname "$f")")-$(basename "$f")"
      done
      cp "$td"/realworld/*.json "$dir/"
      ;;
  esac
}

# Short allocation stacks and a smaller quarantine: ASan's stack depot otherwise grows with
# every new recursion pattern (RSS +1 GB in 10 min on fuzz_encode) until -rss_limit_mb
# reports a false out-of-memory. UBSan reports are fatal (the code is built so).
export ASAN_OPTIONS=${ASAN_OPTIONS:-malloc_context_size=8:quarantine_size_mb=64}
summary=()
# Runs one target; its summary line goes to BUILD/fuzz/<target>/summary.
run_target() {
  local target=$1
  local work=$build/fuzz/$target
  mkdir -p "$work/corpus"
  make_seeds "$target" "$work/seeds"
  echo "== fuzz_$target: $seconds s, $(find "$work/corpus" -type f | wc -l) corpus units," \
    "$(find "$work/seeds" -type f | wc -l) seeds" >&2
  local log=$work/last-run.log
  # The meta readers take inputs up to 1 MiB (and `#scale N` recipes, see
  # tests/fuzz/fuzz_meta_harness.h), so that work that grows faster than the input shows up
  # as a timeout or an out-of-memory; the other targets keep 64 KiB.
  local max_len=65536
  case $target in check | thaw | report | diff | expand) max_len=1048576 ;; esac
  # Seconds one input may take. report plans the meta's own parameters on the mesh of its
  # parallel_dims (tests/fuzz/fuzz_meta_harness.h): a tighter bound turns a planner that
  # grows faster than its input into a timeout. The slowest inputs found so far (axes of
  # about 5000 ranks each, uneven shards on two of them) take about 4 s instrumented on one
  # core, and more where the machine is shared, so the bound is 10 s, not 5.
  local timeout=20
  [ "$target" = report ] && timeout=10
  local rc=0
  # shellcheck disable=SC2086
  "$build/tests/fuzz/fuzz_$target" "$work/corpus" "$work/seeds" \
    -dict="$root/testdata/fuzz/hpfreeze.dict" -max_total_time="$seconds" -max_len=$max_len \
    -timeout=$timeout -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$work/" \
    ${FUZZ_ARGS:-} >"$log" 2>&1 || rc=$?
  local done_line execs artifact
  done_line=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -1 || true)
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  if [ $rc -ne 0 ]; then
    artifact=$(ls -t "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-* \
      2>/dev/null | head -1 || true)
    echo "fuzz_$target: FAILED (exit $rc), input: ${artifact:-none}, log: $log" >"$work/summary"
  else
    echo "fuzz_$target: ok, ${execs:-?} executions; ${done_line:-no final stats}" \
      >"$work/summary"
  fi
}

running=0
for target in "${targets[@]}"; do
  rm -f "$build/fuzz/$target/summary"
  if [ "$running" -ge "$jobs" ]; then
    wait -n || true
    running=$((running - 1))
  fi
  run_target "$target" &
  running=$((running + 1))
done
wait
status=0
for target in "${targets[@]}"; do
  line=$(cat "$build/fuzz/$target/summary" 2>/dev/null || echo "fuzz_$target: FAILED (no summary)")
  if [[ $line != "fuzz_$target: ok"* ]]; then
    status=1
    tail -n 60 "$build/fuzz/$target/last-run.log" >&2 2>/dev/null || true
  fi
  summary+=("$line")
done
printf '%s\n' "${summary[@]}"
exit $status
