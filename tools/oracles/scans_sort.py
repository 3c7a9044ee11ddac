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
        # 9 significant digits hold an f32 exactly; non-finite values as strings.
        values = [float(f"{v:.9g}") if np.isfinite(v) else str(v) for v in values]
    return {"dtype": WEFT_NAMES[a.dtype], "shape": list(a.shape), "values": values}


def lax_op(name, attrs):
    if name in ("cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"):
        fn = getattr(lax, name)
        return lambda x: fn(x, axis=attrs["axis"], reverse=bool(attrs["reverse"]))
    raise ValueError(name)


rng = np.random.default_rng(28)
cases = []


def add(name, op, attrs, x, transform="none", rtol=1e-5):
    f = lax_op(op, attrs)
    x = np.asarray(x)
    if transform == "none":
        inputs, expected = [x], f(jnp.asarray(x))
    elif transform == "grad":
        w = rng.normal(size=x.shape).astype(np.float32)
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
for op in ["cumsum"]:
    a = lambda axis, reverse: {"axis": axis, "reverse": reverse}  # noqa: E731
    add(f"{op}_vector", op, a(0, 0), normal(7))
    add(f"{op}_vector_reverse", op, a(0, 1), normal(7))
    add(f"{op}_rows", op, a(1, 0), normal(3, 5))
    add(f"{op}_middle_axis_reverse", op, a(1, 1), normal(2, 6, 3))
    add(f"{op}_leading_axis", op, a(0, 0), normal(5, 4))
    # Several blocks per line, and several levels of block totals.
    add(f"{op}_long", op, a(0, 0), normal(2500), rtol=1e-4)
    add(f"{op}_long_strided_reverse", op, a(0, 1), normal(2100, 3), rtol=1e-4)
    add(f"{op}_grad", op, a(1, 0), normal(3, 5), "grad")
    add(f"{op}_grad_reverse", op, a(0, 1), normal(6, 2), "grad")
    add(f"{op}_vmap", op, a(0, 1), normal(4, 6), "vmap")
add("cumsum_i32_wraps", "cumsum", {"axis": 0, "reverse": 0},
    np.array([2**30, 2**30, 2**30, -5, 7], np.int32))
add("cumsum_i32_long", "cumsum", {"axis": 1, "reverse": 1}, ints(-1000, 1000, 2, 2500))

os.makedirs(OUT_DIR, exist_ok=True)
with open(os.path.join(OUT_DIR, "cases.json"), "w") as f:
    json.dump({"jax_version": jax.__version__, "cases": cases}, f)
    f.write("\n")
print(f"wrote {len(cases)} cases to {OUT_DIR}")
