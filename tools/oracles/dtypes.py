#!/usr/bin/env python3
"""Writes the JAX oracle for weft's narrow and half-precision dtypes: tests/data/dtypes_oracle/.

tests/dtypes_test.cpp reads it; the build and the tests never run this script. Rerun it only to
change the cases (pip install jax), and commit the JSON it writes:

    python3 tools/oracles/dtypes.py

promotion.json: jnp.promote_types for every pair of array dtypes with jax_enable_x64=True
(weft has i64, u64 and f64 as first-class dtypes), and jnp.result_type of an array with a
weakly typed Python scalar for the dtypes that exist without x64 (weft types C++ scalars as JAX
types Python scalars with its defaults: i32 and f32).

ops.json: lax ops under jax.jit on CPU (XLA CPU computes f16 and bf16 in f32 and rounds after
every op). Arrays are {"dtype", "shape", "values"} with weft's dtype names; non-finite floats
are the strings "nan", "inf", "-inf"; u64 values are JSON integers up to 2^64 - 1.
"""

import json
import math
import os

import numpy as np

os.environ.setdefault("JAX_PLATFORMS", "cpu")
import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402
import ml_dtypes  # noqa: E402
from jax import lax  # noqa: E402

OUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "data",
                       "dtypes_oracle")

NP_DTYPES = {"bool": np.bool_, "u8": np.uint8, "i8": np.int8, "u16": np.uint16,
             "i16": np.int16, "u32": np.uint32, "i32": np.int32, "u64": np.uint64,
             "i64": np.int64, "f16": np.float16, "bf16": ml_dtypes.bfloat16,
             "f32": np.float32, "f64": np.float64}
WEFT_NAMES = {np.dtype(v): k for k, v in NP_DTYPES.items()}
NEW = ["u8", "i8", "u16", "i16", "u64", "f16", "bf16"]
FLOATS = {"f16", "bf16", "f32", "f64"}


def encode(v, name):
    if name not in FLOATS:
        return int(v)
    v = float(v)
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v


def spec(a):
    a = np.asarray(a)
    name = WEFT_NAMES[a.dtype]
    return {"dtype": name, "shape": list(a.shape),
            "values": [encode(v, name) for v in a.reshape(-1).tolist()]}


def make(values, name, shape=None):
    a = np.array(values, dtype=np.float64 if name in FLOATS else object)
    if name in FLOATS:
        a = a.astype(NP_DTYPES[name])
    else:
        a = np.array([int(v) for v in values], dtype=NP_DTYPES[name])
    return a.reshape(shape if shape is not None else (len(values),))


# Two operand vectors per dtype that reach the edges: wrap-around, overflow to inf, rounding
# ties of the 16-bit floats, signed zeros and NaN.
def operands(name):
    if name == "u8":
        return [200, 100, 0, 255, 7, 128], [100, 200, 255, 1, 9, 128]
    if name == "i8":
        return [100, -100, 127, -128, 5, -1], [100, -100, 1, -1, -7, 1]
    if name == "u16":
        return [60000, 1, 0, 65535, 300, 32768], [10000, 65535, 65535, 1, 300, 32768]
    if name == "i16":
        return [30000, -30000, 32767, -32768, 300, -1], [10000, -10000, 1, -1, -300, 1]
    if name == "u64":
        return [2**64 - 1, 2**63, 5, 0, 2**63 - 1, 12345678901234], \
               [1, 2**63, 2**64 - 5, 0, 2**63 + 1, 3]
    if name == "f16":
        return [1.0, 0.1, 60000.0, -0.0, 1e-7, 2049.0], [1e-3, 0.2, 10000.0, 0.0, 3e-8, 1.0]
    if name == "bf16":
        # No subnormals: XLA's CPU backend flushes f32 subnormals (bf16's are f32's) to zero,
        # weft keeps them, for f32 as for bf16.
        return [1.0, 0.1, 3e38, -0.0, 1e-30, 257.0], [1e-3, 0.2, 3e38, 0.0, 3e-30, 1.0]
    raise ValueError(name)


def run(fn, *args):
    return np.asarray(jax.jit(fn)(*[jnp.asarray(a) for a in args]))


def case(name, op, args, out, params=None):
    c = {"name": name, "op": op, "args": [spec(a) for a in args], "expected": spec(out)}
    if params:
        c["params"] = params
    return c


