#!/usr/bin/env python3
"""Writes the JAX oracle for the linear algebra primitives: tests/data/linalg_oracle/cases.json.

tests/linalg_test.cpp runs every case eagerly and under weft::jit on the device, and in the
reference interpreter on the graph jit traced, and compares with what JAX computed here on CPU.
The build and the tests never run this script; rerun it only to change the cases (pip install
jax), and commit the JSON it writes:

    python3 tools/oracles/linalg.py

A case applies one function ("op") to "args" under a "transform":
  op: cholesky (jax.lax.linalg.cholesky with symmetrize_input=False), triangular_solve
      (jax.lax.linalg.triangular_solve, "attrs" as weft's IR text names them), np_cholesky
      (jnp.linalg.cholesky; attrs: upper), solve_triangular (jax.scipy.linalg.solve_triangular;
      attrs: trans, lower, unit_diagonal), cho_solve (jax.scipy.linalg.cho_solve; attrs: lower);
  transform: "none"; "grad": the gradient of sum(op(args[:-1]) * args[-1]) with respect to
      "argnums"; "jvp": args are the primals then one tangent per primal, expected the result
      and its tangent; "vmap": vmapped over "in_axes" (null: not batched).
"expected" lists the results; "rtol" is the tolerance the test allows (relative to each
result's largest value). Arrays are {"dtype", "shape", "values"} with weft's dtype names;
non-finite floats are "nan", "inf", "-inf".
"""

import json
import math
import os

import numpy as np

os.environ.setdefault("JAX_PLATFORMS", "cpu")
import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402
import jax.scipy.linalg as jsl  # noqa: E402
from jax.lax import linalg as lax_linalg  # noqa: E402

OUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "data",
                       "linalg_oracle")
WEFT_NAMES = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64",
              np.dtype(np.int32): "i32"}
RTOL = {"f32": 2e-4, "f64": 1e-9}

rng = np.random.default_rng(29)


def value(v, f32=False):
    if isinstance(v, (int, np.integer)):
        return int(v)
    # f32 values as the shortest decimal that reads back as the same f32 (half the text).
    v = float(str(np.float32(v))) if f32 and math.isfinite(v) else float(v)
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v


def spec(a):
    a = np.asarray(a)
    return {"dtype": WEFT_NAMES[a.dtype], "shape": list(a.shape),
            "values": [value(v, a.dtype == np.float32) for v in a.reshape(-1).tolist()]}


def spd(shape, dtype):
    """Well-conditioned symmetric positive definite matrices: M M^T + n I."""
    n = shape[-1]
    m = rng.uniform(-1, 1, shape)
    a = m @ np.swapaxes(m, -1, -2) + n * np.eye(n)
    return a.astype(dtype)


def triangular(shape, dtype, lower, unit_diagonal=False):
    """A well-conditioned triangular matrix with garbage where it must not be read: the other
    triangle, and the diagonal when it is taken as ones."""
    n = shape[-1]
    a = rng.uniform(-1, 1, shape) + 3 * np.eye(n)
    stored = np.tril(np.ones((n, n), bool)) if lower else np.triu(np.ones((n, n), bool))
    if unit_diagonal:
        stored &= ~np.eye(n, dtype=bool)
    return np.where(stored, a, rng.uniform(50, 100, shape)).astype(dtype)


def uniform(shape, dtype):
    return rng.uniform(-1, 1, shape).astype(dtype)


def tri_attrs(left_side=False, lower=False, transpose_a=False, unit_diagonal=False):
    return {"left_side": int(left_side), "lower": int(lower), "transpose_a": int(transpose_a),
            "conjugate_a": 0, "unit_diagonal": int(unit_diagonal)}


