#!/usr/bin/env python3
"""Writes the JAX oracle for the windowed reductions and pooling: tests/data/windows_oracle/cases.json.

tests/windows_test.cpp runs every case eagerly and under weft::jit on the device, and in the
reference interpreter on the graph jit traced, and compares with what JAX computed here on CPU.
The build and the tests never run this script; rerun it only to change the cases
(pip install jax), and commit the JSON it writes:

    python3 tools/oracles/windows.py

"cases": one primitive ("op": reduce_window_sum, reduce_window_max, reduce_window_min,
select_and_gather_add, select_and_scatter_add) with "attrs" named as weft's IR text names them
(padding as padding_low and padding_high; select_prim "ge" or "le"), on "args", under a
"transform": "none"; "grad": the gradient of sum(op(args[:-1]) * args[-1]) with respect to
"argnums"; "grad_grad": for a one-operand op on args [x, w, v], the gradient with respect to w
of sum(grad_x(sum(op(x) * w)) * v); "vmap_grad": grad_x(sum(op(x) * w)) on args [x, w], vmapped
over "in_axes"; "jvp": the op's value and tangent at args[:n] along args[n:] (every argument a float
primal); "vmap": vmapped over "in_axes" (null: not batched). "expected" lists the results.
"pool_cases": flax.linen.max_pool / avg_pool (their definitions are copied below, flax not being
a dependency) with "params" (window_shape, strides, padding: "SAME", "VALID" or [lo, hi] pairs,
count_include_pad), under "none" or "grad" (of sum(pool(x) * w) with respect to x).
Arrays are {"dtype", "shape", "values"} with weft's dtype names; non-finite floats are "nan",
"inf", "-inf".
"""

import json
import math
import os

import numpy as np

os.environ.setdefault("JAX_PLATFORMS", "cpu")
import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402
from jax._src.lax import windowed_reductions as wr  # noqa: E402

OUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "data",
                       "windows_oracle")
WEFT_NAMES = {np.dtype(np.int32): "i32", np.dtype(np.uint8): "u8", np.dtype(np.float16): "f16",
              np.dtype(np.float32): "f32", np.dtype(np.float64): "f64"}


def value(v):
    if isinstance(v, (int, np.integer)):
        return int(v)
    v = float(v)
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v


def spec(a):
    a = np.asarray(a)
    return {"dtype": WEFT_NAMES[a.dtype], "shape": list(a.shape),
            "values": [value(v) for v in a.reshape(-1).tolist()]}


def window_attrs(rank, window_dimensions, window_strides=None, padding=None, base_dilation=None,
                 window_dilation=None):
    padding = padding or [(0, 0)] * rank
    return {"window_dimensions": list(window_dimensions),
            "window_strides": list(window_strides or [1] * rank),
            "padding_low": [lo for lo, _ in padding], "padding_high": [hi for _, hi in padding],
            "base_dilation": list(base_dilation or [1] * rank),
            "window_dilation": list(window_dilation or [1] * rank)}


def op_call(op, attrs):
    dims = tuple(attrs["window_dimensions"])
    strides = tuple(attrs["window_strides"])
    padding = tuple(zip(attrs["padding_low"], attrs["padding_high"]))
    base = tuple(attrs.get("base_dilation", [1] * len(dims)))
    wdil = tuple(attrs.get("window_dilation", [1] * len(dims)))
    if op.startswith("reduce_window_"):
        fn = {"reduce_window_sum": wr._reduce_window_sum, "reduce_window_max": wr._reduce_window_max,
              "reduce_window_min": wr._reduce_window_min}[op]
        return lambda x: fn(x, dims, strides, padding, base, wdil)
    select = lax.ge_p if attrs["select_prim"] == "ge" else lax.le_p
    if op == "select_and_gather_add":
        return lambda t, x: wr._select_and_gather_add(t, x, select, dims, strides, padding, base,
                                                      wdil)
    return lambda s, x: wr._select_and_scatter_add(s, x, select, dims, strides, padding)


CASES = []


