#!/usr/bin/env python3
"""JAX CPU's side of bench_linalg: cholesky (symmetrize_input=False, as weft's) of f32
1024x1024 and 2048x2048 and of 64 matrices 64x64, triangular_solve (left side, lower) of a
1024x1024 triangle with 1 and 1024 right-hand sides, lu of f32 1024x1024 and of 64 matrices
64x64, each jitted, steady state (call + block_until_ready). Prints "jax_NAME SECONDS" lines
(medians over --rounds)."""

import argparse
import os
import statistics
import time

os.environ.setdefault("JAX_PLATFORMS", "cpu")
import numpy as np  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax.lax import linalg as lax_linalg  # noqa: E402


def spd(rng, batch, n):
    """Symmetric, diagonally dominant (so positive definite) matrices, as bench_linalg's."""
    u = rng.uniform(-1, 1, (batch, n, n))
    a = np.tril(u, -1)
    a = a + np.swapaxes(a, -1, -2) + (n + rng.uniform(-1, 1, (batch, n)))[:, :, None] * np.eye(n)
    return jnp.asarray(a.astype(np.float32)[0] if batch == 1 else a.astype(np.float32))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    rng = np.random.default_rng(31)
    n = 1024
    lower = np.tril(rng.uniform(-1, 1, (n, n)) / n, -1) + np.diag(1.5 + 0.5 * rng.uniform(-1, 1, n))
    lower = jnp.asarray(lower.astype(np.float32))

    def uniform(*shape):
        return jnp.asarray(rng.uniform(-1, 1, shape).astype(np.float32))

    cholesky = jax.jit(lambda a: lax_linalg.cholesky(a, symmetrize_input=False))
    solve = jax.jit(lambda a, b: lax_linalg.triangular_solve(a, b, left_side=True, lower=True))
    lu = jax.jit(lax_linalg.lu)
    programs = {
        "cholesky_1024": (cholesky, (spd(rng, 1, 1024),)),
        "cholesky_2048": (cholesky, (spd(rng, 1, 2048),)),
        "cholesky_batch64x64": (cholesky, (spd(rng, 64, 64),)),
        "triangular_solve_1024_1": (solve, (lower, uniform(n, 1))),
        "triangular_solve_1024_1024": (solve, (lower, uniform(n, n))),
        "lu_1024": (lu, (uniform(n, n),)),
        "lu_batch64x64": (lu, (uniform(64, 64, 64),)),
    }
    samples = {name: [] for name in programs}
    for _ in range(2):
        for fn, a in programs.values():
            jax.block_until_ready(fn(*a))
    for _ in range(args.rounds):
        for name, (fn, a) in programs.items():
            start = time.perf_counter()
            jax.block_until_ready(fn(*a))
            samples[name].append(time.perf_counter() - start)
    print("jax_version", jax.__version__)
    for name, s in samples.items():
        print("jax_%s %.9g" % (name, statistics.median(s)))


if __name__ == "__main__":
    main()
