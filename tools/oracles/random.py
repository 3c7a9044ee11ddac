#!/usr/bin/env python3
"""Writes the JAX oracle for weft::random: tests/data/random_oracle/*.json.

tests/random_test.cpp runs every case eagerly, under weft::jit, in the reference interpreter and
under vmap over keys, and compares each result with what jax.random computed here on CPU with
JAX's default configuration (threefry2x32, jax_threefry_partitionable on, x64 off). The build
and the tests never run this script; rerun it only to change the cases (pip install jax), and
commit the JSON it writes:

    python3 tools/oracles/random.py

A case is {"name", "fn", "key", "params", "expected"}: "key" is the raw key data (u32[..., 2]),
a key array with leading dimensions meaning vmap over its keys. An array is
{"dtype", "shape", "bits"} with weft's dtype names; "bits" holds integers as they are and
floats as their IEEE bit patterns. Bits compare exactly; floats within "ulps".
"""

import json
import os

import numpy as np

os.environ.setdefault("JAX_PLATFORMS", "cpu")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax import random  # noqa: E402

assert not jax.config.jax_enable_x64
assert jax.config.jax_threefry_partitionable

OUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "data",
                       "random_oracle")

WEFT_NAMES = {np.dtype(np.bool_): "bool", np.dtype(np.int32): "i32",
              np.dtype(np.uint32): "u32", np.dtype(np.float32): "f32",
              np.dtype(np.uint64): "u64", np.dtype(np.float64): "f64"}


def encode(a):
    a = np.asarray(a)
    flat = a.reshape(-1)
    if a.dtype == np.float32:
        flat = flat.view(np.uint32)
    if a.dtype == np.float64:
        flat = flat.view(np.uint64)
    return {"dtype": WEFT_NAMES[a.dtype], "shape": list(a.shape), "bits": [int(v) for v in flat]}


# Logits finer than f32 resolves: f64 categorical must keep them.
F64_LOGITS = [0.1 * i - 0.7 + 1e-12 * i for i in range(15)]

SEEDS = [0, 1, 42, 1234567, -1, 2**31 - 1, -2**31]
SHAPES = [[], [7], [1000], [2, 3, 4]]


def key_of(seed):
    return random.PRNGKey(seed)


def batched(f, keys):
    """JAX's vmap over a key array with leading dimensions."""
    for _ in range(keys.ndim - 1):
        f = jax.vmap(f)
    return f(keys)


def sampler(fn, params):
    """The jax.random call for an oracle case, on one raw key."""
    shape = tuple(params.get("shape", []))
    if fn == "bits":
        return lambda k: random.bits(k, shape, {"u32": jnp.uint32, "u64": jnp.uint64}[
            params.get("dtype", "u32")])
    if fn == "uniform_f64":
        return lambda k: random.uniform(k, shape, jnp.float64, params["minval"], params["maxval"])
    if fn == "split":
        return lambda k: random.split(k, params["num"])
    if fn == "fold_in":
        return lambda k: random.fold_in(k, np.uint32(params["data"]))
    if fn == "uniform":
        return lambda k: random.uniform(k, shape, jnp.float32, params["minval"], params["maxval"])
    if fn == "normal":
        return lambda k: random.normal(k, shape, jnp.float32)
    if fn == "truncated_normal":
        return lambda k: random.truncated_normal(k, params["lower"], params["upper"], shape,
                                                 jnp.float32)
    if fn == "bernoulli":
        return lambda k: random.bernoulli(k, np.float32(params["p"]), shape)
    if fn == "randint":
        return lambda k: random.randint(k, shape, params["minval"], params["maxval"], jnp.int32)
    if fn == "gumbel":
        return lambda k: random.gumbel(k, shape, jnp.float32)
    if fn == "normal_f64":
        return lambda k: random.normal(k, shape, jnp.float64)
    if fn == "truncated_normal_f64":
        return lambda k: random.truncated_normal(k, params["lower"], params["upper"], shape,
                                                 jnp.float64)
    if fn == "gumbel_f64":
        return lambda k: random.gumbel(k, shape, jnp.float64)
    if fn == "categorical":
        logits = np.array(params["logits"], np.float64 if params.get("f64") else np.float32
                          ).reshape(params["logits_shape"])
        # With x64 on JAX's indices are i64; weft's are i32 (the values are the same).
        return lambda k: random.categorical(k, logits, params["axis"],
                                            tuple(params["shape"]) if "shape" in params else None
                                            ).astype(jnp.int32)
    # Sort family: permutations and choice ("x"/"a"/"p" are given as values and a shape).
    if fn == "permutation_n":
        return lambda k: random.permutation(k, params["n"])
    if fn in ("permutation", "shuffle"):
        x = np.array(params["x"], np.int32).reshape(params["x_shape"])
        independent = fn == "shuffle" or params["independent"]
        return lambda k: random.permutation(k, x, params["axis"], independent)
    if fn == "choice":
        a = params["a"] if isinstance(params["a"], int) else \
            np.array(params["a"], np.int32).reshape(params["a_shape"])
        p = None if params["p"] is None else np.array(params["p"], np.float32)
        return lambda k: random.choice(k, a, tuple(params["shape"]), params["replace"], p,
                                       params["axis"])
    raise ValueError(fn)


