#!/usr/bin/env python3
"""Writes the JAX oracle for weft's transformations: tests/data/transforms_oracle/cases.json.

A table of weft's value primitives (unary, binary, select, convert, layout, reductions,
dot_general, and a few compositions) on random small shapes (fixed seed: rank 0-3, dims 1-5).
For each case it records the inputs, a random tangent per input and a random cotangent per
output, and what JAX computes for them on CPU:

  "jvp":  jax.jvp -> {"primals_out", "tangents_out"}
  "vjp":  jax.vjp's pullback of "cotangents" -> one cotangent per input
  "vmap": jax.vmap over a batch of 3 examples -> {"in_axes", "inputs", "outputs"}

tests/transforms_oracle_test.cpp builds the same function (a C++ twin keyed by "op", reading
"attrs") with weft::lax, runs weft::jvp, weft::vjp and weft::vmap on it and compares with these
values; cases with "jit": true also run each transformation under weft::jit. The build and
the tests never run this script; rerun it only to change the cases (pip install jax), and
commit the JSON it writes:

    python3 tools/oracles/transforms.py

Arrays are {"dtype", "shape", "values"} with weft's dtype names. JAX runs without x64, so
every float is f32. Integer and bool inputs are not differentiated (JAX closes over them);
where JAX would use float0 (their tangents and cotangents, the tangent of an integer output,
the cotangent fed to one) the JSON holds zeros of the value's own dtype, weft's convention.
Inputs avoid points where a derivative is undefined or JAX picks a convention (ties of
max/min and reduce_max/min, zero for sign, non-positive x for log, sqrt and pow).
"""

import json
import os

import numpy as np

os.environ.setdefault("JAX_PLATFORMS", "cpu")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402

OUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "data",
                       "transforms_oracle")

WEFT_NAMES = {np.dtype(np.bool_): "bool", np.dtype(np.int32): "i32",
              np.dtype(np.float32): "f32", np.dtype(np.uint32): "u32"}
NP_TYPES = {"f32": np.float32, "i32": np.int32, "bool": np.bool_}
BATCH = 3

rng = np.random.default_rng(20240612)


def encode(a):
    a = np.asarray(a)
    if a.dtype == np.float32:
        # The shortest decimal that reads back as the same f32 keeps the file small.
        values = [float(str(v)) for v in a.reshape(-1)]
    else:
        values = [int(v) for v in a.reshape(-1).tolist()]
    return {"dtype": WEFT_NAMES[a.dtype], "shape": list(a.shape), "values": values}


def is_float(a):
    return np.asarray(a).dtype == np.float32


# --- random inputs ---------------------------------------------------------------------------

def shape(rank=None, min_rank=0, max_rank=3, max_size=40, min_dim=1):
    """A random shape: rank 0-3, dims 1-5, at most max_size elements."""
    while True:
        r = int(rng.integers(min_rank, max_rank + 1)) if rank is None else rank
        s = tuple(int(d) for d in rng.integers(min_dim, 6, size=r))
        if int(np.prod(s)) <= max_size:
            return s


def uniform(lo, hi):
    return lambda s: rng.uniform(lo, hi, size=s).astype(np.float32)


def magnitude(lo, hi):
    """Random sign, |x| in [lo, hi): away from zero."""
    return lambda s: (rng.uniform(lo, hi, size=s) * rng.choice([-1.0, 1.0], size=s)).astype(
        np.float32)


def ints(lo, hi):
    return lambda s: rng.integers(lo, hi + 1, size=s).astype(np.int32)


def bools(s):
    return rng.integers(0, 2, size=s).astype(np.bool_)


def fixed(value, dtype=np.int32):
    return lambda s: np.full(s, value, dtype)


class Arg:
    """One argument: its per-example shape, how to draw values, and its vmap in_axis."""

    def __init__(self, shape, draw, in_axis=0):
        self.shape, self.draw, self.in_axis = tuple(shape), draw, in_axis


# --- the JAX side of every op; the C++ twin of each is in tests/transforms_oracle_test.cpp ---

UNARY = ["neg", "abs", "sign", "floor", "ceil", "round", "exp", "exp2", "log", "log1p", "expm1",
         "sqrt", "rsqrt", "sin", "cos", "tan", "tanh", "logistic", "erf"]
