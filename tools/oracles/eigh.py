#!/usr/bin/env python3
"""Writes the JAX oracle for the symmetric eigendecomposition: tests/data/eigh_oracle/cases.json.

tests/eigh_test.cpp runs every case under weft::jit on the device and in the reference
interpreter on the graph jit traced (one case eagerly too), and compares with what JAX computed
here on CPU. The build and the tests never run this script; rerun it only to change the cases
(pip install jax), and commit the JSON it writes:

    python3 tools/oracles/eigh.py

A case applies one function ("op") to "args" under a "transform":
  op: eigh (jax.lax.linalg.eigh; attrs: lower, symmetrize_input; results v, w), np_eigh
      (jnp.linalg.eigh; attrs: lower (UPLO "L" or "U"); results w, v), eigvalsh
      (jnp.linalg.eigvalsh; result w), eigh_w (lax eigh's w alone) and eigh_vv (V * V,
      elementwise: its value does not depend on the eigenvectors' signs);
  transform: "none"; "grad": the gradient of sum(op(args[:-1]) * args[-1]) with respect to
      "argnums"; "jvp": args are the primals then one tangent per primal, expected the result
      and its tangent; "vmap": vmapped over "in_axes".
"expected" lists the results; "vectors" lists which of them are eigenvectors (unique only up to
each column's sign: they are stored with each column's largest-magnitude entry positive, and
the test normalises weft's alike). "rtol" is the tolerance the test allows (relative to each
result's largest value). Arrays are {"dtype", "shape", "values"} with weft's dtype names.

The matrices are Q diag(lambda) Q^T with Q a random orthogonal matrix (near a permutation) and eigenvalues at least
0.6 apart, so the eigenvectors are well defined; each column's largest entry leads the next by
at least 5% so that the sign normalisation cannot flip between two entries.
"""

import json
import os

import numpy as np

os.environ.setdefault("JAX_PLATFORMS", "cpu")
import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402
from jax.lax import linalg as lax_linalg  # noqa: E402

OUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "data",
                       "eigh_oracle")
WEFT_NAMES = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64"}
RTOL = {"f32": 2e-4, "f64": 1e-9}

rng = np.random.default_rng(31)


def spec(a):
    a = np.asarray(a)
    return {"dtype": WEFT_NAMES[a.dtype], "shape": list(a.shape),
            "values": [float(v) for v in a.reshape(-1).tolist()]}


def well_led(q):
    """Whether each column's largest |entry| leads the next largest by 5%."""
    mags = np.sort(np.abs(q), axis=0)
    return bool(np.all(mags[-1] >= 1.05 * mags[-2])) if q.shape[0] > 1 else True


def symmetric(n):
    """One symmetric n x n matrix with well-separated eigenvalues and well-led eigenvectors."""
    # A rotation near a random permutation: each column has one clearly largest entry.
    while True:
        q, _ = np.linalg.qr(np.eye(n) + rng.normal(scale=0.6 / np.sqrt(n), size=(n, n)))
        q = q[rng.permutation(n)]
        if well_led(q):
            break
    lam = (np.arange(n) - n / 2) + rng.uniform(-0.2, 0.2, n)
    rng.shuffle(lam)
    a = q @ np.diag(lam) @ q.T
    return (a + a.T) / 2


def matrices(shape, dtype):
    n = shape[-1]
    batch = int(np.prod(shape[:-2], dtype=np.int64))
    return np.stack([symmetric(n) for _ in range(batch)]).reshape(shape).astype(dtype)


def normalised(v):
    """v with each column's largest-magnitude entry positive."""
    v = np.array(v)
    lead = np.take_along_axis(v, np.argmax(np.abs(v), axis=-2)[..., None, :], axis=-2)
    return v * np.where(lead < 0, -1, 1).astype(v.dtype)


def function(op, attrs):
    lower = bool(attrs.get("lower", 1))
    if op == "eigh":
        return lambda x: lax_linalg.eigh(x, lower=lower,
                                         symmetrize_input=bool(attrs["symmetrize_input"]))
    if op == "np_eigh":
        return lambda x: tuple(jnp.linalg.eigh(x, UPLO="L" if lower else "U"))
    if op == "eigvalsh":
        return lambda x: jnp.linalg.eigvalsh(x, UPLO="L" if lower else "U")
    if op == "eigh_w":
        return lambda x: lax_linalg.eigh(x)[1]
    if op == "eigh_vv":
        return lambda x: lax_linalg.eigh(x)[0] ** 2
    raise ValueError(op)


# Which results are eigenvectors.
VECTORS = {"eigh": [0], "np_eigh": [1]}

