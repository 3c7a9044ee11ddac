#!/usr/bin/env python3
"""JAX on CPU running what bench_primitives measures, for its side-by-side table (optional:
nothing in weft's build or tests needs it; it needs `pip install jax`).

Programs (same shapes as bench/bench_primitives.cpp): an embedding gather of 4096 rows of a
50,000x512 f32 table; segment_sum of 1M f32 edge values into 100k segments; sort of f32[2^20];
top_k (k=20) of f32[64, 32000]; cumsum of f32[2^24]. Each
is jitted, warmed up (compilation never timed), then timed as call + block_until_ready, rounds
interleaved; prints "jax_NAME S" (median seconds per call) lines.

  python3 bench/jax_primitives_peer.py [--rounds N]
"""

import argparse
import os
import statistics
import time

os.environ.setdefault("JAX_PLATFORMS", "cpu")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    rng = np.random.default_rng(1)
    f32 = np.float32
    table = jnp.asarray(rng.normal(0, 1, (50000, 512)).astype(f32))
    rows = jnp.asarray(rng.integers(0, 50000, 4096).astype(np.int32))
    values = jnp.asarray(rng.normal(0, 1, 1 << 20).astype(f32))
    segments = jnp.asarray(rng.integers(0, 100000, 1 << 20).astype(np.int32))
    logits = jnp.asarray(rng.normal(0, 1, (64, 32000)).astype(f32))
    long = jnp.asarray(rng.normal(0, 1, 1 << 24).astype(f32))
    programs = {
        "embedding_gather": (jax.jit(lambda t, r: t[r]), (table, rows), 20),
        "segment_sum": (jax.jit(lambda v, s: jax.ops.segment_sum(v, s, num_segments=100000)),
                        (values, segments), 10),
        "sort": (jax.jit(jnp.sort), (values,), 1),
        "top_k": (jax.jit(lambda x: jax.lax.top_k(x, 20)[0]), (logits,), 1),
        "cumsum": (jax.jit(jnp.cumsum), (long,), 1),
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
        print(f"jax_{name} {statistics.median(s):.9g}")


if __name__ == "__main__":
    main()
