#!/usr/bin/env python3
"""JAX on CPU running what bench_random measures (optional: it needs `pip install jax`):
jax.random.normal(key, (2**24,), float32) under jit, the key an argument. Warmed up
(compilation never timed), then timed as call + block_until_ready; prints
"jax_normal_seconds S" (median seconds per call).

  python3 bench/jax_random_peer.py [--rounds N]
"""

import argparse
import os
import statistics
import time

os.environ.setdefault("JAX_PLATFORMS", "cpu")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    draw = jax.jit(lambda k: jax.random.normal(k, (1 << 24,), jnp.float32))
    key = jax.random.PRNGKey(0)
    for _ in range(2):
        jax.block_until_ready(draw(key))
    samples = []
    for _ in range(args.rounds):
        start = time.perf_counter()
        jax.block_until_ready(draw(key))
        samples.append(time.perf_counter() - start)
    print("jax_version", jax.__version__)
    print("jax_normal_seconds %.9g" % statistics.median(samples))


if __name__ == "__main__":
    main()
