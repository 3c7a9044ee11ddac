#!/usr/bin/env python3
"""JAX twins of the programs in resources/examples/*.weft, for bench/cold_start.sh.

    resource_twins.py NAME --write-dir DIR
    resource_twins.py --list

For the program NAME (resources/examples/NAME.weft) it draws the inputs (numpy, a fixed seed,
the dtypes and shapes of the .weft parameters; integer parameters get values the program
expects), writes them as DIR/in<i>.npy, runs the jitted JAX function once and times that first
call (trace, compile and run, every output on the host) with time.perf_counter. It writes JAX's
outputs as DIR/expected<i>.npy and, for a program with debug_print, the lines it printed:
DIR/prints_ordered.txt (the ordered prints, in order) and DIR/prints_unordered.txt (the others,
whose place among the rest is free). Last it prints one line `first_call_s S import_s S`, where
import_s is the time `import jax` took before.

Each twin follows its .weft op for op, with lax primitives where jnp would differ (integer
division truncates as lax.div does, cond on a bool picks branch1 when true, switch clamps).
"""
import argparse
import contextlib
import io
import os
import sys
import time

t0 = time.perf_counter()
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402
import numpy as np  # noqa: E402

import_s = time.perf_counter() - t0

SEED = 20261127
f32 = np.float32
i32 = np.int32


def uniform(rng, shape):
    return rng.uniform(-1.0, 1.0, size=shape).astype(f32)


# --- the programs, in the order of their .weft parameters -----------------------------------

def accuracy(logits, labels):
    pred = jnp.argmax(logits, axis=1).astype(jnp.int32)
    hit = (pred == labels).astype(jnp.float32)
    return pred, jnp.sum(hit) / jnp.float32(16.0)


def accuracy_inputs(rng):
    logits = uniform(rng, (16, 10))
    labels = rng.integers(0, 10, size=(16,)).astype(i32)
    labels[:11] = np.argmax(logits[:11], axis=1)  # 11 hits, or a few more by chance
    return [logits, labels]


def attention(q, k, v):
    scores = lax.dot_general(q, k, (((2,), (2,)), ((0,), (0,))))
    scaled = scores * jnp.float32(0.35355339059327373)
    shifted = scaled - jnp.max(scaled, axis=2, keepdims=True)
    e = jnp.exp(shifted)
    p = e / jnp.sum(e, axis=2, keepdims=True)
    out = lax.dot_general(p, v, (((2,), (1,)), ((0,), (0,))))
    return jnp.transpose(out, (1, 0, 2)).reshape(4, 16)


def attention_inputs(rng):
    return [uniform(rng, (2, 4, 8)) for _ in range(3)]


def collatz_body(x, k):
    odd = lax.rem(x, jnp.int32(2)) == 1
    nxt = jnp.where(odd, x * jnp.int32(3) + jnp.int32(1), lax.div(x, jnp.int32(2)))
    return nxt, k + jnp.int32(1)


def collatz(n):
    _, steps = lax.while_loop(lambda c: c[0] > 1, lambda c: collatz_body(*c), (n, jnp.int32(0)))
    return steps


def collatz_inputs(rng):
    return [np.array(27, dtype=i32)]  # 111 steps


def collatz_print(n):
    jax.debug.print("start n = {}", n, ordered=True)

    def cond(c):
        jax.debug.print("  test {}", c[0], ordered=True)
        return c[0] > 1

    def body(c):
        x, k = c
        nxt, k1 = collatz_body(x, k)
        jax.debug.print("  step {}: {} -> {}", k1, x, nxt, ordered=True)
        return nxt, k1

    _, steps = lax.while_loop(cond, body, (n, jnp.int32(0)))
    jax.debug.print("{} steps", steps, ordered=False)
    return steps


# The lines of collatz_print's only unordered print start like this.
UNORDERED_PRINTS = {"collatz_print": ("{} steps",)}


def cumsum(xs):
    def body(acc, x):
        nxt = acc + x
        return nxt, nxt

    total, running = lax.scan(body, jnp.float32(0.0), xs)
    return running, total


def cumsum_inputs(rng):
    return [uniform(rng, (6,))]


def fori_sum(scale):
    def body(i, acc):
        fi = i.astype(jnp.float32)
        return acc + fi * fi * scale

    return lax.fori_loop(0, 10, body, jnp.float32(0.0))


def fori_sum_inputs(rng):
    return [np.array(0.5, dtype=f32)]  # 142.5


def max_pool(image, ct):
    def pool(x):
        return lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")

    pooled, vjp = jax.vjp(pool, image)
    (grad,) = vjp(ct)
    return pooled, grad


def max_pool_inputs(rng):
    # distinct values: no ties, so "the first on ties" never decides
    image = rng.permutation(16).astype(f32).reshape(1, 4, 4, 1) / f32(4) - f32(2)
    return [image, uniform(rng, (1, 2, 2, 1))]


def mlp(x, w1, b1, w2, b2):
    h = lax.dot_general(x, w1, (((1,), (0,)), ((), ()))) + b1
    relu = jnp.maximum(h, jnp.float32(0.0))
    return lax.dot_general(relu, w2, (((1,), (0,)), ((), ()))) + b2


def mlp_inputs(rng):
    return [uniform(rng, (8, 16)), uniform(rng, (16, 32)), uniform(rng, (32,)),
            uniform(rng, (32, 10)), uniform(rng, (10,))]


