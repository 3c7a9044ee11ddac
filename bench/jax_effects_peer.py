#!/usr/bin/env python3
"""JAX on CPU doing what bench_effects measures, for comparison (optional: nothing in weft's
build or tests needs it; it needs `pip install jax`).

  tap in a loop   jax.experimental.io_callback (ordered, no results: what hcb.id_tap became)
                  inside a jitted jax.lax.fori_loop of 10,000 iterations of
                  x = x * 1.0001 + 0.5 on f32[16]; each run is the call, jax.effects_barrier()
                  and the result on the host, and must count exactly 10,000 callbacks. Figure:
                  (loop with the callback - the same loop without it) / 10,000. Also with
                  jax.debug.callback (unordered), for information.
  ordering        2,000 back-to-back calls of a jitted f(x) = { io_callback(no-op, None, x,
                  ordered=...); return x + 1 } on f32[16], then one jax.effects_barrier() and
                  the last result on the host: us per call, ordered against unordered. Also
                  with jax.debug.print (stdout sent to /dev/null while it runs).
  dispatch        a jitted x + 1 on f32[16], call + block_until_ready, 200 calls.

Contenders run round-robin (one repetition of each per round), medians over the rounds,
after warm-up runs (compilation is never timed), as weft's benchmarks do.

  python3 bench/jax_effects_peer.py [--rounds N]
"""

import argparse
import contextlib
import os
import platform
import statistics
import sys
import threading
import time

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import io_callback

TAP_ITERATIONS = 10_000
DISPATCHES = 2_000
DISPATCH_CALLS = 200
N = 16


