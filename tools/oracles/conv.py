#!/usr/bin/env python3
"""Writes the JAX oracle for conv_general_dilated: tests/data/conv_oracle/cases.json.

tests/conv_test.cpp runs every case eagerly and under weft::jit on the device, and in the
reference interpreter on the graph jit traced, and compares with what jax.lax computed here on
CPU at precision HIGHEST. The build and the tests never run this script; rerun it only to
change the cases (pip install jax), and commit the JSON it writes:

    python3 tools/oracles/conv.py

A case calls lax.conv_general_dilated with "call": layouts (the three strings of
lax.conv_dimension_numbers), window_strides, padding (a mode string or (low, high) pairs),
lhs_dilation, rhs_dilation, feature_group_count, batch_group_count; "specs" are the
dimension numbers JAX resolved them to and "padding_pairs" the explicit padding. "transform":
"none"; "grad": the gradient of sum(conv(lhs, rhs) * args[2]) with respect to "argnums";
"vmap": vmapped over "in_axes" (null: not batched). Arrays are {"dtype", "shape", "values"}
with weft's dtype names.
"""

import json
import os

import numpy as np

os.environ.setdefault("JAX_PLATFORMS", "cpu")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402

jax.config.update("jax_enable_x64", True)

OUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "data",
                       "conv_oracle")
WEFT_NAMES = {np.dtype(np.int32): "i32", np.dtype(np.float32): "f32", np.dtype(np.float64): "f64"}


def spec(a):
    a = np.asarray(a)
    values = a.reshape(-1).tolist()
    if a.dtype.kind == "i":
        values = [int(v) for v in values]
    elif a.dtype == np.float32:
        # The shortest decimal that reads back as the same f32.
        values = [float(np.format_float_positional(np.float32(v), unique=True)) for v in values]
    else:
        values = [float(v) for v in values]
    return {"dtype": WEFT_NAMES[a.dtype], "shape": list(a.shape), "values": values}


CASES = []
rng = np.random.default_rng(2929)


