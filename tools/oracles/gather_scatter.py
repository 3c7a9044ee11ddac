#!/usr/bin/env python3
"""Writes the JAX oracle for gather and the scatters: tests/data/gather_scatter_oracle/*.json.

tests/gather_scatter_test.cpp runs every case eagerly and under weft::jit on the device, and in
the reference interpreter on the graph jit traced, and compares with what jax.lax computed here
on CPU. The build and the tests never run this script; rerun it only to change the cases
(pip install jax), and commit the JSON it writes:

    python3 tools/oracles/gather_scatter.py

A case applies one primitive ("op": gather, scatter, scatter_add, scatter_mul, scatter_min,
scatter_max) with "attrs" named as weft's IR text names them, to "args", under a "transform":
"none"; "grad": the gradient of sum(op(args[:-1]) * args[-1]) with respect to "argnums";
"vmap": vmapped over "in_axes" (null: not batched). "expected" lists the results.
np_cases.json holds the numpy layer's: "fn" (take, take_along_axis, at_get, at_set, at_add,
at_multiply, at_min, at_max, one_hot, segment_sum, segment_max, segment_min, repeat, tile) with
its "params" on "args", and JAX's "expected". Arrays are {"dtype", "shape", "values"} with
weft's dtype names; non-finite floats are "nan", "inf", "-inf".
"""

import json
import math
import os

import numpy as np

os.environ.setdefault("JAX_PLATFORMS", "cpu")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402

OUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "data",
                       "gather_scatter_oracle")
WEFT_NAMES = {np.dtype(np.bool_): "bool", np.dtype(np.int32): "i32", np.dtype(np.uint32): "u32",
              np.dtype(np.float32): "f32"}


def value(v):
    if isinstance(v, (bool, np.bool_)):
        return int(v)
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


def gather_call(attrs):
    dn = lax.GatherDimensionNumbers(
        offset_dims=tuple(attrs["offset_dims"]),
        collapsed_slice_dims=tuple(attrs["collapsed_slice_dims"]),
        start_index_map=tuple(attrs["start_index_map"]),
        operand_batching_dims=tuple(attrs.get("operand_batching_dims", [])),
        start_indices_batching_dims=tuple(attrs.get("start_indices_batching_dims", [])))

    def call(x, i):
        return lax.gather(x, i, dn, tuple(attrs["slice_sizes"]), mode=attrs["mode"],
                          fill_value=attrs.get("fill_value"))
    return call


SCATTERS = {"scatter": lax.scatter, "scatter_add": lax.scatter_add, "scatter_mul": lax.scatter_mul,
            "scatter_min": lax.scatter_min, "scatter_max": lax.scatter_max}


def scatter_call(op, attrs):
    dn = lax.ScatterDimensionNumbers(
        update_window_dims=tuple(attrs["update_window_dims"]),
        inserted_window_dims=tuple(attrs["inserted_window_dims"]),
        scatter_dims_to_operand_dims=tuple(attrs["scatter_dims_to_operand_dims"]),
        operand_batching_dims=tuple(attrs.get("operand_batching_dims", [])),
        scatter_indices_batching_dims=tuple(attrs.get("scatter_indices_batching_dims", [])))

    def call(x, i, u):
        return SCATTERS[op](x, i, u, dn, mode=attrs["mode"],
                            unique_indices=bool(attrs.get("unique_indices", 0)))
    return call


def complete(op, attrs):
    """The attrs as weft's text form has them: every list present."""
    out = dict(attrs)
    if op == "gather":
        out.setdefault("operand_batching_dims", [])
        out.setdefault("start_indices_batching_dims", [])
    else:
        out.setdefault("operand_batching_dims", [])
        out.setdefault("scatter_indices_batching_dims", [])
        out.setdefault("unique_indices", 0)
    return out


CASES = []