def op_cases():
    cases = []
    for d in NEW:
        a_vals, b_vals = operands(d)
        a, b = make(a_vals, d), make(b_vals, d)
        cases.append(case(d + "_add", "add", [a, b], run(lax.add, a, b)))
        cases.append(case(d + "_mul", "mul", [a, b], run(lax.mul, a, b)))
        cases.append(case(d + "_max", "max", [a, b], run(lax.max, a, b)))
        cases.append(case(d + "_lt", "lt", [a, b], run(lax.lt, a, b)))
        pred = np.array([True, False, True, False, True, False])
        cases.append(case(d + "_select", "select", [pred, a, b], run(lax.select, pred, a, b)))
        m = a.reshape(2, 3)
        cases.append(case(d + "_reduce_sum", "reduce_sum", [m],
                          run(lambda x: lax.reduce_sum_p.bind(x, axes=(1,), out_sharding=None), m),
                          {"axes": [1]}))
        cases.append(case(d + "_reduce_max", "reduce_max", [m],
                          run(lambda x: lax.reduce_max_p.bind(x, axes=(0,), out_sharding=None), m),
                          {"axes": [0]}))
        # jax.numpy's sum and mean: narrow integers sum as i32 / u32, 16-bit floats in f32.
        # weft's numpy layer has JAX's defaults without x64 (i32, u32, f32).
        if d != "u64":
            with jax.enable_x64(False):
                cases.append(case(d + "_np_sum", "np_sum", [a], run(jnp.sum, a)))
                cases.append(case(d + "_np_mean", "np_mean", [a], run(jnp.mean, a)))
        # dot: [2,3] x [3,2] with the operands' own dtype as result (jnp.dot keeps bf16).
        lhs, rhs = a.reshape(2, 3), b.reshape(3, 2)
        cases.append(case(d + "_dot", "dot", [lhs, rhs], run(jnp.dot, lhs, rhs)))
        # convert to and from every dtype
        for to in NP_DTYPES:
            cases.append(case(d + "_convert_to_" + to, "convert", [a],
                              run(lambda x, t=to: lax.convert_element_type(x, NP_DTYPES[t]), a),
                              {"dtype": to}))
        wide = make([300.7, -1.5, -300.0, float("nan"), float("inf"), float("-inf"), 70000.0,
                     1e20, 0.1, 2.5, 3.5, 1.0000001, 1e-30, 65519.0, 65520.0], "f32")
        cases.append(case("f32_convert_to_" + d, "convert", [wide],
                          run(lambda x: lax.convert_element_type(x, NP_DTYPES[d]), wide),
                          {"dtype": d}))
        wide64 = make([300.7, -1.5, 2.0**64, 2.0**63, 1e19, 2.0**53 + 1, 0.1], "f64")
        cases.append(case("f64_convert_to_" + d, "convert", [wide64],
                          run(lambda x: lax.convert_element_type(x, NP_DTYPES[d]), wide64),
                          {"dtype": d}))
    return cases


def promotion():
    names = list(NP_DTYPES)
    table = [[a, b, WEFT_NAMES[np.dtype(jnp.promote_types(NP_DTYPES[a], NP_DTYPES[b]))]]
             for a in names for b in names]
    weak = []
    with jax.enable_x64(False):
        for d in ["bool", "u8", "i8", "u16", "i16", "u32", "i32", "f16", "bf16", "f32"]:
            x = jnp.zeros(2, NP_DTYPES[d])
            for kind, value in [("bool", True), ("int", 1), ("float", 1.0)]:
                weak.append([d, kind, WEFT_NAMES[np.dtype(jnp.result_type(x, value))]])
    return {"promote_types": table, "weak": weak}


# .npy files as numpy writes them (bf16 through ml_dtypes, as JAX arrays save), with their
# values: tests/npy_test.cpp reads them and writes them back.
NPY_VALUES = {"u8": [0, 1, 255], "i8": [-128, -1, 127], "u16": [0, 65535, 300],
              "i16": [-32768, 32767, -2], "u64": [0, 2**64 - 1, 2**63],
              "f16": [1.0, -0.5, 65504.0, 0.0999755859375],
              "bf16": [1.0, -0.5, 0.333984375, 3.3895313892515355e38]}


def write_npy_files():
    index = {}
    for name, values in NPY_VALUES.items():
        a = make(values, name)
        np.save(os.path.join(OUT_DIR, name + ".npy"), a)
        index[name] = spec(a)
    with open(os.path.join(OUT_DIR, "npy.json"), "w") as f:
        json.dump(index, f, indent=0)
        f.write("\n")


def main():
    os.makedirs(OUT_DIR, exist_ok=True)
    write_npy_files()
    with open(os.path.join(OUT_DIR, "promotion.json"), "w") as f:
        json.dump(promotion(), f, indent=0)
        f.write("\n")
    with open(os.path.join(OUT_DIR, "ops.json"), "w") as f:
        json.dump({"cases": op_cases()}, f, indent=0)
        f.write("\n")


if __name__ == "__main__":
    main()
