#!/usr/bin/env python3
"""JAX twin of bench/cold_start/logistic_regression.cpp: the same data, loss, loop and prints.

Prints the weights as the weft program does, then one line `first_call_s S import_s S`: the
first call of the jitted training function (trace, compile and run, result on the host) and
the import of jax before it. bench/cold_start.sh runs it in a fresh process.
"""
import math
import time

t0 = time.perf_counter()
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import_s = time.perf_counter() - t0

N, D, STEPS, LEARNING_RATE = 256, 8, 100, 0.5
TRUE_W = [1.5, -2.0, 0.5, 0.0, 1.0, -0.5, 2.0, -1.0]


def data():
    raw = np.empty((N, D), np.float32)
    labels = np.empty((N,), np.float32)
    for i in range(N):
        z = np.float32(0)
        for j in range(D):
            raw[i, j] = np.float32(((i * 7 + j * 13 + i * j) % 17 - 8) / 8.0)  # exact
            z = np.float32(z + np.float32(TRUE_W[j]) * raw[i, j])
        labels[i] = 1.0 if z > 0 else 0.0
    return raw, labels


def logit(w, b, xi):
    return jnp.sum(w * xi) + b


def loss(w, b, x, y):
    z = jax.vmap(logit, in_axes=(None, None, 0))(w, b, x)
    return jnp.mean(jnp.log1p(jnp.exp(-jnp.abs(z))) + jnp.maximum(z, 0.0) - y * z)


@jax.jit
def train(w0, b0, xs, ys):
    def body(i, p):
        w, b = p
        gw, gb = jax.grad(loss, argnums=(0, 1))(w, b, xs, ys)
        jax.lax.cond(i % 25 == 0,
                     lambda: jax.debug.print("step {} loss {}", i, loss(w, b, xs, ys), ordered=True),
                     lambda: None)
        return (w - LEARNING_RATE * gw, b - LEARNING_RATE * gb)
    return jax.lax.fori_loop(0, STEPS, body, (w0, b0))


def main():
    raw, labels = data()
    x = jnp.asarray(raw)
    y = jnp.asarray(labels)
    mean = jnp.mean(x, axis=0)
    centered = x - mean
    x = centered / jnp.sqrt(jnp.mean(centered * centered, axis=0) + 1e-6)
    x.block_until_ready()
    start = time.perf_counter()
    w, b = train(jnp.zeros((D,), jnp.float32), jnp.zeros((), jnp.float32), x, y)
    weights = np.asarray(w)
    first_call_s = time.perf_counter() - start
    print("w = " + " ".join("%.5f" % v for v in weights))
    print("b = %.5f" % float(b))
    print("first_call_s %.4f import_s %.4f" % (first_call_s, import_s))


if __name__ == "__main__":
    main()