BINARY = ["add", "sub", "mul", "div", "rem", "pow", "max", "min", "atan2"]
HIGHEST = lax.Precision.HIGHEST


def jax_fn(op, attrs):
    """The function of the case's arguments (a list) returning a list of outputs."""
    if op in UNARY:
        return lambda a: [getattr(lax, op)(a[0])]
    if op in BINARY:
        return lambda a: [getattr(lax, op)(a[0], a[1])]
    if op == "select":
        return lambda a: [lax.select(a[0], a[1], a[2])]
    if op == "convert":
        return lambda a: [lax.convert_element_type(a[0], NP_TYPES[attrs["dtype"]])]
    if op == "broadcast_in_dim":
        return lambda a: [lax.broadcast_in_dim(a[0], attrs["shape"], attrs["dims"])]
    if op == "reshape":
        return lambda a: [lax.reshape(a[0], attrs["shape"])]
    if op == "transpose":
        return lambda a: [lax.transpose(a[0], attrs["permutation"])]
    if op == "slice":
        return lambda a: [lax.slice(a[0], attrs["start"], attrs["limit"], attrs["stride"])]
    if op == "dynamic_slice":
        return lambda a: [lax.dynamic_slice(a[0], a[1:], attrs["sizes"])]
    if op == "dynamic_update_slice":
        return lambda a: [lax.dynamic_update_slice(a[0], a[1], a[2:])]
    if op == "concatenate":
        return lambda a: [lax.concatenate(a, attrs["dimension"])]
    if op == "pad":
        config = list(zip(attrs["low"], attrs["high"], attrs["interior"]))
        return lambda a: [lax.pad(a[0], a[1], config)]
    if op in ("reduce_sum", "reduce_prod", "reduce_max", "reduce_min"):
        return lambda a: [getattr(lax, op)(a[0], tuple(attrs["axes"]))]
    if op in ("argmax", "argmin"):
        return lambda a: [getattr(lax, op)(a[0], attrs["axis"], jnp.int32)]
    if op == "dot_general":
        dims = ((attrs["lhs_contracting"], attrs["rhs_contracting"]),
                (attrs["lhs_batch"], attrs["rhs_batch"]))
        return lambda a: [lax.dot_general(a[0], a[1], dims, precision=HIGHEST)]
    if op == "softplus":
        return lambda a: [lax.log1p(lax.exp(a[0]))]
    if op == "logsumexp":
        # log(sum(exp(x - max))) + max over attrs.axis. (weft has no stop_gradient; with no
        # ties the max's derivative cancels, so this equals jax.nn.logsumexp's.)
        def logsumexp(a):
            x = a[0]
            m = lax.reduce_max(x, (attrs["axis"],))
            keep = [d for d in range(x.ndim) if d != attrs["axis"]]
            mb = lax.broadcast_in_dim(m, x.shape, keep)
            return [lax.log(lax.reduce_sum(lax.exp(x - mb), (attrs["axis"],))) + m]
        return logsumexp
    if op == "dense_tanh":
        # tanh(x @ w + b): x [n, k], w [k, m], b [m].
        def dense(a):
            x, w, b = a
            y = lax.dot_general(x, w, (([1], [0]), ([], [])), precision=HIGHEST)
            return [lax.tanh(y + lax.broadcast_in_dim(b, y.shape, [1]))]
        return dense
    if op == "two_outputs":
        # Two outputs sharing an input: (x * y, sin(x) + y).
        return lambda a: [a[0] * a[1], lax.sin(a[0]) + a[1]]
    raise ValueError(op)


# --- the table -------------------------------------------------------------------------------

CASES = []


def case(name, op, args, attrs=None, jit=False):
    CASES.append({"name": name, "op": op, "args": args, "attrs": attrs or {}, "jit": jit})


