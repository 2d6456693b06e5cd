r"""Numba kernels of the primal Newton solver of the NSC step (``contact_solver="newton"``).

The cone complementarity problem of one step, with the contacts' compliance ``C`` (the normal rows of
compliant contacts) and a proximal term of weight ``P = ρ I`` about the impulses ``γ̂`` of the last round,

.. math::

    \min_{γ \in K} \tfrac12 γ^T (N + C + P) γ + (r - P γ̂)^T γ,

is solved in the bodies' velocities (the primal): with ``R_i = C_i + P_i`` per contact,

.. math::

    F(v) = \tfrac12 (v - v_f)^T H (v - v_f) + \sum_i ψ_i(D_i v + b_i), \qquad
    ψ_i(u) = \max_{γ \in K_i} \left[-γ^T (u - P_i γ̂_i) - \tfrac12 γ^T R_i γ\right],

``H`` the step's matrix with the joints (eliminated by the saddle-point factorisation). ``ψ_i`` is convex
and once differentiable: ``∇ψ_i = -γ_i(u)``, ``γ_i(u) = Π^{R}_{K_i}(R_i^{-1}(P_i γ̂_i - u))`` (the projection
in the metric ``R_i``), and its generalized Hessian ``W_i = ∂Π^R/∂z · R_i^{-1}`` is symmetric positive
semi-definite. At ``F``'s minimum ``H (v - v_f) = Σ D_iᵀ γ_i``: the step's velocities with the impulses
``γ_i(u_i)``. As ``γ̂ → γ`` (proximal rounds) these solve the CCP on ``N + C``.

Kernels: :func:`cone_terms` (``γ``, ``W``, ``ψ`` of every contact), :func:`scatter_hessian` (``Σ D_iᵀ W_i D_i``
into the values of a KKT pattern that has every contact's body pair), :func:`hessian_apply`
(``Σ D_iᵀ W_i D_i x``), :func:`line_search` (the exact minimiser of ``F`` along a direction).
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

jit = nb.njit(cache=True, error_model="numpy")


@nb.njit(cache=True, inline="always")
def _cone(kind, mu, qn, qt, z0, z1, z2, want_w, W):
    """Projection of z onto contact set ``kind`` in the metric diag(qn, qt, qt) and, if ``want_w``, the Hessian
    ``∂Π/∂z · R⁻¹`` into W (3x3). Kind 0: the cone |γ_t| ≤ μ γ_n; 1: a rolling block (γ_n = 0, |γ_t| ≤ mu);
    2: a spinning block (|γ_n| ≤ mu, γ_t = 0). Kinds 1 and 2 are isotropic (qn = qt). Returns the projection
    and the piece of the set it lies on: 0 the apex (no impulse), 1 inside, 2 on the boundary."""
    if want_w:
        for a in range(3):
            for b in range(3):
                W[a, b] = 0.0
    if kind == 2:
        if abs(z0) <= mu:
            if want_w:
                W[0, 0] = 1.0 / qn
            return z0, 0.0, 0.0, 1
        return min(max(z0, -mu), mu), 0.0, 0.0, 2
    s = math.sqrt(z1 * z1 + z2 * z2)
    if kind == 1:
        if s <= mu:
            if want_w:
                W[1, 1] = 1.0 / qt
                W[2, 2] = 1.0 / qt
            return 0.0, z1, z2, 1
        f = mu / s
        if want_w:
            t1 = z1 / s
            t2 = z2 / s
            g = f / qt
            W[1, 1] = g * (1.0 - t1 * t1)
            W[1, 2] = -g * t1 * t2
            W[2, 1] = W[1, 2]
            W[2, 2] = g * (1.0 - t2 * t2)
        return 0.0, f * z1, f * z2, 2
    # kind 0: the friction cone
    if s <= mu * z0:
        if want_w:
            W[0, 0] = 1.0 / qn
            W[1, 1] = 1.0 / qt
            W[2, 2] = 1.0 / qt
        return z0, z1, z2, 1
    if mu == 0.0 or s == 0.0:
        if z0 <= 0.0:
            return 0.0, 0.0, 0.0, 0
        if want_w:
            W[0, 0] = 1.0 / qn
        return z0, 0.0, 0.0, 1
    den = qn + qt * mu * mu
    a = (qn * z0 + qt * mu * s) / den
    if a <= 0.0:
        return 0.0, 0.0, 0.0, 0
    t1 = z1 / s
    t2 = z2 / s
    if want_w:
        c = mu * a / (s * qt)
        W[0, 0] = 1.0 / den
        W[0, 1] = mu * t1 / den
        W[0, 2] = mu * t2 / den
        W[1, 0] = W[0, 1]
        W[2, 0] = W[0, 2]
        m2 = mu * mu / den
        W[1, 1] = m2 * t1 * t1 + c * (1.0 - t1 * t1)
        W[1, 2] = m2 * t1 * t2 - c * t1 * t2
        W[2, 1] = W[1, 2]
        W[2, 2] = m2 * t2 * t2 + c * (1.0 - t2 * t2)
    return a, mu * a * t1, mu * a * t2, 2


@jit
def cone_terms(m, kind, mu, qn, qt, pg, u, gamma, W, region):
    """Every contact's impulse ``γ_i = Π^R(R⁻¹(pg_i - u_i))`` (into gamma), Hessian ``W_i`` (m, 3, 3), and the
    sum of ``ψ_i = -γ_iᵀ(u_i - pg_i) - ½ γ_iᵀ R_i γ_i`` (returned). ``pg = P γ̂`` (3m,), ``qn``/``qt`` (m,) the
    metric's normal and tangential weights. ``region`` (m,) int gets each contact's piece of ψ: 0 no
    impulse, 1 inside its set (sticking), 2 on its boundary (sliding, or a rolling/spinning limit)."""
    psi = 0.0
    Wi = np.empty((3, 3))
    for i in range(m):
        a = 3 * i
        d0 = pg[a] - u[a]
        d1 = pg[a + 1] - u[a + 1]
        d2 = pg[a + 2] - u[a + 2]
        g0, g1, g2, region[i] = _cone(kind[i], mu[i], qn[i], qt[i], d0 / qn[i], d1 / qt[i], d2 / qt[i], True, Wi)
        gamma[a] = g0
        gamma[a + 1] = g1
        gamma[a + 2] = g2
        for p in range(3):
            for q in range(3):
                W[i, p, q] = Wi[p, q]
        psi += g0 * d0 + g1 * d1 + g2 * d2 - 0.5 * (qn[i] * g0 * g0 + qt[i] * (g1 * g1 + g2 * g2))
    return psi


@jit
def scatter_hessian(m, c_body, c_D, W, body_slot, pidx, pair_slot, data):
    """data += Σ_i D_iᵀ W_i D_i: the two bodies' diagonal blocks (upper triangles, as stored) and their
    coupling block ``pair_slot[pidx[A, B]]`` (entry (6A + a, 6B + c) at ``[p, a, c]`` when A < B, else at
    ``[p, c, a]``); every contact pair of bodies must have its block (``pidx >= 0``)."""
    DW = np.empty((12, 3))
    for i in range(m):
        bA = c_body[i, 0]
        bB = c_body[i, 1]
        for k in range(12):
            for q in range(3):
                s = 0.0
                for p in range(3):
                    s += c_D[i, p, k] * W[i, p, q]
                DW[k, q] = s
        for side in range(2):
            b = c_body[i, side]
            if b < 0:
                continue
            o = 6 * side
            for a in range(6):
                for c in range(a, 6):
                    data[body_slot[b, a, c]] += (DW[o + a, 0] * c_D[i, 0, o + c] + DW[o + a, 1] * c_D[i, 1, o + c]
                                                 + DW[o + a, 2] * c_D[i, 2, o + c])
        if bA < 0 or bB < 0 or bA == bB:
            continue
        p = pidx[bA, bB]
        for a in range(6):
            for c in range(6):
                val = DW[a, 0] * c_D[i, 0, 6 + c] + DW[a, 1] * c_D[i, 1, 6 + c] + DW[a, 2] * c_D[i, 2, 6 + c]
                if bA < bB:
                    data[pair_slot[p, a, c]] += val
                else:
                    data[pair_slot[p, c, a]] += val


@jit
def weighted(m, W, du, out):
    """out_i = W_i du_i (3m,)."""
    for i in range(m):
        for p in range(3):
            out[3 * i + p] = W[i, p, 0] * du[3 * i] + W[i, p, 1] * du[3 * i + 1] + W[i, p, 2] * du[3 * i + 2]


@jit
def line_search(m, kind, mu, qn, qt, pg, u, du, a1, a2, gamma, max_iter, rtol):
    """The step α ≥ 0 that minimises ``F(v + α Δv)`` along a direction: with ``u`` (3m,) the contact velocities
    at v, ``du = D Δv``, ``a1 = Δvᵀ H (v - v_f)`` and ``a2 = Δvᵀ H Δv``, ``φ'(α) = a1 + α a2 - Σ γ_i(u + α du) ·
    du_i`` is increasing; safeguarded Newton on φ' = 0 from α = 1 (bracketing, bisection when a Newton
    step leaves the bracket), stopped when |φ'| ≤ rtol |φ'(0)|. Returns (α, φ'(0)); gamma is scratch."""
    Wi = np.empty((3, 3))
    ut = np.empty(3)
    d0 = 0.0
    for i in range(m):
        a = 3 * i
        g0, g1, g2, _ = _cone(kind[i], mu[i], qn[i], qt[i], (pg[a] - u[a]) / qn[i], (pg[a + 1] - u[a + 1]) / qt[i],
                           (pg[a + 2] - u[a + 2]) / qt[i], False, Wi)
        d0 -= g0 * du[a] + g1 * du[a + 1] + g2 * du[a + 2]
    d0 += a1
    if d0 >= 0.0:
        return 0.0, d0
    lo = 0.0
    hi = -1.0
    alpha = 1.0
    for _ in range(max_iter):
        d1 = a1 + alpha * a2
        d2 = a2
        for i in range(m):
            a = 3 * i
            for p in range(3):
                ut[p] = u[a + p] + alpha * du[a + p]
            g0, g1, g2, _ = _cone(kind[i], mu[i], qn[i], qt[i], (pg[a] - ut[0]) / qn[i], (pg[a + 1] - ut[1]) / qt[i],
                               (pg[a + 2] - ut[2]) / qt[i], True, Wi)
            d1 -= g0 * du[a] + g1 * du[a + 1] + g2 * du[a + 2]
            for p in range(3):
                d2 += du[a + p] * (Wi[p, 0] * du[a] + Wi[p, 1] * du[a + 1] + Wi[p, 2] * du[a + 2])
        if abs(d1) <= rtol * abs(d0):
            return alpha, d0
        if d1 < 0.0:
            lo = alpha
        else:
            hi = alpha
        nxt = alpha - d1 / d2 if d2 > 0.0 else -1.0
        if hi < 0.0:
            if not (nxt > alpha):
                nxt = 2.0 * alpha
        elif not (lo < nxt < hi):
            nxt = 0.5 * (lo + hi)
        alpha = nxt
    return alpha, d0
