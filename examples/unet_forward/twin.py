#!/usr/bin/env python3
"""JAX twin of examples/unet_forward: a small diffusion U-Net's forward pass (jitted, no training).

Inputs: NHWC images (Gaussian) and integer timesteps in [0, 1000). The timestep becomes a
sinusoidal embedding (sin and cos of t times geometric frequencies), then an MLP (dense, SiLU,
dense). Each residual block is two "3x3 SAME conv -> group norm -> SiLU" blocks, with the time
embedding added per channel between them through a dense layer of its own, and a 1x1 conv on the
skip path when the channel count changes. The encoder has two levels: level 1 downsamples by a
stride-2 3x3 conv, level 2 by a 2x2 avg_pool (flax.linen.avg_pool); then a middle block; the
decoder upsamples with jax.image.resize(..., "nearest"), concatenates the encoder's skip
connection along the channel axis and runs a residual block per level; a group norm, SiLU and a
3x3 conv give the output channels (the predicted noise). Group norm is flax.linen.GroupNorm's
(fast variance, epsilon 1e-6), written out since flax is not needed here. The parameters are
drawn as one standard-normal vector, scaled per array, and passed to the jitted forward pass
raveled (one vector), which unravels them (see Normals).

Writes oracle_small.json beside this file; `--size full` prints the full-size figures instead
(batch 16, 64x64x3, 32/64 channels).

    python3 examples/unet_forward/twin.py [--size small|full]
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
from jax import lax  # noqa: E402

SIZES = {"small": dict(batch=2, side=16, channels=3, c1=8, c2=16, groups=4, tdim=16),
         "full": dict(batch=16, side=64, channels=3, c1=32, c2=64, groups=8, tdim=32)}
HIGHEST = lax.Precision.HIGHEST
EPS = 1e-6


class Normals:
    """Hands out consecutive slices of one vector as the parameters are made, in order. Drawing
    (scaled=True), the vector is standard normal and each slice is scaled as (n / div) * mul +
    shift; unravelling (scaled=False), the vector is the parameter tree raveled in that order
    (see ravel) and the slices are taken as they are. Built without a vector, it only counts."""

    def __init__(self, flat=None, scaled=True):
        self.flat = flat
        self.scaled = scaled
        self.used = 0

    def next(self, shape, div=1.0, mul=1.0, shift=0.0):
        n = math.prod(shape)
        self.used += n
        if self.flat is None:
            return jnp.zeros(shape)
        v = self.flat[self.used - n:self.used].reshape(shape)
        return (v / div) * mul + shift if self.scaled else v


def conv_params(normals, k, cin, cout):
    return {"w": normals.next((k, k, cin, cout), div=math.sqrt(k * k * cin)),
            "b": normals.next((cout,), mul=0.1)}


def norm_params(normals, c):
    return {"scale": normals.next((c,), mul=0.1, shift=1.0),
            "bias": normals.next((c,), mul=0.1)}


def dense_params(normals, cin, cout):
    return {"w": normals.next((cin, cout), div=math.sqrt(cin)),
            "b": normals.next((cout,), mul=0.1)}


def res_params(normals, cin, cout, tch):
    p = {"conv1": conv_params(normals, 3, cin, cout), "norm1": norm_params(normals, cout),
         "temb": dense_params(normals, tch, cout),
         "conv2": conv_params(normals, 3, cout, cout), "norm2": norm_params(normals, cout)}
    if cin != cout:
        p["skip"] = conv_params(normals, 1, cin, cout)
    return p


def make_params(normals, s):
    c1, c2, tdim = s["c1"], s["c2"], s["tdim"]
    tch = 4 * c1
    return {"time1": dense_params(normals, tdim, tch), "time2": dense_params(normals, tch, tch),
            "conv_in": conv_params(normals, 3, s["channels"], c1),
            "enc1": res_params(normals, c1, c1, tch), "down1": conv_params(normals, 3, c1, c1),
            "enc2": res_params(normals, c1, c2, tch),
            "mid": res_params(normals, c2, c2, tch),
            "dec2": res_params(normals, c2 + c2, c2, tch),
            "dec1": res_params(normals, c2 + c1, c1, tch),
            "norm_out": norm_params(normals, c1),
            "conv_out": conv_params(normals, 3, c1, s["channels"])}


def init(key, s):
    """The parameter tree, drawn as one standard-normal vector and scaled."""
    count = Normals()
    make_params(count, s)
    return make_params(Normals(jax.random.normal(key, (count.used,))), s)


def ravel(tree):
    """The arrays of a parameter tree as one vector, in the dicts' insertion order (the order
    make_params draws them and oracle_io writes them; jax.flatten_util.ravel_pytree would sort
    the keys)."""
    leaves = []

    def visit(node):
        for value in node.values():
            if isinstance(value, dict):
                visit(value)
            else:
                leaves.append(value.reshape(-1))
    visit(tree)
    return jnp.concatenate(leaves)


def conv(x, p, stride=1):
    y = lax.conv_general_dilated(x, p["w"], (stride, stride), "SAME",
                                 dimension_numbers=("NHWC", "HWIO", "NHWC"), precision=HIGHEST)
    return y + p["b"]


def dense(x, p):
    return jnp.dot(x, p["w"], precision=HIGHEST) + p["b"]


def silu(x):
    return x * jax.nn.sigmoid(x)


def group_norm(x, p, groups):
    """flax.linen.GroupNorm(num_groups=groups, epsilon=1e-6) on NHWC x."""
    b, h, w, c = x.shape
    g = x.reshape(b, h, w, groups, c // groups)
    mean = jnp.mean(g, axis=(1, 2, 4), keepdims=True)
    mean2 = jnp.mean(g * g, axis=(1, 2, 4), keepdims=True)
    var = jnp.maximum(0.0, mean2 - mean * mean)
    y = (g - mean) * lax.rsqrt(var + EPS)
    return y.reshape(b, h, w, c) * p["scale"] + p["bias"]


def timestep_embedding(t, dim):
    half = dim // 2
    freqs = jnp.exp(jnp.arange(half, dtype=jnp.float32) * (-math.log(10000.0) / half))
    args = t.astype(jnp.float32)[:, None] * freqs[None, :]
    return jnp.concatenate([jnp.sin(args), jnp.cos(args)], axis=1)


def res_block(x, temb, p, groups):
    h = silu(group_norm(conv(x, p["conv1"]), p["norm1"], groups))
    h = h + dense(silu(temb), p["temb"])[:, None, None, :]
    h = silu(group_norm(conv(h, p["conv2"]), p["norm2"], groups))
    skip = conv(x, p["skip"]) if "skip" in p else x
    return skip + h


def upsample(x):
    b, h, w, c = x.shape
    return jax.image.resize(x, (b, 2 * h, 2 * w, c), "nearest")


def unet(params, x, t, groups, tdim):
    emb = timestep_embedding(t, tdim)
    temb = dense(silu(dense(emb, params["time1"])), params["time2"])
    h = conv(x, params["conv_in"])
    skip1 = res_block(h, temb, params["enc1"], groups)                  # [B, S, S, c1]
    h = conv(skip1, params["down1"], stride=2)                           # [B, S/2, S/2, c1]
    skip2 = res_block(h, temb, params["enc2"], groups)                  # [B, S/2, S/2, c2]
    h = lax.reduce_window(skip2, 0.0, lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") / 4.0
    mid = res_block(h, temb, params["mid"], groups)                     # [B, S/4, S/4, c2]
    h = jnp.concatenate([upsample(mid), skip2], axis=-1)
    h = res_block(h, temb, params["dec2"], groups)                      # [B, S/2, S/2, c2]
    h = jnp.concatenate([upsample(h), skip1], axis=-1)
    h = res_block(h, temb, params["dec1"], groups)                      # [B, S, S, c1]
    out = conv(silu(group_norm(h, params["norm_out"], groups)), params["conv_out"])
    return emb, mid, out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", choices=SIZES, default="small")
    args = parser.parse_args()
    s = SIZES[args.size]
    k_params, k_images, k_times = jax.random.split(jax.random.key(29), 3)
    params = init(k_params, s)
    flat = ravel(params)
    x = jax.random.normal(k_images, (s["batch"], s["side"], s["side"], s["channels"]))
    t = jax.random.randint(k_times, (s["batch"],), 0, 1000)
    # The forward pass takes the raveled parameters and unravels them (as weft's program does).
    forward = jax.jit(lambda flat, x, t: unet(make_params(Normals(flat, scaled=False), s), x, t,
                                              s["groups"], s["tdim"]))
    jax.block_until_ready((flat, x, t))  # the inputs are drawn before the timed call
    start = time.perf_counter()
    emb, mid, out = jax.block_until_ready(forward(flat, x, t))
    first = time.perf_counter() - start
    if args.size == "full":
        times = []
        for _ in range(10):
            start = time.perf_counter()
            jax.block_until_ready(forward(flat, x, t))
            times.append(time.perf_counter() - start)
        times.sort()
        print(f"unet_forward full: first call {first * 1e3:.1f} ms, step median "
              f"{times[len(times) // 2] * 1e3:.3f} ms, "
              f"mean |out| {float(jnp.mean(jnp.abs(out))):.6f}")
        return
    oracle_io.write(os.path.join(os.path.dirname(os.path.abspath(__file__)), "oracle_small.json"),
                    s, {"images": x, "timesteps": t}, params,
                    {"embedding": emb, "mid": mid, "out": out})


if __name__ == "__main__":
    main()