UNARY_DOMAIN = {"log": uniform(0.2, 3), "sqrt": uniform(0.2, 3), "rsqrt": uniform(0.2, 3),
                "log1p": uniform(-0.5, 3), "tan": uniform(-1.2, 1.2), "abs": magnitude(0.1, 2),
                "sign": magnitude(0.1, 2), "floor": uniform(-3, 3), "ceil": uniform(-3, 3),
                "round": uniform(-3, 3), "exp": uniform(-2, 2), "exp2": uniform(-2, 2),
                "expm1": uniform(-2, 2), "sin": uniform(-3, 3), "cos": uniform(-3, 3),
                "tanh": uniform(-2, 2), "logistic": uniform(-3, 3), "erf": uniform(-2, 2),
                "neg": uniform(-2, 2)}
for i, op in enumerate(UNARY):
    s = shape()
    # Every fourth one maps over axis 1 of a rank >= 1 input.
    if i % 4 == 3:
        s = shape(min_rank=1)
    case(f"{op}_rank{len(s)}", op, [Arg(s, UNARY_DOMAIN[op], 1 if i % 4 == 3 else 0)],
         jit=op in ("exp", "tanh"))

BINARY_DOMAIN = {"div": (uniform(-2, 2), magnitude(0.5, 2)),
                 "rem": (uniform(-3, 3), magnitude(0.5, 2)),
                 "pow": (uniform(0.5, 2), uniform(-2, 2)),
                 "atan2": (magnitude(0.2, 2), magnitude(0.2, 2))}
for i, op in enumerate(BINARY):
    s = shape(min_rank=1) if i % 3 == 2 else shape()
    dx, dy = BINARY_DOMAIN.get(op, (uniform(-2, 2), uniform(-2, 2)))
    # Every third one shares y across the batch (in_axes None), or maps over axis 1 of x.
    axes = (0, 0) if i % 3 == 0 else (0, None) if i % 3 == 1 else (1, 0)
    case(f"{op}_rank{len(s)}", op, [Arg(s, dx, axes[0]), Arg(s, dy, axes[1])],
         jit=op in ("mul", "pow"))

s = shape(2)
case("select_rank2", "select", [Arg(s, bools), Arg(s, uniform(-2, 2)), Arg(s, uniform(-2, 2))],
     jit=True)
s = shape(1)
case("select_shared_predicate", "select",
     [Arg(s, bools, None), Arg(s, uniform(-2, 2)), Arg(s, uniform(-2, 2), None)])
s = shape(3, max_size=24)
case("select_rank3", "select", [Arg(s, bools, 1), Arg(s, uniform(-2, 2), 2),
                                Arg(s, uniform(-2, 2), 0)])

case("convert_f32_to_f32", "convert", [Arg(shape(2), uniform(-3, 3))], {"dtype": "f32"})
case("convert_f32_to_i32", "convert", [Arg(shape(2), uniform(-5, 5))], {"dtype": "i32"})
case("convert_i32_to_f32", "convert", [Arg(shape(1), ints(-9, 9))], {"dtype": "f32"})

# Layout.
case("broadcast_in_dim_scalar", "broadcast_in_dim", [Arg((), uniform(-2, 2))],
     {"shape": [2, 3], "dims": []}, jit=True)
case("broadcast_in_dim_new_middle_axis", "broadcast_in_dim", [Arg((3, 2), uniform(-2, 2), 1)],
     {"shape": [3, 4, 2], "dims": [0, 2]})
case("broadcast_in_dim_expand_size_one", "broadcast_in_dim", [Arg((1, 3), uniform(-2, 2))],
     {"shape": [4, 3, 2], "dims": [0, 1]})
case("reshape_flatten", "reshape", [Arg((2, 3, 4), uniform(-2, 2))], {"shape": [24]})
case("reshape_split", "reshape", [Arg((6, 2), uniform(-2, 2), 1)], {"shape": [3, 2, 2]},
     jit=True)
case("reshape_to_scalar", "reshape", [Arg((1, 1), uniform(-2, 2))], {"shape": []})
case("transpose_2d", "transpose", [Arg((3, 4), uniform(-2, 2))], {"permutation": [1, 0]})
case("transpose_3d", "transpose", [Arg((2, 3, 4), uniform(-2, 2), 1)],
     {"permutation": [2, 0, 1]}, jit=True)