def case(name, op, attrs, args, transform="none", argnums=None, in_axes=None):
    attrs = complete(op, attrs)
    call = gather_call(attrs) if op == "gather" else scatter_call(op, attrs)
    args = [np.asarray(a) for a in args]
    if transform == "none":
        expected = [call(*args)]
    elif transform == "grad":
        def loss(*xs):
            return jnp.sum(call(*xs[:-1]) * xs[-1])
        expected = list(jax.grad(loss, argnums=tuple(argnums))(*args))
    else:
        expected = [jax.vmap(call, in_axes=tuple(in_axes))(*args)]
    c = {"name": name, "op": op, "attrs": attrs, "transform": transform,
         "args": [spec(a) for a in args], "expected": [spec(e) for e in expected]}
    if argnums is not None:
        c["argnums"] = argnums
    if in_axes is not None:
        c["in_axes"] = in_axes
    CASES.append(c)


NP_CASES = []


def np_case(name, fn, params, args, call):
    args = [np.asarray(a) for a in args]
    NP_CASES.append({"name": name, "fn": fn, "params": params, "args": [spec(a) for a in args],
                     "expected": spec(call(*[jnp.asarray(a) for a in args]))})


def np_cases():
    rng = np.random.default_rng(2828)

    def f32(*shape):
        return rng.standard_normal(shape).astype(np.float32)

    def i32(values):
        return np.asarray(values, dtype=np.int32)

    x = f32(4, 5)
    np_case("take_flat", "take", {"axis": None, "mode": "fill"}, [x, i32([[0, 19], [-1, 7]])],
            lambda a, i: jnp.take(a, i))
    np_case("take_axis1_oob_fill", "take", {"axis": 1, "mode": "fill"}, [x, i32([4, -2, 5, 0])],
            lambda a, i: jnp.take(a, i, axis=1))
    np_case("take_axis0_clip", "take", {"axis": 0, "mode": "clip"}, [x, i32([[3, 9], [-1, 0]])],
            lambda a, i: jnp.take(a, i, axis=0, mode="clip"))
    along = i32([[0, 4, 4], [1, -1, 2], [3, 3, 0], [2, 0, 1]])
    np_case("take_along_axis1", "take_along_axis", {"axis": 1, "mode": "fill"}, [x, along],
            lambda a, i: jnp.take_along_axis(a, i, axis=1))
    np_case("take_along_axis0_broadcast", "take_along_axis", {"axis": 0, "mode": "fill"},
            [x, i32([[3, 0, 1, 2, 2]])], lambda a, i: jnp.take_along_axis(a, i, axis=0))
    np_case("take_along_argsort", "take_along_axis", {"axis": -1, "mode": "fill"},
            [x, np.argsort(x, axis=-1).astype(np.int32)],
            lambda a, i: jnp.take_along_axis(a, i, axis=-1))
    rows = i32([2, 0, 2, -1, 7])
    vals = f32(5, 5)
    np_case("at_get", "at_get", {"mode": "clip"}, [x, i32([[1, -1], [3, 9]])],
            lambda a, i: a.at[i].get(mode="clip"))
    np_case("at_set_unique", "at_set", {"mode": "fill"}, [x, i32([1, -1, 7]), f32(3, 5)],
            lambda a, i, v: a.at[i].set(v))
    for fn in ["add", "multiply", "min", "max"]:
        np_case("at_" + fn + "_duplicates", "at_" + fn, {"mode": "fill"}, [x, rows, vals],
                lambda a, i, v, fn=fn: getattr(a.at[i], fn)(v))
    np_case("at_add_scalar_row", "at_add", {"mode": "fill"}, [x, i32([0, 0, 3]), f32(5)],
            lambda a, i, v: a.at[i].add(v))
    np_case("one_hot", "one_hot", {"num_classes": 4}, [i32([[0, 3], [5, -1], [2, 2]])],
            lambda i: jax.nn.one_hot(i, 4))
    ids = i32([0, 0, 1, 4, 4, 4, 2, 0, 6, -1])
    data = f32(10, 3)
    for fn in ["segment_sum", "segment_max", "segment_min"]:
        np_case(fn, fn, {"num_segments": 5}, [data, ids],
                lambda d, i, fn=fn: getattr(jax.ops, fn)(d, i, num_segments=5))
    np_case("segment_sum_int", "segment_sum", {"num_segments": 5},
            [rng.integers(-9, 9, (10,)).astype(np.int32), ids],
            lambda d, i: jax.ops.segment_sum(d, i, num_segments=5))
    np_case("repeat_axis1", "repeat", {"repeats": 3, "axis": 1}, [f32(2, 3)],
            lambda a: jnp.repeat(a, 3, axis=1))
    np_case("repeat_flat", "repeat", {"repeats": 2, "axis": None}, [i32([[1, 2], [3, 4]])],
            lambda a: jnp.repeat(a, 2))
    np_case("tile_2d", "tile", {"reps": [2, 3]}, [f32(2, 2)], lambda a: jnp.tile(a, (2, 3)))
    np_case("tile_more_reps", "tile", {"reps": [2, 1, 2]}, [f32(3)],
            lambda a: jnp.tile(a, (2, 1, 2)))
    np_case("tile_fewer_reps", "tile", {"reps": [2]}, [f32(2, 3)], lambda a: jnp.tile(a, 2))
    # repeat with a count per element: known counts, and traced counts with a static total
    # that is above (the last element fills it), equal to or below (cut off) their sum.
    grid = np.arange(12, dtype=np.float32).reshape(3, 4) - 5.5
    np_case("repeat_counts_axis0", "repeat_counts", {"counts": [2, 0, 3], "axis": 0}, [grid],
            lambda a: jnp.repeat(a, np.array([2, 0, 3]), axis=0))
    np_case("repeat_counts_flat", "repeat_counts", {"counts": [1, 2, 0, 3], "axis": None},
            [i32([[1, 2], [3, 4]])], lambda a: jnp.repeat(a, np.array([1, 2, 0, 3])))
    for name, counts, total, axis in [("above", [1, 2, 0], 5, 0), ("equal", [0, 2, 1, 1], 4, 1),
                                      ("below", [2, 2, 2, 2], 5, 1), ("one_count", [2], 6, 0),
                                      ("zero_total", [1, 1, 1], 0, 0)]:
        np_case(f"repeat_traced_{name}", "repeat_traced",
                {"total_repeat_length": total, "axis": axis}, [grid, i32(counts)],
                lambda a, r, total=total, axis=axis: jnp.repeat(
                    a, r, axis=axis, total_repeat_length=total))


