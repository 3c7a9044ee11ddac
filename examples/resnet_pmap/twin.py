#!/usr/bin/env python3
"""JAX twin of examples/resnet_pmap: a ResNet basic block with batch norm, trained data-parallel.

Synthetic images (NHWC, three channels): ten random binary templates, one per class, each image
its label's template plus Gaussian pixel noise; the batch is split over two devices (leading
axis). The model: a 3x3 SAME stem convolution with bias and ReLU, one basic block (3x3 conv,
batch norm, ReLU, 3x3 conv, batch norm, plus the identity shortcut, ReLU), global average pool, a
dense layer to 10 logits; softmax cross-entropy against one-hot labels. Batch norm uses the
whole batch's statistics across devices (cross-device batch norm: each device's mean and mean
square averaged with lax.pmean, as flax.linen.BatchNorm does with an axis_name). jax.pmap over
the devices (axis_name "i"; params replicated with in_axes None); as grad inside pmap
differentiates each device's loss, the loss and gradients are averaged with lax.pmean; SGD. Also
checks that the data-parallel steps equal the same steps on the whole batch on one device. Writes
oracle_small.json beside this file; `--size full` prints the full-size figures instead (2 x 64
images of 32x32x3, 32 channels).

    python3 examples/resnet_pmap/twin.py [--size small|full]
"""

import argparse
import os
import sys
import time

# Two CPU devices: set before JAX is imported.
os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                           " --xla_force_host_platform_device_count=2").strip()
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import oracle_io  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402
from jax.flatten_util import ravel_pytree  # noqa: E402

SIZES = {"small": dict(devices=2, batch=4, side=8, channels=8, steps=3),
         "full": dict(devices=2, batch=64, side=32, channels=32, steps=3)}
LEARNING_RATE = 0.1
EPS = 1e-5
HIGHEST = lax.Precision.HIGHEST


def images(key, devices, batch, side):
    """Each image is its label's binary template plus N(0, 0.3^2) noise, split over devices."""
    k_templates, k_labels, k_noise = jax.random.split(key, 3)
    n = devices * batch
    templates = (jax.random.uniform(k_templates, (10, side, side, 3)) > 0.7).astype(jnp.float32)
    labels = jax.random.randint(k_labels, (n,), 0, 10)
    noise = jax.random.normal(k_noise, (n, side, side, 3)) * 0.3
    x = templates[labels] + noise
    return x.reshape(devices, batch, side, side, 3), labels.reshape(devices, batch)


def init(key, c):
    k = jax.random.split(key, 4)
    return {"stem": {"w": jax.random.normal(k[0], (3, 3, 3, c)) / jnp.sqrt(27.0),
                     "b": jnp.zeros((c,))},
            "conv1": {"w": jax.random.normal(k[1], (3, 3, c, c)) / jnp.sqrt(9.0 * c)},
            "bn1": {"scale": jnp.ones((c,)), "bias": jnp.zeros((c,))},
            "conv2": {"w": jax.random.normal(k[2], (3, 3, c, c)) / jnp.sqrt(9.0 * c)},
            "bn2": {"scale": jnp.ones((c,)), "bias": jnp.zeros((c,))},
            "dense": {"w": jax.random.normal(k[3], (c, 10)) / jnp.sqrt(float(c)),
                      "b": jnp.zeros((10,))}}


def conv(x, w):
    return lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                    dimension_numbers=("NHWC", "HWIO", "NHWC"), precision=HIGHEST)


def batch_norm(x, bn, mean_of):
    """Normalises with the batch's statistics as flax.linen.BatchNorm does: the mean and mean
    square, averaged over the devices in one `mean_of` (lax.pmean; the identity when one device
    holds the whole batch), and the variance from them."""
    c = x.shape[-1]
    stats = mean_of(jnp.concatenate([jnp.mean(x, axis=(0, 1, 2)),
                                     jnp.mean(x * x, axis=(0, 1, 2))]))
    mean, mean2 = stats[:c], stats[c:]
    var = jnp.maximum(mean2 - mean * mean, 0.0)
    return (x - mean) * lax.rsqrt(var + EPS) * bn["scale"] + bn["bias"]


