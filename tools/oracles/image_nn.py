#!/usr/bin/env python3
"""Writes the JAX oracle for weft::image::resize and weft::nn::group_norm:
tests/data/image_nn_oracle/cases.json.

tests/image_nn_test.cpp runs every case eagerly and under weft::jit on the device, and in the
reference interpreter on the graph jit traced, and compares with JAX on CPU. The build and the
tests never run this script; rerun it only to change the cases (pip install jax), and commit
the JSON it writes:

    python3 tools/oracles/image_nn.py

"fn": "resize" ("shape", "method": nearest or linear, "antialias") of args[0]; "group_norm"
("num_groups", "epsilon") of args[0] with scale args[1] and bias args[2] (flax.linen.GroupNorm's
computation, written out here as Flax writes it: fast variance, statistics over every axis but
the batch). "transform": "none", or "grad": the gradient of sum(fn(args...) * cotangent) (the
last arg) with respect to every other arg. Arrays are {"dtype", "shape", "values"}.
"""

import json
import os

import numpy as np

os.environ.setdefault("JAX_PLATFORMS", "cpu")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402

OUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "data",
                       "image_nn_oracle")
WEFT_NAMES = {np.dtype(np.int32): "i32", np.dtype(np.float32): "f32"}
rng = np.random.default_rng(3030)
CASES = []


def spec(a):
    a = np.asarray(a)
    values = a.reshape(-1).tolist()
    if a.dtype.kind == "i":
        values = [int(v) for v in values]
    else:
        values = [float(np.format_float_positional(np.float32(v), unique=True)) for v in values]
    return {"dtype": WEFT_NAMES[a.dtype], "shape": list(a.shape), "values": values}


def group_norm(x, scale, bias, num_groups, epsilon):
    """flax.linen.GroupNorm's computation (use_fast_variance=True, feature axis last)."""
    shape = x.shape
    g = x.reshape(shape[:-1] + (num_groups, shape[-1] // num_groups))
    axes = tuple(range(1, g.ndim - 2)) + (g.ndim - 1,)
    mean = jnp.mean(g, axes, keepdims=True)
    mean2 = jnp.mean(g * g, axes, keepdims=True)
    var = jnp.maximum(0.0, mean2 - mean * mean)
    y = ((g - mean) * lax.rsqrt(var + epsilon)).reshape(shape)
    return y * scale + bias


def case(name, fn, params, args, transform="none"):
    args = [np.asarray(a) for a in args]
    if fn == "resize":
        def call(x):
            return jax.image.resize(x, params["shape"], params["method"],
                                    antialias=params["antialias"])
    else:
        def call(x, s, b):
            return group_norm(x, s, b, params["num_groups"], params["epsilon"])
    if transform == "none":
        expected = [call(*args)]
    else:
        out = call(*args)
        ct = rng.standard_normal(out.shape).astype(np.float32)
        expected = list(jax.grad(lambda *a: jnp.sum(call(*a[:-1]) * a[-1]),
                                 argnums=tuple(range(len(args))))(*args, ct))
        args.append(ct)
    CASES.append({"name": name, "fn": fn, "params": params, "transform": transform,
                  "args": [spec(a) for a in args], "expected": [spec(e) for e in expected]})


def normal(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def main():
    for method in ("nearest", "linear"):
        case(f"{method}_up2x_nhwc", "resize", {"shape": [2, 8, 6, 3], "method": method,
                                               "antialias": True}, [normal(2, 4, 3, 3)])
        case(f"{method}_odd_scales", "resize", {"shape": [1, 7, 5, 2], "method": method,
                                                "antialias": True}, [normal(1, 3, 4, 2)])
        case(f"{method}_down", "resize", {"shape": [1, 3, 5, 2], "method": method,
                                          "antialias": True}, [normal(1, 8, 9, 2)])
        case(f"{method}_nchw_1d", "resize", {"shape": [2, 3, 11], "method": method,
                                             "antialias": True}, [normal(2, 3, 4)])
    case("linear_down_no_antialias", "resize", {"shape": [1, 3, 5, 2], "method": "linear",
                                                "antialias": False}, [normal(1, 8, 9, 2)])
    case("linear_int_image", "resize", {"shape": [1, 6, 4, 1], "method": "linear",
                                        "antialias": True},
         [rng.integers(0, 256, (1, 3, 2, 1)).astype(np.int32)])
    case("nearest_int_image", "resize", {"shape": [1, 6, 4, 1], "method": "nearest",
                                         "antialias": True},
         [rng.integers(0, 256, (1, 3, 2, 1)).astype(np.int32)])
    case("linear_up_grad", "resize", {"shape": [2, 7, 6, 3], "method": "linear",
                                      "antialias": True}, [normal(2, 4, 3, 3)], "grad")
    case("linear_down_grad", "resize", {"shape": [1, 3, 4, 2], "method": "linear",
                                        "antialias": True}, [normal(1, 7, 9, 2)], "grad")
    gn = {"num_groups": 4, "epsilon": 1e-6}
    case("group_norm_nhwc", "group_norm", gn, [normal(2, 5, 6, 8) * 3 + 1, normal(8), normal(8)])
    case("group_norm_one_group", "group_norm", {"num_groups": 1, "epsilon": 1e-5},
         [normal(3, 4, 6), normal(6), normal(6)])
    case("group_norm_per_feature", "group_norm", {"num_groups": 6, "epsilon": 1e-6},
         [normal(2, 3, 3, 6), normal(6), normal(6)])
    case("group_norm_grad", "group_norm", gn, [normal(2, 3, 4, 8) * 2, normal(8), normal(8)],
         "grad")
    os.makedirs(OUT_DIR, exist_ok=True)
    with open(os.path.join(OUT_DIR, "cases.json"), "w") as f:
        json.dump({"jax_version": jax.__version__, "cases": CASES}, f, separators=(",", ":"))
        f.write("\n")
    print(f"wrote {len(CASES)} cases")


if __name__ == "__main__":
    main()