def case(name, op, attrs, args, transform="none", argnums=None, in_axes=None):
    call = op_call(op, attrs)
    args = [np.asarray(a) for a in args]
    if transform == "none":
        expected = [call(*args)]
    elif transform == "grad":
        def loss(*xs):
            return jnp.sum(call(*xs[:-1]) * xs[-1])
        expected = list(jax.grad(loss, argnums=tuple(argnums))(*args))
    elif transform == "grad_grad":
        # The gradient with respect to w (args[-2]) of sum(grad_x(sum(op(x) * w)) * v): the
        # transposes of the gradient's own ops.
        def inner(x, w):
            return jax.grad(lambda x: jnp.sum(call(x) * w))(x)
        expected = [jax.grad(lambda x, w, v: jnp.sum(inner(x, w) * v), argnums=1)(*args)]
    elif transform == "vmap_grad":
        def per_example(x, w):
            return jax.grad(lambda x: jnp.sum(call(x) * w))(x)
        expected = [jax.vmap(per_example, in_axes=tuple(in_axes))(*args)]
    elif transform == "jvp":
        n = len(args) // 2
        out, tangent = jax.jvp(call, tuple(args[:n]), tuple(args[n:]))
        expected = [out, tangent]
    else:
        expected = [jax.vmap(call, in_axes=tuple(in_axes))(*args)]
    c = {"name": name, "op": op, "attrs": attrs, "transform": transform,
         "args": [spec(a) for a in args], "expected": [spec(e) for e in expected]}
    if argnums is not None:
        c["argnums"] = argnums
    if in_axes is not None:
        c["in_axes"] = in_axes
    CASES.append(c)


# flax.linen.pooling's pool: inputs [batch..., spatial..., features]; the batch axes and the
# features get windows of 1, stride 1 and no padding (flax adds a batch axis when there is none).
def flax_pool(inputs, init, reduce_fn, window_shape, strides, padding):
    num_batch_dims = inputs.ndim - (len(window_shape) + 1)
    strides = strides or (1,) * len(window_shape)
    assert len(window_shape) == len(strides), (window_shape, strides)
    strides = (1,) * num_batch_dims + strides + (1,)
    dims = (1,) * num_batch_dims + window_shape + (1,)
    if not isinstance(padding, str):
        padding = tuple(map(tuple, padding))
        assert len(padding) == len(window_shape), (padding, window_shape)
        padding = ((0, 0),) * num_batch_dims + padding + ((0, 0),)
    return lax.reduce_window(inputs, init, reduce_fn, dims, strides, padding)


def flax_avg_pool(inputs, window_shape, strides=None, padding="VALID", count_include_pad=True):
    y = flax_pool(inputs, 0.0, lax.add, window_shape, strides, padding)
    if count_include_pad:
        y = y / np.prod(window_shape)
    else:
        div_shape = inputs.shape[:-1] + (1,)
        if len(div_shape) - 2 == len(window_shape):
            div_shape = (1,) + div_shape[1:]
        y = y / flax_pool(jnp.ones(div_shape, inputs.dtype), 0.0, lax.add, window_shape, strides,
                          padding)
    return y


def flax_max_pool(inputs, window_shape, strides=None, padding="VALID"):
    return flax_pool(inputs, -jnp.inf, lax.max, window_shape, strides, padding)


POOL_CASES = []


def pool_case(name, fn, params, args, transform="none"):
    window = tuple(params["window_shape"])
    strides = tuple(params["strides"]) if params.get("strides") else None
    padding = params.get("padding", "VALID")

    def call(x):
        if fn == "max_pool":
            return flax_max_pool(x, window, strides, padding)
        return flax_avg_pool(x, window, strides, padding, params.get("count_include_pad", True))

    args = [np.asarray(a) for a in args]
    if transform == "none":
        expected = [call(args[0])]
    else:
        expected = [jax.grad(lambda x, w: jnp.sum(call(x) * w))(*args)]
    POOL_CASES.append({"name": name, "fn": fn, "params": params, "transform": transform,
                       "args": [spec(a) for a in args], "expected": [spec(e) for e in expected]})


