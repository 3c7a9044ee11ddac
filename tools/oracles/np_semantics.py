#!/usr/bin/env python3
"""Writes the JAX oracle for weft's numpy layer: tests/data/np_oracle/*.json.

tests/np_semantics_test.cpp runs every case eagerly, under weft::jit on the device and in the
reference interpreter, and compares each result (dtype, shape, values, sign of zero) with
what jax.numpy / jax.lax computed here on CPU. The build and the tests never run this script;
rerun it only to change the cases (pip install jax), and commit the JSON it writes:

    python3 tools/oracles/np_semantics.py

Arrays are {"array": {"dtype", "shape", "values"}} with weft's dtype names; non-finite floats
are the strings "nan", "inf", "-inf". Scalars are {"scalar": {"kind": int|float|bool, "value"}}
and stand for C++ scalars, which weft types as JAX types Python scalars. An array with
"literal": true is a weft literal (Array::scalar_int), not a device array. A case whose JAX
call raised carries "error": the Python exception's name instead of "expected".

JAX runs without x64, as by default, except for cases that need i64 or f64 operands. There,
where JAX's x64 default float (f64) appears only because of a weakly typed Python float,
the expected result is converted to f32: weft's default float is f32 on every device, as
JAX's is without x64.
"""

import json
import math
import os
import sys

import numpy as np

os.environ.setdefault("JAX_PLATFORMS", "cpu")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402

OUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "data",
                       "np_oracle")

NP_DTYPES = {"bool": np.bool_, "i32": np.int32, "u32": np.uint32, "i64": np.int64,
             "f32": np.float32, "f64": np.float64}
WEFT_NAMES = {np.dtype(v): k for k, v in NP_DTYPES.items()}

I32_MIN, I32_MAX = -2**31, 2**31 - 1
I64_MIN, I64_MAX = -2**63, 2**63 - 1
U32_MAX = 2**32 - 1
NAN, INF = float("nan"), float("inf")


def array(values, dtype, shape=None, literal=False):
    spec = {"array": {"dtype": dtype, "shape": list(shape) if shape is not None else [len(values)],
                      "values": list(values)}}
    if literal:
        spec["literal"] = True
    return spec


def scalar(value):
    kind = "bool" if isinstance(value, bool) else "int" if isinstance(value, int) else "float"
    return {"scalar": {"kind": kind, "value": value}}


def to_jax(arg):
    if "scalar" in arg:
        return arg["scalar"]["value"]
    a = arg["array"]
    values = np.array(a["values"], dtype=NP_DTYPES[a["dtype"]]).reshape(a["shape"])
    return jnp.asarray(values)


def encode_value(v, is_float):
    if not is_float:
        return int(v)
    v = float(v)
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v


def encode_args(args):
    out = []
    for arg in args:
        arg = json.loads(json.dumps(arg))  # a copy
        if "array" in arg:
            is_float = arg["array"]["dtype"] in ("f32", "f64")
            arg["array"]["values"] = [encode_value(v, is_float) for v in arg["array"]["values"]]
        elif arg["scalar"]["kind"] == "float":
            arg["scalar"]["value"] = encode_value(arg["scalar"]["value"], True)
        out.append(arg)
    return out


def encode_result(result, args, x64):
    r = np.asarray(result)
    if x64 and r.dtype == np.float64 and not any(
            "array" in a and a["array"]["dtype"] == "f64" for a in args):
        r = r.astype(np.float32)  # JAX's x64 default float; weft's default float is f32
    dtype = WEFT_NAMES[r.dtype]
    return {"dtype": dtype, "shape": list(r.shape),
            "values": [encode_value(v, dtype in ("f32", "f64")) for v in r.reshape(-1).tolist()]}


