#!/usr/bin/env python3
"""JAX twin of examples/lstm_classifier: an LSTM text classifier with an embedding table.

Token ids index an embedding table (gather forward, scatter-add backward), an LSTM runs over
the sequence (lax.scan), the last hidden state gives class logits, and SGD steps minimise the
cross-entropy. Writes oracle_small.json beside this file; `--size full` prints the full-size
figures instead.

    python3 examples/lstm_classifier/twin.py [--size small|full]
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

SIZES = {"small": dict(vocab=50, embed=8, hidden=12, classes=3, batch=4, length=6, steps=3),
         "full": dict(vocab=20000, embed=128, hidden=256, classes=4, batch=64, length=64, steps=3)}
LEARNING_RATE = 0.5


def init(key, s):
    k = jax.random.split(key, 4)
    h = s["hidden"]
    return {"embedding": jax.random.normal(k[0], (s["vocab"], s["embed"])) * 0.1,
            "wx": jax.random.normal(k[1], (s["embed"], 4 * h)) / jnp.sqrt(s["embed"]),
            "wh": jax.random.normal(k[2], (h, 4 * h)) / jnp.sqrt(h),
            "b": jnp.zeros((4 * h,)),
            "wo": jax.random.normal(k[3], (h, s["classes"])) / jnp.sqrt(h),
            "bo": jnp.zeros((s["classes"],))}


def logits_fn(params, tokens):
    batch = tokens.shape[0]
    hidden = params["wh"].shape[0]
    xs = params["embedding"][tokens]  # [batch, length, embed]: a gather

    def cell(carry, x):
        h, c = carry
        z = x @ params["wx"] + h @ params["wh"] + params["b"]
        i, f, g, o = jnp.split(z, 4, axis=-1)
        c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
        h = jax.nn.sigmoid(o) * jnp.tanh(c)
        return (h, c), None

    zeros = jnp.zeros((batch, hidden))
    (h, _), _ = lax.scan(cell, (zeros, zeros), jnp.swapaxes(xs, 0, 1))
    return h @ params["wo"] + params["bo"]


def loss_fn(params, tokens, labels):
    logits = logits_fn(params, tokens)
    log_probs = jax.nn.log_softmax(logits)
    return -jnp.mean(jnp.sum(jax.nn.one_hot(labels, logits.shape[-1]) * log_probs, axis=-1))


def train_step(params, tokens, labels):
    loss, grads = jax.value_and_grad(loss_fn)(params, tokens, labels)
    return jax.tree.map(lambda p, g: p - LEARNING_RATE * g, params, grads), loss


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", choices=SIZES, default="small")
    args = parser.parse_args()
    s = SIZES[args.size]
    k_params, k_tokens, k_labels = jax.random.split(jax.random.key(2), 3)
    params = init(k_params, s)
    tokens = jax.random.randint(k_tokens, (s["batch"], s["length"]), 0, s["vocab"])
    labels = jax.random.randint(k_labels, (s["batch"],), 0, s["classes"])
    step = jax.jit(train_step)
    jax.block_until_ready((params, tokens, labels))  # the inputs are drawn before the timed call
    start = time.perf_counter()
    losses, p = [], params
    for _ in range(s["steps"]):
        p, loss = step(p, tokens, labels)
        losses.append(loss)
    jax.block_until_ready(p)
    first = time.perf_counter() - start
    if args.size == "full":
        times = []
        for _ in range(10):
            start = time.perf_counter()
            jax.block_until_ready(step(params, tokens, labels))
            times.append(time.perf_counter() - start)
        times.sort()
        print(f"lstm_classifier full: first {s['steps']} steps {first * 1e3:.1f} ms, step median "
              f"{times[len(times) // 2] * 1e3:.3f} ms, final loss {float(losses[-1]):.6f}")
        return
    oracle_io.write(
        os.path.join(os.path.dirname(os.path.abspath(__file__)), "oracle_small.json"), s,
        {"tokens": tokens, "labels": labels}, params,
        {"logits": logits_fn(params, tokens), "losses": jnp.stack(losses), "final_params": p})


if __name__ == "__main__":
    main()