def normal(*shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


def case(name, lhs, rhs, layouts=("NCHW", "OIHW", "NCHW"), strides=None, padding="VALID",
         lhs_dilation=None, rhs_dilation=None, feature_group_count=1, batch_group_count=1,
         transform="none", argnums=None, in_axes=None):
    spatial = len(layouts[0]) - 2
    strides = strides or [1] * spatial
    lhs_dilation = lhs_dilation or [1] * spatial
    rhs_dilation = rhs_dilation or [1] * spatial
    # The shapes of one example, without a vmapped axis, decide the dimension numbers.
    lhs_shape = lhs.shape if in_axes is None or in_axes[0] is None else lhs.shape[1:]
    rhs_shape = rhs.shape if in_axes is None or in_axes[1] is None else rhs.shape[1:]
    dn = lax.conv_dimension_numbers(lhs_shape, rhs_shape, layouts)
    if isinstance(padding, str):
        rhs_spatial = [rhs_shape[d] for d in dn.rhs_spec[2:]]
        window = [(k - 1) * r + 1 for k, r in zip(rhs_spatial, rhs_dilation)]
        pairs = lax.padtype_to_pads([lhs_shape[d] for d in dn.lhs_spec[2:]], window, strides,
                                    padding)
    else:
        pairs = padding

    def call(x, w):
        return lax.conv_general_dilated(
            x, w, window_strides=strides, padding=padding, lhs_dilation=lhs_dilation,
            rhs_dilation=rhs_dilation, dimension_numbers=layouts,
            feature_group_count=feature_group_count, batch_group_count=batch_group_count,
            precision=lax.Precision.HIGHEST)

    args = [lhs, rhs]
    if transform == "none":
        expected = [call(lhs, rhs)]
    elif transform == "grad":
        out = call(lhs, rhs)
        ct = normal(*out.shape, dtype=lhs.dtype)
        args.append(ct)

        def loss(x, w, c):
            return jnp.sum(call(x, w) * c)
        expected = list(jax.grad(loss, argnums=tuple(argnums))(lhs, rhs, ct))
    else:
        expected = [jax.vmap(call, in_axes=tuple(in_axes))(lhs, rhs)]
    c = {"name": name, "transform": transform,
         "call": {"layouts": list(layouts), "window_strides": list(strides),
                  "padding": padding if isinstance(padding, str) else [list(p) for p in padding],
                  "lhs_dilation": list(lhs_dilation), "rhs_dilation": list(rhs_dilation),
                  "feature_group_count": feature_group_count,
                  "batch_group_count": batch_group_count},
         "specs": {"lhs_spec": list(dn.lhs_spec), "rhs_spec": list(dn.rhs_spec),
                   "out_spec": list(dn.out_spec)},
         "padding_pairs": [[int(lo), int(hi)] for lo, hi in pairs],
         "args": [spec(a) for a in args], "expected": [spec(e) for e in expected]}
    if argnums is not None:
        c["argnums"] = argnums
    if in_axes is not None:
        c["in_axes"] = in_axes
    CASES.append(c)


NHWC = ("NHWC", "HWIO", "NHWC")


def forward_and_grad(name, lhs, rhs, **kw):
    case(name, lhs, rhs, **kw)
    case(name + "_grad", lhs, rhs, transform="grad", argnums=[0, 1], **kw)


def main():
    forward_and_grad("nhwc_same_3x3", normal(2, 6, 6, 3), normal(3, 3, 3, 4), layouts=NHWC,
                     padding="SAME")
    forward_and_grad("nchw_valid_stride2", normal(2, 3, 7, 7), normal(4, 3, 3, 3), strides=[2, 2])
    forward_and_grad("nhwc_same_stride2_even", normal(1, 6, 8, 2), normal(3, 3, 2, 3),
                     layouts=NHWC, strides=[2, 2], padding="SAME")
    forward_and_grad("nwc_rhs_dilation_explicit", normal(2, 9, 3), normal(3, 3, 5),
                     layouts=("NWC", "WIO", "NWC"), padding=[(2, 1)], rhs_dilation=[2])
    forward_and_grad("ndhwc_3d", normal(1, 4, 4, 4, 2), normal(2, 2, 2, 2, 3),
                     layouts=("NDHWC", "DHWIO", "NDHWC"), strides=[1, 2, 1],
                     padding=[(1, 0), (0, 1), (1, 1)])
    forward_and_grad("lhs_dilation", normal(1, 4, 4, 2), normal(3, 3, 2, 3), layouts=NHWC,
                     padding=[(1, 2), (2, 1)], lhs_dilation=[2, 2])
    forward_and_grad("lhs_dilation_stride", normal(1, 5, 3, 2), normal(2, 3, 2, 2),
                     layouts=NHWC, strides=[2, 1], padding=[(0, 1), (1, 0)],
                     lhs_dilation=[3, 2], rhs_dilation=[1, 2])
    forward_and_grad("depthwise", normal(2, 5, 5, 4), normal(3, 3, 1, 8), layouts=NHWC,
                     padding="SAME", feature_group_count=4)
    forward_and_grad("grouped_nchw", normal(2, 4, 5, 5), normal(6, 2, 3, 3), padding=[(1, 1), (0, 2)],
                     feature_group_count=2)
    forward_and_grad("batch_groups", normal(4, 3, 5), normal(4, 3, 2),
                     layouts=("NCH", "OIH", "NCH"), batch_group_count=2)
    forward_and_grad("negative_padding", normal(1, 2, 8), normal(3, 2, 3),
                     layouts=("NCH", "OIH", "NCH"), padding=[(-1, -2)])
    forward_and_grad("same_lower_dilated", normal(1, 7, 2), normal(3, 2, 2),
                     layouts=("NWC", "WIO", "NWC"), strides=[2], padding="SAME_LOWER",
                     rhs_dilation=[2])
    forward_and_grad("mixed_layouts", normal(5, 2, 3, 4), normal(2, 3, 2, 4),
                     layouts=("HCNW", "WOIH", "WNHC"), padding=[(1, 0), (0, 1)])
    forward_and_grad("f64", normal(1, 2, 6, 6, dtype=np.float64),
                     normal(3, 2, 3, 3, dtype=np.float64), padding="SAME", strides=[1, 2])
    forward_and_grad("window_past_input", normal(1, 1, 2), normal(2, 1, 4),
                     layouts=("NCH", "OIH", "NCH"))
    # Shapes that take the CPU kernels blocked in registers (f32, features innermost, a
    # multiple of 16 output features): row tails, borders, strides, dilation, 1-D and 3-D; their
    # gradients take the blocked kernel (input gradient, 16 or 32 features) and the long-window
    # kernel (filter gradient).
    forward_and_grad("blocked_nhwc_same", normal(2, 9, 11, 16), normal(3, 3, 16, 32),
                     layouts=NHWC, padding="SAME")
    forward_and_grad("blocked_stride2_dilated", normal(1, 10, 13, 16), normal(3, 2, 16, 16),
                     layouts=NHWC, strides=[2, 2], rhs_dilation=[1, 2],
                     padding=[(1, 2), (0, 1)])
    forward_and_grad("blocked_1d", normal(2, 20, 16), normal(5, 16, 48),
                     layouts=("NWC", "WIO", "NWC"), padding="SAME")
    forward_and_grad("blocked_3d", normal(1, 3, 4, 9, 16), normal(2, 2, 3, 16, 16),
                     layouts=("NDHWC", "DHWIO", "NDHWC"), padding=[(1, 0), (0, 1), (1, 1)])
    forward_and_grad("blocked_few_channels", normal(3, 7, 7, 1), normal(3, 3, 1, 32),
                     layouts=NHWC, padding="SAME")
    forward_and_grad("blocked_oihw_filter", normal(2, 6, 5, 16), normal(32, 16, 3, 3),
                     layouts=("NHWC", "OIHW", "NHWC"), strides=[1, 2], padding="VALID")
    case("i32", rng.integers(-5, 6, (2, 5, 5, 3)).astype(np.int32),
         rng.integers(-3, 4, (2, 2, 3, 2)).astype(np.int32), layouts=NHWC, padding="SAME")
    # vmap: the vmapped axis folded into the batch, the features or the groups.
    for axes in ([0, None], [None, 0], [0, 0]):
        tag = "_".join("n" if a is None else str(a) for a in axes)
        lhs = normal(3, 2, 4, 5, 5) if axes[0] == 0 else normal(2, 4, 5, 5)
        rhs = normal(3, 6, 4, 3, 3) if axes[1] == 0 else normal(6, 4, 3, 3)
        case("vmap_plain_" + tag, lhs, rhs, padding="SAME", transform="vmap", in_axes=axes)
        rhs = normal(3, 6, 2, 3, 3) if axes[1] == 0 else normal(6, 2, 3, 3)
        case("vmap_grouped_" + tag, lhs, rhs, padding="SAME", feature_group_count=2,
             transform="vmap", in_axes=axes)
        lhs = normal(3, 4, 3, 5) if axes[0] == 0 else normal(4, 3, 5)
        rhs = normal(3, 4, 3, 2) if axes[1] == 0 else normal(4, 3, 2)
        case("vmap_batch_groups_" + tag, lhs, rhs, layouts=("NCH", "OIH", "NCH"),
             batch_group_count=2, transform="vmap", in_axes=axes)
    # Output features that do not fill whole vectors (an RGB output's 3; 20 = 16 + 4; 40 = 32 + 8
    # on AVX-512): the CPU blocked kernel pads its filter copy and stores the last lanes singly.
    forward_and_grad("blocked_rgb_out", normal(2, 6, 7, 16), normal(3, 3, 16, 3),
                     layouts=NHWC, padding="SAME")
    forward_and_grad("blocked_partial_block", normal(2, 5, 9, 8), normal(3, 3, 8, 20),
                     layouts=NHWC, padding="SAME")
    case("blocked_partial_pair", normal(1, 4, 10, 8), normal(3, 3, 8, 40), layouts=NHWC,
         padding="VALID")
    os.makedirs(OUT_DIR, exist_ok=True)
    with open(os.path.join(OUT_DIR, "cases.json"), "w") as f:
        json.dump({"jax_version": jax.__version__, "cases": CASES}, f, separators=(",", ":"))
        f.write("\n")
    print(f"wrote {len(CASES)} cases")


if __name__ == "__main__":
    main()
