#!/usr/bin/env bash
# Runs every weft benchmark binary from a build directory (it builds nothing) and prints one
# summary table: benchmark, weft figure, baseline figure, ratio, goal, met.
#
#   bench/run_all.sh BUILD_DIR [LOG_DIR]
#
# Each binary's full output (generated kernel sources included) goes to LOG_DIR/NAME.log
# (default: a fresh directory under /tmp); the console shows its timing tables. Exits 1 when
# a binary is missing or fails; never because a goal is missed.
set -uo pipefail

if [[ $# -lt 1 || $# -gt 2 ]]; then
  echo "usage: $0 BUILD_DIR [LOG_DIR]" >&2
  exit 2
fi
bin_dir="$1/bench"
log_dir="${2:-$(mktemp -d /tmp/weft-bench.XXXXXX)}"
mkdir -p "$log_dir"

benches=(bench_dispatch bench_fused_chain bench_select_tril bench_reduce_sum bench_sgemm
  bench_control_flow bench_effects bench_telemetry bench_transforms bench_pmap bench_vs_jax
  bench_random bench_primitives bench_conv bench_linalg bench_cache_startup bench_cache_lookup bench_large_program)
status=0
summary="$log_dir/summary.tsv"
: >"$summary"

echo "weft benchmarks from $bin_dir; logs in $log_dir"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs" \
  "(other work on the machine perturbs every figure)"
for name in "${benches[@]}"; do
  exe="$bin_dir/$name"
  log="$log_dir/$name.log"
  echo
  echo "=== $name"
  if [[ ! -x "$exe" ]]; then
    echo "missing $exe: configure with -DWEFT_BUILD_BENCH=ON and build first" >&2
    status=1
    continue
  fi
  start=$(date +%s.%N)
  # bench_pmap maps over two devices.
  env=()
  [[ $name == bench_pmap ]] && env=(env POCL_DEVICES="pthread pthread")
  if ! "${env[@]}" "$exe" >"$log" 2>&1; then
    echo "$name failed; the end of $log:" >&2
    tail -n 20 "$log" >&2
    status=1
  fi
  end=$(date +%s.%N)
  # The timing tables: everything from the first table header on, without the raw rows; the
  # whole log for a binary without one (bench_cache_lookup prints a few lines).
  header='^\(contender\|Benchmark\|CLBlast\|memory traffic\|Per configuration\|One kernel of N\)'
  if grep -q "$header" "$log"; then
    # (bench_large_program's per-child progress lines are left out too)
    sed -n "/$header/,\$p" "$log" | grep -v -e '^@summary' -e '^  [a-z]* [a-z]* [0-9]* ops, round'
  else
    grep -v '^@summary' "$log"
  fi
  awk -v a="$start" -v b="$end" 'BEGIN { printf "ran in %.1f s\n", b - a }'
  grep '^@summary' "$log" | cut -f2- >>"$summary"
done

echo
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "Summary of all benchmarks"
awk -F'\t' '
  BEGIN { split("benchmark\tweft\tbaseline\tratio\tgoal\tmet", head, "\t") }
  { rows[NR] = $0; for (i = 1; i <= 6; ++i) if (length($i) > w[i]) w[i] = length($i) }
  function line(c,   s, i) {
    s = "|"
    for (i = 1; i <= 6; ++i) s = s sprintf(" %-" w[i] "s |", c[i])
    print s
  }
  END {
    for (i = 1; i <= 6; ++i) if (length(head[i]) > w[i]) w[i] = length(head[i])
    line(head)
    for (i = 1; i <= 6; ++i) { r = ""; for (j = 0; j < w[i]; ++j) r = r "-"; rule[i] = r }
    line(rule)
    for (n = 1; n <= NR; ++n) { split(rows[n], c, "\t"); line(c) }
  }' "$summary"
exit "$status"