def main():
    rng = np.random.default_rng(28)

    def f32(*shape):
        return rng.standard_normal(shape).astype(np.float32)

    def ids(values, shape=None):
        a = np.asarray(values, dtype=np.int32)
        return a.reshape(shape) if shape is not None else a[:, None]

    table = f32(10, 4)
    embed = {"offset_dims": [1], "collapsed_slice_dims": [0], "start_index_map": [0],
             "slice_sizes": [1, 4]}
    case("embedding_promise", "gather", {**embed, "mode": "promise_in_bounds"},
         [table, ids([3, 0, 9, 3, 7, 1])])
    case("embedding_clip", "gather", {**embed, "mode": "clip"}, [table, ids([3, -1, 12, 9, 0])])
    case("embedding_fill_nan", "gather", {**embed, "mode": "fill"},
         [table, ids([3, -1, 10, 9, 0])])
    case("embedding_fill_value", "gather", {**embed, "mode": "fill", "fill_value": -2.5},
         [table, ids([3, -1, 10, 9, 0])])
    case("embedding_int_fill", "gather", {**embed, "mode": "fill"},
         [rng.integers(-50, 50, (10, 4)).astype(np.int32), ids([2, 11, -3])])
    case("embedding_u32_indices", "gather", {**embed, "mode": "clip"},
         [table, np.asarray([[2], [4000000000], [9]], dtype=np.uint32)])
    # Windows of 2x3 at two-component starts; partly outside the operand on some rows.
    window = {"offset_dims": [1, 2], "collapsed_slice_dims": [], "start_index_map": [0, 1],
              "slice_sizes": [2, 3]}
    starts = ids([[0, 0], [4, 4], [5, 1], [-1, 2], [3, 6]], (5, 2))
    case("window_clip", "gather", {**window, "mode": "clip"}, [f32(6, 7), starts])
    case("window_fill", "gather", {**window, "mode": "fill"}, [f32(6, 7), starts])
    # Column picks (jnp.take along axis 1): the offset axis comes first.
    case("take_axis1", "gather",
         {"offset_dims": [0], "collapsed_slice_dims": [1], "start_index_map": [1],
          "slice_sizes": [5, 1], "mode": "fill"}, [f32(5, 3), ids([2, 0, 2, 1])])
    # take_along_axis: a batching axis pairs each row with its own indices.
    along = {"offset_dims": [], "collapsed_slice_dims": [1], "start_index_map": [1],
             "operand_batching_dims": [0], "start_indices_batching_dims": [0],
             "slice_sizes": [1, 1], "mode": "fill"}
    along_idx = ids([[4, 0, 1, 4], [2, 2, 3, 0], [1, 3, 0, 2]], (3, 4, 1))
    case("take_along_axis", "gather", along, [f32(3, 5), along_idx])
    rows = {"offset_dims": [2], "collapsed_slice_dims": [1], "start_index_map": [1],
            "operand_batching_dims": [0], "start_indices_batching_dims": [0],
            "slice_sizes": [1, 1, 3], "mode": "clip"}
    case("batching_rows", "gather", rows, [f32(2, 5, 3), ids([[4, 0, 1, 7], [2, 2, 3, 0]], (2, 4, 1))])

    # Scatters: rows of updates into rows of the operand, with collisions and strays.
    rowsc = {"update_window_dims": [1], "inserted_window_dims": [0],
             "scatter_dims_to_operand_dims": [0]}
    dup = ids([1, 3, 1, 5, 1, 7, -1])
    for op in ["scatter_add", "scatter_mul", "scatter_min", "scatter_max"]:
        case(op + "_duplicates_fill", op, {**rowsc, "mode": "fill"}, [f32(6, 3), dup, f32(7, 3)])
    case("scatter_add_clip", "scatter_add", {**rowsc, "mode": "clip"}, [f32(6, 3), dup, f32(7, 3)])
    case("scatter_unique", "scatter", {**rowsc, "mode": "fill", "unique_indices": 1},
         [f32(6, 3), ids([4, 0, 2]), f32(3, 3)])
    case("scatter_add_int", "scatter_add", {**rowsc, "mode": "fill"},
         [rng.integers(-9, 9, (6, 3)).astype(np.int32), dup,
          rng.integers(-9, 9, (7, 3)).astype(np.int32)])
    # segment_sum: scalars into segments.
    seg = {"update_window_dims": [], "inserted_window_dims": [0],
           "scatter_dims_to_operand_dims": [0], "mode": "fill"}
    case("segment_sum", "scatter_add", seg,
         [np.zeros(4, np.float32), ids([0, 0, 1, 3, 3, 3, 2, 0, 4]), f32(9)])
    # Windows of 2x2 at two-component starts; one partly outside (dropped in fill mode).
    win = {"update_window_dims": [1, 2], "inserted_window_dims": [],
           "scatter_dims_to_operand_dims": [0, 1]}
    wstarts = ids([[0, 0], [1, 1], [3, 4], [0, 0]], (4, 2))
    case("window_scatter_add_fill", "scatter_add", {**win, "mode": "fill"},
         [f32(4, 5), wstarts, f32(4, 2, 2)])
    case("window_scatter_add_clip", "scatter_add", {**win, "mode": "clip"},
         [f32(4, 5), wstarts, f32(4, 2, 2)])
    batched = {"update_window_dims": [], "inserted_window_dims": [1],
               "scatter_dims_to_operand_dims": [1], "operand_batching_dims": [0],
               "scatter_indices_batching_dims": [0], "mode": "fill"}
    case("batching_scatter_add", "scatter_add", batched,
         [f32(2, 5), ids([[4, 0, 4], [2, 2, 1]], (2, 3, 1)), f32(2, 3)])

    # Gradients: gather's is a scatter_add (JAX's grad), the scatters' as JAX's rules.
    case("grad_embedding", "gather", {**embed, "mode": "fill"},
         [table, ids([3, 0, 9, 3, 12, 3]), f32(6, 4)], "grad", [0])
    case("grad_take_along_axis", "gather", along, [f32(3, 5), along_idx, f32(3, 4)], "grad", [0])
    case("grad_window_clip", "gather", {**window, "mode": "clip"},
         [f32(6, 7), starts, f32(5, 2, 3)], "grad", [0])
    case("grad_scatter_add", "scatter_add", {**rowsc, "mode": "fill"},
         [f32(6, 3), dup, f32(7, 3), f32(6, 3)], "grad", [0, 2])
    case("grad_scatter_duplicates", "scatter", {**rowsc, "mode": "fill"},
         [f32(6, 3), dup, f32(7, 3), f32(6, 3)], "grad", [0, 2])
    ties = np.asarray([[1.0, 2.0, 3.0]] * 6, np.float32)
    tie_updates = np.asarray([[1.0, 5.0, 3.0], [0.5, 5.0, 4.0], [1.0, 1.0, 1.0]], np.float32)
    case("grad_scatter_max_ties", "scatter_max", {**rowsc, "mode": "fill"},
         [ties, ids([2, 2, 4]), tie_updates, f32(6, 3)], "grad", [0, 2])
    case("grad_scatter_mul_unique", "scatter_mul", {**rowsc, "mode": "fill", "unique_indices": 1},
         [f32(6, 3), ids([4, 0, 2]), f32(3, 3), f32(6, 3)], "grad", [0, 2])

    # vmap: the operand, the indices or both batched.
    case("vmap_gather_operand", "gather", {**embed, "mode": "fill"},
         [f32(3, 10, 4), ids([3, 0, 9, 12])], "vmap", in_axes=[0, None])
    case("vmap_gather_indices", "gather", {**embed, "mode": "clip"},
         [table, ids([[3, 0], [9, 12], [1, 1]], (3, 2, 1))], "vmap", in_axes=[None, 0])
    case("vmap_gather_both", "gather", along,
         [f32(2, 3, 5), np.stack([along_idx, along_idx[::-1]]), ], "vmap", in_axes=[0, 0])
    case("vmap_scatter_add_updates", "scatter_add", {**rowsc, "mode": "fill"},
         [f32(6, 3), ids([[1, 3, 1], [5, 7, 0]], (2, 3, 1)), f32(2, 3, 3)], "vmap",
         in_axes=[None, 0, 0])
    case("vmap_scatter_operand", "scatter", {**rowsc, "mode": "fill", "unique_indices": 1},
         [f32(2, 6, 3), ids([4, 0, 2]), f32(3, 3)], "vmap", in_axes=[0, None, None])

    os.makedirs(OUT_DIR, exist_ok=True)
    with open(os.path.join(OUT_DIR, "cases.json"), "w") as f:
        json.dump({"jax_version": jax.__version__, "cases": CASES}, f, indent=1)
        f.write("\n")
    np_cases()
    with open(os.path.join(OUT_DIR, "np_cases.json"), "w") as f:
        json.dump({"jax_version": jax.__version__, "cases": NP_CASES}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