class Oracle:
    def __init__(self):
        self.cases = []

    def case(self, name, op, args, fn, attrs=None, x64=False, rtol=0.0):
        """fn receives the JAX values of args and returns JAX's result."""
        entry = {"name": name, "op": op, "args": encode_args(args)}
        if attrs:
            entry["attrs"] = attrs
        if rtol:
            entry["rtol"] = rtol
        with jax.enable_x64(x64):
            try:
                entry["expected"] = encode_result(fn(*[to_jax(a) for a in args]), args, x64)
            except (TypeError, ValueError, OverflowError) as e:
                entry["error"] = type(e).__name__
        self.cases.append(entry)

    def write(self, file_name, about):
        path = os.path.join(OUT_DIR, file_name)
        with open(path, "w") as f:
            json.dump({"about": about, "generator": "tools/oracles/np_semantics.py",
                       "jax_version": jax.__version__, "cases": self.cases}, f,
                      separators=(",", ":"))
            f.write("\n")
        print(f"{path}: {len(self.cases)} cases, {os.path.getsize(path)} bytes")


def column(values, dtype, literal=False):
    return array(values, dtype, [len(values), 1], literal)


def row(values, dtype):
    return array(values, dtype, [1, len(values)])


def division():
    o = Oracle()
    grids = {
        "i32": ([-7, -6, -1, 0, 1, 6, 7, I32_MIN, I32_MAX], [-3, -1, 0, 1, 3, I32_MIN], False),
        "i64": ([-7, -6, -1, 0, 1, 6, 7, I64_MIN, I64_MAX], [-3, -1, 0, 1, 3, I64_MIN], True),
        "u32": ([0, 1, 6, 7, U32_MAX], [0, 1, 3, U32_MAX], False),
        "f32": ([-7.0, -6.0, -1.0, -0.0, 0.0, 1.0, 6.0, 7.0, 5.5, -5.5, INF, -INF, NAN],
                [-3.0, -1.0, -0.0, 0.0, 1.0, 3.0, 2.5, INF, -INF, NAN], False),
        "f64": ([-7.0, -0.0, 0.0, 7.0, 5.5, -5.5], [-3.0, 0.0, 2.5, -INF], True),
    }
    for dtype, (xs, ys, x64) in grids.items():
        args = [column(xs, dtype), row(ys, dtype)]
        o.case(f"remainder_{dtype}", "remainder", args, jnp.remainder, x64=x64)
        o.case(f"floor_divide_{dtype}", "floor_divide", args, jnp.floor_divide, x64=x64)
        o.case(f"fmod_{dtype}", "fmod", args, jnp.fmod, x64=x64)
    # Promotion meets division: mixed dtypes, bools, weakly typed scalars on either side.
    o.case("operator_percent_i32", "%", [column([-7, 0, 7], "i32"), row([-3, 0, 3], "i32")],
           lambda x, y: x % y)
    mixed = [column([-7, -1, 0, 5], "i32"), row([3, 0, 2], "u32")]
    # i32 with u32 is i64, which JAX has only with x64.
    o.case("remainder_i32_u32", "remainder", mixed, jnp.remainder, x64=True)
    o.case("floor_divide_i32_u32", "floor_divide", mixed, jnp.floor_divide, x64=True)
    bools = [column([False, True], "bool"), row([False, True], "bool")]
    o.case("remainder_bool", "remainder", bools, jnp.remainder)
    o.case("floor_divide_bool", "floor_divide", bools, jnp.floor_divide)
    ints = array([-7, -2, 0, 3, 8], "i32")
    for s in (-3, 0, 2.5):
        o.case(f"i32_percent_scalar_{s}", "%", [ints, scalar(s)], lambda x, y: x % y)
        o.case(f"scalar_{s}_percent_i32", "%", [scalar(s), ints], lambda x, y: x % y)
    o.case("u32_percent_scalar_3", "%", [array([0, 5, U32_MAX], "u32"), scalar(3)],
           lambda x, y: x % y)
    o.case("divide_i32", "divide", [ints, array([2, 2, 0, -2, 3], "i32")], jnp.divide)
    o.write("division.json", "np::remainder, %, np::floor_divide, np::fmod, np::divide")


