"""Numba helpers shared by the integrators."""

from __future__ import annotations

import numba as nb


@nb.njit(cache=True, _nrt=False)
def mass_times(mass, inertia, v, out):
    """out = M v for the block-diagonal mass matrix (per body m I, J̄)."""
    for b in range(mass.shape[0]):
        for k in range(3):
            out[b, k] = mass[b] * v[b, k]
        for k in range(3):
            out[b, 3 + k] = inertia[b, k, 0] * v[b, 3] + inertia[b, k, 1] * v[b, 4] + inertia[b, k, 2] * v[b, 5]


@nb.njit(cache=True, _nrt=False)
def euler_rhs(Mv, f, Dv, h, phi, secant_idx, secant, vmax, rhs):
    """Right-hand side of eq. 2.13: [M v + h f - h Kv v ; -clip(C/h) - time secant]."""
    nb_ = Mv.shape[0]
    for b in range(nb_):
        for k in range(6):
            rhs[6 * b + k] = Mv[b, k] + h * f[b, k] - h * Dv[b, k]
    nd = 6 * nb_
    for r in range(phi.shape[0]):
        c = phi[r] / h
        if c > vmax:
            c = vmax
        elif c < -vmax:
            c = -vmax
        rhs[nd + r] = -c
    for n in range(secant_idx.shape[0]):
        rhs[nd + secant_idx[n]] -= secant[n]