def function(op, attrs):
    if op == "cholesky":
        return lambda x: lax_linalg.cholesky(x, symmetrize_input=False)
    if op == "triangular_solve":
        return lambda a, b: lax_linalg.triangular_solve(
            a, b, left_side=bool(attrs["left_side"]), lower=bool(attrs["lower"]),
            transpose_a=bool(attrs["transpose_a"]), conjugate_a=bool(attrs["conjugate_a"]),
            unit_diagonal=bool(attrs["unit_diagonal"]))
    if op == "np_cholesky":
        return lambda x: jnp.linalg.cholesky(x, upper=bool(attrs["upper"]))
    if op == "solve_triangular":
        return lambda a, b: jsl.solve_triangular(a, b, trans=attrs["trans"],
                                                 lower=bool(attrs["lower"]),
                                                 unit_diagonal=bool(attrs["unit_diagonal"]))
    if op == "cho_solve":
        return lambda c, b: jsl.cho_solve((c, bool(attrs["lower"])), b)
    if op == "lu":
        return lambda a: lax_linalg.lu(a)
    if op == "solve":
        return jnp.linalg.solve
    if op == "inv":
        return jnp.linalg.inv
    if op == "slogdet":
        return lambda a: tuple(jnp.linalg.slogdet(a))
    if op == "det":
        return jnp.linalg.det
    raise ValueError(op)


cases = []


def add(name, op, args, attrs=None, transform="none", argnums=None, in_axes=None, rtol=None):
    attrs = attrs or {}
    f = function(op, attrs)
    def first(*a):  # the first result of a function with several (lu, slogdet: logabsdet)
        out = f(*a)
        return out[1 if op == "slogdet" else 0] if isinstance(out, (tuple, list)) else out

    def results(out):
        return list(out) if isinstance(out, (tuple, list)) else [out]

    if transform == "none":
        expected = results(f(*args))
    elif transform == "grad":
        def loss(*a):
            return jnp.sum(first(*a[:-1]) * a[-1])
        g = jax.grad(loss, argnums=tuple(argnums))(*args)
        expected = list(g)
    elif transform == "jvp":
        half = len(args) // 2
        out, tangent = jax.jvp(first, tuple(args[:half]), tuple(args[half:]))
        expected = [out, tangent]
    elif transform == "vmap":
        expected = results(jax.vmap(f, in_axes=tuple(in_axes))(*args))
    else:
        raise ValueError(transform)
    dtype = WEFT_NAMES[np.asarray(args[0]).dtype]
    case = {"name": name, "op": op, "transform": transform, "attrs": attrs,
            "args": [spec(a) for a in args], "expected": [spec(e) for e in expected],
            "rtol": rtol if rtol is not None else RTOL[dtype]}
    if argnums is not None:
        case["argnums"] = argnums
    if in_axes is not None:
        case["in_axes"] = in_axes
    cases.append(case)


# ---- cholesky ---------------------------------------------------------------------------------
for n in (1, 3, 33):
    add(f"cholesky_f32_n{n}", "cholesky", [spd((n, n), np.float32)])
for n in (3, 33):
    add(f"cholesky_f64_n{n}", "cholesky", [spd((n, n), np.float64)])
add("cholesky_f32_batch", "cholesky", [spd((2, 3, 4, 4), np.float32)])
# Only the lower triangle is read: garbage above the diagonal.
upper_garbage = spd((5, 5), np.float64) + np.triu(rng.uniform(10, 20, (5, 5)), 1)
add("cholesky_f64_reads_lower", "cholesky", [upper_garbage])
# Not positive definite: the second matrix has a negative pivot at step 2, the third a NaN, the
# fourth is zero; the first is fine.
not_pd = spd((4, 3, 3), np.float32)
not_pd[1] = np.array([[4, 2, 0], [2, 1, 0], [0, 0, 1]], np.float32)
not_pd[2, 1, 0] = np.nan
not_pd[3] = 0
add("cholesky_f32_not_positive_definite", "cholesky", [not_pd])
add("cholesky_f64_grad", "cholesky", [spd((4, 4), np.float64), uniform((4, 4), np.float64)],
    transform="grad", argnums=[0])
add("cholesky_f64_grad_batch", "cholesky",
    [spd((2, 5, 5), np.float64), uniform((2, 5, 5), np.float64)], transform="grad", argnums=[0])
add("cholesky_f32_grad", "cholesky", [spd((3, 3), np.float32), uniform((3, 3), np.float32)],
    transform="grad", argnums=[0], rtol=1e-3)
add("cholesky_f64_jvp", "cholesky", [spd((4, 4), np.float64), uniform((4, 4), np.float64)],
    transform="jvp")
