#!/usr/bin/env python3
"""Writes the JAX oracle for compositions of weft's transformations and for the transformation
rules of its control flow: tests/data/transforms_oracle/compositions.json.

Two groups of cases, each a function of its "inputs" returning a flat list of "outputs":

  compositions, on three small functions (a tanh MLP loss with two layers, a softplus sum, a
  loss of two arguments through dot_general): grad, grad of vmap (the sum of the vmapped
  outputs), vmap of grad (per-example gradients), jacfwd, jacrev, hessian, vmap of hessian, jvp
  of grad (a Hessian-vector product) and value_and_grad with has_aux;

  control flow: jvp, vjp and vmap through lax.cond (both branches; the predicate from the data,
  shared or per example under vmap), lax.switch with three branches (indices below, inside and
  past the range: JAX clamps them), lax.fori_loop with static bounds (a scan), lax.scan (an RNN
  cell with xs and stacked ys, forwards and reversed) and lax.while_loop (jvp and vmap only:
  reverse mode is refused; one case records that). fori_loop with an array bound is a while
  loop; vmap of it with a per-example bound runs until every example is done.

Each case names its C++ twin ("fn"): tests/transforms_compositions_test.cpp builds the same
function with weft's API (weft::grad, weft::vmap, weft::lax::cond, ...), runs it eagerly (and
under weft::jit where "jit" is true) and compares dtype, shape and values with these. Several
cases share a twin and differ in their inputs (the branch a cond takes, a switch index). For
jvp the inputs are the primals then one tangent each; for vjp the primals then one cotangent
per output, and the outputs are the primal outputs then one cotangent per input. A case with
"error" has no outputs: JAX refuses it (the script checks), and weft must raise that error.

The build and the tests never run this script; rerun it only to change the cases
(pip install jax), and commit the JSON it writes:

    python3 tools/oracles/transforms_compositions.py

Arrays are {"dtype", "shape", "values"} with weft's dtype names. JAX runs without x64, so every
float is f32. As in transforms.py, integer inputs are closed over (not differentiated); their
tangents and cotangents are zeros of their own dtype, weft's convention, where JAX uses float0.
Inputs keep away from points where a control decision is close: a cond predicate's sum, the
while loop's exit test (main() checks both).
"""

import json
import os

import numpy as np

os.environ.setdefault("JAX_PLATFORMS", "cpu")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402

# Matrix products in full f32, as weft computes them (XLA's CPU default already is).
jax.config.update("jax_default_matmul_precision", "highest")

OUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "data",
                       "transforms_oracle")

WEFT_NAMES = {np.dtype(np.bool_): "bool", np.dtype(np.int32): "i32",
              np.dtype(np.float32): "f32", np.dtype(np.uint32): "u32"}

rng = np.random.default_rng(20240613)


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


def uniform(shape, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, size=shape).astype(np.float32)


def i32(value):
    return np.asarray(value, np.int32)


def zeros_like(a):
    return np.zeros(np.shape(a), np.asarray(a).dtype)


def leaves(tree):
    return [np.asarray(x) for x in jax.tree_util.tree_leaves(tree)]


# --- generic transformations of a function of a list of arrays (returning a list) --------------

def jvp_of(f):
    """Inputs: the primals, then one tangent each. Outputs: f's, then their tangents."""
    def g(a):
        n = len(a) // 2
        primals, tangents = list(a[:n]), a[n:]
        diff = [i for i, p in enumerate(primals) if is_float(p)]

        def of_floats(*floats):
            full = list(primals)
            for i, v in zip(diff, floats):
                full[i] = v
            return f(full)

        outs, touts = jax.jvp(of_floats, tuple(primals[i] for i in diff),
                              tuple(tangents[i] for i in diff))
        touts = [t if is_float(o) else zeros_like(o) for o, t in zip(outs, touts)]
        return list(outs) + list(touts)
    return g


