#!/usr/bin/env python3
"""JAX CPU's side of bench_conv: a 3x3 SAME convolution, batch 32, 56x56x64 -> 64, NHWC/HWIO,
f32 at precision HIGHEST (full f32, as weft computes): the forward pass, the input gradient and
the filter gradient, each jitted, steady state (call + block_until_ready). Prints
"jax_NAME SECONDS" lines (medians over --rounds)."""

import argparse
import os
import statistics
import time

os.environ.setdefault("JAX_PLATFORMS", "cpu")
import numpy as np  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402


def conv(x, w):
    return lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                    dimension_numbers=("NHWC", "HWIO", "NHWC"),
                                    precision=lax.Precision.HIGHEST)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    rng = np.random.default_rng(3)
    x = jnp.asarray(rng.standard_normal((32, 56, 56, 64)).astype(np.float32))
    w = jnp.asarray((rng.standard_normal((3, 3, 64, 64)) * 0.05).astype(np.float32))
    ct = jnp.asarray(rng.standard_normal((32, 56, 56, 64)).astype(np.float32))

    def loss(x, w, ct):
        return jnp.sum(conv(x, w) * ct)

    programs = {
        "conv3x3_forward": (jax.jit(conv), (x, w)),
        "conv3x3_input_grad": (jax.jit(jax.grad(loss, argnums=0)), (x, w, ct)),
        "conv3x3_filter_grad": (jax.jit(jax.grad(loss, argnums=1)), (x, w, ct)),
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