class Counter:
    def __init__(self):
        self.value = 0
        self.lock = threading.Lock()

    def __call__(self, *args):
        with self.lock:
            self.value += 1
        return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--warmups", type=int, default=1)
    options = parser.parse_args()

    jax.config.update("jax_platforms", "cpu")
    x = jnp.asarray(np.arange(N, dtype=np.float32) % 7)
    want_loop = np.arange(N, dtype=np.float32) % 7
    for _ in range(TAP_ITERATIONS):
        want_loop = want_loop * np.float32(1.0001) + np.float32(0.5)
    want_plus_one = np.asarray(x) + 1

    taps = Counter()

    def step(v):
        return v * jnp.float32(1.0001) + jnp.float32(0.5)

    @jax.jit
    def io_tap_loop(x0):
        def body(i, v):
            v = step(v)
            io_callback(taps, None, v, ordered=True)
            return v

        return jax.lax.fori_loop(0, TAP_ITERATIONS, body, x0)

    @jax.jit
    def debug_tap_loop(x0):
        def body(i, v):
            v = step(v)
            jax.debug.callback(taps, v)
            return v

        return jax.lax.fori_loop(0, TAP_ITERATIONS, body, x0)

    @jax.jit
    def plain_loop(x0):
        return jax.lax.fori_loop(0, TAP_ITERATIONS, lambda i, v: step(v), x0)

    def run_loop(fn, counted, who):
        before = taps.value
        y = fn(x)
        jax.effects_barrier()
        host = np.asarray(y)
        if counted and taps.value - before != TAP_ITERATIONS:
            sys.exit(f"{who}: {taps.value - before} callbacks, not {TAP_ITERATIONS}")
        return host

    calls = Counter()

    def make_io(ordered):
        @jax.jit
        def f(v):
            io_callback(calls, None, v, ordered=ordered)
            return v + 1

        return f

    def make_print(ordered):
        @jax.jit
        def f(v):
            jax.debug.print("{}", v, ordered=ordered)
            return v + 1

        return f

    io_ordered, io_unordered = make_io(True), make_io(False)
    print_ordered, print_unordered = make_print(True), make_print(False)
    devnull = open(os.devnull, "w")

    def burst(fn, counted, who):
        before = calls.value
        last = None
        for _ in range(DISPATCHES):
            last = fn(x)
        jax.effects_barrier()
        got = np.asarray(last)
        if not np.array_equal(got, want_plus_one):
            sys.exit(f"{who} computed a wrong x + 1")
        if counted and calls.value - before != DISPATCHES:
            sys.exit(f"{who}: {calls.value - before} callbacks for {DISPATCHES} calls")

    def print_burst(fn, who):
        with contextlib.redirect_stdout(devnull):
            burst(fn, False, who)
            sys.stdout.flush()

    add_one = jax.jit(lambda v: v + 1)

    def dispatch():
        for _ in range(DISPATCH_CALLS):
            add_one(x).block_until_ready()

    contenders = [
        ("fori 10000 x io_callback ordered", lambda: run_loop(io_tap_loop, True, "io_callback loop")),
        ("fori 10000 x debug.callback", lambda: run_loop(debug_tap_loop, True, "debug.callback loop")),
        ("fori 10000 without callback", lambda: run_loop(plain_loop, False, "plain loop")),
        ("2000 x io_callback ordered + barrier", lambda: burst(io_ordered, True, "io ordered")),
        ("2000 x io_callback unordered + barrier", lambda: burst(io_unordered, True, "io unordered")),
        ("2000 x debug.print ordered + barrier", lambda: print_burst(print_ordered, "print ordered")),
        ("2000 x debug.print unordered + barrier", lambda: print_burst(print_unordered, "print unordered")),
        ("200 x jit x+1 f32[16] call + wait", dispatch),
    ]

    # Correctness, and compilation, before any timing.
    for who, fn in [("io_callback loop", io_tap_loop), ("debug.callback loop", debug_tap_loop),
                    ("plain loop", plain_loop)]:
        got = run_loop(fn, fn is not plain_loop, who)
        if not np.allclose(got, want_loop, rtol=1e-3):
            sys.exit(f"{who} computed a wrong loop: {got} against {want_loop}")
    if not np.array_equal(np.asarray(add_one(x)), want_plus_one):
        sys.exit("x + 1 is wrong")

    samples = [[] for _ in contenders]
    for r in range(options.warmups + options.rounds):
        for k, (_, fn) in enumerate(contenders):
            start = time.perf_counter()
            fn()
            seconds = time.perf_counter() - start
            if r >= options.warmups:
                samples[k].append(seconds)
    med = [statistics.median(s) for s in samples]
    best = [min(s) for s in samples]

    print(f"jax {jax.__version__} on {jax.devices()[0]} ({platform.processor() or platform.machine()},"
          f" {os.cpu_count()} CPUs), python {platform.python_version()}")
    print(f"\ncontender (median of {options.rounds} rounds)     | median      | best")
    for (name, _), m, b in zip(contenders, med, best):
        print(f"{name:<40} | {m * 1e3:8.3f} ms | {b * 1e3:8.3f} ms")
    print("load average: " + " ".join(f"{v:.2f}" for v in os.getloadavg()))

    us = 1e6
    io_iter = med[0] / TAP_ITERATIONS * us
    debug_iter = med[1] / TAP_ITERATIONS * us
    plain_iter = med[2] / TAP_ITERATIONS * us
    io_o, io_u, pr_o, pr_u = (m / DISPATCHES * us for m in med[3:7])
    dispatch_us = med[7] / DISPATCH_CALLS * us
    rows = [
        ("io_callback (ordered) in fori_loop 10000 x f32[16], per callback",
         f"{io_iter - plain_iter:.1f} us/callback ({io_iter:.1f} us/iter)",
         f"{plain_iter:.2f} us/iter (loop without callback)"),
        ("  debug.callback in fori_loop, per callback",
         f"{debug_iter - plain_iter:.1f} us/callback ({debug_iter:.1f} us/iter)",
         f"{plain_iter:.2f} us/iter (loop without callback)"),
        ("io_callback 2000 calls + barrier, ordered",
         f"{io_o:.1f} us/call", f"{io_u:.1f} us/call (unordered): {io_o / io_u:.2f}x"),
        ("  debug.print 2000 calls + barrier, ordered",
         f"{pr_o:.1f} us/call", f"{pr_u:.1f} us/call (unordered): {pr_o / pr_u:.2f}x"),
        ("dispatch jit x+1 f32[16], call + wait", f"{dispatch_us:.1f} us/call", "-"),
    ]
    head = ("jax figure", "jax", "baseline")
    width = [max(len(r[i]) for r in rows + [head]) for i in range(3)]
    print()
    for row in [head, tuple("-" * w for w in width)] + rows:
        print("| " + " | ".join(c.ljust(w) for c, w in zip(row, width)) + " |")


if __name__ == "__main__":
    main()