def vjp_of(f, n):
    """Inputs: n primals, then one cotangent per output. Outputs: f's, then input cotangents."""
    def g(a):
        primals, cotangents = list(a[:n]), a[n:]
        diff = [i for i, p in enumerate(primals) if is_float(p)]

        def of_floats(*floats):
            full = list(primals)
            for i, v in zip(diff, floats):
                full[i] = v
            return f(full)

        outs, pullback = jax.vjp(of_floats, *[primals[i] for i in diff])
        grads = pullback(list(cotangents))
        cts = [zeros_like(p) for p in primals]
        for i, ct in zip(diff, grads):
            cts[i] = ct
        return list(outs) + cts
    return g


def one(f):
    return lambda a: [f(*a)]


# --- the functions; each C++ twin is in tests/transforms_compositions_test.cpp ---------------

def mlp_out(w1, b1, w2, b2, x):
    """A two-layer tanh MLP on one example x [3] (or a batch [n, 3])."""
    return jnp.tanh(x @ w1 + b1) @ w2 + b2


def mlp_loss(w1, b1, w2, b2, x, y):
    d = mlp_out(w1, b1, w2, b2, x) - y
    return jnp.sum(d * d)


def mlp_loss_aux(w1, b1, w2, b2, x, y):
    """The loss of a batch, with its predictions and per-example losses as auxiliary outputs."""
    out = mlp_out(w1, b1, w2, b2, x)
    d = out - y
    return jnp.sum(d * d), (out, jnp.sum(d * d, axis=1))


PARAMS = (0, 1, 2, 3)
PER_EXAMPLE = (None, None, None, None, 0, 0)  # parameters shared, (x, y) mapped


def softplus(x):
    return jnp.log1p(jnp.exp(x))


def softplus_sum(x):
    return jnp.sum(softplus(x))


MATMUL = (([1], [0]), ([], []))


def bilinear(a, b):
    """sin(a b) for a [3, 4], b [4, 2], as a dot_general."""
    return jnp.sin(lax.dot_general(a, b, MATMUL))


def bilinear_loss(a, b):
    p = lax.dot_general(a, b, MATMUL)
    return jnp.sum(jnp.sin(p) * p)


def cond_fn(x, y):
    """sin(x) * y when sum(x) > 0, else x³ - y."""
    return lax.cond(jnp.sum(x) > 0, lambda a, b: jnp.sin(a) * b, lambda a, b: a * a * a - b,
                    x, y)


SWITCH_BRANCHES = [lambda x: jnp.exp(x), lambda x: x * x, lambda x: jnp.cos(x) * 3.0]


def switch_fn(i, x):
    return lax.switch(i, SWITCH_BRANCHES, x)


def fori_fn(x, w):
    """Five steps of c = sin(c) w + c / 2 + i / 10 for i in [1, 6): static bounds, a scan."""
    return lax.fori_loop(1, 6, lambda i, c: jnp.sin(c) * w + c * 0.5 + i.astype(jnp.float32) * 0.1,
                         x)


def fori_dynamic(n, x, w):
    """n steps of c = tanh(c w) + 0.5 with an array bound n: a while loop."""
    return lax.fori_loop(0, n, lambda i, c: jnp.tanh(c * w) + 0.5, x)


def rnn(w, h0, xs, reverse=False):
    """h = tanh(w h + x) over the rows of xs; returns (the last h, every h² stacked)."""
    def cell(h, x):
        nxt = jnp.tanh(lax.dot_general(w, h, (([1], [0]), ([], []))) + x)
        return nxt, nxt * nxt
    return list(lax.scan(cell, h0, xs, reverse=reverse))


WHILE_LIMIT = 10.0


def while_grow(c0, x):
    """Doubles c and adds x while sum(c) < 10: the trip count depends on the data."""
    return lax.while_loop(lambda c: jnp.sum(c) < WHILE_LIMIT, lambda c: c * 2.0 + x, c0)


