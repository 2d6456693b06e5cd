"""Numba kernels of the schemes in this package: local charts on the body group, J and Jᵀ products.

A configuration ``q`` (nb, 7) is a point of (R³ × S³)^nb. Explicit and
multistep schemes integrate in the *chart centred at a reference point*
``q_ref``: ``q = q_ref ⊕ x`` with ``x`` (nb, 6) = ``(Δr, θ)`` per body, ``θ``
the body-frame rotation vector (``ρ = ρ_ref exp([0, θ/2])``, thesis eq. 2.9).
In that chart the kinematic equation is ``ẋ = L(x) v`` with ``ṙ`` copied and
``θ̇ = J_r⁻¹(θ) ω̄`` (the inverse right Jacobian of SO(3)); see
docs/integrators.md. Every map here is exact, so a scheme of order p in the
chart keeps order p on the group and quaternions stay unit by construction.
"""

from __future__ import annotations

import numba as nb

from ..math._chart import chart_log, chart_rate  # noqa: F401  (here at the bottom layer; re-exported)


@nb.njit(cache=True)
def jt_times(J, row_body, lam, out):
    """out (nb, 6) = Jᵀ λ: the generalized constraint force of multipliers λ (sign: M v̇ = f − Jᵀλ)."""
    for b in range(out.shape[0]):
        for k in range(6):
            out[b, k] = 0.0
    for r in range(J.shape[0]):
        lm = lam[r]
        for side in range(2):
            b = row_body[r, side]
            if b >= 0:
                for k in range(6):
                    out[b, k] += J[r, 6 * side + k] * lm


@nb.njit(cache=True)
def j_times(J, row_body, v, out):
    """out (nc,) = J v for velocities v (nb, 6)."""
    for r in range(J.shape[0]):
        s = 0.0
        for side in range(2):
            b = row_body[r, side]
            if b >= 0:
                for k in range(6):
                    s += J[r, 6 * side + k] * v[b, k]
        out[r] = s


@nb.njit(cache=True)
def minv_times(mass, inertia_inv, f, out):
    """out (nb, 6) = M⁻¹ f for the block-diagonal mass matrix."""
    for b in range(mass.shape[0]):
        for k in range(3):
            out[b, k] = f[b, k] / mass[b]
        for k in range(3):
            out[b, 3 + k] = (inertia_inv[b, k, 0] * f[b, 3] + inertia_inv[b, k, 1] * f[b, 4]
                             + inertia_inv[b, k, 2] * f[b, 5])
