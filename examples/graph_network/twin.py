#!/usr/bin/env python3
"""JAX twin of examples/graph_network: message passing on a random graph.

Two rounds of message passing (edge MLP on gathered sender and receiver features, segment_sum of
the messages into their receivers, divided by the degree, node MLP), a per-node regression head, and SGD steps on the
mean squared error. Writes oracle_small.json beside this file; `--size full` prints the full-size
figures instead.

    python3 examples/graph_network/twin.py [--size small|full]
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import oracle_io  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

SIZES = {"small": dict(nodes=24, edges=64, features=8, hidden=16, steps=3),
         "full": dict(nodes=10000, edges=100000, features=32, hidden=64, steps=3)}
ROUNDS, LEARNING_RATE = 2, 0.05


def dense(key, fan_in, fan_out):
    return {"w": jax.random.normal(key, (fan_in, fan_out)) / jnp.sqrt(fan_in), "b": jnp.zeros((fan_out,))}


def init(key, features, hidden):
    keys = jax.random.split(key, 2 * ROUNDS + 1)
    params = {}
    width = features
    for r in range(ROUNDS):
        params[f"edge{r}"] = dense(keys[2 * r], 2 * width + (features if r == 0 else hidden), hidden)
        params[f"node{r}"] = dense(keys[2 * r + 1], width + hidden, hidden)
        width = hidden
    params["head"] = dense(keys[-1], hidden, 1)
    return params


def apply(layer, x):
    return x @ layer["w"] + layer["b"]


def forward(params, nodes, edges, senders, receivers):
    n = nodes.shape[0]
    # Mean of the incoming messages: the sums of a high-degree node would grow with its degree.
    degree = jax.ops.segment_sum(jnp.ones_like(receivers, dtype=nodes.dtype), receivers, num_segments=n)
    for r in range(ROUNDS):
        inputs = jnp.concatenate([nodes[senders], nodes[receivers], edges], axis=-1)
        edges = jax.nn.relu(apply(params[f"edge{r}"], inputs))
        incoming = jax.ops.segment_sum(edges, receivers, num_segments=n) / jnp.maximum(degree, 1.0)[:, None]
        nodes = jax.nn.relu(apply(params[f"node{r}"], jnp.concatenate([nodes, incoming], axis=-1)))
    return apply(params["head"], nodes)[:, 0]


def loss_fn(params, nodes, edges, senders, receivers, targets):
    return jnp.mean((forward(params, nodes, edges, senders, receivers) - targets) ** 2)


def train_step(params, nodes, edges, senders, receivers, targets):
    loss, grads = jax.value_and_grad(loss_fn)(params, nodes, edges, senders, receivers, targets)
    return jax.tree.map(lambda p, g: p - LEARNING_RATE * g, params, grads), loss


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", choices=SIZES, default="small")
    args = parser.parse_args()
    s = SIZES[args.size]
    k_params, k_nodes, k_edges, k_send, k_recv, k_target = jax.random.split(jax.random.key(1), 6)
    params = init(k_params, s["features"], s["hidden"])
    nodes = jax.random.normal(k_nodes, (s["nodes"], s["features"]))
    edges = jax.random.normal(k_edges, (s["edges"], s["features"]))
    senders = jax.random.randint(k_send, (s["edges"],), 0, s["nodes"])
    receivers = jax.random.randint(k_recv, (s["edges"],), 0, s["nodes"])
    targets = jax.random.normal(k_target, (s["nodes"],))
    step = jax.jit(train_step)
    jax.block_until_ready((params, nodes, edges, senders, receivers, targets))  # the inputs are drawn before the timed call
    start = time.perf_counter()
    losses, p = [], params
    for _ in range(s["steps"]):
        p, loss = step(p, nodes, edges, senders, receivers, targets)
        losses.append(loss)
    jax.block_until_ready(p)
    first = time.perf_counter() - start
    if args.size == "full":
        times = []
        for _ in range(10):
            start = time.perf_counter()
            jax.block_until_ready(step(params, nodes, edges, senders, receivers, targets))
            times.append(time.perf_counter() - start)
        times.sort()
        print(f"graph_network full: first {s['steps']} steps {first * 1e3:.1f} ms, step median "
              f"{times[len(times) // 2] * 1e3:.3f} ms, final loss {float(losses[-1]):.6f}")
        return
    oracle_io.write(
        os.path.join(os.path.dirname(os.path.abspath(__file__)), "oracle_small.json"), s,
        {"nodes": nodes, "edges": edges, "senders": senders, "receivers": receivers,
         "targets": targets}, params,
        {"prediction": forward(params, nodes, edges, senders, receivers),
         "losses": jnp.stack(losses), "final_params": p})


if __name__ == "__main__":
    main()