add("cholesky_f32_vmap", "cholesky", [spd((3, 4, 4), np.float32)], transform="vmap", in_axes=[0])
add("cholesky_f64_vmap_axis1", "cholesky", [np.moveaxis(spd((3, 4, 4), np.float64), 0, 1)],
    transform="vmap", in_axes=[1])

# ---- triangular_solve -------------------------------------------------------------------------
for left_side in (True, False):
    for lower in (True, False):
        for transpose_a in (False, True):
            for unit in (False, True):
                attrs = tri_attrs(left_side, lower, transpose_a, unit)
                a = triangular((2, 4, 4), np.float64, lower, unit)
                b = uniform((2, 4, 3) if left_side else (2, 3, 4), np.float64)
                name = "triangular_solve_f64_{}_{}{}{}".format(
                    "left" if left_side else "right", "lower" if lower else "upper",
                    "_transpose" if transpose_a else "", "_unit" if unit else "")
                add(name, "triangular_solve", [a, b], attrs)
add("triangular_solve_f32_left_lower", "triangular_solve",
    [triangular((5, 5), np.float32, True), uniform((5, 2), np.float32)], tri_attrs(True, True))
add("triangular_solve_f32_right_upper_transpose", "triangular_solve",
    [triangular((3, 6, 6), np.float32, False), uniform((3, 4, 6), np.float32)],
    tri_attrs(False, False, True))
add("triangular_solve_f32_n33", "triangular_solve",
    [triangular((33, 33), np.float32, True), uniform((33, 7), np.float32)], tri_attrs(True, True))
for left_side, lower, transpose_a, unit, m, n in [(True, True, False, False, 4, 3),
                                                   (True, False, True, False, 3, 5),
                                                   (False, True, True, False, 2, 4),
                                                   (False, False, False, True, 5, 3)]:
    attrs = tri_attrs(left_side, lower, transpose_a, unit)
    a = triangular((2, m if left_side else n, m if left_side else n), np.float64, lower, unit)
    b = uniform((2, m, n), np.float64)
    w = uniform((2, m, n), np.float64)
    name = "triangular_solve_f64_grad_{}_{}{}{}".format(
        "left" if left_side else "right", "lower" if lower else "upper",
        "_transpose" if transpose_a else "", "_unit" if unit else "")
    add(name, "triangular_solve", [a, b, w], attrs, transform="grad", argnums=[0, 1])
add("triangular_solve_f64_grad_b_only", "triangular_solve",
    [triangular((4, 4), np.float64, True), uniform((4, 2), np.float64),
     uniform((4, 2), np.float64)], tri_attrs(True, True), transform="grad", argnums=[1])
add("triangular_solve_f64_jvp", "triangular_solve",
    [triangular((4, 4), np.float64, False), uniform((4, 2), np.float64),
     uniform((4, 4), np.float64), uniform((4, 2), np.float64)], tri_attrs(True, False, True),
    transform="jvp")
for left_side in (True, False):
    side = "left" if left_side else "right"
    attrs = tri_attrs(left_side, True)
    a = triangular((3, 4, 4), np.float64, True)
    b = uniform((3, 4, 2) if left_side else (3, 2, 4), np.float64)
    add(f"triangular_solve_f64_vmap_both_{side}", "triangular_solve", [a, b], attrs,
        transform="vmap", in_axes=[0, 0])
    add(f"triangular_solve_f64_vmap_b_{side}", "triangular_solve", [a[0], b], attrs,
        transform="vmap", in_axes=[None, 0])
    add(f"triangular_solve_f64_vmap_b_axis2_{side}", "triangular_solve",
        [a[0], np.moveaxis(b, 0, 2)], attrs, transform="vmap", in_axes=[None, 2])
    add(f"triangular_solve_f64_vmap_a_{side}", "triangular_solve", [a, b[0]], attrs,
        transform="vmap", in_axes=[0, None])

