"""Local charts on the body group: a configuration ``q`` (nb, 7) in the chart centred at ``q_ref``
(``q = q_ref ⊕ x``, ``x`` (nb, 6) = ``(Δr, θ)`` per body, θ the body-frame rotation vector) and the chart's
kinematic rate ``ẋ = L(x) v`` (``ṙ`` copied, ``θ̇ = J_r⁻¹(θ) ω̄``). Used by the explicit and multistep
integrators (:mod:`trackdyn.integrators._chart_kernels` re-exports them) and by the synthesis formulation's
time loops; here, at the bottom layer, so that both may import them (docs/integrators.md).
"""

from __future__ import annotations

import math

import numba as nb

from ._kernels import quat_mul, vcross


@nb.njit(cache=True)
def chart_log(q_ref, q, x):
    """Chart coordinates x (nb, 6) of q in the chart centred at q_ref: the inverse of ``q_ref ⊕ x``."""
    for b in range(q.shape[0]):
        for k in range(3):
            x[b, k] = q[b, k] - q_ref[b, k]
        # relative rotation p = conj(ρ_ref) ρ (body frame of the reference)
        p = quat_mul((q_ref[b, 3], -q_ref[b, 4], -q_ref[b, 5], -q_ref[b, 6]), (q[b, 3], q[b, 4], q[b, 5], q[b, 6]))
        p0, p1, p2, p3 = p
        if p0 < 0.0:  # shortest rotation: ρ and -ρ are the same orientation
            p0, p1, p2, p3 = -p0, -p1, -p2, -p3
        s = math.sqrt(p1 * p1 + p2 * p2 + p3 * p3)
        if s < 1e-12:
            # θ = 2 atan2(s, p0) / s * p_vec, series for small angles
            f = 2.0 / p0
        else:
            f = 2.0 * math.atan2(s, p0) / s
        x[b, 3] = f * p1
        x[b, 4] = f * p2
        x[b, 5] = f * p3


@nb.njit(cache=True, inline="always")
def _jr_inv(theta, w):
    """J_r⁻¹(θ) ω = ω + ½ θ × ω + c(|θ|) θ × (θ × ω), c = 1/θ² − (1 + cos θ)/(2 θ sin θ)."""
    t2 = theta[0] * theta[0] + theta[1] * theta[1] + theta[2] * theta[2]
    if t2 < 1e-6:
        c = 1.0 / 12.0 + t2 / 720.0 + t2 * t2 / 30240.0
    else:
        t = math.sqrt(t2)
        c = 1.0 / t2 - (1.0 + math.cos(t)) / (2.0 * t * math.sin(t))
    a = vcross(theta, w)
    bb = vcross(theta, a)
    return (w[0] + 0.5 * a[0] + c * bb[0], w[1] + 0.5 * a[1] + c * bb[1], w[2] + 0.5 * a[2] + c * bb[2])


@nb.njit(cache=True)
def chart_rate(x, v, dx):
    """dx = L(x) v: the time derivative of the chart coordinates for velocities v (nb, 6)."""
    for b in range(x.shape[0]):
        dx[b, 0] = v[b, 0]
        dx[b, 1] = v[b, 1]
        dx[b, 2] = v[b, 2]
        r = _jr_inv((x[b, 3], x[b, 4], x[b, 5]), (v[b, 3], v[b, 4], v[b, 5]))
        dx[b, 3] = r[0]
        dx[b, 4] = r[1]
        dx[b, 5] = r[2]
