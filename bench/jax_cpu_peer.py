#!/usr/bin/env python3
"""JAX on CPU running what bench_vs_jax measures, for the side-by-side table of issue 13
(optional: nothing in weft's build or tests needs it; it needs `pip install jax`).

Programs (same shapes and formulas as bench/bench_vs_jax.cpp): softmax rows f32[256,1000];
MLP forward 64x784 -> 256 (tanh) -> 10; layer norm f32[64,768]; GELU MLP block
64x768 -> 3072 (exact GELU) -> 768; the exp/tanh chain over f32[2^25]. Each is jitted, warmed
up (compilation never timed), then timed as call + block_until_ready, rounds interleaved;
prints "jax_NAME_seconds S" (median seconds per call) lines.

  python3 bench/jax_cpu_peer.py [--rounds N]
"""

import argparse
import os
import statistics
import time

os.environ.setdefault("JAX_PLATFORMS", "cpu")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402


def dense(x, w, b):
    return x @ w + b


def layer_norm(x, g, o):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    centred = x - mean
    var = jnp.mean(centred * centred, axis=-1, keepdims=True)
    return centred * jax.lax.rsqrt(var + 1e-5) * g + o


def gelu(x):
    return x * 0.5 * (jax.lax.erf(x * 0.70710678) + 1.0)


def chain(x):
    return jnp.minimum(jnp.maximum(jnp.tanh(jnp.exp(x * 0.5) - 1.0) * 2.0 + 0.5, 0.0), 2.0)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    rng = np.random.default_rng(1)
    f32 = np.float32

    def normal(shape, scale):
        return jnp.asarray(rng.normal(0, scale, shape).astype(f32))

    programs = {
        "softmax": (jax.jit(lambda x: jax.nn.softmax(x, axis=-1)), (normal((256, 1000), 2),), 20),
        "mlp_forward": (
            jax.jit(lambda x, w1, b1, w2, b2: dense(jnp.tanh(dense(x, w1, b1)), w2, b2)),
            (normal((64, 784), 1), normal((784, 256), 0.05), normal((256,), 0.01),
             normal((256, 10), 0.05), normal((10,), 0.01)), 20),
        "layer_norm": (jax.jit(layer_norm),
                       (normal((64, 768), 3), normal((768,), 1), normal((768,), 1)), 20),
        "gelu_block": (
            jax.jit(lambda x, w1, b1, w2, b2: dense(gelu(dense(x, w1, b1)), w2, b2)),
            (normal((64, 768), 1), normal((768, 3072), 0.03), normal((3072,), 0.01),
             normal((3072, 768), 0.02), normal((768,), 0.01)), 5),
        "exp_tanh_chain": (jax.jit(chain),
                           (jnp.asarray(rng.uniform(-3, 3, 1 << 25).astype(f32)),), 1),
    }
    samples = {name: [] for name in programs}
    for _ in range(2):
        for fn, a, _calls in programs.values():
            jax.block_until_ready(fn(*a))
    for _ in range(args.rounds):
        for name, (fn, a, calls) in programs.items():
            start = time.perf_counter()
            for _ in range(calls):
                jax.block_until_ready(fn(*a))
            samples[name].append((time.perf_counter() - start) / calls)
    print("jax_version", jax.__version__)
    for name, s in samples.items():
        print("jax_%s %.9g" % (name, statistics.median(s)))


if __name__ == "__main__":
    main()
