#!/usr/bin/env bash
# Cold time to first result (issue 30): weft's whole fresh process, empty caches, against JAX's
# first call (trace + compile + run) of the same program in a fresh process. It builds nothing.
#
#   bench/cold_start.sh BUILD_DIR [REPEATS] [PROGRAM...]
#
# PROGRAM is logistic_regression (BUILD_DIR/bench/cold_logistic_regression beside
# bench/cold_start/logistic_regression_twin.py of the source tree BUILD_DIR was configured
# from) or the NAME of a resources/examples/NAME.weft (`BUILD_DIR/cli/weft run` beside
# bench/cold_start/resource_twins.py NAME); without names all 15 run. Each of REPEATS rounds (default 3) runs every program once, round-robin:
#   JAX        the twin in a fresh process: its first_call_s (the import of jax is not counted).
#   weft cold  a fresh process with a fresh empty WEFT_CACHE_DIR, POCL_KERNEL_CACHE=0 and a
#              fresh empty POCL_CACHE_DIR, timed by the shell from spawn to exit.
#   weft warm  the same again with the weft cache the cold run filled (PoCL's cache still fresh
#              and off), for information.
# Every weft result is compared with the twin's (bench/cold_start/compare.py): outputs, printed
# lines, logistic regression's weights and losses. A mismatch or a failed run fails the row and
# the exit status is 1. The table shows medians over the rounds, and where weft run's cold runs
# ran (kernels, or the interpreter under tiered execution; "-" for logistic_regression).
#
# The twins run on $WEFT_BENCH_PYTHON (default python3), which needs jax and numpy; without jax
# the JAX column is empty and the resources examples are checked by `weft run --check` (the
# reference interpreter, on weft's own random inputs) instead. The weft processes inherit the
# environment, so knobs such as WEFT_TIERED measure before/after with the same driver. Run it on
# a quiet machine: the load average is printed before and after.
set -uo pipefail
export LC_ALL=C  # EPOCHREALTIME and printf with a '.' decimal point