def rounding():
    o = Oracle()
    halves = [-4.5, -3.5, -2.5, -1.5, -0.5, -0.0, 0.0, 0.5, 1.5, 2.5, 3.5, 4.5]
    near = [0.49999997, -0.49999997, 0.50000006, 2.5000002, 1.4999999, -1.4999999]
    large = [4194304.5, 8388607.5, -8388607.5, 8388608.0, 8388609.0, 16777216.0, 1e30, -1e30,
             3.4e38]
    special = [NAN, INF, -INF]
    f32 = array(halves + near + large + special, "f32")
    o.case("round_f32", "round", [f32], jnp.round)
    o.case("floor_f32", "floor", [f32], jnp.floor)
    o.case("ceil_f32", "ceil", [f32], jnp.ceil)
    # Subnormals only where flushing them to zero (as XLA on CPU does) cannot change the result.
    o.case("round_f32_subnormal", "round", [array([1e-40, -1e-40], "f32")], jnp.round)
    f64 = array([-2.5, -0.5, -0.0, 0.5, 1.5, 2.5, 4503599627370495.5, -4503599627370495.5,
                 4503599627370497.0, NAN, -INF], "f64")
    o.case("round_f64", "round", [f64], jnp.round, x64=True)
    ints = array([-3, 0, 7, I32_MAX], "i32")
    o.case("round_i32", "round", [ints], jnp.round)
    o.case("floor_i32", "floor", [ints], jnp.floor)
    o.case("ceil_bool", "ceil", [array([True, False], "bool")], jnp.ceil)
    o.write("rounding.json", "np::round (halves to even), np::floor, np::ceil")