FNS = {
    # Compositions: the MLP. Inputs w1 [3,4], b1 [4], w2 [4,2], b2 [2], then data.
    "mlp_grad": lambda a: leaves(jax.grad(mlp_loss, PARAMS)(*a)),
    "mlp_grad_of_vmap": lambda a: leaves(jax.grad(
        lambda *p: jnp.sum(jax.vmap(mlp_loss, PER_EXAMPLE)(*p, a[4], a[5])), PARAMS)(*a[:4])),
    "mlp_vmap_of_grad": lambda a: leaves(jax.vmap(jax.grad(mlp_loss, PARAMS), PER_EXAMPLE)(*a)),
    "mlp_jacfwd": lambda a: leaves(jax.jacfwd(mlp_out, (0, 4))(*a)),
    "mlp_jacrev": lambda a: leaves(jax.jacrev(mlp_out, (0, 4))(*a)),
    "mlp_hessian": lambda a: leaves(jax.hessian(mlp_loss, (0, 2))(*a)),
    "mlp_hvp": lambda a: leaves(jax.jvp(lambda *p: jax.grad(mlp_loss, PARAMS)(*p, a[4], a[5]),
                                        tuple(a[:4]), tuple(a[6:10]))),
    # value_and_grad gives ((value, aux), grads); weft gives value, grads, then aux.
    "mlp_value_and_grad_aux": lambda a: (
        lambda r: leaves((r[0][0], r[1], r[0][1])))(
        jax.value_and_grad(mlp_loss_aux, PARAMS, has_aux=True)(*a)),
    # The softplus sum of x [4] (xs [3, 4] mapped).
    "softplus_grad": lambda a: [jax.grad(softplus_sum)(a[0])],
    "softplus_grad_of_vmap": lambda a: [jax.grad(lambda xs: jnp.sum(jax.vmap(softplus_sum)(xs)))(
        a[0])],
    "softplus_vmap_of_grad": lambda a: [jax.vmap(jax.grad(softplus_sum))(a[0])],
    "softplus_jacfwd": lambda a: [jax.jacfwd(softplus)(a[0])],
    "softplus_jacrev": lambda a: [jax.jacrev(softplus)(a[0])],
    "softplus_hessian": lambda a: [jax.hessian(softplus_sum)(a[0])],
    "softplus_vmap_of_hessian": lambda a: [jax.vmap(jax.hessian(softplus_sum))(a[0])],
    "softplus_hvp": lambda a: leaves(jax.jvp(jax.grad(softplus_sum), (a[0],), (a[1],))),
    "softplus_value_and_grad_aux": lambda a: (lambda r: leaves((r[0][0], r[1], r[0][1])))(
        jax.value_and_grad(lambda x: (softplus_sum(x), softplus(x)), has_aux=True)(a[0])),
    # dot_general: a [3, 4], b [4, 2].
    "bilinear_grad": lambda a: leaves(jax.grad(bilinear_loss, (0, 1))(*a)),
    "bilinear_grad_of_vmap": lambda a: leaves(jax.grad(
        lambda a_s, b: jnp.sum(jax.vmap(bilinear_loss, (0, None))(a_s, b)), (0, 1))(*a)),
    "bilinear_vmap_of_grad": lambda a: leaves(
        jax.vmap(jax.grad(bilinear_loss, (0, 1)), (0, None))(*a)),
    # b's batch on its last axis.
    "bilinear_vmap_of_grad_axis2": lambda a: leaves(
        jax.vmap(jax.grad(bilinear_loss, (0, 1)), (None, 2))(*a)),
    "bilinear_jacfwd": lambda a: leaves(jax.jacfwd(bilinear, (0, 1))(*a)),
    "bilinear_jacrev": lambda a: leaves(jax.jacrev(bilinear, (0, 1))(*a)),
    "bilinear_hessian": lambda a: leaves(jax.hessian(bilinear_loss, (0, 1))(*a)),
    "bilinear_hvp": lambda a: leaves(jax.jvp(jax.grad(bilinear_loss, (0, 1)), tuple(a[:2]),
                                             tuple(a[2:]))),
    "bilinear_value_and_grad_aux": lambda a: (lambda r: leaves((r[0][0], r[1], r[0][1])))(
        jax.value_and_grad(lambda p, q: (bilinear_loss(p, q), lax.dot_general(p, q, MATMUL)),
                           (0, 1), has_aux=True)(*a)),

    # Control flow. cond: x [3], y [3].
    "cond_jvp": jvp_of(one(cond_fn)),
    "cond_vjp": vjp_of(one(cond_fn), 2),
    "cond_vmap": lambda a: [jax.vmap(cond_fn)(*a)],
    "cond_vmap_shared_predicate": lambda a: [jax.vmap(cond_fn, (None, 0))(*a)],
    # Per-example gradients through a per-example branch.
    "cond_vmap_of_grad": lambda a: leaves(jax.vmap(jax.grad(
        lambda x, y: jnp.sum(cond_fn(x, y) * x), (0, 1)))(*a)),
    "cond_hessian": lambda a: leaves(jax.hessian(lambda x, y: jnp.sum(cond_fn(x, y) * x))(*a)),
    # switch: i (i32 scalar), x [2, 2].
    "switch_jvp": jvp_of(one(switch_fn)),
    "switch_vjp": vjp_of(one(switch_fn), 2),
    "switch_vmap": lambda a: [jax.vmap(switch_fn)(*a)],
    "switch_vmap_shared_index": lambda a: [jax.vmap(switch_fn, (None, 0))(*a)],
    # fori_loop with static bounds: x [4], w [4].
    "fori_jvp": jvp_of(one(fori_fn)),
    "fori_vjp": vjp_of(one(fori_fn), 2),
    "fori_vmap": lambda a: [jax.vmap(fori_fn, (0, None))(*a)],
    "fori_hessian": lambda a: [jax.hessian(lambda x: jnp.sum(fori_fn(x, a[1])))(a[0])],
    # scan: w [3, 3], h0 [3], xs [6, 3].
    "scan_jvp": jvp_of(lambda a: rnn(*a)),
    "scan_vjp": vjp_of(lambda a: rnn(*a), 3),
    "scan_vmap": lambda a: leaves(jax.vmap(rnn, (None, 0, 0))(*a)),
    "scan_vmap_of_grad": lambda a: leaves(jax.vmap(jax.grad(
        lambda w, h0, xs: (lambda r: jnp.sum(r[0]) + 0.3 * jnp.sum(r[1]))(rnn(w, h0, xs))),
        (None, 0, 0))(*a)),
    "scan_reverse_jvp": jvp_of(lambda a: rnn(*a, reverse=True)),
    "scan_reverse_vjp": vjp_of(lambda a: rnn(*a, reverse=True), 3),
    # xs mapped over its axis 1.
    "scan_reverse_vmap": lambda a: leaves(jax.vmap(lambda w, h0, xs: rnn(w, h0, xs, True),
                                                   (None, 0, 1))(*a)),
    # while_loop: c0 [3], x [3].
    "while_jvp": jvp_of(one(while_grow)),
    "while_vmap": lambda a: [jax.vmap(while_grow)(*a)],
    "while_jvp_of_vmap": lambda a: leaves(jax.jvp(jax.vmap(while_grow), tuple(a[:2]),
                                                  tuple(a[2:]))),
    "while_vmap_of_jvp": lambda a: leaves(jax.vmap(
        lambda c0, x, tc, tx: jax.jvp(while_grow, (c0, x), (tc, tx)))(*a)),
    # fori_loop with an array bound: n (i32 scalar), x [3], w [3].
    "fori_dynamic_jvp": jvp_of(one(fori_dynamic)),
    "fori_dynamic_vmap": lambda a: [jax.vmap(fori_dynamic, (0, 0, None))(*a)],
    "fori_dynamic_vmap_shared_bound": lambda a: [jax.vmap(fori_dynamic, (None, 0, 0))(*a)],
}