case("slice_contiguous", "slice", [Arg((5, 4), uniform(-2, 2))],
     {"start": [1, 0], "limit": [4, 3], "stride": [1, 1]})
case("slice_strided", "slice", [Arg((5, 3, 4), uniform(-2, 2), 1)],
     {"start": [0, 1, 1], "limit": [5, 3, 4], "stride": [2, 1, 2]}, jit=True)
case("pad_low_high", "pad", [Arg((3, 2), uniform(-2, 2)), Arg((), uniform(-2, 2), None)],
     {"low": [1, 0], "high": [2, 1], "interior": [0, 0]})
case("pad_interior", "pad", [Arg((3, 2), uniform(-2, 2), 1), Arg((), uniform(-2, 2), None)],
     {"low": [0, 1], "high": [1, 0], "interior": [1, 2]}, jit=True)
case("pad_negative", "pad", [Arg((5, 4), uniform(-2, 2)), Arg((), uniform(-2, 2), None)],
     {"low": [-1, 2], "high": [-2, -1], "interior": [0, 1]})
case("pad_negative_interior_rank1", "pad", [Arg((4,), uniform(-2, 2)),
                                           Arg((), uniform(-2, 2), None)],
     {"low": [-2], "high": [-1], "interior": [2]})
case("concatenate_two", "concatenate", [Arg((2, 3), uniform(-2, 2)), Arg((4, 3), uniform(-2, 2))],
     {"dimension": 0})
case("concatenate_three_axis1", "concatenate",
     [Arg((2, 1, 2), uniform(-2, 2)), Arg((2, 3, 2), uniform(-2, 2), None),
      Arg((2, 2, 2), uniform(-2, 2), 1)], {"dimension": 1}, jit=True)
# dynamic_slice and dynamic_update_slice: in-range, negative (wraps) and too-large (clamped)
# starts, shared across the batch (per-example starts: at the end).
case("dynamic_slice_in_range", "dynamic_slice",
     [Arg((5, 4), uniform(-2, 2)), Arg((), fixed(1), None), Arg((), fixed(2), None)],
     {"sizes": [3, 2]}, jit=True)
case("dynamic_slice_clamped", "dynamic_slice",
     [Arg((4, 3, 2), uniform(-2, 2), 1), Arg((), fixed(3), None), Arg((), fixed(-1), None),
      Arg((), fixed(7), None)], {"sizes": [2, 2, 1]})
case("dynamic_update_slice_in_range", "dynamic_update_slice",
     [Arg((4, 5), uniform(-2, 2)), Arg((2, 3), uniform(-2, 2)), Arg((), fixed(1), None),
      Arg((), fixed(2), None)], jit=True)
case("dynamic_update_slice_clamped", "dynamic_update_slice",
     [Arg((3, 4), uniform(-2, 2), 1), Arg((2, 2), uniform(-2, 2), None), Arg((), fixed(-1), None),
      Arg((), fixed(9), None)])

# Reductions (uniform random f32 has no ties; main() checks).
for op, domain in (("reduce_sum", uniform(-2, 2)), ("reduce_max", uniform(-2, 2)),
                   ("reduce_min", uniform(-2, 2)), ("reduce_prod", uniform(0.5, 1.5))):
    # Dims of at least 2, so that every reduction combines several elements.
    s = shape(3, max_size=30, min_dim=2)
    case(f"{op}_axis1", op, [Arg(s, domain)], {"axes": [1]}, jit=op == "reduce_max")
    s = shape(3, max_size=30, min_dim=2)
    case(f"{op}_axes02", op, [Arg(s, domain, 1)], {"axes": [0, 2]})
    s = shape(2, min_dim=2)
    case(f"{op}_all", op, [Arg(s, domain)], {"axes": [0, 1]})
    case(f"{op}_no_axes", op, [Arg(shape(1, min_dim=2), domain)], {"axes": []})


def with_zeros(draw, count):
    """draw's values with `count` of them (at random places) set to zero."""
    def zeroed(s):
        a = draw(s)
        a.reshape(-1)[rng.choice(a.size, size=count, replace=False)] = 0
        return a
    return zeroed