def promotion():
    o = Oracle()
    arrays = {
        "bool": (array([True, False, True], "bool"), False),
        "i32": (array([-2, 0, 5], "i32"), False),
        "u32": (array([0, 5, 7], "u32"), False),
        "i64": (array([-2, 0, 5], "i64"), True),
        "f32": (array([-1.5, 0.0, 5.0], "f32"), False),
        "f64": (array([-1.5, 0.0, 5.0], "f64"), True),
    }
    # Each scalar kind with each dtype, on the right (+, >) and on the left (-); an integral
    # float (2.0) is still a float. The remaining operators share this code path.
    for dtype, (arr, x64) in arrays.items():
        for s in [3, 2.0, True]:
            o.case(f"{dtype}+{s}", "+", [arr, scalar(s)], lambda x, y: x + y, x64=x64)
            o.case(f"{dtype}>{s}", ">", [arr, scalar(s)], lambda x, y: x > y, x64=x64)
            o.case(f"{s}-{dtype}", "-", [scalar(s), arr], lambda x, y: x - y, x64=x64)
        o.case(f"{dtype}*2.5", "*", [arr, scalar(2.5)], lambda x, y: x * y, x64=x64)
    u32 = array([0, 5, U32_MAX], "u32")
    o.case("u32_+_-1_wraps", "+", [u32, scalar(-1)], lambda x, y: x + y)
    o.case("u32_>_-1_wraps", ">", [u32, scalar(-1)], lambda x, y: x > y)
    o.case("i32_+_2^40_overflows", "+", [arrays["i32"][0], scalar(2**40)], lambda x, y: x + y)
    o.case("i32_+_2^31_overflows", "+", [arrays["i32"][0], scalar(2**31)], lambda x, y: x + y)
    o.case("i32_+_-2^31", "+", [arrays["i32"][0], scalar(-2**31)], lambda x, y: x + y)
    # Array with array: the promotion lattice.
    for a, b in [("bool", "i32"), ("i32", "u32"), ("u32", "i64"), ("i64", "f32"), ("i32", "f32"),
                 ("u32", "f32"), ("bool", "f32"), ("f32", "f64")]:
        x64 = "i64" in (a, b) or "f64" in (a, b) or (a, b) == ("i32", "u32")
        o.case(f"{a}_+_{b}", "+", [arrays[a][0], arrays[b][0]], lambda x, y: x + y, x64=x64)
    # Other functions that take scalars.
    ints = array([-3, 0, 1, 2, 4], "i32")
    o.case("clip_i32_int_bounds", "clip", [ints, scalar(0), scalar(2)], jnp.clip)
    o.case("clip_i32_float_bounds", "clip", [ints, scalar(0.5), scalar(2.5)], jnp.clip)
    o.case("clip_i32_integral_float_bounds", "clip", [ints, scalar(0.0), scalar(2.0)], jnp.clip)
    o.case("clip_f32_nan_and_crossed_bounds", "clip",
           [array([NAN, -5.0, 0.5, 5.0], "f32"), scalar(3), scalar(1)], jnp.clip)
    cond = array([True, False, True, False, True], "bool")
    o.case("where_i32_float_scalar", "where", [cond, ints, scalar(0.0)], jnp.where)
    o.case("where_int_scalar_i32", "where", [cond, scalar(7), ints], jnp.where)
    o.case("where_bool_int_scalar", "where", [cond, cond, scalar(2)], jnp.where)
    o.case("full_int", "full", [scalar(7)], lambda v: jnp.full((3,), v), attrs={"shape": [3]})
    o.case("full_float", "full", [scalar(7.0)], lambda v: jnp.full((3,), v), attrs={"shape": [3]})
    o.case("full_bool", "full", [scalar(True)], lambda v: jnp.full((3,), v), attrs={"shape": [3]})
    o.case("full_like_i32_float", "full_like", [ints, scalar(2.7)], jnp.full_like)
    o.case("arange_int", "arange", [scalar(5)], jnp.arange)
    o.case("arange_float", "arange", [scalar(5.0)], jnp.arange)
    o.case("arange_int_step", "arange", [scalar(1), scalar(10), scalar(3)], jnp.arange)
    o.case("arange_negative_step", "arange", [scalar(5), scalar(0), scalar(-2)], jnp.arange)
    o.case("arange_float_step", "arange", [scalar(0), scalar(2), scalar(0.25)], jnp.arange)
    o.case("arange_inexact_step", "arange", [scalar(0), scalar(1), scalar(0.1)], jnp.arange)
    o.write("promotion.json", "weakly typed C++ scalars, the promotion lattice, clip/where/full/"
            "arange")


def dynamic_slices():
    o = Oracle()
    # Operand of 6, slices of 2: starts below -6 wrap to negative and clamp to 0, starts past
    # 4 clamp to 4.
    x = array(list(range(6)), "i32")
    update = array([100, 101], "i32")
    starts = {"i32": ([-9, -7, -6, -3, -1, 0, 5, 9, I32_MIN], False),
              "i64": ([-2, I64_MIN], True),
              "u32": ([3, 9, U32_MAX], False)}
    for dtype, (values, x64) in starts.items():
        for s in values:
            start = array([s], dtype, [])
            o.case(f"dynamic_slice_{dtype}_{s}", "dynamic_slice", [x, start],
                   lambda a, i: lax.dynamic_slice(a, (i,), (2,)), attrs={"sizes": [2]}, x64=x64)
            o.case(f"dynamic_update_slice_{dtype}_{s}", "dynamic_update_slice", [x, update, start],
                   lambda a, u, i: lax.dynamic_update_slice(a, u, (i,)), x64=x64)
    for s in (-3, 5):
        literal = array([s], "i32", [], literal=True)
        o.case(f"dynamic_slice_literal_{s}", "dynamic_slice", [x, literal],
               lambda a, i: lax.dynamic_slice(a, (i,), (2,)), attrs={"sizes": [2]})
        o.case(f"dynamic_update_slice_literal_{s}", "dynamic_update_slice", [x, update, literal],
               lambda a, u, i: lax.dynamic_update_slice(a, u, (i,)))
    m = array(list(range(12)), "f32", [3, 4])
    patch = array([-1.0, -2.0, -3.0, -4.0], "f32", [2, 2])
    for r, c in [(-1, -4), (-2, 3), (-9, 1)]:
        start_dtype = "i64" if c == 3 else "i32"  # jax.lax wants one dtype for all starts
        rs, cs = array([r], start_dtype, []), array([c], start_dtype, [])
        o.case(f"dynamic_slice_2d_{r}_{c}", "dynamic_slice", [m, rs, cs],
               lambda a, i, j: lax.dynamic_slice(a, (i, j), (2, 2)), attrs={"sizes": [2, 2]},
               x64=c == 3)
        o.case(f"dynamic_update_slice_2d_{r}_{c}", "dynamic_update_slice", [m, patch, rs, cs],
               lambda a, u, i, j: lax.dynamic_update_slice(a, u, (i, j)), x64=c == 3)
    o.write("dynamic_slice.json", "lax::dynamic_slice and lax::dynamic_update_slice starts")