# ---- the numpy layer --------------------------------------------------------------------------
nonsym = spd((2, 4, 4), np.float64) + uniform((2, 4, 4), np.float64) * 0.1
add("np_cholesky_f64_symmetrizes", "np_cholesky", [nonsym], {"upper": 0})
add("np_cholesky_f64_upper", "np_cholesky", [nonsym], {"upper": 1})
add("np_cholesky_f32", "np_cholesky", [spd((6, 6), np.float32)], {"upper": 0})
add("np_cholesky_f64_grad", "np_cholesky", [spd((3, 3), np.float64), uniform((3, 3), np.float64)],
    {"upper": 0}, transform="grad", argnums=[0])
for trans in (0, 1, 2):
    for lower in (False, True):
        add(f"solve_triangular_f64_trans{trans}_{'lower' if lower else 'upper'}",
            "solve_triangular", [triangular((4, 4), np.float64, lower),
                                 uniform((4, 3), np.float64)],
            {"trans": trans, "lower": int(lower), "unit_diagonal": 0})
add("solve_triangular_f64_vector_unit", "solve_triangular",
    [triangular((5, 5), np.float64, True, True), uniform((5,), np.float64)],
    {"trans": 0, "lower": 1, "unit_diagonal": 1})
add("solve_triangular_f64_batch_broadcast", "solve_triangular",
    [triangular((2, 1, 3, 3), np.float64, False), uniform((4, 3, 2), np.float64)],
    {"trans": 1, "lower": 0, "unit_diagonal": 0})
add("solve_triangular_f32", "solve_triangular",
    [triangular((2, 6, 6), np.float32, True), uniform((2, 6, 3), np.float32)],
    {"trans": 0, "lower": 1, "unit_diagonal": 0})
for lower in (True, False):
    c = np.linalg.cholesky(spd((4, 4), np.float64))
    c = c if lower else c.T
    add(f"cho_solve_f64_{'lower' if lower else 'upper'}", "cho_solve",
        [c, uniform((4, 2), np.float64)], {"lower": int(lower)})
c = np.linalg.cholesky(spd((2, 5, 5), np.float64))
add("cho_solve_f64_vector", "cho_solve", [c[0], uniform((5,), np.float64)], {"lower": 1})
add("cho_solve_f64_batch", "cho_solve", [c, uniform((2, 5, 3), np.float64)], {"lower": 1})
add("cho_solve_f64_grad", "cho_solve",
    [c[0], uniform((5, 2), np.float64), uniform((5, 2), np.float64)], {"lower": 1},
    transform="grad", argnums=[0, 1])

# ---- lu and what the numpy layer builds on it ------------------------------------------------
add("lu_f64_n4", "lu", [uniform((4, 4), np.float64)])
add("lu_f32_n33", "lu", [uniform((33, 33), np.float32)])
add("lu_f64_wide", "lu", [uniform((3, 5), np.float64)])
add("lu_f64_tall", "lu", [uniform((5, 3), np.float64)])
add("lu_f32_batch", "lu", [uniform((2, 3, 4, 4), np.float32)])
add("lu_f64_n1", "lu", [uniform((1, 1), np.float64)])
# Exact zero pivot at the last step (singular: the factors stay, no NaN) and a pivot tie (the
# first row wins).
add("lu_f64_singular", "lu", [np.array([[1., 2, 3], [2, 4, 6], [1, 0, 1]])])
add("lu_f64_tie", "lu", [np.array([[1., 2], [-1, 3]])])
add("lu_f64_grad", "lu", [uniform((4, 4), np.float64), uniform((4, 4), np.float64)],
    transform="grad", argnums=[0])
add("lu_f64_grad_wide", "lu", [uniform((3, 5), np.float64), uniform((3, 5), np.float64)],
    transform="grad", argnums=[0])
add("lu_f64_grad_tall_batch", "lu",
    [uniform((2, 5, 3), np.float64), uniform((2, 5, 3), np.float64)],
    transform="grad", argnums=[0])
add("lu_f64_jvp", "lu", [uniform((4, 4), np.float64), uniform((4, 4), np.float64)],
    transform="jvp")
add("lu_f64_vmap", "lu", [uniform((3, 4, 4), np.float64)], transform="vmap", in_axes=[0])
add("solve_f64_vector", "solve", [uniform((4, 4), np.float64) + 2 * np.eye(4),
                                  uniform((4,), np.float64)])
add("solve_f64_matrix_broadcast", "solve", [uniform((2, 1, 4, 4), np.float64) + 2 * np.eye(4),
                                            uniform((3, 4, 2), np.float64)])
