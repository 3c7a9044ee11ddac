"""Shared by the examples' JAX twins: writes the oracle data a C++ example checks itself against.

Arrays are {"dtype", "shape", "values"} with weft's dtype names (as tools/oracles/ writes them);
bf16 and f16 values are written as the floats they hold. A file holds "inputs" (what the twin
generated from its keys: the C++ example regenerates them with weft::random and checks they are
the same), "params" and "expected" (named arrays), and the sizes the twin ran at.
"""

import json
import os

import numpy as np

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

WEFT_NAMES = {
    np.dtype(np.bool_): "bool", np.dtype(np.int8): "i8", np.dtype(np.uint8): "u8",
    np.dtype(np.int16): "i16", np.dtype(np.uint16): "u16", np.dtype(np.int32): "i32",
    np.dtype(np.uint32): "u32", np.dtype(np.int64): "i64", np.dtype(np.uint64): "u64",
    np.dtype(np.float16): "f16", np.dtype(jnp.bfloat16): "bf16", np.dtype(np.float32): "f32",
    np.dtype(np.float64): "f64",
}


def encode(a):
    a = np.asarray(a)
    name = WEFT_NAMES[a.dtype]
    if name in ("f16", "bf16"):
        values = a.astype(np.float32).reshape(-1).tolist()
    elif a.dtype == np.bool_:
        values = [int(v) for v in a.reshape(-1)]
    else:
        values = a.reshape(-1).tolist()
    return {"dtype": name, "shape": list(a.shape), "values": values}


def encode_tree(tree):
    """A dict of arrays (nested dicts flattened with '.')."""
    out = {}
    for name, value in tree.items():
        if isinstance(value, dict):
            for inner, array in encode_tree(value).items():
                out[name + "." + inner] = array
        else:
            out[name] = encode(value)
    return out


def write(path, sizes, inputs, params, expected):
    data = {"sizes": sizes, "jax_version": jax.__version__, "inputs": encode_tree(inputs),
            "params": encode_tree(params), "expected": encode_tree(expected)}
    with open(path, "w") as f:
        json.dump(data, f, separators=(",", ":"))
        f.write("\n")
    print("wrote", path)
