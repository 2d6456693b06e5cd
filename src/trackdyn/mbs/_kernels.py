"""Numba kernels of the multibody core: kinematics, constraint primitives, force elements.

Conventions of every kernel here:

- Extended body arrays have ``nb + 1`` rows; the last row is the ground
  (identity rotation, zero position and velocity), so index ``-1`` (the
  ground's index) reads the ground through NumPy's negative indexing.
- A generalized force or a Jacobian row of a two-body element is 12 long:
  ``(r_i, π̄_i, r_j, π̄_j)`` for positions and ``(ṙ_i, ω̄_i, ṙ_j, ω̄_j)`` for
  velocities, where ``π̄`` is the body-frame virtual rotation (thesis §2.4).
- Derivatives of body-fixed vectors use ``∂(c · A ū)/∂π̄ = ū × (Aᵀ c)``.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from ..math._kernels import (
    mat_tvec,
    mat_vec,
    quat_exp_half,
    quat_mul,
    row3,
    vadd,
    vcross,
    vdot,
    vscale,
    vsub,
)

# Constraint primitive types (thesis appendix B, plus the rotating DP1 of motors)
DP1 = 0
DP2 = 1
D = 2
CD = 3
DP1R = 4


@nb.njit(cache=True, _nrt=False)
def body_kinematics(q, v, pos, R, vel, omega_w):
    """Fill extended world-frame arrays from the state (last row = ground).

    ``pos`` (nb+1, 3) COM positions, ``R`` (nb+1, 3, 3) rotation matrices A(q),
    ``vel`` (nb+1, 3) COM velocities, ``omega_w`` (nb+1, 3) world angular velocity.
    """
    nbod = q.shape[0]
    for b in range(nbod):
        e0, e1, e2, e3 = q[b, 3], q[b, 4], q[b, 5], q[b, 6]
        pos[b, 0] = q[b, 0]
        pos[b, 1] = q[b, 1]
        pos[b, 2] = q[b, 2]
        R[b, 0, 0] = e0 * e0 + e1 * e1 - e2 * e2 - e3 * e3
        R[b, 0, 1] = 2.0 * (e1 * e2 - e3 * e0)
        R[b, 0, 2] = 2.0 * (e1 * e3 + e2 * e0)
        R[b, 1, 0] = 2.0 * (e1 * e2 + e3 * e0)
        R[b, 1, 1] = e0 * e0 - e1 * e1 + e2 * e2 - e3 * e3
        R[b, 1, 2] = 2.0 * (e2 * e3 - e1 * e0)
        R[b, 2, 0] = 2.0 * (e1 * e3 - e2 * e0)
        R[b, 2, 1] = 2.0 * (e1 * e0 + e2 * e3)
        R[b, 2, 2] = e0 * e0 - e1 * e1 - e2 * e2 + e3 * e3
        vel[b, 0] = v[b, 0]
        vel[b, 1] = v[b, 1]
        vel[b, 2] = v[b, 2]
        w = mat_vec(R, b, (v[b, 3], v[b, 4], v[b, 5]))
        omega_w[b, 0] = w[0]
        omega_w[b, 1] = w[1]
        omega_w[b, 2] = w[2]
    # ground row
    g = nbod
    for k in range(3):
        pos[g, k] = 0.0
        vel[g, k] = 0.0
        omega_w[g, k] = 0.0
        for m in range(3):
            R[g, k, m] = 1.0 if k == m else 0.0


@nb.njit(cache=True, _nrt=False)
def advance_positions(q, v, h, q_out):
    """Exponential-map update q ⊕ h v (thesis eq. 2.9), quaternions renormalised."""
    for b in range(q.shape[0]):
        q_out[b, 0] = q[b, 0] + h * v[b, 0]
        q_out[b, 1] = q[b, 1] + h * v[b, 1]
        q_out[b, 2] = q[b, 2] + h * v[b, 2]
        dq = quat_exp_half((v[b, 3], v[b, 4], v[b, 5]), h)
        p = quat_mul((q[b, 3], q[b, 4], q[b, 5], q[b, 6]), dq)
        n = math.sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2] + p[3] * p[3])
        q_out[b, 3] = p[0] / n
        q_out[b, 4] = p[1] / n
        q_out[b, 5] = p[2] / n
        q_out[b, 6] = p[3] / n


@nb.njit(cache=True, _nrt=False)
def advance_positions_dq(q, dx, q_out):
    """q ⊕ dx for a position increment dx (nb, 6) = (Δr, Δπ̄) (eq. 2.15 projection)."""
    for b in range(q.shape[0]):
        q_out[b, 0] = q[b, 0] + dx[b, 0]
        q_out[b, 1] = q[b, 1] + dx[b, 1]
        q_out[b, 2] = q[b, 2] + dx[b, 2]
        dq = quat_exp_half((dx[b, 3], dx[b, 4], dx[b, 5]), 1.0)
        p = quat_mul((q[b, 3], q[b, 4], q[b, 5], q[b, 6]), dq)
        n = math.sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2] + p[3] * p[3])
        q_out[b, 3] = p[0] / n
        q_out[b, 4] = p[1] / n
        q_out[b, 5] = p[2] / n
        q_out[b, 6] = p[3] / n


@nb.njit(cache=True, _nrt=False, inline="always")
def _put(J, r, off, a):
    J[r, off] = a[0]
    J[r, off + 1] = a[1]
    J[r, off + 2] = a[2]


@nb.njit(cache=True, _nrt=False)
def constraint_eval(
    row_type, row_body, row_a, row_s, row_c, row_u, row_f,
    pos, R, vel, omega_w, want_gamma,
    phi, J, phi_t, gamma,
):
    """Value, Jacobian w.r.t. (r, π̄), partial time derivative and γ of each row.

    Rows (thesis appendix B, with ``d = p_j - p_i``, ``p = r + A s̄``):

    - DP1: ``a_i · a_j - f``
    - DP2: ``a_i · d - f``
    - D:   ``d · d - f²``
    - CD:  ``c · d - f``
    - DP1R (motor): DP1 with the rotating body-i vector
      ``ā_i(θ) = cos θ ū - sin θ w̄``; zero when the body-j vector has turned
      by θ(t) from ``w̄`` towards ``ū`` about their normal.

    ``row_f[:, 0:3]`` holds f, ḟ, f̈ (θ, θ̇, θ̈ for DP1R). ``γ`` is the
    right-hand side of the acceleration equation ``J v̇ = γ``.
    """
    n = row_type.shape[0]
    for r in range(n):
        t = row_type[r]
        bi = row_body[r, 0]
        bj = row_body[r, 1]
        f = row_f[r, 0]
        fd = row_f[r, 1]
        fdd = row_f[r, 2]
        wi = (omega_w[bi, 0], omega_w[bi, 1], omega_w[bi, 2])
        wj = (omega_w[bj, 0], omega_w[bj, 1], omega_w[bj, 2])
        for k in range(12):
            J[r, k] = 0.0
        if t == DP1 or t == DP1R:
            aj_b = (row_a[r, 1, 0], row_a[r, 1, 1], row_a[r, 1, 2])
            if t == DP1:
                ai_b = (row_a[r, 0, 0], row_a[r, 0, 1], row_a[r, 0, 2])
                ai_t_b = (0.0, 0.0, 0.0)
                ai_tt_b = (0.0, 0.0, 0.0)
                target = f
                target_d = fd
                target_dd = fdd
            else:
                u = (row_u[r, 0, 0], row_u[r, 0, 1], row_u[r, 0, 2])
                w = (row_u[r, 1, 0], row_u[r, 1, 1], row_u[r, 1, 2])
                c = math.cos(f)
                s = math.sin(f)
                ai_b = vsub(vscale(c, u), vscale(s, w))
                dir1 = vsub(vscale(-s, u), vscale(c, w))  # dā/dθ
                ai_t_b = vscale(fd, dir1)
                ai_tt_b = vsub(vscale(fdd, dir1), vscale(fd * fd, ai_b))
                target = 0.0
                target_d = 0.0
                target_dd = 0.0
            ai = mat_vec(R, bi, ai_b)
            aj = mat_vec(R, bj, aj_b)
            phi[r] = vdot(ai, aj) - target
            _put(J, r, 3, vcross(ai_b, mat_tvec(R, bi, aj)))
            _put(J, r, 9, vcross(aj_b, mat_tvec(R, bj, ai)))
            ai_t = mat_vec(R, bi, ai_t_b)
            phi_t[r] = vdot(ai_t, aj) - target_d
            if want_gamma:
                ai_dot = vadd(vcross(wi, ai), ai_t)
                aj_dot = vcross(wj, aj)
                qi = vadd(vadd(vcross(wi, ai_dot), vcross(wi, ai_t)), mat_vec(R, bi, ai_tt_b))
                qj = vcross(wj, aj_dot)
                gamma[r] = target_dd - (vdot(qi, aj) + 2.0 * vdot(ai_dot, aj_dot) + vdot(ai, qj))
        else:
            si_b = (row_s[r, 0, 0], row_s[r, 0, 1], row_s[r, 0, 2])
            sj_b = (row_s[r, 1, 0], row_s[r, 1, 1], row_s[r, 1, 2])
            si = mat_vec(R, bi, si_b)
            sj = mat_vec(R, bj, sj_b)
            d = vsub(vadd(row3(pos, bj), sj), vadd(row3(pos, bi), si))
            ddot = vsub(vadd(row3(vel, bj), vcross(wj, sj)), vadd(row3(vel, bi), vcross(wi, si)))
            # non-v̇ part of d̈
            dq = vsub(vcross(wj, vcross(wj, sj)), vcross(wi, vcross(wi, si)))
            if t == DP2:
                ai_b = (row_a[r, 0, 0], row_a[r, 0, 1], row_a[r, 0, 2])
                ai = mat_vec(R, bi, ai_b)
                phi[r] = vdot(ai, d) - f
                _put(J, r, 0, vscale(-1.0, ai))
                _put(J, r, 3, vsub(vcross(ai_b, mat_tvec(R, bi, d)), vcross(si_b, ai_b)))
                _put(J, r, 6, ai)
                _put(J, r, 9, vcross(sj_b, mat_tvec(R, bj, ai)))
                phi_t[r] = -fd
                if want_gamma:
                    ai_dot = vcross(wi, ai)
                    qi = vcross(wi, ai_dot)
                    gamma[r] = fdd - (vdot(qi, d) + 2.0 * vdot(ai_dot, ddot) + vdot(ai, dq))
            elif t == D:
                phi[r] = vdot(d, d) - f * f
                _put(J, r, 0, vscale(-2.0, d))
                _put(J, r, 3, vscale(-2.0, vcross(si_b, mat_tvec(R, bi, d))))
                _put(J, r, 6, vscale(2.0, d))
                _put(J, r, 9, vscale(2.0, vcross(sj_b, mat_tvec(R, bj, d))))
                phi_t[r] = -2.0 * f * fd
                if want_gamma:
                    gamma[r] = 2.0 * fd * fd + 2.0 * f * fdd - (2.0 * vdot(ddot, ddot) + 2.0 * vdot(d, dq))
            else:  # CD
                c = (row_c[r, 0], row_c[r, 1], row_c[r, 2])
                phi[r] = vdot(c, d) - f
                _put(J, r, 0, vscale(-1.0, c))
                _put(J, r, 3, vscale(-1.0, vcross(si_b, mat_tvec(R, bi, c))))
                _put(J, r, 6, c)
                _put(J, r, 9, vcross(sj_b, mat_tvec(R, bj, c)))
                phi_t[r] = -fd
                if want_gamma:
                    gamma[r] = fdd - vdot(c, dq)