def main():
    rng = np.random.default_rng(29)

    def f32(*shape):
        return rng.standard_normal(shape).astype(np.float32)

    def ties(*shape):  # few distinct values: many ties in every window
        return rng.integers(0, 3, shape).astype(np.float32)

    def out_of(op, attrs, x):
        return np.asarray(op_call(op, attrs)(x))

    # Forward: every rank, strides, padding (negative too), dilations, layouts, dtypes.
    a1 = window_attrs(1, [3], [2], [(1, 2)])
    case("sum_1d_strided_padded", "reduce_window_sum", a1, [f32(10)])
    a1d = window_attrs(1, [2], [1], [(0, 1)], [2], [2])
    case("max_1d_dilated", "reduce_window_max", a1d, [f32(9)])
    case("sum_1d_negative_padding", "reduce_window_sum", window_attrs(1, [2], [1], [(-1, 1)]),
         [f32(8)])
    nhwc = window_attrs(4, [1, 3, 3, 1], [1, 2, 2, 1], [(0, 0), (1, 1), (1, 1), (0, 0)])
    case("max_2d_nhwc", "reduce_window_max", nhwc, [f32(2, 6, 7, 3)])
    nchw = window_attrs(4, [1, 1, 2, 3], [1, 1, 2, 1], [(0, 0), (0, 0), (0, 1), (1, 1)])
    case("min_2d_nchw", "reduce_window_min", nchw, [f32(2, 3, 6, 7)])
    case("sum_2d_nchw", "reduce_window_sum", nchw, [f32(2, 3, 6, 7)])
    a3 = window_attrs(5, [1, 2, 2, 2, 1], [1, 2, 1, 2, 1], None, None, [1, 1, 2, 1, 1])
    case("sum_3d_window_dilation", "reduce_window_sum", a3, [f32(2, 4, 5, 6, 2)])
    case("max_3d", "reduce_window_max", window_attrs(3, [2, 2, 2], [1, 2, 2], [(1, 0)] * 3),
         [f32(4, 5, 5)])
    based = window_attrs(2, [2, 3], [1, 2], [(1, 1), (0, 2)], [2, 2])
    case("max_2d_base_dilation", "reduce_window_max", based, [f32(4, 5)])
    case("sum_2d_base_dilation", "reduce_window_sum", based, [f32(4, 5)])
    tied = window_attrs(2, [2, 3], [1, 1], [(1, 0), (1, 1)])
    case("max_ties", "reduce_window_max", tied, [ties(4, 6)])
    special = np.asarray([[1, np.nan, -np.inf, -np.inf, 2, 0],
                          [-np.inf, -np.inf, -np.inf, np.nan, 3, np.inf],
                          [0, 1, -np.inf, -np.inf, np.nan, 5]], np.float32)
    wide = window_attrs(2, [2, 3], [1, 1], [(1, 1), (1, 1)])
    case("max_nan_inf", "reduce_window_max", wide, [special])
    case("min_nan_inf", "reduce_window_min", wide, [-special])
    ints = rng.integers(-50, 50, (5, 6)).astype(np.int32)
    # Windows wholly in the padding give the identity: INT_MIN, INT_MAX, 0.
    big_pad = window_attrs(2, [2, 2], [2, 1], [(2, 1), (0, 1)])
    for op in ["reduce_window_max", "reduce_window_min", "reduce_window_sum"]:
        case(op.replace("reduce_window", "int") + "_padding_identity", op, big_pad, [ints])
    case("u8_max", "reduce_window_max", window_attrs(2, [3, 2], [1, 2], [(1, 1), (0, 0)]),
         [rng.integers(0, 255, (5, 6)).astype(np.uint8)])
    case("f16_max", "reduce_window_max", nchw, [f32(1, 2, 6, 7).astype(np.float16)])
    case("f16_sum_exact", "reduce_window_sum", tied, [ties(4, 6).astype(np.float16)])
    case("f64_sum", "reduce_window_sum", based, [rng.standard_normal((4, 5))])

    # select_and_gather_add and select_and_scatter_add on their own.
    gather2 = {**window_attrs(2, [2, 3], [2, 1], [(1, 0), (1, 1)], [1, 2]), "select_prim": "ge"}
    case("gather_add_ge", "select_and_gather_add", gather2, [f32(5, 4), ties(5, 4)])
    case("gather_add_le", "select_and_gather_add", {**gather2, "select_prim": "le"},
         [f32(5, 4), ties(5, 4)])
    case("gather_add_nan_inf", "select_and_gather_add", {**wide, "select_prim": "ge"},
         [f32(3, 6), special])
    # XLA's reduce_window skips padding and base-dilation holes: a NaN kept so far is replaced by
    # the next element, never by a hole.
    holes = np.asarray([np.nan, -np.inf, 2, np.nan, -np.inf], np.float32)
    case("gather_add_holes_skipped", "select_and_gather_add",
         {**window_attrs(1, [3], [1], [(1, 2)], [2], [1]), "select_prim": "ge"},
         [f32(5), holes])
    case("gather_add_dilated_window_padding", "select_and_gather_add",
         {**window_attrs(1, [2], [1], [(0, 2)], [1], [2]), "select_prim": "ge"}, [f32(5), holes])
    scatter2 = {**window_attrs(2, [3, 3], [2, 1], [(1, 1), (1, 0)]), "select_prim": "ge"}
    del scatter2["base_dilation"], scatter2["window_dilation"]
    sx = ties(6, 5)
    case("scatter_add_ge", "select_and_scatter_add", scatter2,
         [f32(*out_of("reduce_window_max", window_attrs(2, [3, 3], [2, 1], [(1, 1), (1, 0)]), sx)
               .shape), sx])
    case("scatter_add_le", "select_and_scatter_add", {**scatter2, "select_prim": "le"},
         [f32(3, 4), sx])
    # Windows that never overlap (stride >= window), with gaps between them and padding.
    gaps = {**window_attrs(2, [2, 2], [3, 2], [(1, 0), (0, 1)]), "select_prim": "ge"}
    del gaps["base_dilation"], gaps["window_dilation"]
    case("scatter_add_disjoint_gaps", "select_and_scatter_add", gaps, [f32(3, 3), ties(7, 5)])
    case("scatter_add_nan_inf", "select_and_scatter_add",
         {**{k: v for k, v in wide.items() if "dilation" not in k}, "select_prim": "ge"},
         [f32(4, 6), special])

    # Gradients (JAX's transposes: the max/min through select_and_scatter_add).
    pool = window_attrs(4, [1, 3, 3, 1], [1, 2, 2, 1], [(0, 0), (1, 1), (1, 1), (0, 0)])
    px = ties(2, 5, 6, 2)
    case("grad_max_pool_ties", "reduce_window_max", pool,
         [px, f32(*out_of("reduce_window_max", pool, px).shape)], "grad", [0])
    case("grad_min_padded", "reduce_window_min", tied,
         [ties(4, 6), f32(*out_of("reduce_window_min", tied, ties(4, 6)).shape)], "grad", [0])
    for name, attrs, x in [("grad_sum_dilated", based, f32(4, 5)),
                           ("grad_sum_window_dilation", a3, f32(2, 4, 5, 6, 2)),
                           ("grad_sum_1d", a1, f32(10)),
                           ("grad_sum_negative_padding", window_attrs(1, [2], [1], [(-1, 1)]),
                            f32(8))]:
        case(name, "reduce_window_sum", attrs,
             [x, f32(*out_of("reduce_window_sum", attrs, x).shape)], "grad", [0])
    bx = ties(4, 5)
    case("grad_max_base_dilation", "reduce_window_max", based,
         [bx, f32(*out_of("reduce_window_max", based, bx).shape)], "grad", [0])
    case("grad_max_nan_inf", "reduce_window_max", wide,
         [special, f32(*out_of("reduce_window_max", wide, special).shape)], "grad", [0])
    gx = ties(5, 4)
    case("grad_gather_add", "select_and_gather_add", gather2,
         [f32(5, 4), gx, f32(*out_of("reduce_window_max", {k: gather2[k] for k in a1}, gx).shape)],
         "grad", [0])
    case("grad_scatter_add", "select_and_scatter_add", scatter2, [f32(3, 4), sx, f32(6, 5)],
         "grad", [0])

    # Second order: the gradient's own transposes (select_and_scatter_add's is
    # select_and_gather_add), and per-example gradients (both select operands batched).
    case("grad_grad_max_pool", "reduce_window_max", pool,
         [px, f32(*out_of("reduce_window_max", pool, px).shape), f32(*px.shape)], "grad_grad")
    case("grad_grad_sum_dilated", "reduce_window_sum", based,
         [f32(4, 5), f32(*out_of("reduce_window_sum", based, f32(4, 5)).shape), f32(4, 5)],
         "grad_grad")
    vx = ties(3, 4, 6)
    case("vmap_grad_max", "reduce_window_max", tied,
         [vx, f32(3, *out_of("reduce_window_max", tied, vx[0]).shape)], "vmap_grad",
         in_axes=[0, 0])
    case("vmap_grad_min_shared_cotangent", "reduce_window_min", tied,
         [vx, f32(*out_of("reduce_window_min", tied, vx[0]).shape)], "vmap_grad",
         in_axes=[0, None])

    # jvp: through select_and_gather_add.
    jx = ties(4, 6)
    case("jvp_max_ties", "reduce_window_max", tied, [jx, f32(4, 6)], "jvp")
    case("jvp_min_dilated", "reduce_window_min", based, [f32(4, 5), f32(4, 5)], "jvp")
    case("jvp_max_nan_inf", "reduce_window_max", wide, [special, f32(3, 6)], "jvp")
    case("jvp_sum", "reduce_window_sum", nchw, [f32(2, 3, 6, 7), f32(2, 3, 6, 7)], "jvp")

    # vmap: a leading window axis of size 1.
    case("vmap_sum_axis1", "reduce_window_sum", a1, [f32(10, 3)], "vmap", in_axes=[1])
    case("vmap_max", "reduce_window_max", tied, [ties(3, 4, 6)], "vmap", in_axes=[0])
    case("vmap_gather_add_tangents", "select_and_gather_add", gather2,
         [f32(2, 5, 4), ties(5, 4)], "vmap", in_axes=[0, None])
    case("vmap_scatter_add_operand", "select_and_scatter_add", scatter2,
         [f32(3, 4), ties(2, 6, 5)], "vmap", in_axes=[None, 0])

    # flax pooling.
    img = f32(2, 7, 6, 3)
    pool_case("max_pool_same", "max_pool", {"window_shape": [3, 3], "strides": [2, 2],
                                            "padding": "SAME"}, [img])
    pool_case("max_pool_unbatched_valid", "max_pool", {"window_shape": [2, 2]}, [f32(7, 6, 3)])
    pool_case("max_pool_1d_explicit", "max_pool", {"window_shape": [3], "strides": [2],
                                                   "padding": [[1, 1]]}, [f32(2, 9, 4)])
    pool_case("max_pool_two_batch_axes", "max_pool", {"window_shape": [2, 2], "strides": [1, 2]},
              [f32(2, 2, 5, 5, 2)])
    pool_case("max_pool_int", "max_pool", {"window_shape": [2, 2], "strides": [2, 2],
                                           "padding": "SAME"},
              [rng.integers(-9, 9, (1, 5, 5, 2)).astype(np.int32)])
    pool_case("avg_pool_same_include_pad", "avg_pool",
              {"window_shape": [3, 3], "strides": [2, 2], "padding": "SAME",
               "count_include_pad": True}, [img])
    pool_case("avg_pool_same_exclude_pad", "avg_pool",
              {"window_shape": [3, 3], "strides": [2, 2], "padding": "SAME",
               "count_include_pad": False}, [img])
    pool_case("avg_pool_explicit_exclude_pad", "avg_pool",
              {"window_shape": [2, 3], "strides": [1, 2], "padding": [[1, 0], [1, 2]],
               "count_include_pad": False}, [f32(6, 5, 2)])
    pool_case("avg_pool_3d", "avg_pool", {"window_shape": [2, 2, 2], "strides": [2, 2, 2]},
              [f32(2, 4, 4, 4, 2)])
    out = np.asarray(flax_max_pool(img, (3, 3), (2, 2), "SAME"))
    pool_case("grad_max_pool", "max_pool", {"window_shape": [3, 3], "strides": [2, 2],
                                            "padding": "SAME"},
              [ties(2, 7, 6, 3), f32(*out.shape)], "grad")
    odd = ties(2, 7, 5, 3)
    out2 = np.asarray(flax_max_pool(odd, (2, 2), (2, 2), "SAME"))
    pool_case("grad_max_pool_2x2_disjoint", "max_pool", {"window_shape": [2, 2],
                                                         "strides": [2, 2], "padding": "SAME"},
              [odd, f32(*out2.shape)], "grad")
    pool_case("grad_avg_pool_exclude_pad", "avg_pool",
              {"window_shape": [3, 3], "strides": [2, 2], "padding": "SAME",
               "count_include_pad": False}, [img, f32(*out.shape)], "grad")

    os.makedirs(OUT_DIR, exist_ok=True)
    with open(os.path.join(OUT_DIR, "cases.json"), "w") as f:
        json.dump({"jax_version": jax.__version__, "cases": CASES, "pool_cases": POOL_CASES}, f,
                  indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