# --- the table -------------------------------------------------------------------------------

CASES = []


def case(name, fn, inputs, jit=False):
    CASES.append({"name": name, "fn": fn, "inputs": [np.asarray(x) for x in inputs], "jit": jit})


def tangents_for(primals):
    return [uniform(np.shape(p)) if is_float(p) else zeros_like(p) for p in primals]


def jvp_case(name, fn, primals, jit=False):
    case(name, fn, list(primals) + tangents_for(primals), jit)


def vjp_case(name, fn, primals, outputs_of, jit=False):
    outs = outputs_of([jnp.asarray(p) for p in primals])
    cts = [uniform(np.shape(o)) for o in outs]
    case(name, fn, list(primals) + cts, jit)


def mlp_params():
    return [uniform((3, 4)), uniform((4,), -0.5, 0.5), uniform((4, 2)), uniform((2,), -0.5, 0.5)]


# Compositions.
batch = [uniform((5, 3)), uniform((5, 2))]
case("mlp_grad", "mlp_grad", mlp_params() + batch, jit=True)
case("mlp_grad_of_vmap", "mlp_grad_of_vmap", mlp_params() + batch, jit=True)
case("mlp_vmap_of_grad", "mlp_vmap_of_grad", mlp_params() + batch, jit=True)
case("mlp_jacfwd", "mlp_jacfwd", mlp_params() + [uniform((3,))])
case("mlp_jacrev", "mlp_jacrev", mlp_params() + [uniform((3,))], jit=True)
case("mlp_hessian", "mlp_hessian", mlp_params() + [uniform((3,)), uniform((2,))], jit=True)
params = mlp_params()
case("mlp_hvp", "mlp_hvp", params + batch + tangents_for(params))
case("mlp_value_and_grad_aux", "mlp_value_and_grad_aux", mlp_params() + batch)

