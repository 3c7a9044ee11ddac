#!/usr/bin/env python3
"""The checks of bench/cold_start.sh: does weft's result match the JAX twin's?

    compare.py outputs TWIN_DIR WEFT_OUT_DIR WEFT_STDOUT
        WEFT_OUT_DIR/out<i>.npy against TWIN_DIR/expected<i>.npy (dtype and shape equal; floats
        within rtol 1e-4, atol 1e-5, NaN matching NaN; everything else exact), and, when the
        twin printed, the lines weft run shows under "printed (first run):" against
        TWIN_DIR/prints_ordered.txt (same lines, same order) and prints_unordered.txt (present,
        anywhere).
    compare.py logistic WEFT_STDOUT JAX_STDOUT
        the `w =` and `b =` lines agree within 2e-5 (both print 5 decimals) and the `step I loss
        L` lines are the same steps in the same order with losses within 1e-4 relative.

Prints `ok` or what differs (the first few differences) and exits 0 or 1. Needs numpy.
"""
import glob
import os
import re
import sys

import numpy as np

RTOL, ATOL = 1e-4, 1e-5


def compare_array(name, got, want):
    if got.dtype != want.dtype or got.shape != want.shape:
        return ["%s: weft gives %s%s, JAX %s%s" % (name, got.dtype, list(got.shape), want.dtype,
                                                   list(want.shape))]
    if np.issubdtype(want.dtype, np.floating):
        g, w = got.astype(np.float64), want.astype(np.float64)
        close = np.isclose(g, w, rtol=RTOL, atol=ATOL, equal_nan=True)
    else:
        close = got == want
    if np.all(close):
        return []
    bad = np.argwhere(~np.asarray(close))
    first = tuple(int(i) for i in bad[0]) if got.ndim else ()
    return ["%s: %d of %d elements differ; first at %s: weft %r, JAX %r" % (
        name, len(bad), want.size, list(first), got[first].item(), want[first].item())]


def printed_lines(stdout_text):
    """The lines weft run shows under "printed (first run):" (indented by two spaces)."""
    lines = stdout_text.splitlines()
    try:
        start = lines.index("printed (first run):") + 1
    except ValueError:
        return None
    out = []
    for line in lines[start:]:
        if not line.startswith("  "):
            break
        out.append(line[2:])
    return out


def read_lines(path):
    with open(path) as f:
        return f.read().splitlines()


def compare_outputs(twin_dir, out_dir, stdout_path):
    problems = []
    expected = sorted(glob.glob(os.path.join(twin_dir, "expected*.npy")),
                      key=lambda p: int(re.search(r"(\d+)\.npy$", p).group(1)))
    if not expected:
        problems.append("the twin wrote no expected<i>.npy in " + twin_dir)
    for i in range(len(expected)):
        want = np.load(os.path.join(twin_dir, "expected%d.npy" % i))
        got_path = os.path.join(out_dir, "out%d.npy" % i)
        if not os.path.exists(got_path):
            problems.append("out%d.npy: weft wrote no such output" % i)
            continue
        problems += compare_array("out%d" % i, np.load(got_path), want)
    extra = os.path.join(out_dir, "out%d.npy" % len(expected))
    if expected and os.path.exists(extra):
        problems.append("weft wrote more outputs than JAX returned (%s)" % extra)

    ordered_path = os.path.join(twin_dir, "prints_ordered.txt")
    if os.path.exists(ordered_path):
        with open(stdout_path) as f:
            got = printed_lines(f.read())
        if got is None:
            problems.append("weft run printed no 'printed (first run):' section")
        else:
            unordered = read_lines(os.path.join(twin_dir, "prints_unordered.txt"))
            rest = list(got)
            for line in unordered:
                if line in rest:
                    rest.remove(line)
                else:
                    problems.append("unordered print %r missing from weft's lines" % line)
            want = read_lines(ordered_path)
            if rest != want:
                n = next((i for i, (a, b) in enumerate(zip(rest, want)) if a != b),
                         min(len(rest), len(want)))
                problems.append("ordered prints differ at line %d of %d/%d (weft/JAX): weft %r, "
                                "JAX %r" % (n + 1, len(rest), len(want),
                                            rest[n] if n < len(rest) else None,
                                            want[n] if n < len(want) else None))
    return problems


NUMBER = r"[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|inf|nan)"


def logistic_figures(text):
    w = b = None
    steps = []
    for line in text.splitlines():
        if line.startswith("w ="):
            w = [float(v) for v in line[3:].split()]
        elif line.startswith("b ="):
            b = float(line[3:])
        else:
            m = re.match(r"^step (\d+) loss (%s)$" % NUMBER, line.strip())
            if m:
                steps.append((int(m.group(1)), float(m.group(2))))
    return w, b, steps


def compare_logistic(weft_path, jax_path):
    with open(weft_path) as f:
        w1, b1, s1 = logistic_figures(f.read())
    with open(jax_path) as f:
        w2, b2, s2 = logistic_figures(f.read())
    problems = []
    if w1 is None or b1 is None or w2 is None or b2 is None:
        return ["a `w =` or `b =` line is missing (weft: w %s b %s; JAX: w %s b %s)" % (
            w1 is not None, b1 is not None, w2 is not None, b2 is not None)]
    if len(w1) != len(w2) or any(abs(a - c) > 2e-5 for a, c in zip(w1, w2)):
        problems.append("w differs: weft %s, JAX %s" % (w1, w2))
    if abs(b1 - b2) > 2e-5:
        problems.append("b differs: weft %s, JAX %s" % (b1, b2))
    if not s2:
        problems.append("JAX printed no `step ... loss ...` lines")
    if [i for i, _ in s1] != [i for i, _ in s2]:
        problems.append("the printed steps differ: weft %s, JAX %s" % ([i for i, _ in s1],
                                                                      [i for i, _ in s2]))
    else:
        for (i, l1), (_, l2) in zip(s1, s2):
            if not np.isclose(l1, l2, rtol=1e-4, atol=0.0):
                problems.append("step %d: loss weft %r, JAX %r" % (i, l1, l2))
    return problems


def main(argv):
    if len(argv) == 5 and argv[1] == "outputs":
        problems = compare_outputs(argv[2], argv[3], argv[4])
    elif len(argv) == 4 and argv[1] == "logistic":
        problems = compare_logistic(argv[2], argv[3])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    for p in problems[:5]:
        print(p)
    if not problems:
        print("ok")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