# The product rule where a factor is zero (JAX's rule does not divide by the operand).
case("reduce_prod_with_zeros", "reduce_prod", [Arg((3, 4), with_zeros(uniform(0.5, 1.5), 3))],
     {"axes": [1]})
case("argmax_axis1", "argmax", [Arg((3, 4), uniform(-2, 2))], {"axis": 1})
case("argmin_axis0", "argmin", [Arg((4, 2, 3), uniform(-2, 2), 1)], {"axis": 0})

# dot_general.
case("dot_matmul", "dot_general", [Arg((3, 4), uniform(-1, 1)), Arg((4, 2), uniform(-1, 1))],
     {"lhs_contracting": [1], "rhs_contracting": [0], "lhs_batch": [], "rhs_batch": []}, jit=True)
case("dot_vector", "dot_general", [Arg((5,), uniform(-1, 1)), Arg((5,), uniform(-1, 1), None)],
     {"lhs_contracting": [0], "rhs_contracting": [0], "lhs_batch": [], "rhs_batch": []})
case("dot_outer", "dot_general", [Arg((3,), uniform(-1, 1), None), Arg((2,), uniform(-1, 1))],
     {"lhs_contracting": [], "rhs_contracting": [], "lhs_batch": [], "rhs_batch": []})
case("dot_matvec", "dot_general",
     [Arg((2, 4), uniform(-1, 1)), Arg((4,), uniform(-1, 1), 0)],
     {"lhs_contracting": [1], "rhs_contracting": [0], "lhs_batch": [], "rhs_batch": []})
case("dot_batched", "dot_general",
     [Arg((2, 3, 4), uniform(-1, 1)), Arg((2, 4, 5), uniform(-1, 1), 1)],
     {"lhs_contracting": [2], "rhs_contracting": [1], "lhs_batch": [0], "rhs_batch": [0]},
     jit=True)
case("dot_batch_not_leading", "dot_general",
     [Arg((4, 3, 2), uniform(-1, 1), 1), Arg((3, 5, 4), uniform(-1, 1), None)],
     {"lhs_contracting": [0], "rhs_contracting": [2], "lhs_batch": [1], "rhs_batch": [0]})
case("dot_two_contracting", "dot_general",
     [Arg((3, 2, 4), uniform(-1, 1)), Arg((4, 5, 2), uniform(-1, 1))],
     {"lhs_contracting": [1, 2], "rhs_contracting": [2, 0], "lhs_batch": [], "rhs_batch": []})

# Compositions: chains of rules.
case("softplus", "softplus", [Arg(shape(2), uniform(-3, 3))], jit=True)
case("logsumexp_axis1", "logsumexp", [Arg((3, 4), uniform(-3, 3))], {"axis": 1})
case("dense_tanh", "dense_tanh",
     [Arg((3, 4), uniform(-1, 1)), Arg((4, 2), uniform(-1, 1), None), Arg((2,), uniform(-1, 1))],
     jit=True)
case("two_outputs", "two_outputs", [Arg((2, 3), uniform(-2, 2)), Arg((2, 3), uniform(-2, 2), 1)])

# vmap with start indices and a padding value that differ per example (weft runs these as a
# scan over the examples). Last, so that the cases above keep their random values.
case("dynamic_slice_batched_starts", "dynamic_slice",
     [Arg((5, 4), uniform(-2, 2)), Arg((), ints(-2, 6)), Arg((), ints(0, 3), None)],
     {"sizes": [2, 3]})
case("dynamic_update_slice_batched_starts", "dynamic_update_slice",
     [Arg((4, 5), uniform(-2, 2), None), Arg((2, 2), uniform(-2, 2)), Arg((), ints(-1, 4)),
      Arg((), ints(0, 5))])
case("pad_batched_value", "pad", [Arg((3, 2), uniform(-2, 2)), Arg((), uniform(-2, 2))],
     {"low": [1, -1], "high": [0, 2], "interior": [1, 0]})

# abs at zero: JAX's rule passes the tangent through where x >= 0 (derivative 1 at 0 and -0).
case("abs_at_zero", "abs",
     [Arg((5,), lambda s: np.broadcast_to(np.array([0.0, -0.0, 1.5, -2.0, 0.0], np.float32), s)
          .copy())], jit=True)


