#!/usr/bin/env bash
# Collects the OpenCL source of every program weft generates for the examples, the tests that
# generate many programs and the benchmarks' programs, and writes one sha256 per distinct source
# into OUT_DIR/sources.sha256 (sorted, unique). Run it on two builds and diff the two files: a
# refactoring that must not change code generation leaves them equal.
#
#   tools/compare_generated_sources.sh BUILD_DIR OUT_DIR
#
# Every compile writes its program through WEFT_DUMP_IR=OUT_DIR/dump (the last file of each
# function's dump, NN-opencl.cl; see docs/ir-text.md), with the persistent cache off so every
# program is generated. The benchmarks run at their smallest settings; those without settings
# run until BENCH_TIMEOUT seconds (default 120), after their programs are compiled. The tests'
# and benchmarks' own results do not matter here: their output goes to OUT_DIR/log.txt, and a
# failure is only noted. bench_vs_jax runs without its JAX peer when python3 cannot import jax
# (its weft programs are the same). Needs an OpenCL device (PoCL).
set -uo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 BUILD_DIR OUT_DIR" >&2
  exit 2
fi
build=$(cd "$1" && pwd) || exit 2
mkdir -p "$2" || exit 2
out=$(cd "$2" && pwd)
repo=$(cd "$(dirname "$0")/.." && pwd)
dump="$out/dump"
log="$out/log.txt"
rm -rf "$dump"
mkdir -p "$dump"
: >"$log"

export WEFT_DUMP_IR="$dump" WEFT_CACHE=0 WEFT_RESOURCES="$repo/resources"
bench_timeout="${BENCH_TIMEOUT:-120}"

# run NAME LIMIT COMMAND...: runs one program, its output into the log.
run() {
  local name=$1 limit=$2
  shift 2
  echo "== $name" >>"$log"
  timeout "$limit" "$@" >>"$log" 2>&1
  local status=$?
  if [[ $status -eq 124 ]]; then
    echo "$name: stopped after ${limit} s (its programs so far are kept)"
  elif [[ $status -ne 0 ]]; then
    echo "$name: exited $status (see $log)"
  fi
}

for example in "$repo"/resources/examples/*.weft; do
  run "weft run $(basename "$example")" 300 "$build/cli/weft" run "$example"
done

for test in codegen_warnings_test ops_device_test fusion_test random_chain_test \
  control_flow_device_test jit_test; do
  if [[ ! -x "$build/tests/$test" ]]; then
    echo "missing $build/tests/$test: build it first" >&2
    exit 1
  fi
  run "$test" 1200 "$build/tests/$test"
done

for bench in dispatch fused_chain select_tril reduce_sum sgemm control_flow effects telemetry \
  transforms pmap vs_jax large_program cache_startup runtime_memory; do
  exe="$build/bench/bench_$bench"
  if [[ ! -x "$exe" ]]; then
    echo "missing $exe: configure with -DWEFT_BUILD_BENCH=ON and build it first" >&2
    exit 1
  fi
  case $bench in
    dispatch) run "bench_$bench" "$bench_timeout" "$exe" --benchmark_min_time=0.01 ;;
    pmap) run "bench_$bench" "$bench_timeout" env POCL_DEVICES="pthread pthread" "$exe" ;;
    large_program)
      run "bench_$bench" 600 "$exe" --repeats 1 --kernel-ops 100,1000 --program-ops 100 \
        --store-ops 100 --elements 4096
      ;;
    cache_startup) run "bench_$bench" 600 "$exe" --repeats 1 ;;
    runtime_memory) run "bench_$bench" 600 "$exe" --iterations 1000 --programs 20 ;;
    *) run "bench_$bench" "$bench_timeout" "$exe" ;;
  esac
done
find "$dump" -type f -name '*.cl' -print0 | xargs -0 -r sha256sum | cut -d' ' -f1 | sort -u \
  >"$out/sources.sha256"
echo "$(find "$dump" -type f -name '*.cl' | wc -l) programs generated," \
  "$(wc -l <"$out/sources.sha256") distinct: $out/sources.sha256"