case("softplus_grad", "softplus_grad", [uniform((4,), -3, 3)])
case("softplus_grad_of_vmap", "softplus_grad_of_vmap", [uniform((3, 4), -3, 3)], jit=True)
case("softplus_vmap_of_grad", "softplus_vmap_of_grad", [uniform((3, 4), -3, 3)], jit=True)
case("softplus_jacfwd", "softplus_jacfwd", [uniform((4,), -3, 3)])
case("softplus_jacrev", "softplus_jacrev", [uniform((4,), -3, 3)])
case("softplus_hessian", "softplus_hessian", [uniform((4,), -3, 3)])
case("softplus_vmap_of_hessian", "softplus_vmap_of_hessian", [uniform((3, 4), -3, 3)], jit=True)
case("softplus_hvp", "softplus_hvp", [uniform((4,), -3, 3), uniform((4,))])
case("softplus_value_and_grad_aux", "softplus_value_and_grad_aux", [uniform((4,), -3, 3)])

case("bilinear_grad", "bilinear_grad", [uniform((3, 4)), uniform((4, 2))])
case("bilinear_grad_of_vmap", "bilinear_grad_of_vmap", [uniform((5, 3, 4)), uniform((4, 2))],
     jit=True)
case("bilinear_vmap_of_grad", "bilinear_vmap_of_grad", [uniform((5, 3, 4)), uniform((4, 2))],
     jit=True)
case("bilinear_vmap_of_grad_axis2", "bilinear_vmap_of_grad_axis2",
     [uniform((3, 4)), uniform((4, 2, 5))])
case("bilinear_jacfwd", "bilinear_jacfwd", [uniform((3, 4)), uniform((4, 2))])
case("bilinear_jacrev", "bilinear_jacrev", [uniform((3, 4)), uniform((4, 2))])
case("bilinear_hessian", "bilinear_hessian", [uniform((3, 4)), uniform((4, 2))], jit=True)
case("bilinear_hvp", "bilinear_hvp",
     [uniform((3, 4)), uniform((4, 2)), uniform((3, 4)), uniform((4, 2))])
case("bilinear_value_and_grad_aux", "bilinear_value_and_grad_aux",
     [uniform((3, 4)), uniform((4, 2))])


# Control flow. A cond's predicate is sum(x) > 0: x of one sign takes one branch.
def signed(shape, sign):
    return uniform(shape, 0.2, 1.0) * np.float32(sign)


for branch, sign in (("true", 1), ("false", -1)):
    jvp_case(f"cond_jvp_{branch}_branch", "cond_jvp", [signed((3,), sign), uniform((3,))],
             jit=branch == "true")
    vjp_case(f"cond_vjp_{branch}_branch", "cond_vjp", [signed((3,), sign), uniform((3,))],
             one(cond_fn), jit=branch == "false")
    case(f"cond_hessian_{branch}_branch", "cond_hessian", [signed((3,), sign), uniform((3,))])