if [[ $# -lt 1 ]]; then
  echo "usage: $0 BUILD_DIR [REPEATS] [PROGRAM...]" >&2
  exit 2
fi
build_dir="$1"
repeats="${2:-3}"
shift $(($# < 2 ? $# : 2))
if ! [[ $repeats =~ ^[1-9][0-9]*$ ]]; then
  echo "$0: REPEATS must be a whole number >= 1, got '$repeats'" >&2
  exit 2
fi
source_dir="$(cd "$(dirname "$0")/.." && pwd)"
twins="$source_dir/bench/cold_start"
python="${WEFT_BENCH_PYTHON:-python3}"

all_programs=(logistic_regression)
for f in "$source_dir"/resources/examples/*.weft; do
  all_programs+=("$(basename "$f" .weft)")
done
programs=("$@")
if [[ ${#programs[@]} -eq 0 ]]; then
  programs=("${all_programs[@]}")
fi
for name in "${programs[@]}"; do
  if [[ $name != logistic_regression && ! -f $source_dir/resources/examples/$name.weft ]]; then
    echo "$0: unknown program '$name'; the programs are: ${all_programs[*]}" >&2
    exit 2
  fi
done

weft="$build_dir/cli/weft"
logreg="$build_dir/bench/cold_logistic_regression"
# logistic_regression's twin comes from the source tree BUILD_DIR was built from, so that the
# binary and its twin are the same program even when that tree is another checkout.
build_source="$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build_dir/CMakeCache.txt" \
  2>/dev/null)"
logreg_twin="$twins/logistic_regression_twin.py"
if [[ -n $build_source && -f $build_source/bench/cold_start/logistic_regression_twin.py ]]; then
  logreg_twin="$build_source/bench/cold_start/logistic_regression_twin.py"
fi
for name in "${programs[@]}"; do
  exe="$weft"
  [[ $name == logistic_regression ]] && exe="$logreg"
  if [[ ! -x $exe ]]; then
    echo "$0: missing $exe: build it first (cmake --build $build_dir --target" \
      "$(basename "$exe"))" >&2
    exit 2
  fi
done

have_jax=0
if "$python" -c 'import jax, numpy' >/dev/null 2>&1; then
  have_jax=1
else
  echo "note: '$python' cannot import jax and numpy (set WEFT_BENCH_PYTHON): no JAX column;" \
    "resources examples are checked with weft run --check, logistic_regression not at all" >&2
fi

tmp="$(mktemp -d "${TMPDIR:-/tmp}/weft-cold-start.XXXXXX")" || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

declare -A jax_s cold_s warm_s failed ran_on
status=0

elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.4f", b - a }'; }
median() {  # the median of the numbers given, or empty
  [[ $# -eq 0 ]] && return
  printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END {
    if (NR % 2) printf "%.4f", v[(NR + 1) / 2]; else printf "%.4f", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
fail() {  # NAME ROUND WHAT...: marks the row failed and says why
  local name="$1" round="$2"
  shift 2
  failed[$name]=1
  status=1
  echo "FAIL $name (round $round): $*" >&2
}
show_log() { sed 's/^/    | /' "$1" | tail -n 15 >&2; }

# One weft process from spawn to exit with the given weft cache directory, a fresh empty PoCL
# cache directory and PoCL's kernel cache off. Sets run_s and run_rc; stdout and stderr go to
# the files named.
time_weft() {
  local cache="$1" stdout="$2" stderr="$3"
  shift 3
  local pocl t0 t1
  pocl="$(mktemp -d "$tmp/pocl.XXXXXX")"
  t0=$EPOCHREALTIME
  WEFT_CACHE_DIR="$cache" POCL_KERNEL_CACHE=0 POCL_CACHE_DIR="$pocl" "$@" >"$stdout" 2>"$stderr"
  run_rc=$?
  t1=$EPOCHREALTIME
  run_s="$(elapsed "$t0" "$t1")"
  rm -rf "$pocl"
}

# One round of one program: the twin, then weft cold, then weft warm.
run_round() {
  local name="$1" round="$2"
  local dir="$tmp/$name.$round"
  mkdir -p "$dir"
  local cache
  cache="$(mktemp -d "$tmp/weft-cache.XXXXXX")"
  local jax_out="$dir/jax.out" twin_dir="$dir/twin"
  local cmd=() figure

  if [[ $name == logistic_regression ]]; then
    cmd=("$logreg")
    if ((have_jax)); then
      "$python" "$logreg_twin" >"$jax_out" 2>"$dir/jax.err"
      local rc=$?
      figure="$(sed -n 's/^first_call_s \([0-9.]*\) .*/\1/p' "$jax_out")"
      if [[ $rc -ne 0 || -z $figure ]]; then
        fail "$name" "$round" "the JAX twin failed (exit $rc)"
        show_log "$dir/jax.err"
      else
        jax_s[$name]+=" $figure"
      fi
    fi
  else
    cmd=("$weft" run "$source_dir/resources/examples/$name.weft" --print-limit 0)
    if ((have_jax)); then
      "$python" "$twins/resource_twins.py" "$name" --write-dir "$twin_dir" >"$jax_out" \
        2>"$dir/jax.err"
      local rc=$?
      figure="$(sed -n 's/^first_call_s \([0-9.]*\) .*/\1/p' "$jax_out")"
      if [[ $rc -ne 0 || -z $figure ]]; then
        fail "$name" "$round" "the JAX twin failed (exit $rc)"
        show_log "$dir/jax.err"
        rm -rf "$cache"
        return
      fi
      jax_s[$name]+=" $figure"
      local i=0
      while [[ -f $twin_dir/in$i.npy ]]; do
        cmd+=(--input "$i=$twin_dir/in$i.npy")
        i=$((i + 1))
      done
    else
      cmd+=(--check)
    fi
  fi

  local kind
  for kind in cold warm; do
    local out_dir="$dir/$kind.out" stdout="$dir/$kind.stdout" stderr="$dir/$kind.stderr"
    local full=("${cmd[@]}")
    [[ $name != logistic_regression ]] && full+=(--output-dir "$out_dir")
    time_weft "$cache" "$stdout" "$stderr" "${full[@]}"
    if [[ $run_rc -ne 0 ]]; then
      fail "$name" "$round" "weft $kind run exited with $run_rc: ${full[*]}"
      show_log "$stderr"
      continue
    fi
    if [[ $kind == cold ]]; then cold_s[$name]+=" $run_s"; else warm_s[$name]+=" $run_s"; fi
    if [[ $kind == cold && $name != logistic_regression ]]; then
      # weft run's timing line says "(on the interpreter ...)" when tiered execution ran it there
      local where=kernels
      grep -q '^timing:.*on the interpreter' "$stdout" && where=interpreter
      [[ " ${ran_on[$name]:-} " == *" $where "* ]] || ran_on[$name]+=" $where"
    fi
    ((have_jax)) || continue
    local compare=()
    if [[ $name == logistic_regression ]]; then
      [[ -n ${jax_s[$name]:-} ]] || continue
      compare=(logistic "$stdout" "$jax_out")
    else
      compare=(outputs "$twin_dir" "$out_dir" "$stdout")
    fi
    if ! "$python" "$twins/compare.py" "${compare[@]}" >"$dir/$kind.compare" 2>&1; then
      fail "$name" "$round" "weft $kind differs from JAX:"
      show_log "$dir/$kind.compare"
    fi
  done
  rm -rf "$cache"
}

load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
echo "cold start: ${#programs[@]} programs, $repeats rounds, $(nproc) cores, build $build_dir"
env_knobs="$(env | grep -E '^(WEFT_|POCL_)' | grep -vE '^(WEFT_BENCH_PYTHON)=' | sort | tr '\n' ' ')"
echo "environment knobs passed to weft: ${env_knobs:-none}"
if [[ " ${programs[*]} " == *" logistic_regression "* ]]; then
  echo "logistic_regression twin: $logreg_twin"
fi
for ((round = 1; round <= repeats; ++round)); do
  for name in "${programs[@]}"; do
    echo "round $round/$repeats: $name" >&2
    run_round "$name" "$round"
  done
done
load_after="$(cut -d' ' -f1-3 /proc/loadavg)"

ms() { [[ -n $1 ]] && awk -v s="$1" 'BEGIN { printf "%.0f", s * 1000 }'; }
echo
printf '%-20s %12s %14s %9s %13s  %-16s %s\n' program "JAX first ms" "weft cold ms" weft/JAX \
  "weft warm ms" check "cold ran on"
printf '%-20s %12s %14s %9s %13s  %-16s %s\n' -------------------- ------------ -------------- \
  --------- ------------- ---------------- -----------
for name in "${programs[@]}"; do
  # shellcheck disable=SC2086 # the figures are space-separated numbers
  jax="$(median ${jax_s[$name]:-})"
  # shellcheck disable=SC2086
  cold="$(median ${cold_s[$name]:-})"
  # shellcheck disable=SC2086
  warm="$(median ${warm_s[$name]:-})"
  ratio="-"
  if [[ -n $jax && -n $cold ]]; then
    ratio="$(awk -v c="$cold" -v j="$jax" 'BEGIN { printf "%.1fx", c / j }')"
  fi
  if [[ -n ${failed[$name]:-} ]]; then
    check=FAIL
  elif ((have_jax)); then
    check=ok
  elif [[ $name == logistic_regression ]]; then
    check="unchecked"
  else
    check="ok (interpreter)"
  fi
  where="${ran_on[$name]:- -}"
  printf '%-20s %12s %14s %9s %13s  %-16s %s\n' "$name" "$(ms "$jax")" "$(ms "$cold")" "$ratio" \
    "$(ms "$warm")" "$check" "${where# }"
done
echo
echo "load average (1, 5, 15 min): before $load_before, after $load_after"
exit $status
