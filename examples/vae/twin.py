#!/usr/bin/env python3
"""JAX twin of examples/vae: a variational autoencoder trained on synthetic images.

Synthetic "digits" (a random bar pattern per image, then Bernoulli pixel noise), an MLP encoder
to the mean and log-variance, reparameterised sampling z = mu + exp(logvar / 2) * eps with eps
from jax.random.normal (a fresh key per step from split), an MLP decoder to pixel logits, and
SGD steps on the negative ELBO (sigmoid cross-entropy plus the KL term). Writes
oracle_small.json beside this file; `--size full` prints the full-size figures instead.

    python3 examples/vae/twin.py [--size small|full]
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import oracle_io  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

SIZES = {"small": dict(side=8, batch=8, hidden=16, latent=2, steps=3),
         "full": dict(side=28, batch=128, hidden=256, latent=16, steps=3)}
LEARNING_RATE = 0.01


def images(key, batch, side):
    """Each image lights one row and one column (a cross), with 5% of its pixels flipped."""
    k_row, k_col, k_noise = jax.random.split(key, 3)
    rows = jax.random.randint(k_row, (batch,), 0, side)
    cols = jax.random.randint(k_col, (batch,), 0, side)
    grid = jnp.arange(side)
    cross = (grid[None, :, None] == rows[:, None, None]) | (grid[None, None, :] == cols[:, None, None])
    flip = jax.random.bernoulli(k_noise, 0.05, (batch, side, side))
    return (cross ^ flip).astype(jnp.float32).reshape(batch, side * side)


def dense(key, fan_in, fan_out):
    return {"w": jax.random.normal(key, (fan_in, fan_out)) / jnp.sqrt(fan_in), "b": jnp.zeros((fan_out,))}


def init(key, pixels, hidden, latent):
    k = jax.random.split(key, 5)
    return {"enc": dense(k[0], pixels, hidden), "mu": dense(k[1], hidden, latent),
            "logvar": dense(k[2], hidden, latent), "dec": dense(k[3], latent, hidden),
            "out": dense(k[4], hidden, pixels)}


def apply(layer, x):
    return x @ layer["w"] + layer["b"]


def loss_fn(params, x, key):
    h = jax.nn.relu(apply(params["enc"], x))
    mu, logvar = apply(params["mu"], h), apply(params["logvar"], h)
    eps = jax.random.normal(key, mu.shape)
    z = mu + jnp.exp(0.5 * logvar) * eps
    logits = apply(params["out"], jax.nn.relu(apply(params["dec"], z)))
    # Sigmoid cross-entropy, written as optax writes it.
    bce = jnp.sum(jnp.maximum(logits, 0) - logits * x + jnp.log1p(jnp.exp(-jnp.abs(logits))), axis=-1)
    kl = -0.5 * jnp.sum(1 + logvar - mu**2 - jnp.exp(logvar), axis=-1)
    return jnp.mean(bce + kl)


def train_step(params, x, key):
    key, sample_key = jax.random.split(key)
    loss, grads = jax.value_and_grad(loss_fn)(params, x, sample_key)
    return jax.tree.map(lambda p, g: p - LEARNING_RATE * g, params, grads), key, loss


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", choices=SIZES, default="small")
    args = parser.parse_args()
    s = SIZES[args.size]
    k_params, k_data, k_train = jax.random.split(jax.random.key(3), 3)
    params = init(k_params, s["side"] ** 2, s["hidden"], s["latent"])
    x = images(k_data, s["batch"], s["side"])
    step = jax.jit(train_step)
    jax.block_until_ready((params, x, k_train))  # the inputs are drawn before the timed call
    start = time.perf_counter()
    losses, p, key = [], params, k_train
    for _ in range(s["steps"]):
        p, key, loss = step(p, x, key)
        losses.append(loss)
    jax.block_until_ready(p)
    first = time.perf_counter() - start
    if args.size == "full":
        times = []
        for _ in range(10):
            start = time.perf_counter()
            jax.block_until_ready(step(params, x, k_train))
            times.append(time.perf_counter() - start)
        times.sort()
        print(f"vae full: first {s['steps']} steps {first * 1e3:.1f} ms, step median "
              f"{times[len(times) // 2] * 1e3:.3f} ms, final loss {float(losses[-1]):.6f}")
        return
    oracle_io.write(os.path.join(os.path.dirname(os.path.abspath(__file__)), "oracle_small.json"), s,
                    {"images": x}, params, {"losses": jnp.stack(losses), "final_params": p})


if __name__ == "__main__":
    main()