def roll_pad(img):
    right = lax.slice(img, (0, 4), (4, 6))
    left = lax.slice(img, (0, 0), (4, 4))
    rolled = lax.concatenate([right, left], 1)
    framed = lax.pad(rolled, jnp.float32(-1.0), ((1, 1, 0), (1, 1, 0)))
    small = lax.slice(framed, (0, 0), (6, 8), (2, 2))
    return framed, small


def roll_pad_inputs(rng):
    return [uniform(rng, (4, 6))]


def scan_cond(xs):
    penalty = jnp.float32(-1.0)

    def body(acc, x):
        d = lax.cond(x > jnp.float32(0.0), lambda v, q: v, lambda v, q: q, x, penalty)
        nxt = acc + d
        return nxt, d

    total, steps = lax.scan(body, jnp.float32(0.0), xs)
    return total, steps


def scan_cond_inputs(rng):
    xs = uniform(rng, (5,))
    xs[3] = 0.0  # zero is not positive: the penalty
    return [xs]


def select_tril(x):
    row = lax.broadcasted_iota(jnp.int32, (6, 8), 0)
    col = lax.broadcasted_iota(jnp.int32, (6, 8), 1)
    return jnp.where(row >= col, x, jnp.zeros((6, 8), jnp.float32))


def select_tril_inputs(rng):
    return [uniform(rng, (6, 8))]


def softmax(x):
    shifted = x - jnp.max(x, axis=1, keepdims=True)
    e = jnp.exp(shifted)
    return e / jnp.sum(e, axis=1, keepdims=True)


def softmax_inputs(rng):
    return [uniform(rng, (4, 10))]


def switch3(index, x):
    return lax.switch(index, [lambda a: -a, lambda a: a * a,
                              lambda a: a + jnp.float32(10.0)], x)


def switch3_inputs(rng):
    return [np.array(1, dtype=i32), uniform(rng, (4,))]


def window(grid, r, c):
    # The .weft ops clamp the start indices, as XLA does; lax's wrappers would first wrap a
    # negative index from the end (allow_negative_indices=True by default).
    win = lax.dynamic_slice(grid, (r, c), (2, 3), allow_negative_indices=False)
    return lax.dynamic_update_slice(grid, win * jnp.float32(2.0), (r, c),
                                    allow_negative_indices=False)


def window_inputs(rng):
    return [uniform(rng, (5, 7)), np.array(2, dtype=i32), np.array(3, dtype=i32)]


PROGRAMS = {
    "accuracy": (accuracy, accuracy_inputs),
    "attention": (attention, attention_inputs),
    "collatz": (collatz, collatz_inputs),
    "collatz_print": (collatz_print, collatz_inputs),
    "cumsum": (cumsum, cumsum_inputs),
    "fori_sum": (fori_sum, fori_sum_inputs),
    "max_pool": (max_pool, max_pool_inputs),
    "mlp": (mlp, mlp_inputs),
    "roll_pad": (roll_pad, roll_pad_inputs),
    "scan_cond": (scan_cond, scan_cond_inputs),
    "select_tril": (select_tril, select_tril_inputs),
    "softmax": (softmax, softmax_inputs),
    "switch3": (switch3, switch3_inputs),
    "window": (window, window_inputs),
}


def is_unordered(name, line):
    for fmt in UNORDERED_PRINTS.get(name, ()):
        head, _, tail = fmt.partition("{}")
        if line.startswith(head) and line.endswith(tail) and len(line) > len(head + tail):
            return True
    return False


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("name", nargs="?", help="resources/examples/NAME.weft")
    parser.add_argument("--write-dir", help="where in<i>.npy and expected<i>.npy go")
    parser.add_argument("--list", action="store_true", help="print the program names")
    args = parser.parse_args()
    if args.list:
        print("\n".join(PROGRAMS))
        return 0
    if args.name not in PROGRAMS or not args.write_dir:
        parser.error("give one of %s and --write-dir DIR" % ", ".join(PROGRAMS))
    fn, make_inputs = PROGRAMS[args.name]
    os.makedirs(args.write_dir, exist_ok=True)
    inputs = make_inputs(np.random.default_rng(SEED))
    for i, value in enumerate(inputs):
        np.save(os.path.join(args.write_dir, "in%d.npy" % i), value)

    jitted = jax.jit(fn)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        start = time.perf_counter()
        outputs = jitted(*inputs)
        if not isinstance(outputs, (tuple, list)):
            outputs = (outputs,)
        host = [np.asarray(o) for o in outputs]
        jax.effects_barrier()  # weft run waits for every print too
        first_call_s = time.perf_counter() - start

    for i, value in enumerate(host):
        np.save(os.path.join(args.write_dir, "expected%d.npy" % i), value)
    lines = printed.getvalue().splitlines()
    if lines:
        with open(os.path.join(args.write_dir, "prints_ordered.txt"), "w") as f:
            f.writelines(l + "\n" for l in lines if not is_unordered(args.name, l))
        with open(os.path.join(args.write_dir, "prints_unordered.txt"), "w") as f:
            f.writelines(l + "\n" for l in lines if is_unordered(args.name, l))
    print("first_call_s %.4f import_s %.4f" % (first_call_s, import_s))
    return 0


if __name__ == "__main__":
    sys.exit(main())
