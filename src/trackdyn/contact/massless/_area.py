"""Penetration area of a wheel circle under one segment of a terrain slice (agapov-kovalev-pogorelov eq. 1-3).

A wheel of radius ``R`` whose centre lies at distance ``d`` (outward positive,
``|d| < R``; ``d < 0`` past a convex corner) from the line of a segment ``[0, L]`` and projects onto it at ``x`` cuts the
solid behind the line in the region ``0 <= h <= g(u)``, with ``u`` along the
segment and ``g(u) = sqrt(R^2 - (u - x)^2) - d`` (``law = EXACT``: the circle)
or ``g(u) = (R - d) - (u - x)^2 / (2 R)`` (``law = PARABOLIC``: the paper's
small-angle form, which gives exactly eq. 3, ``S = (4/3) sqrt(2R) δ^{3/2}``
with ``δ = R - d``, for an uncut segment).

The area is cut to the segment (``0 <= u <= L``) and, at a convex corner of
the slice, to the part of the solid nearer to this segment than to its
neighbour: the bisector of the corner, ``h <= k_a u`` at the start and
``h <= k_b (L - u)`` at the end (``k = cot(θ/2)`` for a turn θ; ``k < 0``: no
limit). The pieces of the overlap of the circle with the solid are so owned by
one segment each: the areas add up over a straight line cut into several
segments, and a corner is not counted twice.

When the centre lies past the line (``d < 0``, a wheel over a convex corner),
the segment owns its corner wedge only across the circle's chord on the line
(the caps of the circle wholly past the line, deep in the wedge, are left
out); the area stays continuous in every argument.

Everything is scalar and closed-form; the partial derivatives are exact
(Leibniz: the integrand is continuous at every break point; it vanishes at
uncut chord ends when ``d > 0``, and the moving ends count when ``d < 0``).
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

EXACT = 0
PARABOLIC = 1

jit = nb.njit(cache=True, _nrt=False)


@jit
def _g(law, R, d, x, u):
    if law == EXACT:
        s = R * R - (u - x) * (u - x)
        return (math.sqrt(s) if s > 0.0 else 0.0) - d
    return (R - d) - (u - x) * (u - x) / (2.0 * R)


@jit
def _g_antider(law, R, d, x, u):
    """∫ g du (an antiderivative)."""
    z = u - x
    if law == EXACT:
        zc = min(max(z, -R), R)
        return 0.5 * (zc * math.sqrt(max(R * R - zc * zc, 0.0)) + R * R * math.asin(zc / R)) - d * u
    return (R - d) * u - z * z * z / (6.0 * R)


@jit
def _g_dx_antider(law, R, x, u):
    """∫ ∂g/∂x du."""
    z = u - x
    if law == EXACT:
        return -math.sqrt(max(R * R - z * z, 0.0))
    return z * z / (2.0 * R)


@jit
def _chord(law, R, d):
    """Half-chord w: g(x ± w) = 0 (0 if no penetration)."""
    if law == EXACT:
        if d >= R:
            return 0.0
        return math.sqrt(R * R - d * d)
    delta = R - d
    if delta <= 0.0:
        return 0.0
    return math.sqrt(2.0 * R * delta)


@jit
def _line_roots(law, R, d, x, k, L, at_end, out):
    """Where g meets the bisector line (k u, or k (L - u) when ``at_end``); returns the number of roots."""
    # substitute v = u (start) or v = L - u (end); with xs the centre in v
    xs = (L - x) if at_end else x
    if law == EXACT:
        # (k v + d)^2 = R^2 - (v - xs)^2, with k v + d >= 0
        a = 1.0 + k * k
        b = 2.0 * (k * d - xs)
        c = d * d + xs * xs - R * R
    else:
        # k v = (R - d) - (v - xs)^2/(2R)  ->  v^2 + (2 R k - 2 xs) v + xs^2 - 2 R (R - d) = 0
        a = 1.0
        b = 2.0 * R * k - 2.0 * xs
        c = xs * xs - 2.0 * R * (R - d)
    disc = b * b - 4.0 * a * c
    if disc < 0.0:
        return 0
    sq = math.sqrt(disc)
    n = 0
    for r in ((-b - sq) / (2.0 * a), (-b + sq) / (2.0 * a)):
        if law == EXACT and k * r + d < -1e-12 * R:
            continue
        out[n] = (L - r) if at_end else r
        n += 1
    return n


@nb.njit(cache=True)
def segment_area(law, R, d, x, L, ka, kb):
    """Owned penetration area S and its partials (S, S_d, S_x, S_L, S_ka, S_kb).

    Parameters are scalars in metres (``ka``, ``kb`` dimensionless; negative:
    no bisector limit at that end).
    """
    return segment_area_scratch(law, R, d, x, L, ka, kb, np.empty(8), np.empty(2))


@jit
def segment_area_scratch(law, R, d, x, L, ka, kb, brk, roots):
    """:func:`segment_area` with caller-owned scratch ``brk`` (>= 8,) and ``roots`` (>= 2,): allocates nothing."""
    zero = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    # d < 0: the centre lies behind the line (past a corner); the owned part is then the corner's wedge
    if d <= -R or L <= 0.0:
        return zero
    w = _chord(law, R, d)
    if w <= 0.0:
        return zero
    lo = max(0.0, x - w)
    hi = min(L, x + w)
    if hi <= lo:
        return zero
    brk[0] = lo
    brk[1] = hi
    nb_ = 2
    if ka >= 0.0:
        n = _line_roots(law, R, d, x, ka, L, False, roots)
        for i in range(n):
            if lo < roots[i] < hi:
                brk[nb_] = roots[i]
                nb_ += 1
    if kb >= 0.0:
        n = _line_roots(law, R, d, x, kb, L, True, roots)
        for i in range(n):
            if lo < roots[i] < hi:
                brk[nb_] = roots[i]
                nb_ += 1
    if ka >= 0.0 and kb >= 0.0 and ka + kb > 0.0:
        us = kb * L / (ka + kb)
        if lo < us < hi:
            brk[nb_] = us
            nb_ += 1
    # insertion sort of the few break points
    for i in range(1, nb_):
        v = brk[i]
        j = i - 1
        while j >= 0 and brk[j] > v:
            brk[j + 1] = brk[j]
            j -= 1
        brk[j + 1] = v
    S = Sd = Sx = SL = Ska = Skb = 0.0
    for i in range(nb_ - 1):
        u0 = brk[i]
        u1 = brk[i + 1]
        if u1 - u0 <= 0.0:
            continue
        um = 0.5 * (u0 + u1)
        gm = _g(law, R, d, x, um)
        best = 0  # 0: circle, 1: start bisector, 2: end bisector
        val = gm
        if ka >= 0.0 and ka * um < val:
            best = 1
            val = ka * um
        if kb >= 0.0 and kb * (L - um) < val:
            best = 2
            val = kb * (L - um)
        if best == 0:
            S += _g_antider(law, R, d, x, u1) - _g_antider(law, R, d, x, u0)
            Sd -= u1 - u0
            Sx += _g_dx_antider(law, R, x, u1) - _g_dx_antider(law, R, x, u0)
        elif best == 1:
            S += 0.5 * ka * (u1 * u1 - u0 * u0)
            Ska += 0.5 * (u1 * u1 - u0 * u0)
        else:
            S += kb * (L * (u1 - u0) - 0.5 * (u1 * u1 - u0 * u0))
            Skb += L * (u1 - u0) - 0.5 * (u1 * u1 - u0 * u0)
            SL += kb * (u1 - u0)
    if hi >= L and x + w > L:
        # the chord is cut at the segment's end: the end moves with L
        fL = _g(law, R, d, x, L)
        if kb >= 0.0:
            fL = 0.0
        elif ka >= 0.0:
            fL = min(fL, ka * L)
        SL += max(fL, 0.0)
    if law == EXACT and d < 0.0:
        # centre past the line: at the chord's ends the circle is 2|d| deep, so the moving ends count
        for end in range(2):
            u = x + w if end == 1 else x - w
            if (end == 1 and u >= L) or (end == 0 and u <= 0.0):
                continue
            f = -2.0 * d
            if ka >= 0.0:
                f = min(f, ka * u)
            if kb >= 0.0:
                f = min(f, kb * (L - u))
            sgn = 1.0 if end == 1 else -1.0
            Sx += sgn * f
            Sd += f * (-d / w)  # ∂(x ± w)/∂d = ∓ d/w, times ±f
    return (S, Sd, Sx, SL, Ska, Skb)


@jit
def depth_area(law, R, D):
    """Area of the circle (radius R) beyond a line at depth D, and dS/dD (eq. 2; eq. 3 for PARABOLIC).

    EXACT stops growing at the half disc (``D >= R``: ``S = π R²/2``, ``dS/dD = 0``):
    a factitious irregularity deeper than the wheel's radius (a stair nosing
    far into the track line) is outside the model's small-penetration domain,
    so its force levels off instead of following the rest of the circle.
    """
    if D <= 0.0:
        return 0.0, 0.0
    if law == EXACT:
        if D >= R:
            return 0.5 * math.pi * R * R, 0.0
        c = (R - D) / R
        s = math.sqrt(max(2.0 * R * D - D * D, 0.0))
        return R * R * math.acos(c) - (R - D) * s, 2.0 * s
    return 4.0 / 3.0 * math.sqrt(2.0 * R) * D ** 1.5, 2.0 * math.sqrt(2.0 * R * D)