add("solve_f32", "solve", [uniform((6, 6), np.float32) + 2 * np.eye(6, dtype=np.float32),
                           uniform((6, 3), np.float32)], rtol=1e-3)
add("solve_f64_grad", "solve", [uniform((4, 4), np.float64) + 2 * np.eye(4),
                                uniform((4, 2), np.float64), uniform((4, 2), np.float64)],
    transform="grad", argnums=[0, 1])
add("inv_f64", "inv", [uniform((2, 5, 5), np.float64) + 2 * np.eye(5)])
slogdet_in = uniform((3, 4, 4), np.float64)
slogdet_in[1] = np.array([[1., 2, 3, 0], [2, 4, 6, 0], [1, 0, 1, 0], [0, 0, 0, 1]])  # singular
slogdet_in[2, :, 0] *= -1
add("slogdet_f64", "slogdet", [slogdet_in])
add("slogdet_f32", "slogdet", [uniform((5, 5), np.float32) + 2 * np.eye(5, dtype=np.float32)],
    rtol=1e-4)
add("slogdet_f64_grad", "slogdet", [uniform((2, 4, 4), np.float64) + 2 * np.eye(4),
                                    uniform((2,), np.float64)], transform="grad", argnums=[0])
for n in (2, 3, 5):
    add(f"det_f64_n{n}", "det", [uniform((2, n, n), np.float64)])
    add(f"det_f64_grad_n{n}", "det", [uniform((n, n), np.float64) + np.eye(n),
                                      np.array(1.5)], transform="grad", argnums=[0])

# ---- sizes that take the blocked kernels' paths ---------------------------------------------
# triangular_solve: tiles of 32 and 16 right-hand sides and single ones (f32), of 16 and 8
# (f64), rows not a multiple of the 8-row block, both sides, substitution upwards and downwards.
add("triangular_solve_f32_left_lower_n100_rhs50", "triangular_solve",
    [triangular((100, 100), np.float32, True), uniform((100, 50), np.float32)],
    tri_attrs(True, True))
add("triangular_solve_f32_right_upper_transpose_n37_rhs45", "triangular_solve",
    [triangular((37, 37), np.float32, False), uniform((45, 37), np.float32)],
    tri_attrs(False, False, True))
add("triangular_solve_f64_right_lower_transpose_unit_rhs25", "triangular_solve",
    [triangular((2, 12, 12), np.float64, True, True), uniform((2, 25, 12), np.float64)],
    tri_attrs(False, True, True, True))

# cholesky: blocks of 64 (32 where local memory is small) with a remainder, a batch of f64 in
# which one matrix fails in its second block and one carries a NaN into later blocks, and a
# gradient (whose solves have 72 right-hand sides on both sides).
add("cholesky_f32_n100", "cholesky", [spd((100, 100), np.float32)])
blocked_not_pd = spd((3, 66, 66), np.float64)
blocked_not_pd[1, 65, 65] = -100
blocked_not_pd[2, 60, 5] = np.nan
add("cholesky_f64_batch_n66_not_positive_definite", "cholesky", [blocked_not_pd])
add("cholesky_f32_grad_n72", "cholesky", [spd((72, 72), np.float32), uniform((72, 72), np.float32)],
    transform="grad", argnums=[0], rtol=1e-3)
# lu: blocks of 32 with edges, and a tall batch whose first matrix has a zero column (singular
# at the block's fifth column). (linalg_test's EdgeShapesMatchTheInterpreter has a wide one.)
add("lu_f32_n100", "lu", [uniform((100, 100), np.float32)])
tall = uniform((2, 70, 36), np.float64)
tall[0, :, 36 - 32 + 4] = 0
add("lu_f64_tall_batch_singular", "lu", [tall])

os.makedirs(OUT_DIR, exist_ok=True)
with open(os.path.join(OUT_DIR, "cases.json"), "w") as out:
    json.dump({"jax_version": jax.__version__, "cases": cases}, out, separators=(",", ":"))
    out.write("\n")
print(f"wrote {len(cases)} cases to {os.path.relpath(OUT_DIR)}/cases.json")
