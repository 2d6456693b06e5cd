"""3-vector helpers for the contact kernels (tuples, no allocation).

Same operations as :mod:`trackdyn.math._kernels`, compiled as ordinary
functions instead of being inlined at Numba's IR level: LLVM still inlines
them, and the large detection and force kernels compile in seconds instead of
minutes.
"""

from __future__ import annotations

import math

import numba as nb

jit = nb.njit(cache=True, _nrt=False, inline="always", error_model="numpy")


@jit
def vadd(a, b):
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


@jit
def vsub(a, b):
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


@jit
def vscale(s, a):
    return (s * a[0], s * a[1], s * a[2])


@jit
def vdot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@jit
def vcross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


@jit
def vnorm(a):
    return math.sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2])


@jit
def mat_vec(R, b, a):
    """R[b] @ a for a stack of 3x3 matrices."""
    return (R[b, 0, 0] * a[0] + R[b, 0, 1] * a[1] + R[b, 0, 2] * a[2],
            R[b, 1, 0] * a[0] + R[b, 1, 1] * a[1] + R[b, 1, 2] * a[2],
            R[b, 2, 0] * a[0] + R[b, 2, 1] * a[1] + R[b, 2, 2] * a[2])


@jit
def mat_tvec(R, b, a):
    """R[b].T @ a for a stack of 3x3 matrices."""
    return (R[b, 0, 0] * a[0] + R[b, 1, 0] * a[1] + R[b, 2, 0] * a[2],
            R[b, 0, 1] * a[0] + R[b, 1, 1] * a[1] + R[b, 2, 1] * a[2],
            R[b, 0, 2] * a[0] + R[b, 1, 2] * a[1] + R[b, 2, 2] * a[2])