# Per example: three take each branch, interleaved.
mixed = np.stack([signed((3,), s) for s in (1, -1, -1, 1, 1, -1)])
case("cond_vmap_per_example_predicate", "cond_vmap", [mixed, uniform((6, 3))], jit=True)
case("cond_vmap_shared_predicate_true", "cond_vmap_shared_predicate",
     [signed((3,), 1), uniform((4, 3))])
case("cond_vmap_shared_predicate_false", "cond_vmap_shared_predicate",
     [signed((3,), -1), uniform((4, 3))], jit=True)
case("cond_vmap_of_grad_per_example_predicate", "cond_vmap_of_grad",
     [np.stack([signed((3,), s) for s in (-1, 1, 1, -1)]), uniform((4, 3))], jit=True)

# switch: one index below the range, each branch, and one past the end (both clamped).
for index in (-1, 0, 1, 2, 5):
    jvp_case(f"switch_jvp_index_{index}".replace("-", "minus"), "switch_jvp",
             [i32(index), uniform((2, 2))], jit=index == 1)
for index in (-3, 1, 2, 7):
    vjp_case(f"switch_vjp_index_{index}".replace("-", "minus"), "switch_vjp",
             [i32(index), uniform((2, 2))], one(switch_fn), jit=index == 7)
case("switch_vmap_per_example_index", "switch_vmap",
     [i32([-2, 0, 1, 2, 4, 1]), uniform((6, 2, 2))], jit=True)
case("switch_vmap_shared_index", "switch_vmap_shared_index", [i32(1), uniform((3, 2, 2))])
case("switch_vmap_shared_index_clamped", "switch_vmap_shared_index",
     [i32(-4), uniform((3, 2, 2))])

# fori_loop with static bounds.
jvp_case("fori_static_jvp", "fori_jvp", [uniform((4,)), uniform((4,), 0.5, 1.5)], jit=True)
vjp_case("fori_static_vjp", "fori_vjp", [uniform((4,)), uniform((4,), 0.5, 1.5)], one(fori_fn),
         jit=True)
case("fori_static_vmap", "fori_vmap", [uniform((3, 4)), uniform((4,), 0.5, 1.5)])
case("fori_static_hessian", "fori_hessian", [uniform((4,)), uniform((4,), 0.5, 1.5)])


# scan: an RNN cell with xs, forwards and reversed.
def rnn_inputs(batch=None, xs_axis=0):
    w = uniform((3, 3), -0.5, 0.5)
    if batch is None:
        return [w, uniform((3,)), uniform((6, 3))]
    xs = uniform((batch, 6, 3))
    return [w, uniform((batch, 3)), np.moveaxis(xs, 0, xs_axis).copy()]


jvp_case("scan_jvp", "scan_jvp", rnn_inputs(), jit=True)
vjp_case("scan_vjp", "scan_vjp", rnn_inputs(), lambda a: rnn(*a), jit=True)
case("scan_vmap", "scan_vmap", rnn_inputs(batch=4), jit=True)
case("scan_vmap_of_grad", "scan_vmap_of_grad", rnn_inputs(batch=3))
jvp_case("scan_reverse_jvp", "scan_reverse_jvp", rnn_inputs())
vjp_case("scan_reverse_vjp", "scan_reverse_vjp", rnn_inputs(), lambda a: rnn(*a, reverse=True),
         jit=True)
case("scan_reverse_vmap_xs_axis1", "scan_reverse_vmap", rnn_inputs(batch=3, xs_axis=1))

# while_loop: forward mode and vmap (each example stops after its own number of steps).
jvp_case("while_jvp", "while_jvp", [uniform((3,), 0.1, 0.5), uniform((3,), 0.1, 0.5)], jit=True)
# The last example starts past the limit: it takes no step.
while_c0 = np.concatenate([uniform((4, 3), 0.1, 2.0), uniform((1, 3), 3.5, 4.5)])
case("while_vmap_per_example_predicate", "while_vmap", [while_c0, uniform((5, 3), 0.1, 0.5)],
     jit=True)
case("while_jvp_of_vmap", "while_jvp_of_vmap",
     [uniform((4, 3), 0.1, 2.0), uniform((4, 3), 0.1, 0.5), uniform((4, 3)), uniform((4, 3))])
