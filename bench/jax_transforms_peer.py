#!/usr/bin/env python3
"""JAX on CPU doing what bench_transforms measures, for comparison (optional: nothing in weft's
build or tests needs it; it needs `pip install jax`). bench_transforms runs it as a child
process when python3 can import jax and prints its figure beside weft's.

  grad step   one training step of the MLP demo's shape (batch 64, 784 -> 256 -> 10, tanh,
              softmax cross-entropy): jax.jit(jax.value_and_grad(loss, argnums=(0, 1, 2, 3))),
              call + block_until_ready; seconds per step (median over rounds of --calls calls).
  forward     the jitted loss alone, for information.

Rounds interleave the contenders, after warm-up runs (compilation is never timed), as weft's
benchmarks do.

  python3 bench/jax_transforms_peer.py [--rounds N] [--calls N]

Prints "jax_grad_step_seconds S" and "jax_forward_seconds S" lines (and the JAX version).
"""

import argparse
import os
import statistics
import time

os.environ.setdefault("JAX_PLATFORMS", "cpu")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402


def loss(w1, b1, w2, b2, x, labels):
    h = jnp.tanh(x @ w1 + b1)
    logits = h @ w2 + b2
    shifted = logits - jnp.max(logits, axis=1, keepdims=True)
    lse = jnp.log(jnp.sum(jnp.exp(shifted), axis=1))
    picked = jnp.sum(shifted * labels, axis=1)
    return jnp.sum(lse - picked) / x.shape[0]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--calls", type=int, default=20)
    args = parser.parse_args()
    rng = np.random.default_rng(1)
    f32 = np.float32
    w1 = rng.normal(0, 0.05, (784, 256)).astype(f32)
    b1 = rng.normal(0, 0.01, (256,)).astype(f32)
    w2 = rng.normal(0, 0.05, (256, 10)).astype(f32)
    b2 = rng.normal(0, 0.01, (10,)).astype(f32)
    x = rng.normal(0, 1, (64, 784)).astype(f32)
    labels = np.zeros((64, 10), f32)
    labels[np.arange(64), np.arange(64) % 10] = 1
    params = [jnp.asarray(a) for a in (w1, b1, w2, b2, x, labels)]
    step = jax.jit(jax.value_and_grad(loss, argnums=(0, 1, 2, 3)))
    forward = jax.jit(loss)

    def run_step():
        for _ in range(args.calls):
            jax.block_until_ready(step(*params))

    def run_forward():
        for _ in range(args.calls):
            jax.block_until_ready(forward(*params))

    contenders = [run_step, run_forward]
    times = [[] for _ in contenders]
    for _ in range(2):
        for c in contenders:
            c()
    for _ in range(args.rounds):
        for k, c in enumerate(contenders):
            start = time.perf_counter()
            c()
            times[k].append(time.perf_counter() - start)
    print("jax", jax.__version__)
    print("jax_grad_step_seconds", statistics.median(times[0]) / args.calls)
    print("jax_forward_seconds", statistics.median(times[1]) / args.calls)


if __name__ == "__main__":
    main()