def review():
    o = Oracle()
    b = array([True, False, True], "bool")
    b2 = array([True, True, False], "bool")
    i = array([-3, 0, 7], "i32")
    u = array([0, 1, 5], "u32")
    f = array([-2.0, -0.0, 0.0, 3.0, NAN, INF, -INF], "f32")
    # bool arithmetic and bitwise/logical functions with promotion
    o.case("add_bool", "add", [b, b2], jnp.add)
    o.case("multiply_bool", "multiply", [b, b2], jnp.multiply)
    o.case("maximum_bool", "maximum", [b, b2], jnp.maximum)
    o.case("minimum_bool", "minimum", [b, b2], jnp.minimum)
    o.case("subtract_bool", "subtract", [b, b2], jnp.subtract)
    o.case("negative_bool", "negative", [b], jnp.negative)
    o.case("less_bool", "less", [b, b2], jnp.less)
    o.case("bitwise_and_bool_i32", "&", [b, i], lambda x, y: x & y)
    o.case("bitwise_or_i32_scalar", "|", [i, scalar(1)], lambda x, y: x | y)
    o.case("bitwise_xor_bool_true", "^", [b, scalar(True)], lambda x, y: x ^ y)
    o.case("bitwise_and_i32_float", "&", [i, scalar(2.0)], lambda x, y: x & y)
    o.case("invert_i32", "~", [i], lambda x: ~x)
    o.case("invert_bool", "~", [b], lambda x: ~x)
    o.case("logical_not_i32", "!", [i], jnp.logical_not)
    o.case("logical_not_f32", "!", [f], jnp.logical_not)
    o.case("logical_and_i32_f32", "logical_and", [i, array([0.0, 2.0, NAN], "f32")],
           jnp.logical_and)
    # unary functions on integers and bools, sign of zero, NaN
    o.case("abs_bool", "abs", [b], jnp.abs)
    o.case("abs_i32_min", "abs", [array([I32_MIN, -1, 0], "i32")], jnp.abs)
    o.case("sign_f32", "sign", [f], jnp.sign)
    o.case("sign_u32", "sign", [u], jnp.sign)
    o.case("sign_bool", "sign", [b], jnp.sign)
    o.case("exp_i32", "exp", [i], jnp.exp, rtol=1e-6)
    o.case("sqrt_bool", "sqrt", [b], jnp.sqrt)
    o.case("arctan2_i32", "arctan2", [i, array([1, -1, 0], "i32")], jnp.arctan2, rtol=1e-6)
    o.case("isnan_f32", "isnan", [f], jnp.isnan)
    o.case("isinf_f32", "isinf", [f], jnp.isinf)
    o.case("isfinite_f32", "isfinite", [f], jnp.isfinite)
    o.case("isfinite_i32", "isfinite", [i], jnp.isfinite)
    o.case("relu_bool", "relu", [b], jax.nn.relu)
    o.case("relu_f32", "relu", [array([NAN, -1.0, 2.0], "f32")], jax.nn.relu)
    o.case("power_i32_negative_exponents", "power",
           [array([2, 1, -1, -1, 0, 3, -2], "i32"), array([-1, -2, -3, -4, 2, 0, 3], "i32")],
           jnp.power)
    o.case("power_bool", "power", [b, b2], jnp.power)
    o.case("power_u32", "power", [u, array([3, 2, 2], "u32")], jnp.power)
    # reductions
    m = array([1.0, NAN, 3.0, NAN, 3.0, -1.0], "f32", [2, 3])
    ties = array([3, 1, 3, 0, 2, 2], "i32", [2, 3])
    o.case("max_bool", "max", [b], jnp.max)
    o.case("min_bool", "min", [b], jnp.min)
    o.case("sum_bool", "sum", [b], jnp.sum)
    o.case("prod_bool", "prod", [b], jnp.prod)
    o.case("sum_u32", "sum", [u], jnp.sum)
    o.case("max_f32_nan_axis1", "max", [m], lambda x: jnp.max(x, axis=1), attrs={"axes": [1]})
    o.case("max_keepdims", "max", [ties], lambda x: jnp.max(x, axis=0, keepdims=True),
           attrs={"axes": [0], "keepdims": True})
    o.case("max_empty", "max", [array([], "f32")], jnp.max)
    # XLA divides by the element count as a multiplication by its reciprocal, 1 ulp from the
    # correctly rounded quotient weft computes: hence the tolerance.
    o.case("mean_i32", "mean", [i], jnp.mean, rtol=1e-6)
    o.case("mean_bool", "mean", [b], jnp.mean, rtol=1e-6)
    o.case("mean_empty", "mean", [array([], "f32")], jnp.mean)
    o.case("mean_axis_keepdims_i32", "mean", [ties], lambda x: jnp.mean(x, axis=-1, keepdims=True),
           attrs={"axes": [-1], "keepdims": True}, rtol=1e-6)
    o.case("argmax_nan", "argmax", [array([1.0, NAN, 3.0, NAN], "f32")], jnp.argmax)
    o.case("argmin_nan", "argmin", [array([1.0, NAN, -3.0, NAN], "f32")], jnp.argmin)
    o.case("argmax_flat_ties", "argmax", [ties], jnp.argmax)
    o.case("argmax_axis1_ties", "argmax", [ties], lambda x: jnp.argmax(x, axis=1),
           attrs={"axis": 1})
    o.case("argmin_axis0_keepdims", "argmin", [ties],
           lambda x: jnp.argmin(x, axis=0, keepdims=True), attrs={"axis": 0, "keepdims": True})
    o.case("argmax_bool", "argmax", [array([False, True, True], "bool")], jnp.argmax)
    rows = array([-INF, -INF, INF, 1.0, 1.0, 2.0, NAN, 0.0], "f32", [4, 2])
    o.case("logsumexp_infinities", "logsumexp", [rows],
           lambda x: jax.nn.logsumexp(x, axis=-1), attrs={"axis": -1}, rtol=1e-6)
    o.case("logsumexp_i32", "logsumexp", [ties], lambda x: jax.nn.logsumexp(x, axis=0),
           attrs={"axis": 0}, rtol=1e-6)
    o.case("softmax_i32", "softmax", [ties], lambda x: jax.nn.softmax(x, axis=-1),
           attrs={"axis": -1}, rtol=1e-6)
    o.case("matmul_bool", "matmul",
           [array([True, False, False, False], "bool", [2, 2]),
            array([True, True, False, True], "bool", [2, 2])], jnp.matmul)
    o.write("review.json", "the rest of weft::np against jax.numpy")


def main():
    os.makedirs(OUT_DIR, exist_ok=True)
    division()
    rounding()
    promotion()
    dynamic_slices()
    review()
    return 0


if __name__ == "__main__":
    sys.exit(main())
