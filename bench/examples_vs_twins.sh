#!/usr/bin/env bash
# Runs each example at its full size beside its JAX twin (examples/NAME/twin.py --size full) and
# prints both step medians and the ratio weft / JAX (the goal is <= 1.0x). It builds nothing.
#
#   bench/examples_vs_twins.sh BUILD_DIR [REPEATS] [EXAMPLE...]
#
# REPEATS (default 5) is the weft example's --repeat; the twins time 5 calls. Without EXAMPLE
# names all of them run (the decoder is slow: pass the others to skip it). Needs python3 with JAX.
# Other work on the machine perturbs every figure: the load is printed before each pair.
set -uo pipefail

if [[ $# -lt 1 ]]; then
  echo "usage: $0 BUILD_DIR [REPEATS] [EXAMPLE...]" >&2
  exit 2
fi
build_dir="$1"
repeats="${2:-5}"
shift $(($# < 2 ? $# : 2))
examples=("$@")
if [[ ${#examples[@]} -eq 0 ]]; then
  examples=(vae lstm_classifier graph_network volume_render molecular_dynamics decoder
    cnn_classifier gp_regression unet_forward resnet_pmap)
fi
source_dir="$(cd "$(dirname "$0")/.." && pwd)"
status=0

median_of() { sed -n 's/.*median \([0-9.]*\) ms.*/\1/p' | head -n 1; }

printf '%-20s %14s %14s %8s  %s\n' example "JAX ms" "weft ms" ratio load
for name in "${examples[@]}"; do
  exe="$build_dir/examples/example_$name"
  if [[ ! -x "$exe" ]]; then
    echo "missing $exe: configure with -DWEFT_BUILD_EXAMPLES=ON and build first" >&2
    status=1
    continue
  fi
  load="$(cut -d' ' -f1 /proc/loadavg)"
  jax_out="$(python3 "$source_dir/examples/$name/twin.py" --size full 2>&1)" || status=1
  # resnet_pmap is data-parallel over two devices: two PoCL devices unless POCL_DEVICES is set.
  # The step median is the kernels' (WEFT_TIERED=0 unless set): with tiered execution the
  # timed calls could run on the interpreter until the step is built
  # (bench/cold_start_examples.sh compares first calls with it on).
  env_args=("WEFT_TIERED=${WEFT_TIERED:-0}")
  if [[ "$name" == resnet_pmap && -z "${POCL_DEVICES:-}" ]]; then
    env_args+=("POCL_DEVICES=pthread pthread")
  fi
  weft_out="$(env "${env_args[@]}" "$exe" --size full --repeat "$repeats" 2>&1)" || status=1
  jax_ms="$(median_of <<<"$jax_out")"
  weft_ms="$(median_of <<<"$weft_out")"
  if [[ -z $jax_ms || -z $weft_ms ]]; then
    echo "$name: no step median; outputs:" >&2
    echo "$jax_out" >&2
    echo "$weft_out" >&2
    status=1
    continue
  fi
  ratio="$(awk -v w="$weft_ms" -v j="$jax_ms" 'BEGIN { printf "%.2fx", w / j }')"
  printf '%-20s %14s %14s %8s  %s\n' "$name" "$jax_ms" "$weft_ms" "$ratio" "$load"
done
exit $status
