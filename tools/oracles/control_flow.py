#!/usr/bin/env python3
"""Writes the JAX oracle for weft's control flow: tests/data/control_flow_oracle/cases.json.

tests/control_flow_test.cpp holds a C++ twin of every function below (same name). For each
case it traces the twin with weft::jit(...).lower, verifies the graph, runs it in the
reference interpreter on "inputs" (and on "constants", arrays the twin closes over) and
compares every output with "expected", which jax.lax computed here on CPU. The build and the
tests never run this script; rerun it only to change the cases (pip install jax), and commit
the JSON it writes:

    python3 tools/oracles/control_flow.py

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
                       "control_flow_oracle")

WEFT_NAMES = {np.dtype(np.bool_): "bool", np.dtype(np.int32): "i32",
              np.dtype(np.float32): "f32", np.dtype(np.uint32): "u32"}

f32, i32 = jnp.float32, jnp.int32


def encode(a):
    a = np.asarray(a)
    values = a.reshape(-1).tolist()
    if a.dtype == np.bool_:
        values = [int(v) for v in values]
    return {"dtype": WEFT_NAMES[a.dtype], "shape": list(a.shape), "values": values}


# --- the cases; each has a C++ twin of the same name in tests/control_flow_test.cpp ---------

def collatz(n):
    # Steps of the Collatz map from n down to 1: the trip count depends on the data.
    def cond(s):
        return s[0] != 1

    def body(s):
        n, steps = s
        n = jnp.where(n % 2 == 0, n // 2, 3 * n + 1)
        return n, steps + 1

    n, steps = lax.while_loop(cond, body, (n, jnp.int32(0)))
    return [steps, n]


def zero_trip_while(x):
    # The condition is false at once: the carry comes back unchanged.
    def cond(s):
        return s[0] < 0

    def body(s):
        return s[0] + 1, s[1] * 2.0

    k, v = lax.while_loop(cond, body, (jnp.int32(5), x))
    return [k, v]


def zero_trip_fori(x, lo, hi):
    a = lax.fori_loop(3, 3, lambda i, v: v + 1.0, x)  # static, empty range
    b = lax.fori_loop(5, 2, lambda i, v: v + 1.0, x)  # static, upper < lower
    c = lax.fori_loop(lo, hi, lambda i, v: v + 1.0, x)  # Array bounds, hi < lo
    return [a, b, c]


def fori_sum_static(x):
    return [lax.fori_loop(2, 7, lambda i, acc: acc + i * x, jnp.zeros_like(x))]


def fori_sum_array_bounds(lo, hi):
    return [lax.fori_loop(lo, hi, lambda i, acc: acc + i * i, jnp.int32(0))]


def scan_cumsum(xs):
    def f(c, x):
        c = c + x
        return c, c
    c, ys = lax.scan(f, f32(0), xs)
    return [c, ys]


def scan_reverse(xs):
    def f(c, x):
        c = c + x
        return c, c * 10.0
    c, ys = lax.scan(f, f32(0), xs, reverse=True)
    return [c, ys]


def scan_no_xs(start):
    def f(c, _):
        return c * 2 + 1, c
    c, ys = lax.scan(f, start, None, length=5)
    return [c, ys]


def cond_in_scan(xs):
    def f(c, x):
        c = lax.cond(x > 0, lambda c, x: c + x, lambda c, x: c - 2.0 * x, c, x)
        return c, c
    c, ys = lax.scan(f, f32(1), xs)
    return [c, ys]


def scan_in_cond(p, xs):
    def cumsum(xs):
        return lax.scan(lambda c, x: (c + x, c + x), f32(0), xs)[1]

    def cumprod(xs):
        return lax.scan(lambda c, x: (c * x, c * x), f32(1), xs)[1]
    return [lax.cond(p, cumsum, cumprod, xs)]


def nested_three_deep(x):
    # fori_loop > while_loop > scan; the scan body closes over the while carry (j) and the fori
    # index (i): captures through two region levels.
    def outer(i, acc):
        fi = i.astype(f32)

        def wcond(s):
            return s[0] < i + 2

        def wbody(s):
            j, a = s
            fj = j.astype(f32)

            def sbody(c, xv):
                c2 = c + xv * (fj + 1.0) - fi
                return c2, c2 * 0.5
            c, ys = lax.scan(sbody, a, x)
            return j + 1, c + jnp.sum(ys) * 0.125
        _, a = lax.while_loop(wcond, wbody, (jnp.int32(0), acc))
        return a
    return [lax.fori_loop(0, 3, outer, f32(0))]


def switch_index(index, x):
    branches = [lambda x: x + 1.0, lambda x: x * 2.0, lambda x: -x]
    return [lax.switch(index, branches, x)]


def mixed_tuple_loop(v):
    # A carry of f32, i32 and bool leaves.
    def cond(s):
        _, count, done = s
        return jnp.logical_and(count < 10, jnp.logical_not(done))

    def body(s):
        v, count, done = s
        v = v * 1.5 + 1.0
        return v, count + 1, jnp.sum(v) > 60.0
    v, count, done = lax.while_loop(cond, body, (v, jnp.int32(0), jnp.bool_(False)))
    return [v, count, done]


def closures(x, w):
    # w: a concrete array the functions close over ("constants"); x: the jitted argument,
    # closed over by a scan body two levels down (while > scan).
    def wcond(s):
        return s[0] < 3

    def wbody(s):
        k, acc = s

        def sbody(c, wi):
            return c + wi * x + jnp.sum(w), None
        acc, _ = lax.scan(sbody, acc, w)
        return k + 1, acc
    _, acc = lax.while_loop(wcond, wbody, (jnp.int32(0), jnp.zeros_like(x)))
    return [acc]


def reduce_and_dot(m, v):
    # Power iteration: a dot and a reduction in the body.
    def body(i, v):
        w = m @ v
        return w / jnp.sum(jnp.abs(w))
    return [lax.fori_loop(0, 6, body, v)]


CASES = [
    ("collatz_27", collatz, [np.int32(27)], []),
    ("collatz_97", collatz, [np.int32(97)], []),
    ("collatz_1", collatz, [np.int32(1)], []),
    ("zero_trip_while", zero_trip_while, [np.array([1.5, -2.0], np.float32)], []),
    ("zero_trip_fori", zero_trip_fori,
     [np.array([1.0, 2.0, 3.0], np.float32), np.int32(4), np.int32(1)], []),
    ("fori_sum_static", fori_sum_static, [np.array([1.0, -0.5, 2.0], np.float32)], []),
    ("fori_sum_array_bounds", fori_sum_array_bounds, [np.int32(-3), np.int32(5)], []),
    ("scan_cumsum", scan_cumsum, [np.array([1, 2, 3, 4, 5, 6], np.float32)], []),
    ("scan_reverse", scan_reverse, [np.array([1, 2, 3, 4], np.float32)], []),
    ("scan_no_xs", scan_no_xs, [np.int32(1)], []),
    ("cond_in_scan", cond_in_scan, [np.array([1.0, -2.0, 3.0, -0.5, 0.0], np.float32)], []),
    ("scan_in_cond_true", scan_in_cond, [np.bool_(True), np.array([1, 2, 3], np.float32)], []),
    ("scan_in_cond_false", scan_in_cond, [np.bool_(False), np.array([1, 2, 3], np.float32)], []),
    ("nested_three_deep", nested_three_deep, [np.array([0.5, -1.0, 2.0], np.float32)], []),
    ("switch_negative", switch_index, [np.int32(-3), np.array([1.0, 2.0], np.float32)], []),
    ("switch_middle", switch_index, [np.int32(1), np.array([1.0, 2.0], np.float32)], []),
    ("switch_too_large", switch_index, [np.int32(7), np.array([1.0, 2.0], np.float32)], []),
    ("mixed_tuple_loop", mixed_tuple_loop, [np.array([1.0, 2.0, 3.0], np.float32)], []),
    ("closures", closures, [np.array([1.0, 2.0], np.float32)],
     [np.array([[0.5, 1.0], [2.0, -1.0]], np.float32)]),
    ("reduce_and_dot", reduce_and_dot,
     [np.array([[2.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 4.0]], np.float32),
      np.array([1.0, 1.0, 1.0], np.float32)], []),
]


def main():
    cases = []
    for name, fn, inputs, constants in CASES:
        args = [jnp.asarray(a) for a in inputs + constants]
        expected = jax.jit(fn)(*args)
        cases.append({"name": name, "function": fn.__name__,
                      "inputs": [encode(a) for a in inputs],
                      "constants": [encode(a) for a in constants],
                      "expected": [encode(e) for e in expected]})
    os.makedirs(OUT_DIR, exist_ok=True)
    path = os.path.join(OUT_DIR, "cases.json")
    with open(path, "w") as out:
        json.dump({"about": "weft::lax control flow against jax.lax (see the script)",
                   "generator": "tools/oracles/control_flow.py", "jax": jax.__version__,
                   "cases": cases}, out, indent=1)
        out.write("\n")
    print(f"wrote {len(cases)} cases to {os.path.normpath(path)}")


if __name__ == "__main__":
    main()