# --- running JAX -----------------------------------------------------------------------------

def zeros_like(a):
    return np.zeros(np.shape(a), np.asarray(a).dtype)


def run(spec):
    f = jax_fn(spec["op"], spec["attrs"])
    args = spec["args"]
    primals = [a.draw(a.shape) for a in args]
    tangents = [uniform(-1, 1)(np.shape(p)) if is_float(p) else zeros_like(p) for p in primals]
    diff = [i for i, p in enumerate(primals) if is_float(p)]

    # Integer and bool arguments are closed over: JAX differentiates the float ones only.
    def of_floats(*floats):
        full = [jnp.asarray(p) for p in primals]
        for i, v in zip(diff, floats):
            full[i] = v
        return f(full)

    outs = [np.asarray(o) for o in f([jnp.asarray(p) for p in primals])]
    primals_out, tangents_out = jax.jvp(of_floats, tuple(primals[i] for i in diff),
                                        tuple(tangents[i] for i in diff))
    tangents_out = [np.asarray(t) if is_float(o) else zeros_like(o)
                    for o, t in zip(outs, tangents_out)]

    cotangents = [uniform(-1, 1)(o.shape) if is_float(o) else zeros_like(o) for o in outs]
    _, pullback = jax.vjp(of_floats, *[primals[i] for i in diff])
    jax_cts = [c if is_float(c) else np.zeros(c.shape, jax.dtypes.float0) for c in cotangents]
    grads = pullback(jax_cts)
    input_cts = [zeros_like(p) for p in primals]
    for i, g in zip(diff, grads):
        input_cts[i] = np.asarray(g)

    in_axes = [a.in_axis for a in args]
    batched = []
    for a, p in zip(args, primals):
        if a.in_axis is None:
            batched.append(p)
        else:
            batched.append(np.stack([a.draw(a.shape) for _ in range(BATCH)], axis=a.in_axis))
    vmapped = jax.vmap(lambda *xs: f(list(xs)), in_axes=tuple(in_axes))(
        *[jnp.asarray(b) for b in batched])

    check_no_ties(spec, primals, batched)
    entry = {"name": spec["name"], "op": spec["op"], "attrs": spec["attrs"],
             "inputs": [encode(p) for p in primals], "tangents": [encode(t) for t in tangents],
             "cotangents": [encode(c) for c in cotangents],
             "jvp": {"primals_out": [encode(o) for o in primals_out],
                     "tangents_out": [encode(t) for t in tangents_out]},
             "vjp": [encode(c) for c in input_cts],
             "vmap": {"in_axes": in_axes, "inputs": [encode(b) for b in batched],
                      "outputs": [encode(o) for o in vmapped]}}
    if spec["jit"]:
        entry["jit"] = True
    return entry


def check_no_ties(spec, primals, batched):
    # JAX splits a derivative between tied elements; the cases avoid having any.
    op = spec["op"]
    for values in (primals, batched):
        if op in ("max", "min"):
            assert not np.any(values[0] == values[1]), spec["name"]
        if op in ("reduce_max", "reduce_min", "argmax", "argmin", "logsumexp"):
            flat = np.asarray(values[0]).reshape(-1)
            assert len(np.unique(flat)) == len(flat), spec["name"]


def main():
    cases = [run(spec) for spec in CASES]
    names = [c["name"] for c in cases]
    assert len(set(names)) == len(names), "case names must be unique"
    os.makedirs(OUT_DIR, exist_ok=True)
    path = os.path.join(OUT_DIR, "cases.json")
    with open(path, "w") as out:
        # One case a line: small, and a regenerated file diffs by case.
        out.write('{"about": "weft::jvp, vjp and vmap against jax (see the script)",\n')
        out.write(f' "generator": "tools/oracles/transforms.py", "jax": "{jax.__version__}",\n')
        out.write(' "cases": [\n')
        out.write(",\n".join(json.dumps(c, separators=(",", ":")) for c in cases))
        out.write("\n]}\n")
    print(f"wrote {len(cases)} cases ({os.path.getsize(path)} bytes) to "
          f"{os.path.normpath(path)}")


if __name__ == "__main__":
    main()
