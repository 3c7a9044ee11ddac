#!/usr/bin/env bash
# Cold first call of each example (examples/*, the "Real programs") beside its JAX twin's first
# call (issue 30). It builds nothing.
#
#   bench/cold_start_examples.sh BUILD_DIR [EXAMPLE...]
#
# weft: `BUILD_DIR/examples/example_NAME --size full --repeat 1` in a fresh process with empty
# caches (a fresh WEFT_CACHE_DIR, POCL_KERNEL_CACHE=0, a fresh POCL_CACHE_DIR); the figure is the
# "first call" it prints: trace, compile and run of the first step (its inputs drawn before).
# Run twice: with tiered execution as users get it (WEFT_TIERED unset) and with WEFT_TIERED=0
# (every kernel built before the first call, the behaviour before tiering).
# JAX: `examples/NAME/twin.py --size full` in a fresh process ($WEFT_BENCH_PYTHON, default
# python3); its first call is the "first call" it prints, or, for the twins that time their
# first N steps, that time less N-1 step medians (what the later steps cost once compiled).
# Both draw their inputs before the timed call. The load average is printed with each row.
set -uo pipefail
export LC_ALL=C

if [[ $# -lt 1 ]]; then
  echo "usage: $0 BUILD_DIR [EXAMPLE...]" >&2
  exit 2
fi
build_dir="$1"
shift
examples=("$@")
if [[ ${#examples[@]} -eq 0 ]]; then
  examples=(vae lstm_classifier graph_network volume_render molecular_dynamics decoder
    cnn_classifier gp_regression unet_forward resnet_pmap)
fi
source_dir="$(cd "$(dirname "$0")/.." && pwd)"
python="${WEFT_BENCH_PYTHON:-python3}"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
status=0

# The weft example's first call in ms, from a fresh process with empty caches; extra
# environment assignments come first.
weft_first_call() {
  local name="$1"
  shift
  rm -rf "$scratch/weft" "$scratch/pocl"
  mkdir -p "$scratch/weft" "$scratch/pocl"
  local env_args=(WEFT_CACHE_DIR="$scratch/weft" POCL_KERNEL_CACHE=0 POCL_CACHE_DIR="$scratch/pocl")
  # resnet_pmap is data-parallel over two devices.
  if [[ $name == resnet_pmap && -z ${POCL_DEVICES:-} ]]; then env_args+=(POCL_DEVICES="pthread pthread"); fi
  env "${env_args[@]}" "$@" "$build_dir/examples/example_$name" --size full --repeat 1 2>&1 |
    sed -n 's/.*first call \([0-9.]*\) ms.*/\1/p' | head -n 1
}

printf '%-20s %12s %14s %8s %16s %8s  %s\n' example "JAX first" "weft (tiered)" ratio \
  "weft (TIERED=0)" ratio load
for name in "${examples[@]}"; do
  exe="$build_dir/examples/example_$name"
  if [[ ! -x $exe ]]; then
    echo "missing $exe: configure with -DWEFT_BUILD_EXAMPLES=ON and build first" >&2
    status=1
    continue
  fi
  load="$(cut -d' ' -f1 /proc/loadavg)"
  jax_out="$("$python" "$source_dir/examples/$name/twin.py" --size full 2>&1)" || status=1
  jax_ms="$(awk '
    {
      for (i = 1; i <= NF; ++i) {
        if ($i == "first" && $(i + 1) == "call") first = $(i + 2)
        if ($i == "first" && $(i + 2) ~ /^steps/) { steps = $(i + 1); for (j = i; j <= NF; ++j) if ($j == "ms,") { first = $(j - 1); break } }
        if ($i == "median") median = $(i + 1)
      }
    }
    END {
      if (first == "") exit
      if (steps > 1 && median != "") printf "%.1f", first - (steps - 1) * median
      else printf "%.1f", first
    }' <<<"$jax_out")"
  tiered_ms="$(weft_first_call "$name")"
  off_ms="$(weft_first_call "$name" WEFT_TIERED=0)"
  ratio() { [[ -n $1 && -n $2 ]] && awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fx", a / b }'; }
  printf '%-20s %12s %14s %8s %16s %8s  %s\n' "$name" "${jax_ms:-?}" "${tiered_ms:-FAIL}" \
    "$(ratio "$tiered_ms" "$jax_ms")" "${off_ms:-FAIL}" "$(ratio "$off_ms" "$jax_ms")" "$load"
  [[ -n $tiered_ms && -n $off_ms ]] || status=1
done
exit $status