def case(name, fn, key, params, ulps=0):
    expected = batched(sampler(fn, params), jnp.asarray(key))
    return {"name": name, "fn": fn, "key": encode(key), "params": params,
            "expected": encode(expected), "ulps": ulps}


def keys_cases():
    cases = []
    for seed in SEEDS:
        cases.append({"name": f"PRNGKey({seed})", "seed": seed,
                      "expected": encode(random.PRNGKey(seed)),
                      "typed": encode(random.key_data(random.key(seed)))})
    return cases


def main():
    os.makedirs(OUT_DIR, exist_ok=True)
    keys = {s: np.asarray(key_of(s)) for s in SEEDS}
    files = {"keys.json": keys_cases()}

    core = []
    for s in [0, 42, -1, 2**31 - 1]:
        for shape in SHAPES:
            core.append(case(f"bits seed {s} {shape}", "bits", keys[s], {"shape": shape}))
        for num in [2, 7]:
            core.append(case(f"split seed {s} num {num}", "split", keys[s], {"num": num}))
        for data in [0, 7, 2**32 - 1]:
            core.append(case(f"fold_in seed {s} data {data}", "fold_in", keys[s], {"data": data}))
    big = np.asarray(random.split(keys[42], 3))
    core.append(case("bits of split keys (vmap)", "bits", big, {"shape": [7]}))
    core.append(case("bits of a [2,3] key array (vmap twice)", "bits",
                     np.asarray(random.split(keys[1], (2, 3))), {"shape": [3, 5]}))
    core.append(case("split of split keys (vmap)", "split", big, {"num": 4}))
    core.append(case("fold_in of split keys (vmap)", "fold_in", big, {"data": 5}))
    core.append(case("bits 4099", "bits", keys[0], {"shape": [4099]}))
    files["core.json"] = core

    samplers = []
    for s in [0, -1]:
        k = keys[s]
        for shape in [[7], [1000]]:
            samplers.append(case(f"uniform seed {s} {shape}", "uniform", k,
                                 {"shape": shape, "minval": 0.0, "maxval": 1.0}, ulps=1))
            samplers.append(case(f"normal seed {s} {shape}", "normal", k, {"shape": shape},
                                 ulps=1))
        samplers.append(case(f"uniform seed {s} [-2, 3)", "uniform", k,
                             {"shape": [1000], "minval": -2.0, "maxval": 3.0}, ulps=1))
        samplers.append(case(f"uniform seed {s} scalar", "uniform", k,
                             {"shape": [], "minval": 0.0, "maxval": 1.0}, ulps=1))
        samplers.append(case(f"truncated_normal seed {s} [-1, 2]", "truncated_normal", k,
                             {"shape": [1000], "lower": -1.0, "upper": 2.0}, ulps=1))
        samplers.append(case(f"truncated_normal seed {s} [0.5, 3]", "truncated_normal", k,
                             {"shape": [3, 5], "lower": 0.5, "upper": 3.0}, ulps=1))
        samplers.append(case(f"bernoulli seed {s} p 0.3", "bernoulli", k,
                             {"shape": [1000], "p": 0.3}))
        samplers.append(case(f"bernoulli seed {s} p 0.5 [3,5]", "bernoulli", k,
                             {"shape": [3, 5], "p": 0.5}))
        samplers.append(case(f"randint seed {s} [0, 10)", "randint", k,
                             {"shape": [1000], "minval": 0, "maxval": 10}))
        samplers.append(case(f"randint seed {s} [-5, 1000)", "randint", k,
                             {"shape": [3, 5], "minval": -5, "maxval": 1000}))
        samplers.append(case(f"randint seed {s} [-2^31, 2^31-1)", "randint", k,
                             {"shape": [7], "minval": -2**31, "maxval": 2**31 - 1}))
        samplers.append(case(f"randint seed {s} empty range", "randint", k,
                             {"shape": [7], "minval": 4, "maxval": 4}))
        samplers.append(case(f"gumbel seed {s} [1000]", "gumbel", k, {"shape": [1000]}, ulps=1))
        samplers.append(case(f"gumbel seed {s} [3,5]", "gumbel", k, {"shape": [3, 5]}, ulps=1))
        logits = [0.1, -1.0, 2.0, 0.5, 0.0, 3.0, -2.0, 1.0, 1.5, -0.5, 0.25, 0.75, -3.0, 2.5, 0.3]
        samplers.append(case(f"categorical seed {s} [3,5] axis -1", "categorical", k,
                             {"logits": logits, "logits_shape": [3, 5], "axis": -1}))
        samplers.append(case(f"categorical seed {s} [3,5] axis 0", "categorical", k,
                             {"logits": logits, "logits_shape": [3, 5], "axis": 0}))
        samplers.append(case(f"categorical seed {s} [5] shape [1000]", "categorical", k,
                             {"logits": logits[:5], "logits_shape": [5], "axis": -1,
                              "shape": [1000]}))
    big = np.asarray(random.split(keys[42], 3))
    samplers.append(case("uniform of split keys (vmap)", "uniform", big,
                         {"shape": [7], "minval": 0.0, "maxval": 1.0}, ulps=1))
    samplers.append(case("normal of split keys (vmap)", "normal", big, {"shape": [3, 5]},
                         ulps=1))
    samplers.append(case("randint of split keys (vmap)", "randint", big,
                         {"shape": [7], "minval": 0, "maxval": 100}))
    files["samplers.json"] = samplers

    # A fori_loop that splits its key every step and sums uniform draws.
    def loop(k):
        def body(i, carry):
            k, acc = carry
            k, sub = random.split(k)
            return k, acc + random.uniform(sub, (7,)) * (i + 1).astype(jnp.float32)
        return jax.lax.fori_loop(0, 5, body, (k, jnp.zeros((7,), jnp.float32)))
    final_key, acc = jax.jit(loop)(keys[42])
    files["loops.json"] = [{"name": "fori_loop split and uniform", "key": encode(keys[42]),
                            "steps": 5, "expected_key": encode(final_key),
                            "expected": encode(acc), "ulps": 1}]

    # 64-bit words and the f64 samplers: JAX with x64 on (the keys are the same raw data).
    with jax.enable_x64(True):
        wide = []
        for s in [0, 42, -1]:
            wide.append(case(f"bits u64 seed {s}", "bits", keys[s],
                             {"shape": [7], "dtype": "u64"}))
            wide.append(case(f"uniform f64 seed {s} [0, 1)", "uniform_f64", keys[s],
                             {"shape": [1000], "minval": 0.0, "maxval": 1.0}, ulps=1))
            wide.append(case(f"uniform f64 seed {s} [-2, 3)", "uniform_f64", keys[s],
                             {"shape": [7], "minval": -2.0, "maxval": 3.0}, ulps=1))
            wide.append(case(f"normal f64 seed {s} [1000]", "normal_f64", keys[s],
                             {"shape": [1000]}, ulps=1))
            wide.append(case(f"gumbel f64 seed {s} [1000]", "gumbel_f64", keys[s],
                             {"shape": [1000]}, ulps=1))
            wide.append(case(f"categorical f64 seed {s} [3,5] axis -1", "categorical", keys[s],
                             {"logits": F64_LOGITS, "logits_shape": [3, 5], "axis": -1,
                              "f64": True}))
        wide.append(case("categorical f64 [5] shape [1000]", "categorical", keys[1],
                         {"logits": F64_LOGITS[:5], "logits_shape": [5], "axis": 0,
                          "shape": [1000], "f64": True}))
        wide.append(case("gumbel f64 of split keys (vmap)", "gumbel_f64", big,
                         {"shape": [3, 5]}, ulps=1))
        # f64 truncated_normal on normal's shape, whose eager kernels it shares.
        for s, (lower, upper) in [(0, (-1.0, 2.0)), (42, (0.5, 3.0)), (-1, (-3.0, -0.25)),
                                  (1, (-6.0, 4.0))]:
            wide.append(case(f"truncated_normal f64 seed {s} [{lower}, {upper}]",
                             "truncated_normal_f64", keys[s],
                             {"shape": [1000], "lower": lower, "upper": upper}, ulps=1))
        wide.append(case("uniform f64 of split keys (vmap)", "uniform_f64", big,
                         {"shape": [3, 5], "minval": 0.0, "maxval": 1.0}, ulps=1))
    files["x64.json"] = wide

    # Typed keys (jax.random.key): key data of their splits and folds, and samples drawn from
    # typed keys, under jit, vmap and a scan carrying the typed key.
    typed = random.key(42)
    subkeys = random.split(typed, 3)

    def scan_body(k, _):
        k, sub = random.split(k)
        return k, random.uniform(sub, (7,))
    scan_key, scan_draws = jax.lax.scan(scan_body, typed, None, length=3)
    files["typed_keys.json"] = [{
        "name": "typed key 42",
        "split3": encode(random.key_data(subkeys)),
        "split23": encode(random.key_data(random.split(typed, (2, 3)))),
        "fold_in7": encode(random.key_data(random.fold_in(typed, 7))),
        "normal_of_subkey1": encode(jax.jit(lambda k: random.normal(k, (7,)))(subkeys[1])),
        "uniform_vmap": encode(jax.vmap(lambda k: random.uniform(k, (7,)))(subkeys)),
        "scan_key": encode(random.key_data(scan_key)),
        "scan_draws": encode(scan_draws),
        "repr_single": repr(typed).split(" overlaying")[0],
        "repr_split": repr(subkeys).split(" overlaying")[0],
    }]

    # Sort family: permutation (1 and 2 sorting rounds), shuffle and choice.
    grid = list(range(12))
    wide_grid = list(range(18))
    perms = [
        case("permutation_n 10 seed 0", "permutation_n", keys[0], {"n": 10}),
        case("permutation_n 1 seed 0", "permutation_n", keys[0], {"n": 1}),
        case("permutation_n 2000 seed 42 (two rounds)", "permutation_n", keys[42], {"n": 2000}),
        case("permutation_n 7 of split keys (vmap)", "permutation_n", big, {"n": 7}),
        case("permutation [4,3] axis 0", "permutation", keys[1],
             {"x": grid, "x_shape": [4, 3], "axis": 0, "independent": False}),
        case("permutation [4,3] axis 1 independent", "permutation", keys[1],
             {"x": grid, "x_shape": [4, 3], "axis": 1, "independent": True}),
        case("shuffle [12]", "shuffle", keys[-1], {"x": grid, "x_shape": [12], "axis": 0}),
        case("choice 10 [3,2] with replacement", "choice", keys[0],
             {"a": 10, "shape": [3, 2], "replace": True, "p": None, "axis": 0}),
        case("choice 10 [6] without replacement", "choice", keys[42],
             {"a": 10, "shape": [6], "replace": False, "p": None, "axis": 0}),
        case("choice [6,3] axis 0 [4] with p", "choice", keys[1],
             {"a": wide_grid, "a_shape": [6, 3], "shape": [4], "replace": True,
              "p": [0.125, 0.25, 0, 0.375, 0.125, 0.125], "axis": 0}),
        case("choice [3,6] axis 1 [2,2] without replacement with p", "choice", keys[-1],
             {"a": wide_grid, "a_shape": [3, 6], "shape": [2, 2], "replace": False,
              "p": [0.125, 0.25, 0.0625, 0.375, 0.125, 0.0625], "axis": 1}),
        case("choice 8 [20] with p", "choice", keys[42],
             {"a": 8, "shape": [20], "replace": True,
              "p": [0.5, 0, 0.125, 0.125, 0.0625, 0.0625, 0.125, 0], "axis": 0}),
    ]
    files["permutation.json"] = perms

    for name, cases in files.items():
        with open(os.path.join(OUT_DIR, name), "w") as f:
            json.dump({"cases": cases}, f, separators=(",", ":"))
            f.write("\n")
        print(name, len(cases), "cases")


if __name__ == "__main__":
    main()