case("while_vmap_of_jvp", "while_vmap_of_jvp",
     [uniform((4, 3), 0.1, 2.0), uniform((4, 3), 0.1, 0.5), uniform((4, 3)), uniform((4, 3))],
     jit=True)
jvp_case("fori_dynamic_jvp", "fori_dynamic_jvp", [i32(4), uniform((3,)), uniform((3,), 0.5, 1.5)])
case("fori_dynamic_vmap_per_example_bound", "fori_dynamic_vmap",
     [i32([0, 3, 1, 5]), uniform((4, 3)), uniform((3,), 0.5, 1.5)], jit=True)
case("fori_dynamic_vmap_shared_bound", "fori_dynamic_vmap_shared_bound",
     [i32(3), uniform((4, 3)), uniform((4, 3), 0.5, 1.5)])

# Reverse mode through a while loop: JAX refuses it, and so must weft (with TransformError).
ERRORS = [{"name": "while_grad_refused", "fn": "while_grad", "error": "TransformError",
           "inputs": [uniform((3,), 0.1, 0.5), uniform((3,), 0.1, 0.5)]}]


# --- running JAX -----------------------------------------------------------------------------

def check_margins(spec):
    """Control decisions in the inputs are far from their thresholds (f32 rounding can't flip
    them): |sum(x)| of a cond's predicate, and sum(c) against the while loop's limit."""
    fn, a = spec["fn"], spec["inputs"]
    if fn.startswith("cond"):
        sums = np.sum(a[0].astype(np.float64), axis=-1)
        assert np.all(np.abs(sums) > 0.3), spec["name"]
    if fn.startswith("while"):
        c = a[0].astype(np.float64)
        x = a[1].astype(np.float64)
        for _ in range(100):
            s = np.sum(c, axis=-1)
            assert np.all(np.abs(s - WHILE_LIMIT) > 0.05), spec["name"]
            if np.all(s >= WHILE_LIMIT):
                break
            c = np.where((s < WHILE_LIMIT)[..., None], c * 2 + x, c)


def run(spec):
    check_margins(spec)
    outputs = FNS[spec["fn"]]([jnp.asarray(x) for x in spec["inputs"]])
    entry = {"name": spec["name"], "fn": spec["fn"],
             "inputs": [encode(x) for x in spec["inputs"]],
             "outputs": [encode(np.asarray(o)) for o in outputs]}
    if spec["jit"]:
        entry["jit"] = True
    return entry


def run_error(spec):
    check_margins(spec)
    c0, x = (jnp.asarray(v) for v in spec["inputs"])
    try:
        jax.grad(lambda c, v: jnp.sum(while_grow(c, v)), (0, 1))(c0, x)
    except ValueError as e:
        assert "Reverse-mode differentiation does not work" in str(e), str(e)
    else:
        raise AssertionError("JAX differentiated a while loop in reverse mode")
    return {"name": spec["name"], "fn": spec["fn"], "error": spec["error"],
            "inputs": [encode(x) for x in spec["inputs"]], "outputs": []}


def main():
    cases = [run(spec) for spec in CASES] + [run_error(spec) for spec in ERRORS]
    names = [c["name"] for c in cases]
    assert len(set(names)) == len(names), "case names must be unique"
    used = {c["fn"] for c in cases}
    assert used >= set(FNS), f"functions without a case: {set(FNS) - used}"
    os.makedirs(OUT_DIR, exist_ok=True)
    path = os.path.join(OUT_DIR, "compositions.json")
    with open(path, "w") as out:
        # One case a line: small, and a regenerated file diffs by case.
        out.write('{"about": "compositions of weft transformations and control flow against '
                  'jax (see the script)",\n')
        out.write(f' "generator": "tools/oracles/transforms_compositions.py", '
                  f'"jax": "{jax.__version__}",\n')
        out.write(' "cases": [\n')
        out.write(",\n".join(json.dumps(c, separators=(",", ":")) for c in cases))
        out.write("\n]}\n")
    print(f"wrote {len(cases)} cases ({os.path.getsize(path)} bytes) to "
          f"{os.path.normpath(path)}")


if __name__ == "__main__":
    main()
