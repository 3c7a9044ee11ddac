#!/usr/bin/env python3
"""JAX twin of examples/decoder: autoregressive decoding with a KV cache and top-k sampling.

A one-layer transformer decoder (token and position embeddings, single-head causal attention
over a key/value cache, an MLP block, tied output embedding) with its weights in bf16 (the
activations follow: bf16 matmuls, f32 softmax and logits). A lax.while_loop generates tokens
one at a time: each step writes its key and value into the cache (dynamic_update_slice), keeps
the k most likely next tokens (lax.top_k) and samples one of them (jax.random.categorical, a key
folded in per step). Writes oracle_small.json beside this file; `--size full` prints the
full-size figures instead.

    python3 examples/decoder/twin.py [--size small|full]
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

SIZES = {"small": dict(vocab=64, model=16, mlp=32, max_len=12, prompt=3, top_k=5),
         "full": dict(vocab=32000, model=512, mlp=2048, max_len=128, prompt=8, top_k=20)}
bf16 = jnp.bfloat16


def init(key, s):
    k = jax.random.split(key, 7)
    d = s["model"]

    def w(key, shape, fan_in):
        return (jax.random.normal(key, shape) / jnp.sqrt(fan_in)).astype(bf16)

    return {"embedding": w(k[0], (s["vocab"], d), 1.0), "position": w(k[1], (s["max_len"], d), 4.0),
            "wq": w(k[2], (d, d), d), "wk": w(k[3], (d, d), d), "wv": w(k[4], (d, d), d),
            "w_up": w(k[5], (d, s["mlp"]), d), "w_down": w(k[6], (s["mlp"], d), s["mlp"])}


def rms_norm(x):
    x32 = x.astype(jnp.float32)
    return (x32 * lax.rsqrt(jnp.mean(x32 * x32, axis=-1, keepdims=True) + 1e-6)).astype(bf16)


def step_logits(params, token, position, cache_k, cache_v):
    """Logits for the next token after `token` at `position`, and the updated cache."""
    x = params["embedding"][token] + params["position"][position]
    h = rms_norm(x)
    q, k, v = h @ params["wq"], h @ params["wk"], h @ params["wv"]
    cache_k = lax.dynamic_update_slice(cache_k, k[None, :], (position, 0))
    cache_v = lax.dynamic_update_slice(cache_v, v[None, :], (position, 0))
    scores = (cache_k @ q).astype(jnp.float32) / jnp.sqrt(jnp.float32(q.shape[0]))
    visible = jnp.arange(cache_k.shape[0]) <= position
    scores = jnp.where(visible, scores, -jnp.inf)
    attention = jax.nn.softmax(scores).astype(bf16)
    x = x + attention @ cache_v
    x = x + jax.nn.gelu(rms_norm(x) @ params["w_up"]) @ params["w_down"]
    logits = (rms_norm(x) @ params["embedding"].T).astype(jnp.float32)
    return logits, cache_k, cache_v


def generate(params, prompt, key, max_len, top_k):
    d = params["wq"].shape[0]
    tokens = jnp.zeros((max_len,), jnp.int32).at[: prompt.shape[0]].set(prompt)
    cache = jnp.zeros((max_len, d), bf16)

    def cond(state):
        return state[0] < max_len - 1

    def body(state):
        position, tokens, cache_k, cache_v, last_logits = state
        logits, cache_k, cache_v = step_logits(params, tokens[position], position, cache_k, cache_v)
        values, indices = lax.top_k(logits, top_k)
        choice = jax.random.categorical(jax.random.fold_in(key, position), values)
        sampled = indices[choice]
        # Inside the prompt the next token is given; after it, the sample is.
        following = jnp.where(position + 1 < prompt.shape[0], tokens[position + 1], sampled)
        tokens = tokens.at[position + 1].set(following)
        return position + 1, tokens, cache_k, cache_v, logits

    state = (jnp.int32(0), tokens, cache, cache, jnp.zeros((params["embedding"].shape[0],)))
    _, tokens, _, _, last_logits = lax.while_loop(cond, body, state)
    return tokens, last_logits


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", choices=SIZES, default="small")
    args = parser.parse_args()
    s = SIZES[args.size]
    k_params, k_prompt, k_sample = jax.random.split(jax.random.key(4), 3)
    params = init(k_params, s)
    prompt = jax.random.randint(k_prompt, (s["prompt"],), 0, s["vocab"])
    run = jax.jit(generate, static_argnums=(3, 4))
    jax.block_until_ready((params, prompt))  # the inputs are drawn before the timed call
    start = time.perf_counter()
    tokens, last_logits = run(params, prompt, k_sample, s["max_len"], s["top_k"])
    jax.block_until_ready(tokens)
    first = time.perf_counter() - start
    if args.size == "full":
        times = []
        for _ in range(5):
            start = time.perf_counter()
            jax.block_until_ready(run(params, prompt, k_sample, s["max_len"], s["top_k"]))
            times.append(time.perf_counter() - start)
        times.sort()
        print(f"decoder full: first call {first * 1e3:.1f} ms, {s['max_len']} tokens median "
              f"{times[len(times) // 2] * 1e3:.3f} ms")
        return
    logits0, _, _ = step_logits(params, prompt[0], 0, jnp.zeros((s["max_len"], s["model"]), bf16),
                                jnp.zeros((s["max_len"], s["model"]), bf16))
    oracle_io.write(os.path.join(os.path.dirname(os.path.abspath(__file__)), "oracle_small.json"), s,
                    {"prompt": prompt}, params,
                    {"tokens": tokens, "last_logits": last_logits, "first_logits": logits0})


if __name__ == "__main__":
    main()