def loss_fn(params, x, labels, mean_of):
    h = jax.nn.relu(conv(x, params["stem"]["w"]) + params["stem"]["b"])
    y = jax.nn.relu(batch_norm(conv(h, params["conv1"]["w"]), params["bn1"], mean_of))
    y = batch_norm(conv(y, params["conv2"]["w"]), params["bn2"], mean_of)
    h = jax.nn.relu(y + h)
    pooled = jnp.mean(h, axis=(1, 2))
    logits = jnp.dot(pooled, params["dense"]["w"], precision=HIGHEST) + params["dense"]["b"]
    logp = jax.nn.log_softmax(logits)
    return -jnp.mean(jnp.sum(logp * jax.nn.one_hot(labels, 10), axis=-1))


def train_step(params, x, labels):
    """One device's part: its loss and gradient (grad inside pmap differentiates the sum of the
    devices' losses), gradients and loss averaged over the devices, SGD."""
    pmean = lambda v: lax.pmean(v, "i")  # noqa: E731
    loss, grads = jax.value_and_grad(loss_fn)(params, x, labels, pmean)
    # The loss and gradients averaged in one pmean of them raveled (as the weft program does).
    flat, unravel = ravel_pytree((loss, grads))
    loss, grads = unravel(pmean(flat))
    return jax.tree.map(lambda p, g: p - LEARNING_RATE * g, params, grads), loss


def whole_batch_step(params, x, labels):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, labels, lambda v: v)
    return jax.tree.map(lambda p, g: p - LEARNING_RATE * g, params, grads), loss


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", choices=SIZES, default="small")
    args = parser.parse_args()
    s = SIZES[args.size]
    assert jax.device_count() >= s["devices"], jax.devices()
    k_params, k_data = jax.random.split(jax.random.key(29))
    params = init(k_params, s["channels"])
    x, labels = images(k_data, s["devices"], s["batch"], s["side"])
    step = jax.pmap(train_step, axis_name="i", in_axes=(None, 0, 0))
    first_of = lambda tree: jax.tree.map(lambda a: a[0], tree)  # noqa: E731
    jax.block_until_ready((params, x, labels))  # the inputs are drawn before the timed call
    start = time.perf_counter()
    losses, p = [], params
    for _ in range(s["steps"]):
        stacked, loss = step(p, x, labels)
        # Every device holds the same parameters; the next step takes device 0's.
        p = first_of(stacked)
        losses.append(loss[0])
    jax.block_until_ready(p)
    first = time.perf_counter() - start
    if args.size == "full":
        times = []
        for _ in range(5):
            start = time.perf_counter()
            jax.block_until_ready(step(params, x, labels))
            times.append(time.perf_counter() - start)
        times.sort()
        print(f"resnet_pmap full: first {s['steps']} steps {first * 1e3:.1f} ms, step median "
              f"{times[len(times) // 2] * 1e3:.3f} ms, final loss {float(losses[-1]):.6f}")
        return
    # The data-parallel steps are the whole batch's steps on one device.
    whole = jax.jit(whole_batch_step)
    q = params
    flat_x = x.reshape((-1,) + x.shape[2:])
    for i in range(s["steps"]):
        q, loss = whole(q, flat_x, labels.reshape(-1))
        np.testing.assert_allclose(loss, losses[i], rtol=1e-5)
    for a, b in zip(jax.tree.leaves(q), jax.tree.leaves(p)):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)
    oracle_io.write(os.path.join(os.path.dirname(os.path.abspath(__file__)), "oracle_small.json"),
                    s, {"images": x, "labels": labels}, params,
                    {"losses": jnp.stack(losses), "final_params": p})


if __name__ == "__main__":
    main()