cases = []


def add(name, op, args, attrs=None, transform="none", argnums=None, in_axes=None, rtol=None):
    attrs = attrs or {}
    f = function(op, attrs)

    def results(out):
        return list(out) if isinstance(out, (tuple, list)) else [out]

    if transform == "none":
        expected = results(f(*args))
    elif transform == "grad":
        def loss(*a):
            return jnp.sum(f(*a[:-1]) * a[-1])
        expected = list(jax.grad(loss, argnums=tuple(argnums))(*args))
    elif transform == "jvp":
        half = len(args) // 2
        out, tangent = jax.jvp(f, tuple(args[:half]), tuple(args[half:]))
        expected = [out, tangent]
    elif transform == "vmap":
        expected = results(jax.vmap(f, in_axes=tuple(in_axes))(*args))
    else:
        raise ValueError(transform)
    vectors = VECTORS.get(op, []) if transform in ("none", "vmap") else []
    expected = [normalised(e) if k in vectors else np.asarray(e) for k, e in enumerate(expected)]
    dtype = WEFT_NAMES[np.asarray(args[0]).dtype]
    case = {"name": name, "op": op, "transform": transform, "attrs": attrs,
            "args": [spec(a) for a in args], "expected": [spec(e) for e in expected],
            "vectors": vectors, "rtol": rtol if rtol is not None else RTOL[dtype]}
    if argnums is not None:
        case["argnums"] = argnums
    if in_axes is not None:
        case["in_axes"] = in_axes
    cases.append(case)


def with_garbage(a, lower):
    """a with large values in the triangle that must not be read."""
    n = a.shape[-1]
    keep = np.tril(np.ones((n, n), bool)) if lower else np.triu(np.ones((n, n), bool))
    return np.where(keep, a, rng.uniform(50, 100, a.shape)).astype(a.dtype)


SYM = {"lower": 1, "symmetrize_input": 1}
for n in (1, 2, 3, 8):
    add(f"eigh_f64_n{n}", "eigh", [matrices((n, n), np.float64)], SYM)
add("eigh_f32_n5", "eigh", [matrices((5, 5), np.float32)], SYM)
add("eigh_f32_n33", "eigh", [matrices((33, 33), np.float32)], SYM)
add("eigh_f64_n64", "eigh", [matrices((64, 64), np.float64)], SYM)
add("eigh_f32_n64", "eigh", [matrices((64, 64), np.float32)], SYM, rtol=1e-3)
add("eigh_f32_batch", "eigh", [matrices((2, 3, 4, 4), np.float32)], SYM)
# Symmetrizing: an antisymmetric part disappears.
skew = rng.uniform(-1, 1, (6, 6))
add("eigh_f64_symmetrizes", "eigh", [matrices((6, 6), np.float64) + skew - skew.T], SYM)
# One triangle read, the other garbage.
add("eigh_f64_upper_only", "eigh", [with_garbage(matrices((2, 5, 5), np.float64), False)],
    {"lower": 0, "symmetrize_input": 0})
add("eigh_f64_lower_only", "eigh", [with_garbage(matrices((7, 7), np.float64), True)],
    {"lower": 1, "symmetrize_input": 0})
add("np_eigh_f64", "np_eigh", [matrices((3, 4, 4), np.float64)], {"lower": 1})
add("eigvalsh_f32_upper", "eigvalsh", [matrices((6, 6), np.float32)], {"lower": 0})
add("eigh_f64_grad_w", "eigh_w", [matrices((5, 5), np.float64), rng.uniform(-1, 1, 5)],
    transform="grad", argnums=[0])
add("eigh_f64_grad_vv", "eigh_vv",
    [matrices((2, 4, 4), np.float64), rng.uniform(-1, 1, (2, 4, 4))],
    transform="grad", argnums=[0])
tangent = rng.uniform(-1, 1, (4, 4))
add("eigh_f64_jvp_w", "eigh_w", [matrices((4, 4), np.float64), tangent + tangent.T],
    transform="jvp")
add("eigh_f64_jvp_vv", "eigh_vv", [matrices((4, 4), np.float64), tangent + tangent.T],
    transform="jvp")
add("eigh_f64_vmap", "eigh", [np.moveaxis(matrices((3, 4, 4), np.float64), 0, 1)], SYM,
    transform="vmap", in_axes=[1])

os.makedirs(OUT_DIR, exist_ok=True)
with open(os.path.join(OUT_DIR, "cases.json"), "w") as out:
    json.dump({"jax_version": jax.__version__, "cases": cases}, out, separators=(",", ":"))
print(f"{len(cases)} cases")
