#!/usr/bin/env python3
"""JAX CPU's side of bench_sgemm: jnp.matmul of f32 matrices (1024^3 and 4096^3, the same
values as weft's), jitted, steady state (call + block_until_ready), precision HIGHEST (full
f32). Prints "jax_NAME SECONDS" lines (medians over --rounds)."""

import argparse
import os
import statistics
import time

os.environ.setdefault("JAX_PLATFORMS", "cpu")
import numpy as np  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402


def operands(n):
    i = np.arange(n * n)
    a = ((i % 17) / 16.0 - 0.5).astype(np.float32).reshape(n, n)
    b = ((i % 13) / 12.0 - 0.5).astype(np.float32).reshape(n, n)
    return jnp.asarray(a), jnp.asarray(b)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    matmul = jax.jit(lambda a, b: jnp.matmul(a, b, precision=lax.Precision.HIGHEST))
    print("jax_version", jax.__version__)
    for n, rounds in ((1024, args.rounds), (4096, max(2, args.rounds // 2))):
        a, b = operands(n)
        jax.block_until_ready(matmul(a, b))
        samples = []
        for _ in range(rounds):
            start = time.perf_counter()
            jax.block_until_ready(matmul(a, b))
            samples.append(time.perf_counter() - start)
        print("jax_sgemm_%d %.9g" % (n, statistics.median(samples)))


if __name__ == "__main__":
    main()
