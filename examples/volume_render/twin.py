#!/usr/bin/env python3
"""JAX twin of examples/volume_render: a NeRF-style volume renderer.

Rays through a density and colour field given by a small MLP; stratified random samples along
each ray (jax.random.uniform), alpha compositing with the transmittance as an exclusive cumprod,
and one training step (grad of the photometric loss). Writes oracle_small.json beside this file
(CTest checks the C++ example against it); `--size full` prints the full-size figures instead.

    python3 examples/volume_render/twin.py [--size small|full]
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import oracle_io  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

SIZES = {"small": dict(rays=64, samples=16, hidden=32), "full": dict(rays=4096, samples=64, hidden=64)}
NEAR, FAR, LEARNING_RATE = 2.0, 6.0, 0.1


def init(key, hidden):
    k1, k2, k3, k4 = jax.random.split(key, 4)
    return {"w1": jax.random.normal(k1, (3, hidden)) * 0.5, "b1": jax.random.normal(k2, (hidden,)) * 0.1,
            "w2": jax.random.normal(k3, (hidden, 4)) * (1.0 / hidden**0.5),
            "b2": jax.random.normal(k4, (4,)) * 0.1}


def rays(key, n):
    k1, k2 = jax.random.split(key)
    origins = jax.random.uniform(k1, (n, 3), minval=-1.0, maxval=1.0) + jnp.array([0.0, 0.0, -4.0])
    dirs = jax.random.normal(k2, (n, 3)) * 0.1 + jnp.array([0.0, 0.0, 1.0])
    dirs = dirs / jnp.linalg.norm(dirs, axis=-1, keepdims=True)
    return origins, dirs


def render(params, origins, dirs, key, samples):
    n = origins.shape[0]
    edges = jnp.linspace(NEAR, FAR, samples + 1)
    lower, upper = edges[:-1], edges[1:]
    u = jax.random.uniform(key, (n, samples))
    t = lower + (upper - lower) * u  # one stratified sample per bin
    points = origins[:, None, :] + t[..., None] * dirs[:, None, :]
    h = jnp.tanh(points @ params["w1"] + params["b1"])
    out = h @ params["w2"] + params["b2"]
    sigma = jax.nn.softplus(out[..., 0])
    rgb = jax.nn.sigmoid(out[..., 1:])
    delta = jnp.concatenate([t[:, 1:] - t[:, :-1], jnp.full((n, 1), 1e10)], axis=-1)
    alpha = 1.0 - jnp.exp(-sigma * delta)
    transmittance = jnp.cumprod(1.0 - alpha + 1e-10, axis=-1)
    transmittance = jnp.concatenate([jnp.ones((n, 1)), transmittance[:, :-1]], axis=-1)
    weights = alpha * transmittance
    color = jnp.sum(weights[..., None] * rgb, axis=1)
    depth = jnp.sum(weights * t, axis=-1)
    return color, depth


def loss_fn(params, origins, dirs, key, target, samples):
    color, _ = render(params, origins, dirs, key, samples)
    return jnp.mean((color - target) ** 2)


def train_step(params, origins, dirs, key, target, samples):
    loss, grads = jax.value_and_grad(loss_fn)(params, origins, dirs, key, target, samples)
    return jax.tree.map(lambda p, g: p - LEARNING_RATE * g, params, grads), loss, grads


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", choices=SIZES, default="small")
    args = parser.parse_args()
    sizes = SIZES[args.size]
    key = jax.random.key(0)
    k_params, k_rays, k_target, k_samples = jax.random.split(key, 4)
    params = init(k_params, sizes["hidden"])
    origins, dirs = rays(k_rays, sizes["rays"])
    target = jax.random.uniform(k_target, (sizes["rays"], 3))
    step = jax.jit(train_step, static_argnums=5)
    jax.block_until_ready((params, origins, dirs, target))  # the inputs are drawn before the timed call
    start = time.perf_counter()
    new_params, loss, grads = step(params, origins, dirs, k_samples, target, sizes["samples"])
    jax.block_until_ready(new_params)
    first = time.perf_counter() - start
    if args.size == "full":
        times = []
        for _ in range(20):
            start = time.perf_counter()
            jax.block_until_ready(step(params, origins, dirs, k_samples, target, sizes["samples"]))
            times.append(time.perf_counter() - start)
        times.sort()
        print(f"volume_render full: first call {first * 1e3:.1f} ms, step median "
              f"{times[len(times) // 2] * 1e3:.3f} ms, loss {float(loss):.6f}")
        return
    color, depth = render(params, origins, dirs, k_samples, sizes["samples"])
    oracle_io.write(
        os.path.join(os.path.dirname(os.path.abspath(__file__)), "oracle_small.json"), sizes,
        {"origins": origins, "dirs": dirs, "target": target}, params,
        {"color": color, "depth": depth, "loss": loss, "grads": grads, "new_params": new_params})


if __name__ == "__main__":
    main()
