#!/usr/bin/env python3
"""JAX twin of examples/gp_regression: Gaussian-process regression with a learned RBF kernel.

Noisy samples of sin(2x) at uniform random points; an RBF kernel k(a, b) = s^2 exp(-(a - b)^2 /
(2 l^2)) plus noise^2 on the diagonal, its three log-scales the parameters; the negative log
marginal likelihood through the Cholesky factor L (0.5 |L^-1 y|^2 + sum log diag L + n/2 log
2 pi, with jax.scipy.linalg.solve_triangular) minimised by gradient descent; then the posterior
mean at test points (cho_solve). Writes oracle_small.json beside this file; `--size full`
prints the full-size figures instead.

    python3 examples/gp_regression/twin.py [--size small|full]
"""

import argparse
import math
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import oracle_io  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import jax.scipy.linalg as jsl  # noqa: E402

SIZES = {"small": dict(points=24, tests=8, steps=3), "full": dict(points=1024, tests=256, steps=3)}
LEARNING_RATE = 0.5  # divided by the number of points: the loss grows with it


def data(key, points, tests):
    k_x, k_noise, k_test = jax.random.split(key, 3)
    x = jax.random.uniform(k_x, (points,), minval=-3.0, maxval=3.0)
    y = jnp.sin(2.0 * x) + 0.1 * jax.random.normal(k_noise, (points,))
    x_test = jax.random.uniform(k_test, (tests,), minval=-3.0, maxval=3.0)
    return x, y, x_test


def rbf(a, b, log_scale, log_length):
    d = a[:, None] - b[None, :]
    return jnp.exp(2.0 * log_scale) * jnp.exp(-0.5 * d * d / jnp.exp(2.0 * log_length))


def factor(params, x):
    k = rbf(x, x, params[0], params[1]) + jnp.exp(2.0 * params[2]) * jnp.eye(x.shape[0])
    return jnp.linalg.cholesky(k)


def nll(params, x, y):
    L = factor(params, x)
    v = jsl.solve_triangular(L, y, lower=True)
    return (0.5 * jnp.dot(v, v) + jnp.sum(jnp.log(jnp.diag(L)))
            + 0.5 * x.shape[0] * math.log(2 * math.pi))


def train_step(params, x, y):
    loss, g = jax.value_and_grad(nll)(params, x, y)
    return params - (LEARNING_RATE / x.shape[0]) * g, loss


def predict(params, x, y, x_test):
    L = factor(params, x)
    alpha = jsl.cho_solve((L, True), y)
    return rbf(x_test, x, params[0], params[1]) @ alpha


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", choices=SIZES, default="small")
    args = parser.parse_args()
    s = SIZES[args.size]
    x, y, x_test = data(jax.random.key(31), s["points"], s["tests"])
    params = jnp.array([0.0, -0.5, -1.5], dtype=jnp.float32)
    step = jax.jit(train_step)
    predict_fn = jax.jit(predict)
    jax.block_until_ready((x, y, x_test, params))  # the inputs are drawn before the timed call
    start = time.perf_counter()
    losses, p = [], params
    for _ in range(s["steps"]):
        p, loss = step(p, x, y)
        losses.append(loss)
    mean = predict_fn(p, x, y, x_test)
    jax.block_until_ready(mean)
    first = time.perf_counter() - start
    if args.size == "full":
        times = []
        for _ in range(10):
            start = time.perf_counter()
            jax.block_until_ready(step(params, x, y))
            times.append(time.perf_counter() - start)
        times.sort()
        print(f"gp_regression full: first {s['steps']} steps and a prediction {first * 1e3:.1f} ms, "
              f"step median {times[len(times) // 2] * 1e3:.3f} ms, final loss {float(losses[-1]):.6f}")
        return
    oracle_io.write(os.path.join(os.path.dirname(os.path.abspath(__file__)), "oracle_small.json"),
                    s, {"x": x, "y": y, "x_test": x_test}, {"log_scales": params},
                    {"losses": jnp.stack(losses), "final_params.log_scales": p, "mean": mean})


if __name__ == "__main__":
    main()
