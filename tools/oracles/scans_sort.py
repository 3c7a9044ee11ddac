#!/usr/bin/env python3
"""Writes the JAX oracle for weft's cumulative ops, rev and sorting:
tests/data/scans_sort_oracle/cases.json.

tests/scans_sort_test.cpp applies the op each case names (with its attributes) to "inputs",
under jit on the device and in the reference interpreter, and compares with "expected", which
jax.lax computed here on CPU. A case's "transform" says what was computed:
  "none": op(x);
  "grad": the gradient of sum(op(x) * w) with respect to x (inputs: x, w);
  "vmap": jax.vmap(op) over x's leading axis (the attributes are one example's).
The build and the tests never run this script; rerun it only to change the cases, and commit
the JSON it writes:

    python3 tools/oracles/scans_sort.py

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
                       "scans_sort_oracle")

WEFT_NAMES = {np.dtype(np.bool_): "bool", np.dtype(np.int32): "i32",
              np.dtype(np.float32): "f32", np.dtype(np.uint32): "u32"}


def encode(a):
    a = np.asarray(a)
    values = a.reshape(-1).tolist()
    if a.dtype == np.bool_:
        values = [int(v) for v in values]
    if a.dtype.kind == "f":
        # 9 significant digits hold an f32 exactly; non-finite values as strings, a NaN's sign
        # kept ("-nan").
        values = [float(f"{v:.9g}") if np.isfinite(v)
                  else ("-nan" if np.isnan(v) and np.signbit(v) else str(v)) for v in values]
    return {"dtype": WEFT_NAMES[a.dtype], "shape": list(a.shape), "values": values}


def lax_op(name, attrs):
    if name in ("cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"):
        fn = getattr(lax, name)
        return lambda x: fn(x, axis=attrs["axis"], reverse=bool(attrs["reverse"]))
    if name == "assoc_affine":
        # The affine maps v -> a v + b with a = tanh(x) / 2, b = x, composed along the axis.
        def assoc_affine(x):
            def compose(first, second):
                return (first[0] * second[0], second[0] * first[1] + second[1])
            return lax.associative_scan(compose, (0.5 * jnp.tanh(x), x),
                                        reverse=bool(attrs["reverse"]), axis=attrs["axis"])[1]
        return assoc_affine
    if name == "np_cumsum":
        return lambda x: jnp.cumsum(x, axis=attrs["axis"])
    if name == "np_cumprod":
        return lambda x: jnp.cumprod(x, axis=attrs["axis"])
    if name == "np_flip":
        return lambda x: jnp.flip(x, axis=tuple(attrs["axes"]) or None)
    if name == "np_sort":
        return lambda x: jnp.sort(x, axis=attrs["axis"])
    if name == "np_argsort":
        return lambda x: jnp.argsort(x, axis=attrs["axis"], stable=True).astype(jnp.int32)
    if name == "sort_key_val":
        return lambda k, v: lax.sort_key_val(k, v, dimension=attrs["dimension"])[1]
    if name == "argsort_keys":
        def argsort_keys(*keys):
            iota = lax.broadcasted_iota(jnp.int32, keys[0].shape, attrs["dimension"])
            return lax.sort((*keys, iota), dimension=attrs["dimension"], num_keys=len(keys))[-1]
        return argsort_keys
    if name == "sort":
        return lambda x: lax.sort(x, dimension=attrs["dimension"])
    if name == "argsort":
        return lambda x: jnp.argsort(x, axis=attrs["dimension"], stable=True).astype(jnp.int32)
    if name == "top_k_values":
        return lambda x: lax.top_k(x, attrs["k"])[0]
    if name == "top_k_indices":
        return lambda x: lax.top_k(x, attrs["k"])[1]
    if name == "rev":
        return lambda x: lax.rev(x, attrs["dimensions"])
    raise ValueError(name)


rng = np.random.default_rng(28)
cases = []


def add(name, op, attrs, x, transform="none", rtol=1e-5):
    f = lax_op(op, attrs)
    if transform == "keys":  # several operands
        cases.append({"name": name, "op": op, "attrs": attrs, "transform": "none", "rtol": rtol,
                      "inputs": [encode(a) for a in x],
                      "expected": encode(f(*[jnp.asarray(a) for a in x]))})
        return
    x = np.asarray(x)
    if transform == "none":
        inputs, expected = [x], f(jnp.asarray(x))
        if op == "np_cumsum" and x.dtype == np.bool_:
            expected = np.asarray(expected).astype(np.int32)
    elif transform == "grad":
        w = rng.normal(size=np.shape(f(jnp.asarray(x)))).astype(np.float32)
        inputs = [x, w]
        expected = jax.grad(lambda x: jnp.sum(f(x) * w))(jnp.asarray(x))
    elif transform == "vmap":
        inputs, expected = [x], jax.vmap(f)(jnp.asarray(x))
    else:
        raise ValueError(transform)
    cases.append({"name": name, "op": op, "attrs": attrs, "transform": transform, "rtol": rtol,
                  "inputs": [encode(a) for a in inputs], "expected": encode(expected)})


def normal(*shape):
    return rng.normal(size=shape).astype(np.float32)


def ints(lo, hi, *shape):
    return rng.integers(lo, hi, size=shape).astype(np.int32)


# --- cumulative ops ---------------------------------------------------------------------------
for op in ["cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"]:
    a = lambda axis, reverse: {"axis": axis, "reverse": reverse}  # noqa: E731
    add(f"{op}_vector", op, a(0, 0), normal(7))
    add(f"{op}_vector_reverse", op, a(0, 1), normal(7))
    add(f"{op}_rows", op, a(1, 0), normal(3, 5))
    add(f"{op}_middle_axis_reverse", op, a(1, 1), normal(2, 6, 3))
    add(f"{op}_leading_axis", op, a(0, 0), normal(5, 4))
    # Several blocks per line, and several levels of block totals.
    # Products of normal values under- or overflow: long cumprods use values near 1.
    long_values = (lambda *s: 1 + 0.01 * normal(*s)) if op == "cumprod" else normal
    add(f"{op}_long", op, a(0, 0), long_values(2100), rtol=1e-4)
    add(f"{op}_long_strided_reverse", op, a(0, 1), long_values(2100, 2), rtol=1e-4)
    add(f"{op}_grad", op, a(1, 0), normal(3, 5), "grad")
    add(f"{op}_grad_reverse", op, a(0, 1), normal(6, 2), "grad")
    add(f"{op}_vmap", op, a(0, 1), normal(4, 6), "vmap")
# cumprod with zeros (its gradient has a case for none, one and several before each element),
# values near 1 so that long products stay finite.
add("cumprod_grad_zeros", "cumprod", {"axis": 1, "reverse": 0},
    np.array([[1.5, 0.0, 2.0, -1.0, 0.0, 3.0], [0.5, 2.0, 0.0, 4.0, 1.0, -2.0]], np.float32),
    "grad")
add("cumprod_grad_zeros_reverse", "cumprod", {"axis": 0, "reverse": 1},
    np.array([2.0, -1.0, 0.0, 0.5, 3.0], np.float32), "grad")
add("cumprod_i32", "cumprod", {"axis": 0, "reverse": 0}, ints(-3, 4, 12))
add("cummax_i32", "cummax", {"axis": 1, "reverse": 1}, ints(-50, 50, 3, 9))
add("cummin_i32", "cummin", {"axis": 0, "reverse": 0}, ints(-50, 50, 9, 2))
add("cummax_nan", "cummax", {"axis": 0, "reverse": 0},
    np.array([1.0, 3.0, np.nan, 5.0, 2.0], np.float32))
add("cumlogsumexp_infinities", "cumlogsumexp", {"axis": 0, "reverse": 0},
    np.array([-np.inf, -np.inf, 0.0, 80.0, np.inf], np.float32))
add("cumsum_i32_wraps", "cumsum", {"axis": 0, "reverse": 0},
    np.array([2**30, 2**30, 2**30, -5, 7], np.int32))
add("cumsum_i32_long", "cumsum", {"axis": 1, "reverse": 1}, ints(-1000, 1000, 2, 2500))

# --- rev ----------------------------------------------------------------------------------------
add("rev_vector", "rev", {"dimensions": [0]}, normal(6))
add("rev_two_axes", "rev", {"dimensions": [2, 0]}, normal(2, 3, 4))
add("rev_none", "rev", {"dimensions": []}, normal(2, 3))
add("rev_i32_middle", "rev", {"dimensions": [1]}, ints(-9, 9, 2, 5, 3))
add("rev_grad", "rev", {"dimensions": [1]}, normal(3, 4), "grad")
add("rev_vmap", "rev", {"dimensions": [0, 1]}, normal(2, 3, 4), "vmap")

# --- numpy layer ------------------------------------------------------------------------------
add("np_cumsum_flat", "np_cumsum", {"axis": None}, normal(3, 4))
add("np_cumsum_bool_last_axis", "np_cumsum", {"axis": -1}, rng.random((3, 5)) < 0.5)
add("np_cumprod_axis0", "np_cumprod", {"axis": 0}, normal(4, 3))
add("np_flip_all", "np_flip", {"axes": []}, normal(2, 3))
add("np_flip_some", "np_flip", {"axes": [0, -1]}, normal(2, 3, 4))

# --- sorting -----------------------------------------------------------------------------------
special = np.array([0.0, -0.0, np.nan, 1.0, -1.0, -0.0, np.inf, -np.inf, 2.0, 1.0], np.float32)
with_ties = rng.integers(0, 4, size=(3, 37)).astype(np.float32)
for dim_case, dim, x in [("last", 1, normal(4, 50)), ("first", 0, normal(33, 3)),
                         ("special", 0, special), ("ties", 1, with_ties),
                         ("i32", 1, ints(-20, 20, 2, 300)), ("long", 0, normal(4500))]:
    add(f"sort_{dim_case}", "sort", {"dimension": dim}, x)
    add(f"argsort_{dim_case}", "argsort", {"dimension": dim}, x)
add("argsort_keys_two", "argsort_keys", {"dimension": 1},
    [ints(0, 3, 4, 20), normal(4, 20)], "keys")
add("argsort_keys_ties_in_both", "argsort_keys", {"dimension": 0},
    [ints(0, 2, 30), ints(0, 2, 30).astype(np.float32)], "keys")
add("np_sort_flat", "np_sort", {"axis": None}, normal(3, 5))
add("np_sort_axis0", "np_sort", {"axis": 0}, normal(5, 3))
add("np_argsort_last", "np_argsort", {"axis": -1}, with_ties)
add("sort_grad", "sort", {"dimension": 1}, normal(3, 6), "grad")
add("sort_vmap", "sort", {"dimension": 0}, normal(4, 7), "vmap")
add("argsort_vmap", "argsort", {"dimension": 0}, normal(4, 7), "vmap")
for name, x, k in [("rows", normal(6, 40), 5), ("ties", with_ties, 7), ("special", special, 10),
                   ("i32", ints(-5, 5, 3, 30), 4), ("wide", normal(2, 3000), 20)]:
    add(f"top_k_values_{name}", "top_k_values", {"k": k}, x)
    add(f"top_k_indices_{name}", "top_k_indices", {"k": k}, x)
add("top_k_values_grad", "top_k_values", {"k": 3}, normal(2, 9), "grad")
# Long lines reach top_k's sliced selection (several slices per line, ties and specials across
# slice boundaries); k above the selection's private limit (128) takes the sort path.
for name, x, k in [("ties_long", rng.integers(0, 4, size=(2, 9000)).astype(np.float32), 30),
                   ("special_long", np.tile(special, 700), 12),
                   ("one_line", normal(40000), 1),
                   ("i32_long", ints(-3, 3, 3, 5000), 25),
                   ("k_above_selection", normal(2, 600), 200)]:
    add(f"top_k_values_{name}", "top_k_values", {"k": k}, x)
    add(f"top_k_indices_{name}", "top_k_indices", {"k": k}, x)

# cumlogsumexp's tangent on lines spanning hundreds in log space (a single reference value
# would underflow there), and lax.associative_scan on a non-commutative combine.
wide = np.array([[-200.0, -150.0, 0.0, 5.0, -300.0, 30.0, 31.0],
                 [50.0, -100.0, -90.0, 0.0, 0.0, 20.0, -400.0]], np.float32)
add("cumlogsumexp_grad_wide", "cumlogsumexp", {"axis": 1, "reverse": 0}, wide, "grad")
add("cumlogsumexp_grad_wide_reverse", "cumlogsumexp", {"axis": 1, "reverse": 1}, wide, "grad")
for name, axis, reverse, x in [("vector", 0, 0, normal(7)), ("one", 0, 0, normal(1)),
                               ("two", 0, 1, normal(2)), ("rows_reverse", 1, 1, normal(3, 6)),
                               ("leading", 0, 0, normal(5, 3)), ("long", 0, 0, normal(1000))]:
    add(f"assoc_affine_{name}", "assoc_affine", {"axis": axis, "reverse": reverse}, x, rtol=1e-5)
add("assoc_affine_grad", "assoc_affine", {"axis": 1, "reverse": 0}, normal(2, 9), "grad")

# Lines of 8 positions per key byte and more sort by radix on CPUs (radix_sort_kernel.cpp): NaNs
# of both signs, both zeros, infinities and ties in one line; batched lines along a leading
# axis; integers of both signs; a second operand carried by the keys; top_k with k above the
# selection's limit (descending order: NaN first, -NaN last).
radix_special = np.tile(np.array([0.0, -0.0, np.nan, -np.nan, 1.0, -1.0, np.inf, -np.inf, 2.0,
                                  -2.5, 1.0, -0.0], np.float32), 420)
rng.shuffle(radix_special)
radix_ties = (rng.integers(-40, 40, size=(4200, 3)) / 8).astype(np.float32)
radix_ints = ints(-(2**31), 2**31 - 1, 3, 4500)
radix_ints[:, ::7] = ints(-3, 3, 3, 643)
for name, dim, x in [("radix_special", 0, radix_special), ("radix_strided", 0, radix_ties),
                     ("radix_i32_rows", 1, radix_ints)]:
    add(f"sort_{name}", "sort", {"dimension": dim}, x)
    add(f"argsort_{name}", "argsort", {"dimension": dim}, x)
add("sort_key_val_radix", "sort_key_val", {"dimension": 1},
    [rng.integers(0, 50, size=(2, 4500)).astype(np.float32), ints(-1000, 1000, 2, 4500)], "keys")
radix_top = np.stack([radix_special[:4200], radix_ties[:, 0]])
add("top_k_values_radix", "top_k_values", {"k": 300}, radix_top)
add("top_k_indices_radix", "top_k_indices", {"k": 300}, radix_top)

# cummax/cummin tangents on ties: JAX differentiates the associative scan of lax.max, whose
# jvp splits a tie's tangent in halves at every combine; NaN results get no tangent.
tied = np.array([[1.0, 3.0, 3.0, 2.0, 3.0, 5.0, 5.0, 5.0, 0.0],
                 [2.0, 2.0, 2.0, 2.0, 1.0, 2.0, 4.0, 4.0, 2.0]], np.float32)
tied_nan = np.array([1.0, 1.0, np.nan, 1.0, 2.0, 2.0], np.float32)
for op in ["cummax", "cummin"]:
    add(f"{op}_grad_ties", op, {"axis": 1, "reverse": 0}, tied, "grad")
    add(f"{op}_grad_ties_reverse", op, {"axis": 1, "reverse": 1}, -tied, "grad")
    add(f"{op}_grad_ties_columns", op, {"axis": 0, "reverse": 0},
        rng.integers(0, 3, size=(17, 3)).astype(np.float32), "grad")
    add(f"{op}_grad_nan", op, {"axis": 0, "reverse": 0}, tied_nan, "grad")

os.makedirs(OUT_DIR, exist_ok=True)
with open(os.path.join(OUT_DIR, "cases.json"), "w") as f:
    json.dump({"jax_version": jax.__version__, "cases": cases}, f)
    f.write("\n")
print(f"wrote {len(cases)} cases to {OUT_DIR}")
