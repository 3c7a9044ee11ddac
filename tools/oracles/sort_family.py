#!/usr/bin/env python3
"""Writes the JAX oracle for weft's functions built on sorting and masks:
tests/data/sort_family_oracle/cases.json.

tests/sort_family_test.cpp applies the function each case names (with its attributes) to
"inputs", under jit on the device and in the reference interpreter, and compares every output
with "expected", which JAX computed here on CPU. The build and the tests never run this script;
rerun it only to change the cases, and commit the JSON it writes:

    python3 tools/oracles/sort_family.py

Arrays are {"dtype", "shape", "values"} with weft's dtype names. JAX runs without x64.
"""

import json
import os

import numpy as np

os.environ.setdefault("JAX_PLATFORMS", "cpu")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402

OUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "data",
                       "sort_family_oracle")

WEFT_NAMES = {np.dtype(np.bool_): "bool", np.dtype(np.int32): "i32",
              np.dtype(np.float32): "f32", np.dtype(np.uint32): "u32"}


def encode(a):
    a = np.asarray(a)
    values = a.reshape(-1).tolist()
    if a.dtype == np.bool_:
        values = [int(v) for v in values]
    if a.dtype.kind == "f":
        # 9 significant digits hold an f32 exactly; non-finite values as strings.
        values = [float(f"{v:.9g}") if np.isfinite(v) else str(v) for v in values]
    return {"dtype": WEFT_NAMES[a.dtype], "shape": list(a.shape), "values": values}


def function_of(op, attrs):
    if op == "searchsorted":
        return lambda a, v: (jnp.searchsorted(a, v, side=attrs["side"]),)
    if op == "searchsorted_sorter":
        return lambda a, v, s: (jnp.searchsorted(a, v, side=attrs["side"], sorter=s),)
    if op == "lax_sort":
        return lambda *xs: tuple(lax.sort(xs, dimension=attrs["dimension"], is_stable=True,
                                          num_keys=attrs["num_keys"]))
    if op == "sort_key_val":
        return lambda k, v: tuple(lax.sort_key_val(k, v, dimension=attrs["dimension"]))
    if op == "nonzero":
        return lambda x: tuple(jnp.nonzero(x, size=attrs["size"], fill_value=attrs["fill_value"]))
    if op == "argwhere":
        return lambda x: (jnp.argwhere(x, size=attrs["size"], fill_value=attrs["fill_value"]),)
    if op == "flatnonzero":
        return lambda x: (jnp.flatnonzero(x, size=attrs["size"], fill_value=attrs["fill_value"]),)
    if op == "unique":
        return lambda x: (jnp.unique(x, size=attrs["size"], fill_value=attrs["fill_value"]),)
    if op == "unique_all":
        return lambda x: tuple(jnp.unique(x, return_index=True, return_inverse=True,
                                          return_counts=True, size=attrs["size"],
                                          fill_value=attrs["fill_value"]))
    if op == "compress":
        return lambda c, x: (jnp.compress(c, x, axis=attrs["axis"], size=attrs["size"],
                                          fill_value=attrs["fill_value"]),)
    raise ValueError(op)


def case(name, op, attrs, *inputs):
    inputs = [np.asarray(x) for x in inputs]
    outs = jax.jit(function_of(op, attrs))(*inputs)
    return {"name": name, "op": op, "attrs": attrs, "inputs": [encode(x) for x in inputs],
            "expected": [encode(o) for o in outs]}


def f32(x):
    return np.asarray(x, dtype=np.float32)


def i32(x):
    return np.asarray(x, dtype=np.int32)


