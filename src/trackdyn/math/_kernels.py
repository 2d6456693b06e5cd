"""Small-vector and quaternion kernels for Numba code.

Vectors are passed as 3-tuples and quaternions as 4-tuples (scalar first) so
that Numba keeps them in registers: no array is allocated inside the time
loop. Every function here is pure and has no domain knowledge.
"""

from __future__ import annotations

import math

import numba as nb

jit = nb.njit(cache=True, inline="always")


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
    return (
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    )


@jit
def vnorm(a):
    return math.sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2])


@jit
def mat_vec(R, b, a):
    """R[b] @ a for a stack of 3x3 matrices R (body index b)."""
    return (
        R[b, 0, 0] * a[0] + R[b, 0, 1] * a[1] + R[b, 0, 2] * a[2],
        R[b, 1, 0] * a[0] + R[b, 1, 1] * a[1] + R[b, 1, 2] * a[2],
        R[b, 2, 0] * a[0] + R[b, 2, 1] * a[1] + R[b, 2, 2] * a[2],
    )


@jit
def mat_tvec(R, b, a):
    """R[b].T @ a for a stack of 3x3 matrices R (body index b)."""
    return (
        R[b, 0, 0] * a[0] + R[b, 1, 0] * a[1] + R[b, 2, 0] * a[2],
        R[b, 0, 1] * a[0] + R[b, 1, 1] * a[1] + R[b, 2, 1] * a[2],
        R[b, 0, 2] * a[0] + R[b, 1, 2] * a[1] + R[b, 2, 2] * a[2],
    )


@jit
def row3(x, i):
    """Row i of an (n, 3) array as a tuple."""
    return (x[i, 0], x[i, 1], x[i, 2])


@jit
def quat_mul(p, q):
    """Hamilton product p q, scalar first."""
    return (
        p[0] * q[0] - p[1] * q[1] - p[2] * q[2] - p[3] * q[3],
        p[0] * q[1] + p[1] * q[0] + p[2] * q[3] - p[3] * q[2],
        p[0] * q[2] - p[1] * q[3] + p[2] * q[0] + p[3] * q[1],
        p[0] * q[3] + p[1] * q[2] - p[2] * q[1] + p[3] * q[0],
    )


@jit
def quat_exp_half(w, h):
    """exp([0, w h / 2]): the rotation by the angle |w| h about w (thesis app. A)."""
    n = math.sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2])
    half = 0.5 * n * h
    c = math.cos(half)
    if n * h < 1e-8:
        # sin(half)/n, series to O(h^3) keeps full precision at tiny angles
        s = 0.5 * h * (1.0 - half * half / 6.0)
    else:
        s = math.sin(half) / n
    return (c, w[0] * s, w[1] * s, w[2] * s)
