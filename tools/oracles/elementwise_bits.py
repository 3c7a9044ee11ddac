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
        except (TypeError, ValueError) as e:
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


def main():
    shift_cases().write("shifts.json")
    bitcast_cases().write("bitcast.json")
    transform_cases().write("transforms.json")


if __name__ == "__main__":
    main()
