#!/usr/bin/env python3
"""Writes the JAX oracle for weft's bit operations and remaining elementwise primitives:
tests/data/elementwise_bits_oracle/*.json.

tests/elementwise_bits_test.cpp runs every case eagerly and under weft::jit on the device, and
in the reference interpreter, and compares each result with what jax.lax computed here on CPU.
The build and the tests never run this script; rerun it only to change the cases
(pip install jax), and commit the JSON it writes:

    python3 tools/oracles/elementwise_bits.py

A case is {"name", "op", "params", "args": [array...], "expected": array} or, where JAX
refused the call, "error": the Python exception's name. An array is {"dtype", "shape", "bits"}
with weft's dtype names; "bits" holds integers as they are and floats as their IEEE bit
patterns (unsigned), so that NaN, infinities, -0 and denormals are exact. Floats compare
exactly unless the case gives "ulps" (the largest distance in representable floats allowed).
Cases never hold signalling NaNs: the reference interpreter computes in double, which quiets
them. JAX runs with x64 on, so i64 and f64 operands stay what they are.
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

OUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "data",
                       "elementwise_bits_oracle")

NP_DTYPES = {"bool": np.bool_, "i32": np.int32, "u32": np.uint32, "i64": np.int64,
             "f32": np.float32, "f64": np.float64}
WEFT_NAMES = {np.dtype(v): k for k, v in NP_DTYPES.items()}
BITS_VIEW = {np.dtype(np.float32): np.uint32, np.dtype(np.float64): np.uint64}

I32_MIN, I32_MAX = -2**31, 2**31 - 1
I64_MIN, I64_MAX = -2**63, 2**63 - 1
U32_MAX = 2**32 - 1
NAN, INF = float("nan"), float("inf")


def encode(a):
    a = np.asarray(a)
    name = WEFT_NAMES[a.dtype]
    flat = a.reshape(-1)
    if a.dtype in BITS_VIEW:
        flat = flat.view(BITS_VIEW[a.dtype])
    return {"dtype": name, "shape": list(a.shape), "bits": [int(v) for v in flat]}


def arr(values, dtype, shape=None):
    a = np.array(values, dtype=NP_DTYPES[dtype])
    return a.reshape(shape) if shape is not None else a


def from_bits(bits, dtype, shape=None):
    view = {"f32": np.uint32, "f64": np.uint64}[dtype]
    a = np.array(bits, dtype=view).view(NP_DTYPES[dtype])
    return a.reshape(shape) if shape is not None else a


class Cases:
    def __init__(self):
        self.cases = []

    def add(self, name, op, fn, args, params=None, ulps=None):
        case = {"name": name, "op": op, "params": params or {},
                "args": [encode(a) for a in args]}
        try:
            case["expected"] = encode(fn(*[jnp.asarray(a) for a in args]))
        except (TypeError, ValueError, NotImplementedError) as e:
            case["error"] = type(e).__name__
        if ulps is not None:
            case["ulps"] = ulps
        self.cases.append(case)

    def write(self, file):
        os.makedirs(OUT_DIR, exist_ok=True)
        with open(os.path.join(OUT_DIR, file), "w") as out:
            json.dump({"cases": self.cases}, out, indent=None, separators=(",", ":"))
            out.write("\n")


# Every value paired with every shift amount from -5 to 40 (and to 70 for 64 bits).
SHIFT_VALUES = {
    "i32": [0, 1, -1, 5, -5, 0x12345678, -0x12345678, I32_MIN, I32_MAX],
    "u32": [0, 1, 5, 0x12345678, 0x80000000, 0xdeadbeef, U32_MAX],
    "i64": [0, 1, -1, 5, -5, 0x123456789abcdef0, -0x123456789abcdef0, I64_MIN, I64_MAX],
}


def shift_cases():
    c = Cases()
    ops = {"shift_left": lax.shift_left, "shift_right_logical": lax.shift_right_logical,
           "shift_right_arithmetic": lax.shift_right_arithmetic}
    for dtype, values in SHIFT_VALUES.items():
        top = 70 if dtype == "i64" else 40
        amounts = list(range(0, top + 1))
        if dtype != "u32":
            amounts += [-1, -5, -40]
        else:
            amounts += [U32_MAX, 0x80000000]
        xs = [v for v in values for _ in amounts]
        ns = [n for _ in values for n in amounts]
        for op, fn in ops.items():
            c.add(f"{op}_{dtype}", op, fn, [arr(xs, dtype), arr(ns, dtype)])
    # Shapes other than 1-D, and the type rule's refusals.
    c.add("shift_left_2d", "shift_left", lax.shift_left,
          [arr(range(6), "i32", (2, 3)), arr([1, 2, 3, 31, 32, 33], "i32", (2, 3))])
    c.add("shift_left_f32", "shift_left", lax.shift_left, [arr([1.0], "f32"), arr([1.0], "f32")])
    c.add("shift_left_bool", "shift_left", lax.shift_left,
          [arr([True], "bool"), arr([True], "bool")])
    return c


F32_EDGES = [0, 0x80000000, 1, 0x80000001, 0x007fffff, 0x00800000, 0x3f800000, 0xbf800000,
             0x7f7fffff, 0xff7fffff, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00000, 0x7fc00001,
             0x40490fdb, 0x12345678, 0xdeadbeef]
F64_EDGES = [0, 0x8000000000000000, 1, 0x000fffffffffffff, 0x0010000000000000,
             0x3ff0000000000000, 0xbff0000000000000, 0x7fefffffffffffff, 0x7ff0000000000000,
             0xfff0000000000000, 0x7ff8000000000000, 0xfff8000000000001, 0x400921fb54442d18,
             0x123456789abcdef0, 0xdeadbeefcafef00d]


def is_denormal_f32(bits):
    return (bits >> 23) & 0xff == 0 and bits & 0x7fffff != 0


def is_denormal_f64(bits):
    return (bits >> 52) & 0x7ff == 0 and bits & 0xfffffffffffff != 0


def bitcast_cases():
    c = Cases()

    def add(name, x, to):
        c.add(name, "bitcast_convert", lambda v: lax.bitcast_convert_type(v, NP_DTYPES[to]), [x],
              {"dtype": to})

    f32 = from_bits(F32_EDGES, "f32")
    f64 = from_bits(F64_EDGES, "f64")
    u32 = arr(F32_EDGES, "u32")
    i32 = u32.view(np.int32)
    i64 = np.array(F64_EDGES, dtype=np.uint64).view(np.int64)
    # One width.
    add("f32_to_u32", f32, "u32")
    add("f32_to_i32", f32, "i32")
    add("u32_to_f32", u32, "f32")
    add("i32_to_f32", i32, "f32")
    add("i32_to_u32", i32, "u32")
    add("u32_to_i32", u32, "i32")
    add("f64_to_i64", f64, "i64")
    add("i64_to_f64", i64, "f64")
    add("f32_to_f32", f32.reshape(2, 9), "f32")
    # Across widths: wider to narrower adds a trailing axis, narrower to wider consumes it.
    add("f64_to_u32", f64, "u32")
    add("f64_to_i32", f64.reshape(3, 5), "i32")
    add("i64_to_u32", i64, "u32")
    add("i64_to_f32", i64[:14].reshape(2, 7), "f32")
    add("f64_scalar_to_u32", f64[8], "u32")
    add("u32_to_f64", u32.reshape(9, 2), "f64")
    add("i32_to_i64", i32.reshape(3, 3, 2), "i64")
    add("f32_to_i64", f32[:16].reshape(8, 2), "i64")
    add("u32_pair_to_f64_scalar", u32[:2], "f64")
    # XLA on CPUs flushes denormal results of arithmetic to zero, which weft does not: the
    # arithmetic below leaves them out.
    # Fused with the ops around it: jax.random's floats from bits (bits >> 9 | 1.0's bits, read
    # as f32, minus 1), and f64s split into halves that are summed.
    def uniform_from_bits(b):
        mantissa = lax.shift_right_logical(b, jnp.full_like(b, 9))
        one_to_two = lax.bitcast_convert_type(mantissa | np.uint32(0x3f800000), np.float32)
        return one_to_two - np.float32(1)
    c.add("uniform_from_bits", "uniform_from_bits", uniform_from_bits,
          [arr([0, 1, 511, 512, 0x80000000, 0xdeadbeef, U32_MAX, 0x12345678], "u32", (2, 4))])
    c.add("f64_halves_summed", "f64_halves_summed",
          lambda v: jnp.sum(lax.bitcast_convert_type(v * 2, np.uint32), axis=-1,
                            dtype=np.uint32),
          [from_bits([b for b in F64_EDGES if not is_denormal_f64(b)][:10], "f64").reshape(2, 5)])
    # The refusals: bool, and a last axis that is not the width ratio.
    add("bool_to_i32", arr([True, False], "bool"), "i32")
    add("i32_to_bool", arr([1, 0], "i32"), "bool")
    add("u32_odd_axis_to_f64", u32[:3], "f64")
    add("u32_scalar_to_f64", u32[0], "f64")
    return c


def transform_cases():
    c = Cases()
    x32 = arr([0.5, -1.25, 3.0, 1e-3], "f32")
    # bitcast's tangent is zero (JAX's defjvp_zero): x * bits_roundtrip(x) differentiates as
    # x * const.
    def roundtrip_product(x):
        y = lax.bitcast_convert_type(lax.bitcast_convert_type(x, np.uint32), np.float32)
        return jnp.sum(x * y)
    c.add("grad_bitcast_roundtrip", "grad_bitcast_roundtrip", jax.grad(roundtrip_product), [x32])
    # vmap over a leading axis, bitcast across widths.
    f64 = from_bits(F64_EDGES[:12], "f64").reshape(4, 3)
    c.add("vmap_bitcast_f64_to_u32", "vmap_bitcast_f64_to_u32",
          jax.vmap(lambda v: lax.bitcast_convert_type(v, np.uint32)), [f64])
    u32 = arr(F32_EDGES[:16], "u32").reshape(2, 4, 2)
    c.add("vmap_bitcast_u32_to_f64", "vmap_bitcast_u32_to_f64",
          jax.vmap(lambda v: lax.bitcast_convert_type(v, np.float64)), [u32])
    # vmap of a shift with an unbatched amount.
    xs = arr(range(12), "u32").reshape(3, 4)
    ns = arr([0, 1, 31, 32], "u32")
    c.add("vmap_shift_left_unbatched_amount", "vmap_shift_left_unbatched_amount",
          jax.vmap(lax.shift_left, in_axes=(0, None)), [xs, ns])
    return c


def bit_count_cases():
    c = Cases()
    for dtype, values in SHIFT_VALUES.items():
        values = values + [2, 3, 0x0f0f0f0f, 0x40000000]
        c.add(f"population_count_{dtype}", "population_count", lax.population_count,
              [arr(values, dtype)])
        c.add(f"clz_{dtype}", "clz", lax.clz, [arr(values, dtype)])
    c.add("clz_2d", "clz", lax.clz, [arr([0, 1, 2, 4, 8, 16], "u32", (2, 3))])
    c.add("population_count_f32", "population_count", lax.population_count, [arr([1.0], "f32")])
    c.add("clz_bool", "clz", lax.clz, [arr([True], "bool")])
    return c


def float_bits_cases():
    c = Cases()
    f32 = from_bits(F32_EDGES, "f32")
    f64 = from_bits(F64_EDGES, "f64")
    c.add("is_finite_f32", "is_finite", lax.is_finite, [f32])
    c.add("is_finite_f64", "is_finite", lax.is_finite, [f64.reshape(3, 5)])
    c.add("is_finite_i32", "is_finite", lax.is_finite, [arr([1], "i32")])
    # Every edge towards every edge (NaN compares as NaN, whatever its payload), denormals left
    # out: XLA on CPUs reads them as zeros, which weft does not (it still produces them).
    normal32 = from_bits([b for b in F32_EDGES if not is_denormal_f32(b)], "f32")
    normal64 = from_bits([b for b in F64_EDGES if not is_denormal_f64(b)], "f64")
    for name, edges in (("f32", normal32), ("f64", normal64)):
        xs = np.repeat(edges, len(edges))
        ys = np.tile(edges, len(edges))
        c.add(f"nextafter_{name}", "nextafter", lax.nextafter, [xs, ys], ulps=0)
    c.add("nextafter_i32", "nextafter", lax.nextafter, [arr([1], "i32"), arr([2], "i32")])
    return c


def clamp_cases():
    c = Cases()
    x = arr([-3.0, -1.0, -0.0, 0.0, 0.5, 1.0, 2.0, NAN, INF, -INF], "f32")
    lo = arr([-1.0] * 10, "f32")
    hi = arr([1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, NAN], "f32")
    c.add("clamp_scalar_bounds_f32", "clamp", lax.clamp,
          [arr(-1.0, "f32"), x, arr(1.0, "f32")], ulps=0)
    c.add("clamp_full_bounds_f32", "clamp", lax.clamp, [lo, x, hi], ulps=0)
    c.add("clamp_nan_bound_f32", "clamp", lax.clamp, [arr(NAN, "f32"), x[:6], arr(1.0, "f32")],
          ulps=0)
    c.add("clamp_lo_above_hi_f32", "clamp", lax.clamp, [arr(2.0, "f32"), x[:7], arr(1.0, "f32")],
          ulps=0)
    c.add("clamp_i32", "clamp", lax.clamp,
          [arr([-5, 0, 5, 0], "i32"), arr([I32_MIN, -3, 7, I32_MAX], "i32", (4,)),
           arr(3, "i32")])
    c.add("clamp_u32_2d", "clamp", lax.clamp,
          [arr(2, "u32"), arr([0, 1, 2, 3, 4, U32_MAX], "u32", (2, 3)), arr(3, "u32")])
    c.add("clamp_f64", "clamp", lax.clamp,
          [arr(-0.5, "f64"), arr([-1.0, 0.25, 3.0], "f64"), arr(0.5, "f64")], ulps=0)
    c.add("clamp_shape_mismatch", "clamp", lax.clamp,
          [arr([0.0, 0.0], "f32"), x[:3], arr(1.0, "f32")])
    c.add("clamp_dtype_mismatch", "clamp", lax.clamp,
          [arr(0, "i32"), x[:3], arr(1.0, "f32")])
    return c


POW_YS = [-5, -3, -2, -1, 0, 1, 2, 3, 4, 5, 7, 12, 31]


def integer_pow_cases():
    c = Cases()
    xf = [-2.5, -1.0, -0.0, 0.0, 0.1, 0.5, 1.0, 1.0000001, 3.0, 17.25, 1e10, INF, -INF, NAN]
    for y in POW_YS:
        f = lambda v, y=y: lax.integer_pow(v, y)
        c.add(f"integer_pow_f32_y{y}", "integer_pow", f, [arr(xf, "f32")], {"y": y}, ulps=0)
        c.add(f"integer_pow_f64_y{y}", "integer_pow", f, [arr(xf, "f64")], {"y": y}, ulps=0)
        if y >= 0:
            xi = [-3, -2, -1, 0, 1, 2, 3, 7, 100000]
            c.add(f"integer_pow_i32_y{y}", "integer_pow", f, [arr(xi, "i32")], {"y": y})
            c.add(f"integer_pow_u32_y{y}", "integer_pow", f, [arr(xi[3:], "u32")], {"y": y})
            c.add(f"integer_pow_i64_y{y}", "integer_pow", f, [arr(xi, "i64")], {"y": y})
    c.add("integer_pow_i32_negative", "integer_pow", lambda v: lax.integer_pow(v, -2),
          [arr([2], "i32")], {"y": -2})
    return c


def select_n_cases():
    c = Cases()
    a = arr([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], "f32")
    b = arr([-1.0, -2.0, -3.0, -4.0, -5.0, -6.0], "f32")
    d = arr([10.0, 20.0, 30.0, 40.0, 50.0, 60.0], "f32")
    e = arr([0.5] * 6, "f32")
    flags = arr([True, False, True, True, False, False], "bool")
    c.add("select_n_bool", "select_n", lambda w, *cs: lax.select_n(w, *cs), [flags, a, b])
    c.add("select_n_bool_scalar", "select_n", lambda w, *cs: lax.select_n(w, *cs),
          [arr(True, "bool"), a, b])
    c.add("select_n_one_case", "select_n", lambda w, *cs: lax.select_n(w, *cs), [flags, a])
    c.add("select_n_i32_three", "select_n", lambda w, *cs: lax.select_n(w, *cs),
          [arr([0, 1, 2, 2, 1, 0], "i32"), a, b, d])
    c.add("select_n_i32_four_2d", "select_n", lambda w, *cs: lax.select_n(w, *cs),
          [arr([3, 2, 1, 0, 1, 3], "i32", (2, 3))] + [v.reshape(2, 3) for v in (a, b, d, e)])
    c.add("select_n_i32_scalar", "select_n", lambda w, *cs: lax.select_n(w, *cs),
          [arr(2, "i32"), a, b, d])
    c.add("select_n_i64_cases", "select_n", lambda w, *cs: lax.select_n(w, *cs),
          [arr([0, 1], "i32"), arr([I64_MIN, 1], "i64"), arr([7, I64_MAX], "i64")])
    c.add("select_n_bool_three", "select_n", lambda w, *cs: lax.select_n(w, *cs),
          [flags, a, b, d])
    c.add("select_n_f32_which", "select_n", lambda w, *cs: lax.select_n(w, *cs),
          [arr([0.0] * 6, "f32"), a, b])
    return c


def ordered(a):
    """Float bit patterns as integers ordered like the floats (-0 and +0 one apart)."""
    bits = a.view(np.int32 if a.dtype == np.float32 else np.int64).astype(object)
    return [(-(b & (2**(8 * a.itemsize - 1) - 1)) - 1) if b < 0 else b for b in bits]


def exact_erf_inv(xs, dtype):
    """erf_inv correctly rounded to dtype (mpmath at 50 digits)."""
    import mpmath
    mpmath.mp.dps = 50

    def one(v):
        if math.isnan(v) or abs(v) > 1:
            return NAN
        if abs(v) == 1:
            return math.copysign(INF, v)
        return float(mpmath.erfinv(mpmath.mpf(v))) if v != 0 else v
    return np.array([one(float(v)) for v in xs], dtype=NP_DTYPES[dtype])


def erf_inv_cases():
    c = Cases()
    grid = list(np.linspace(-1, 1, 401)[1:-1])
    near_one = [1 - 2.0**-k for k in range(1, 24)]
    # No denormals: XLA on CPUs flushes them to zero, which weft does not.
    tiny = [1e-3, 1e-10, 1e-30]
    xs32 = sorted(set(float(np.float32(v)) for v in grid + near_one + tiny +
                      [-v for v in near_one + tiny]))
    specials = [0.0, -0.0, 1.0, -1.0, 1.5, -2.0, INF, -INF, NAN,
                float(np.nextafter(np.float32(1), np.float32(0))),
                float(np.nextafter(np.float32(-1), np.float32(0)))]
    # JAX's own erf_inv is up to 44 ulps from the correctly rounded value in f32 at these
    # points (near 0.99988, where Giles' two polynomials meet; 58 at 0.99984) and up to 244827 in f64 (near 1 - 2^-28). weft's
    # f32 device function follows JAX's (within "ulps" of it); the reference interpreter, and
    # weft's f64 device function, compute it to double precision: within "exact_ulps" of "exact".
    x32 = arr(xs32 + specials, "f32")
    c.add("erf_inv_f32", "erf_inv", lax.erf_inv, [x32], ulps=4)
    c.cases[-1].update(exact=encode(exact_erf_inv(x32, "f32")), exact_ulps=1)
    near_one64 = [1 - 2.0**-k for k in range(1, 53, 3)]
    xs64 = grid + near_one64 + [-v for v in near_one64] + tiny + [1e-300]
    x64 = arr(xs64 + specials, "f64")
    c.add("erf_inv_f64", "erf_inv", lax.erf_inv, [x64], ulps=4)
    c.cases[-1].update(exact=encode(exact_erf_inv(x64, "f64")), exact_ulps=2,
                       device_reference="exact")
    c.add("erf_inv_i32", "erf_inv", lax.erf_inv, [arr([0], "i32")])
    return c


def step2_transform_cases():
    c = Cases()
    x = arr([-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, 3.0], "f32")
    # Full-shape bounds: JAX's clamp jvp refuses a scalar bound's tangent.
    lo = arr([-1.0, -1.0, -1.0, -1.0, -1.0, -1.0, 3.0, -1.0], "f32")
    hi = arr([1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 2.5], "f32")
    for argnum, name in enumerate(("lo", "x", "hi")):
        c.add(f"grad_clamp_{name}", f"grad_clamp_{name}",
              jax.grad(lambda *a: jnp.sum(lax.clamp(*a)), argnums=argnum), [lo, x, hi])
    xp = arr([-1.5, -0.5, 0.25, 0.75, 2.0], "f32")
    for y in (-2, 0, 1, 2, 3, 5):
        c.add(f"grad_integer_pow_y{y}", "grad_integer_pow",
              jax.grad(lambda v, y=y: jnp.sum(lax.integer_pow(v, y))), [xp], {"y": y}, ulps=1)
    c.add("grad_erf_inv", "grad_erf_inv", jax.grad(lambda v: jnp.sum(lax.erf_inv(v))),
          [arr([-0.99, -0.5, -0.1, 0.0, 0.3, 0.9], "f32")], ulps=16)
    which = arr([0, 1, 2, 1], "i32")
    cs = [arr([1.0, 2.0, 3.0, 4.0], "f32"), arr([5.0, 6.0, 7.0, 8.0], "f32"),
          arr([9.0, 10.0, 11.0, 12.0], "f32")]
    c.add("grad_select_n_case1", "grad_select_n_case1",
          jax.grad(lambda w, a, b, d: jnp.sum(lax.select_n(w, a, b, d) ** 2), argnums=2),
          [which] + cs)
    xb = arr([[-2.0, 0.0, 2.0], [-0.5, 0.5, 1.5]], "f32")
    c.add("vmap_clamp_batched_scalar_lo", "vmap_clamp_batched_scalar_lo",
          jax.vmap(lax.clamp, in_axes=(0, 0, None)),
          [arr([-1.0, 0.0], "f32"), xb, arr(1.0, "f32")])
    c.add("vmap_select_n_batched_scalar_which", "vmap_select_n_batched_scalar_which",
          jax.vmap(lambda w, a, b: lax.select_n(w, a, b)),
          [arr([1, 0], "i32"), xb, -xb])
    c.add("jvp_nextafter", "jvp_nextafter",
          jax.grad(lambda v: jnp.sum(lax.nextafter(v, v + 1))), [x])
    return c


def np_cases():
    c = Cases()
    xi = arr([-8, -1, 0, 1, 5, I32_MAX, I32_MIN], "i32")
    ni = arr([1, 31, 32, 0, 2, 1, 40], "i32")
    c.add("np_left_shift_i32", "np_left_shift", jnp.left_shift, [xi, ni])
    c.add("np_right_shift_i32", "np_right_shift", jnp.right_shift, [xi, ni])
    xu = arr([0x80000000, 1, 0, U32_MAX, 5, 12, 7], "u32")
    c.add("np_right_shift_u32", "np_right_shift", jnp.right_shift, [xu, ni.astype(np.uint32)])
    c.add("np_left_shift_broadcast", "np_left_shift", jnp.left_shift,
          [arr([[1], [3]], "i32"), arr([0, 1, 2], "i32")])
    c.add("np_nextafter_f32", "np_nextafter", jnp.nextafter,
          [arr([1.0, 0.0, -0.0, INF], "f32"), arr([2.0, -1.0, 1.0, 0.0], "f32")])
    c.add("np_nextafter_i32", "np_nextafter", jnp.nextafter,
          [arr([1, 0], "i32"), arr([2, -1], "i32")])
    xf = arr([-1.5, 0.5, 2.0, 3.0], "f32")
    for y in (-2, 0, 3, 10):
        c.add(f"np_power_int_f32_{y}", "np_power_int", lambda v, y=y: jnp.power(v, y), [xf],
              {"y": y}, ulps=0)
    c.add("np_power_int_i32_5", "np_power_int", lambda v: jnp.power(v, 5),
          [arr([-3, 2, 7, 100], "i32")], {"y": 5})
    c.add("np_power_int_bool_2", "np_power_int", lambda v: jnp.power(v, 2),
          [arr([True, False], "bool")], {"y": 2})
    c.add("np_power_int_i32_negative", "np_power_int", lambda v: jnp.power(v, -1),
          [arr([2], "i32")], {"y": -1})
    x = arr([-2.0, -0.5, 0.0, 0.5, 2.0], "f32")
    c.add("np_select", "np_select",
          lambda c0, c1, a, b: jnp.select([c0, c1], [a, b], default=7),
          [x < 0, x < 1, x * 10, arr([1.0], "f32")], {"default": 7})
    c.add("np_select_int_choices", "np_select",
          lambda c0, c1, a, b: jnp.select([c0, c1], [a, b], default=-1),
          [arr([True, False, False], "bool"), arr([True, True, False], "bool"),
           arr([1, 2, 3], "i32"), arr([4, 5, 6], "i32")], {"default": -1})
    return c


def main():
    shift_cases().write("shifts.json")
    bitcast_cases().write("bitcast.json")
    transform_cases().write("transforms.json")
    bit_count_cases().write("bit_counts.json")
    float_bits_cases().write("float_bits.json")
    clamp_cases().write("clamp.json")
    integer_pow_cases().write("integer_pow.json")
    select_n_cases().write("select_n.json")
    erf_inv_cases().write("erf_inv.json")
    step2_transform_cases().write("transforms_more.json")
    np_cases().write("np.json")


if __name__ == "__main__":
    main()
