#!/usr/bin/env python3
"""Fits the polynomials of weft's f32 erf (opencl/src/codegen/lowerings/unary.cpp, kErf).

erf(x) = x + x * R(x^2) for |x| < 1 (R of degree 6), and erf(x) = Q(|x| - 1.625) on [1, 2.25)
(degree 10), W(|x| - 3.125) on [2.25, 4] (degree 8). Least squares in double on dense grids;
prints the coefficients (highest degree first) and the worst error in f32 ulps of a plain f32
Horner evaluation. Needs numpy; run by hand, never by the build.
"""
import math

import numpy as np

f32 = np.float32
erf = np.vectorize(math.erf)


def fit(t, target, degree):
    v = np.vander(t, degree + 1)
    coefficients, *_ = np.linalg.lstsq(v, target, rcond=None)
    return coefficients


def horner(coefficients, t):
    p = np.full_like(t, f32(coefficients[0]))
    for c in coefficients[1:]:
        p = (p * t + f32(c)).astype(f32)
    return p


def worst_ulps(y, x):
    want = erf(x.astype(np.float64))
    spacing = np.spacing(np.abs(want.astype(f32))).astype(np.float64)
    return float(np.max(np.abs(y.astype(np.float64) - want) / spacing))


def main():
    x = np.linspace(1e-4, 1, 200001)
    near = fit(x * x, erf(x) / x - 1, 6)
    xs = np.linspace(1e-4, 1, 400001).astype(f32)
    print("near", ", ".join("%.9e" % c for c in near),
          "worst", worst_ulps(xs + xs * horner(near, xs * xs), xs))
    for lo, hi, mid, degree in ((1, 2.25, 1.625, 10), (2.25, 4, 3.125, 8)):
        x = np.linspace(lo, hi, 200001)
        c = fit(x - mid, erf(x), degree)
        xs = np.linspace(lo, hi, 400001).astype(f32)
        print("[%g, %g)" % (lo, hi), ", ".join("%.9e" % v for v in c),
              "worst", worst_ulps(horner(c, (xs - f32(mid)).astype(f32)), xs))


if __name__ == "__main__":
    main()
