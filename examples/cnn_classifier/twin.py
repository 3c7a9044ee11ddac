#!/usr/bin/env python3
"""JAX twin of examples/cnn_classifier: a small CNN trained on synthetic digits.

Synthetic "digits": ten random binary templates (one per class), each image its label's template
plus Gaussian pixel noise (NHWC, one channel). The model: 3x3 SAME convolution (HWIO filters) and
ReLU, 2x2 max pool (flax.linen.max_pool), a second convolution and pool, flatten, dropout
(jax.random.bernoulli keep mask, a fresh key per step from split), a dense layer to 10 logits;
softmax cross-entropy against one-hot labels, SGD. Writes oracle_small.json beside this file;
`--size full` prints the full-size figures instead (the issue's CNN training step: 28x28 images,
batch 128).

    python3 examples/cnn_classifier/twin.py [--size small|full]
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import oracle_io  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402

SIZES = {"small": dict(side=12, batch=8, c1=4, c2=8, steps=3),
         "full": dict(side=28, batch=128, c1=16, c2=32, steps=3)}
LEARNING_RATE = 0.05
KEEP = 0.75


def images(key, batch, side):
    """Each image is its label's binary template plus N(0, 0.3^2) noise."""
    k_templates, k_labels, k_noise = jax.random.split(key, 3)
    templates = (jax.random.uniform(k_templates, (10, side, side, 1)) > 0.7).astype(jnp.float32)
    labels = jax.random.randint(k_labels, (batch,), 0, 10)
    noise = jax.random.normal(k_noise, (batch, side, side, 1)) * 0.3
    return templates[labels] + noise, labels


def init(key, side, c1, c2):
    k = jax.random.split(key, 3)
    flat = (side // 4) * (side // 4) * c2
    return {"conv1": {"w": jax.random.normal(k[0], (3, 3, 1, c1)) / 3.0, "b": jnp.zeros((c1,))},
            "conv2": {"w": jax.random.normal(k[1], (3, 3, c1, c2)) / jnp.sqrt(9.0 * c1),
                      "b": jnp.zeros((c2,))},
            "dense": {"w": jax.random.normal(k[2], (flat, 10)) / jnp.sqrt(flat),
                      "b": jnp.zeros((10,))}}


def conv(x, layer):
    y = lax.conv_general_dilated(x, layer["w"], (1, 1), "SAME",
                                 dimension_numbers=("NHWC", "HWIO", "NHWC"),
                                 precision=lax.Precision.HIGHEST)
    return y + layer["b"]


def max_pool(x):
    """flax.linen.max_pool(x, (2, 2), strides=(2, 2)), written as Flax writes it."""
    return lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")


def loss_fn(params, x, labels, key):
    h = max_pool(jax.nn.relu(conv(x, params["conv1"])))
    h = max_pool(jax.nn.relu(conv(h, params["conv2"])))
    h = h.reshape(h.shape[0], -1)
    keep = jax.random.bernoulli(key, KEEP, h.shape)
    h = jnp.where(keep, h / KEEP, 0.0)
    logits = jnp.dot(h, params["dense"]["w"], precision=lax.Precision.HIGHEST) + params["dense"]["b"]
    logp = jax.nn.log_softmax(logits)
    return -jnp.mean(jnp.sum(logp * jax.nn.one_hot(labels, 10), axis=-1))


def train_step(params, x, labels, key):
    key, drop_key = jax.random.split(key)
    loss, grads = jax.value_and_grad(loss_fn)(params, x, labels, drop_key)
    return jax.tree.map(lambda p, g: p - LEARNING_RATE * g, params, grads), key, loss


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", choices=SIZES, default="small")
    args = parser.parse_args()
    s = SIZES[args.size]
    k_params, k_data, k_train = jax.random.split(jax.random.key(29), 3)
    params = init(k_params, s["side"], s["c1"], s["c2"])
    x, labels = images(k_data, s["batch"], s["side"])
    step = jax.jit(train_step)
    jax.block_until_ready((params, x, labels, k_train))  # the inputs are drawn before the timed call
    start = time.perf_counter()
    losses, p, key = [], params, k_train
    for _ in range(s["steps"]):
        p, key, loss = step(p, x, labels, key)
        losses.append(loss)
    jax.block_until_ready(p)
    first = time.perf_counter() - start
    if args.size == "full":
        times = []
        for _ in range(10):
            start = time.perf_counter()
            jax.block_until_ready(step(params, x, labels, k_train))
            times.append(time.perf_counter() - start)
        times.sort()
        print(f"cnn_classifier full: first {s['steps']} steps {first * 1e3:.1f} ms, step median "
              f"{times[len(times) // 2] * 1e3:.3f} ms, final loss {float(losses[-1]):.6f}")
        return
    oracle_io.write(os.path.join(os.path.dirname(os.path.abspath(__file__)), "oracle_small.json"),
                    s, {"images": x, "labels": labels}, params,
                    {"losses": jnp.stack(losses), "final_params": p})


if __name__ == "__main__":
    main()