def main():
    rng = np.random.default_rng(28)
    nan, inf = np.nan, np.inf
    cases = []

    # searchsorted: NaN sorts last and -0.0 equals 0.0 (lax's sort order); the default method
    # is a binary search, so an unsorted `a` gives JAX's exact answer too.
    a_special = f32([-inf, -1, -0.0, 0, 0, 1.5, 2, 2, nan, nan])
    v_special = f32([[nan, -0.0, 0, 2], [-5, 1.5, 3, inf]])
    a_int = i32([-3, -3, 0, 1, 1, 1, 4, 9])
    v_int = i32(rng.integers(-5, 11, size=(3, 5)))
    a_unsorted = f32(rng.normal(size=7).round(1))
    v_unsorted = f32(rng.normal(size=12).round(1))
    a_pow2 = f32(np.sort(rng.integers(0, 8, size=16)))
    v_pow2 = f32(np.arange(-1, 9, 0.5))
    for side in ("left", "right"):
        attrs = {"side": side}
        cases.append(case(f"searchsorted_special_{side}", "searchsorted", attrs, a_special,
                          v_special))
        cases.append(case(f"searchsorted_int_{side}", "searchsorted", attrs, a_int, v_int))
        cases.append(case(f"searchsorted_scalar_{side}", "searchsorted", attrs, a_int, i32(1)))
        cases.append(case(f"searchsorted_unsorted_{side}", "searchsorted", attrs, a_unsorted,
                          v_unsorted))
        cases.append(case(f"searchsorted_pow2_{side}", "searchsorted", attrs, a_pow2, v_pow2))
        cases.append(case(f"searchsorted_promote_{side}", "searchsorted", attrs, a_int,
                          f32([-3.5, -3, 0.5, 1, 8.9, 9.1])))
        cases.append(case(f"searchsorted_one_{side}", "searchsorted", attrs, f32([2]),
                          f32([1, 2, 3, nan])))
        cases.append(case(f"searchsorted_empty_{side}", "searchsorted", attrs, f32([]),
                          f32([1, 2, 3])))

    # searchsorted with sorter: `a` searched in the order of its argsort, or of any indices
    # (out of range ones clamp, negative ones count from the end: a[sorter]).
    a_shuffled = f32([2.5, -1, 7, 0, 2.5, -3, 4])
    v_shuffled = f32([-4, -1, 2.5, 3, 7, 8, nan])
    for side in ("left", "right"):
        cases.append(case(f"searchsorted_sorter_argsort_{side}", "searchsorted_sorter",
                          {"side": side}, a_shuffled, v_shuffled,
                          i32(np.argsort(a_shuffled, kind="stable"))))
        cases.append(case(f"searchsorted_sorter_any_{side}", "searchsorted_sorter",
                          {"side": side}, a_int, v_int, i32([7, -1, 0, 2, 9, 3, 3, 1])))

    # lax.sort of several operands: the first num_keys are lexicographic keys.
    k1 = f32(rng.integers(0, 3, size=(4, 6)))
    k1[1, 2] = nan
    k1[2, 0] = -0.0
    k2 = i32(rng.integers(-2, 2, size=(4, 6)))
    vals = i32(np.arange(24).reshape(4, 6))
    for dim in (0, 1):
        for num_keys in (1, 2, 3):
            cases.append(case(f"lax_sort_d{dim}_k{num_keys}", "lax_sort",
                              {"dimension": dim, "num_keys": num_keys}, k1, k2, vals))
        cases.append(case(f"sort_key_val_d{dim}", "sort_key_val", {"dimension": dim}, k1,
                          f32(rng.normal(size=(4, 6)))))

    # nonzero with a static size: truncated or padded with fill_value.
    x1 = f32([0, 1.5, 0, -2, nan, 0, -0.0, 3])
    x2 = i32(rng.integers(0, 3, size=(3, 4)) * (rng.random((3, 4)) < 0.5))
    xb = rng.random((2, 3, 2)) < 0.4
    for size, fill in ((3, 0), (8, -1), (10, 0)):
        cases.append(case(f"nonzero_f32_s{size}", "nonzero", {"size": size, "fill_value": fill},
                          x1))
        cases.append(case(f"nonzero_i32_2d_s{size}", "nonzero",
                          {"size": size, "fill_value": fill}, x2))
        cases.append(case(f"nonzero_bool_3d_s{size}", "nonzero",
                          {"size": size, "fill_value": fill}, xb))

    for op in ("argwhere", "flatnonzero"):
        for x, size, fill in ((x1, 8, -1), (x2, 3, 0), (xb, 10, 2)):
            cases.append(case(f"{op}_{x.ndim}d_s{size}", op, {"size": size, "fill_value": fill},
                              x))

    # unique with a static size: sorted unique values (NaNs one value, last), padded with
    # fill_value or, without one, with the smallest value.
    u1 = f32([3, nan, 1, -0.0, 0, 3, nan, -2, 1, 5])
    u2 = i32(rng.integers(-3, 4, size=(3, 5)))
    for x, size, fill in ((u1, 4, None), (u2, 9, None), (u2, 9, 7.5), (u1, 12, -1)):
        cases.append(case(f"unique_{WEFT_NAMES[x.dtype]}_s{size}_{fill}", "unique",
                          {"size": size, "fill_value": fill}, x))

    for x, size, fill in ((u2, 9, -1), (u1, 12, 0.5)):
        cases.append(case(f"unique_all_{WEFT_NAMES[x.dtype]}_s{size}", "unique_all",
                          {"size": size, "fill_value": fill}, x))

    # compress with a static size: the selected slices along axis, padded with fill_value.
    c4 = np.array([True, False, True, True])
    c3 = np.array([False, True, True])
    m = f32(rng.normal(size=(4, 3)).round(2))
    for axis, cond, size in ((0, c4, 2), (0, c4, 4), (1, c3, 3), (None, np.resize(c4, 12), 7)):
        cases.append(case(f"compress_a{axis}_s{size}", "compress",
                          {"axis": axis, "size": size, "fill_value": -9}, cond, m))

    os.makedirs(OUT_DIR, exist_ok=True)
    with open(os.path.join(OUT_DIR, "cases.json"), "w") as f:
        json.dump({"jax_version": jax.__version__, "cases": cases}, f, indent=None)
        f.write("\n")
    print(f"wrote {len(cases)} cases")


if __name__ == "__main__":
    main()
