"""Numba kernels of the spatial recursive formulation (:mod:`trackdyn.formulations.recursive_spatial`).

Every node of the spanning tree is one body with one inboard joint of
``node_nd`` degrees of freedom (0 fixed, 1 revolute or prismatic, 3
spherical, 6 free); its coordinates are ``q[node_q[j] : node_q[j] + nd]``.
Nodes are in tree order (a parent before its children). Everything is in
the world frame at the body's centre of mass: position ``pos`` (n, 3),
orientation ``quat`` (n, 4) and ``R`` (n, 3, 3) (body to world), the
velocity ``Y = (ṙ, ω)`` (n, 6) (han-sander-mao eq. 5 in three dimensions),
the joint's motion columns ``H`` (n, 6, nd) and the velocity-product
acceleration ``D`` (eq. 6) in ``bias`` (n, 6).

The transform between a parent's and a child's centre of mass,
``Y_j = B1 Y_i + H q̇_j`` with ``B1 = [[I, −[r]×], [0, I]]``, ``r = r_j − r_i``,
is applied without forming B1: ``B1 Y = (v + ω × r, ω)`` and
``B1ᵀ F = (f, n + r × f)``.

Rotations of spherical and free joints are rotation vectors φ (rad):
``R = exp([φ]×) R_0``, with the exact kinematic map ``ω = J_l(φ) φ̇``,
``J_l = I + a [φ]× + b [φ]×²``, ``a = (1 − cos θ)/θ²``,
``b = (θ − sin θ)/θ³``, θ = |φ| (singular only at θ = 2π).

The steps on the joint coordinates that do not depend on the kinematics
(the RK4 stages and update, the projection's Newton and velocity
corrections, the driver rows, the accelerations affine in λ) are the planar
kernels' (:mod:`._recursive_kernels`).
"""

from __future__ import annotations

import math

import numba as nb

from ..linsolve._dense_kernels import gauss_solve
from ._recursive_kernels import (affine_in_multipliers, driver_accelerations, driver_rows, newton_step,
                                 projection_result, rk4_stage_point, rk4_update)

jit = nb.njit(cache=True, _nrt=False)
jit_inline = nb.njit(cache=True, _nrt=False, inline="always")

FIXED = 0
REVOLUTE = 1
PRISMATIC = 2
SPHERICAL = 3
FREE = 4

ROW_DP1 = 0
ROW_CD = 3


# ---------------------------------------------------------------------------- small helpers
@jit_inline
def _cross(a0, a1, a2, b0, b1, b2):
    return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0


@jit_inline
def _qmul(a0, a1, a2, a3, b0, b1, b2, b3):
    return (a0 * b0 - a1 * b1 - a2 * b2 - a3 * b3,
            a0 * b1 + a1 * b0 + a2 * b3 - a3 * b2,
            a0 * b2 - a1 * b3 + a2 * b0 + a3 * b1,
            a0 * b3 + a1 * b2 - a2 * b1 + a3 * b0)


@jit_inline
def _quat_to_R(e0, e1, e2, e3, R, j):
    R[j, 0, 0] = 1.0 - 2.0 * (e2 * e2 + e3 * e3)
    R[j, 0, 1] = 2.0 * (e1 * e2 - e0 * e3)
    R[j, 0, 2] = 2.0 * (e1 * e3 + e0 * e2)
    R[j, 1, 0] = 2.0 * (e1 * e2 + e0 * e3)
    R[j, 1, 1] = 1.0 - 2.0 * (e1 * e1 + e3 * e3)
    R[j, 1, 2] = 2.0 * (e2 * e3 - e0 * e1)
    R[j, 2, 0] = 2.0 * (e1 * e3 - e0 * e2)
    R[j, 2, 1] = 2.0 * (e2 * e3 + e0 * e1)
    R[j, 2, 2] = 1.0 - 2.0 * (e1 * e1 + e2 * e2)


@jit_inline
def _rotvec_quat(p0, p1, p2):
    """The unit quaternion of the rotation vector φ: ``(cos θ/2, sin(θ/2)/θ φ)``."""
    th2 = p0 * p0 + p1 * p1 + p2 * p2
    th = math.sqrt(th2)
    if th < 1e-4:
        s = 0.5 - th2 / 48.0
        c = 1.0 - th2 / 8.0
    else:
        s = math.sin(0.5 * th) / th
        c = math.cos(0.5 * th)
    return c, s * p0, s * p1, s * p2


@jit_inline
def _jl_coeffs(p0, p1, p2):
    """``a, b`` of ``J_l = I + a [φ]× + b [φ]×²`` and ``a'/θ, b'/θ`` (their θ-derivatives over θ), series below
    θ = 0.5 (truncation < 1e-14)."""
    t2 = p0 * p0 + p1 * p1 + p2 * p2
    th = math.sqrt(t2)
    if th < 0.5:
        t4 = t2 * t2
        t6 = t4 * t2
        t8 = t4 * t4
        a = 0.5 - t2 / 24.0 + t4 / 720.0 - t6 / 40320.0 + t8 / 3628800.0
        b = 1.0 / 6.0 - t2 / 120.0 + t4 / 5040.0 - t6 / 362880.0 + t8 / 39916800.0
        ca = -1.0 / 12.0 + t2 / 180.0 - t4 / 6720.0 + t6 / 453600.0 - t8 / 47900160.0
        cb = -1.0 / 60.0 + t2 / 1260.0 - t4 / 60480.0 + t6 / 4989600.0 - t8 / 622702080.0
    else:
        s, c = math.sin(th), math.cos(th)
        t3 = t2 * th
        a = (1.0 - c) / t2
        b = (th - s) / t3
        ca = (th * s - 2.0 * (1.0 - c)) / (t3 * th)
        cb = ((1.0 - c) / t3 - 3.0 * (th - s) / (t3 * th)) / th
    return a, b, ca, cb


@jit_inline
def _jl_apply(p0, p1, p2, a, b, u0, u1, u2):
    """``J_l(φ) u``."""
    c0, c1, c2 = _cross(p0, p1, p2, u0, u1, u2)
    d0, d1, d2 = _cross(p0, p1, p2, c0, c1, c2)
    return u0 + a * c0 + b * d0, u1 + a * c1 + b * d1, u2 + a * c2 + b * d2


@jit_inline
def _jl_rate(p0, p1, p2, b, ca, cb, u0, u1, u2):
    """``(d/dt J_l) u`` for φ̇ = u: ``(a'/θ)(φ·u)(φ × u) + (b'/θ)(φ·u) φ × (φ × u) + b u × (φ × u)``."""
    pu = p0 * u0 + p1 * u1 + p2 * u2
    c0, c1, c2 = _cross(p0, p1, p2, u0, u1, u2)
    d0, d1, d2 = _cross(p0, p1, p2, c0, c1, c2)
    e0, e1, e2 = _cross(u0, u1, u2, c0, c1, c2)
    return (ca * pu * c0 + cb * pu * d0 + b * e0, ca * pu * c1 + cb * pu * d1 + b * e1,
            ca * pu * c2 + cb * pu * d2 + b * e2)


@jit_inline
def _mv(R, j, x0, x1, x2):
    return (R[j, 0, 0] * x0 + R[j, 0, 1] * x1 + R[j, 0, 2] * x2,
            R[j, 1, 0] * x0 + R[j, 1, 1] * x1 + R[j, 1, 2] * x2,
            R[j, 2, 0] * x0 + R[j, 2, 1] * x1 + R[j, 2, 2] * x2)


@jit_inline
def _mtv(R, j, x0, x1, x2):
    return (R[j, 0, 0] * x0 + R[j, 1, 0] * x1 + R[j, 2, 0] * x2,
            R[j, 0, 1] * x0 + R[j, 1, 1] * x1 + R[j, 2, 1] * x2,
            R[j, 0, 2] * x0 + R[j, 1, 2] * x1 + R[j, 2, 2] * x2)


# ---------------------------------------------------------------------------- kinematics
@jit
def forward_kinematics(q, qd, node_parent, joint_type, node_q, joint_sp, joint_sc, joint_ax, node_c0, pos, quat, R,
                       vel, bias, H, r_pc):
    """Recursive kinematics, root to leaves (han-sander-mao eqs. 1-6 in three dimensions).

    Fills per node ``pos``, ``quat``, ``R``, ``vel`` = Y, ``H`` (B2 of
    eq. 5: the motion of the child's centre of mass per unit joint rate),
    ``bias`` = D (eq. 6: ``Ḃ1 Y_i + Ḣ q̇``) and ``r_pc`` = r_j − r_i. Joint
    data at the initial pose: ``joint_sp`` the joint point from the parent's
    centre in the parent frame (world for a ground parent; for a free joint
    the initial centre of mass), ``joint_sc`` the joint point from the
    child's centre in the child frame, ``joint_ax`` the axis (revolute) or
    direction (prismatic) in the parent frame, ``node_c0`` the child's
    orientation relative to the parent's (at q = 0; for a free joint the
    initial orientation).
    """
    n = node_parent.shape[0]
    for j in range(n):
        i = node_parent[j]
        if i >= 0:
            ri0, ri1, ri2 = pos[i, 0], pos[i, 1], pos[i, 2]
            ei0, ei1, ei2, ei3 = quat[i, 0], quat[i, 1], quat[i, 2], quat[i, 3]
            vi0, vi1, vi2 = vel[i, 0], vel[i, 1], vel[i, 2]
            wi0, wi1, wi2 = vel[i, 3], vel[i, 4], vel[i, 5]
            c0, c1, c2 = _mv(R, i, joint_sp[j, 0], joint_sp[j, 1], joint_sp[j, 2])
            ax0, ax1, ax2 = _mv(R, i, joint_ax[j, 0], joint_ax[j, 1], joint_ax[j, 2])
        else:
            ri0, ri1, ri2 = 0.0, 0.0, 0.0
            ei0, ei1, ei2, ei3 = 1.0, 0.0, 0.0, 0.0
            vi0, vi1, vi2 = 0.0, 0.0, 0.0
            wi0, wi1, wi2 = 0.0, 0.0, 0.0
            c0, c1, c2 = joint_sp[j, 0], joint_sp[j, 1], joint_sp[j, 2]
            ax0, ax1, ax2 = joint_ax[j, 0], joint_ax[j, 1], joint_ax[j, 2]
        cw0, cw1, cw2 = ri0 + c0, ri1 + c1, ri2 + c2  # joint point, world
        k = node_q[j]
        jt = joint_type[j]
        # relative rotation (parent frame) then the constant c0
        if jt == REVOLUTE:
            hh = 0.5 * q[k]
            sh = math.sin(hh)
            w0, w1, w2, w3 = math.cos(hh), sh * joint_ax[j, 0], sh * joint_ax[j, 1], sh * joint_ax[j, 2]
        elif jt == SPHERICAL:
            w0, w1, w2, w3 = _rotvec_quat(q[k], q[k + 1], q[k + 2])
        elif jt == FREE:
            w0, w1, w2, w3 = _rotvec_quat(q[k + 3], q[k + 4], q[k + 5])
        else:
            w0, w1, w2, w3 = 1.0, 0.0, 0.0, 0.0
        if jt == FREE:
            f0, f1, f2, f3 = w0, w1, w2, w3
        else:
            f0, f1, f2, f3 = _qmul(ei0, ei1, ei2, ei3, w0, w1, w2, w3)
        e0, e1, e2, e3 = _qmul(f0, f1, f2, f3, node_c0[j, 0], node_c0[j, 1], node_c0[j, 2], node_c0[j, 3])
        quat[j, 0], quat[j, 1], quat[j, 2], quat[j, 3] = e0, e1, e2, e3
        _quat_to_R(e0, e1, e2, e3, R, j)
        sc0, sc1, sc2 = _mv(R, j, joint_sc[j, 0], joint_sc[j, 1], joint_sc[j, 2])
        for a in range(6):
            for b in range(6):
                H[j, a, b] = 0.0
        if jt == FREE:
            r0, r1, r2 = joint_sp[j, 0] + q[k], joint_sp[j, 1] + q[k + 1], joint_sp[j, 2] + q[k + 2]
        elif jt == PRISMATIC:
            x = q[k]
            r0, r1, r2 = cw0 + x * ax0 - sc0, cw1 + x * ax1 - sc1, cw2 + x * ax2 - sc2
        else:
            r0, r1, r2 = cw0 - sc0, cw1 - sc1, cw2 - sc2
        pos[j, 0], pos[j, 1], pos[j, 2] = r0, r1, r2
        d0, d1, d2 = r0 - ri0, r1 - ri1, r2 - ri2
        r_pc[j, 0], r_pc[j, 1], r_pc[j, 2] = d0, d1, d2
        s0, s1, s2 = r0 - cw0, r1 - cw1, r2 - cw2  # joint point to the child's centre
        # B1 Y_i
        x0, x1, x2 = _cross(wi0, wi1, wi2, d0, d1, d2)
        v0, v1, v2 = vi0 + x0, vi1 + x1, vi2 + x2
        w_0, w_1, w_2 = wi0, wi1, wi2
        # joint's own velocity and its motion columns
        if jt == REVOLUTE:
            u = qd[k]
            h0, h1, h2 = _cross(ax0, ax1, ax2, s0, s1, s2)
            H[j, 0, 0], H[j, 1, 0], H[j, 2, 0] = h0, h1, h2
            H[j, 3, 0], H[j, 4, 0], H[j, 5, 0] = ax0, ax1, ax2
            v0, v1, v2 = v0 + u * h0, v1 + u * h1, v2 + u * h2
            w_0, w_1, w_2 = w_0 + u * ax0, w_1 + u * ax1, w_2 + u * ax2
        elif jt == PRISMATIC:
            u = qd[k]
            H[j, 0, 0], H[j, 1, 0], H[j, 2, 0] = ax0, ax1, ax2
            v0, v1, v2 = v0 + u * ax0, v1 + u * ax1, v2 + u * ax2
        elif jt == SPHERICAL or jt == FREE:
            kk = k if jt == SPHERICAL else k + 3
            p0, p1, p2 = q[kk], q[kk + 1], q[kk + 2]
            a, b, ca, cb = _jl_coeffs(p0, p1, p2)
            for col in range(3):
                e_0 = 1.0 if col == 0 else 0.0
                e_1 = 1.0 if col == 1 else 0.0
                e_2 = 1.0 if col == 2 else 0.0
                l0, l1, l2 = _jl_apply(p0, p1, p2, a, b, e_0, e_1, e_2)
                if i >= 0:
                    l0, l1, l2 = _mv(R, i, l0, l1, l2)
                cc = col if jt == SPHERICAL else col + 3
                H[j, 3, cc], H[j, 4, cc], H[j, 5, cc] = l0, l1, l2
                if jt == SPHERICAL:
                    hx0, hx1, hx2 = _cross(l0, l1, l2, s0, s1, s2)
                    H[j, 0, cc], H[j, 1, cc], H[j, 2, cc] = hx0, hx1, hx2
            if jt == FREE:
                H[j, 0, 0], H[j, 1, 1], H[j, 2, 2] = 1.0, 1.0, 1.0
            u0, u1, u2 = qd[kk], qd[kk + 1], qd[kk + 2]
            m0, m1, m2 = _jl_apply(p0, p1, p2, a, b, u0, u1, u2)  # J_l φ̇ (parent frame)
            g0, g1, g2 = _jl_rate(p0, p1, p2, b, ca, cb, u0, u1, u2)
            if i >= 0:
                m0, m1, m2 = _mv(R, i, m0, m1, m2)
                g0, g1, g2 = _mv(R, i, g0, g1, g2)
            w_0, w_1, w_2 = w_0 + m0, w_1 + m1, w_2 + m2
            if jt == FREE:
                v0, v1, v2 = qd[k], qd[k + 1], qd[k + 2]
            else:
                y0, y1, y2 = _cross(m0, m1, m2, s0, s1, s2)
                v0, v1, v2 = v0 + y0, v1 + y1, v2 + y2
        vel[j, 0], vel[j, 1], vel[j, 2] = v0, v1, v2
        vel[j, 3], vel[j, 4], vel[j, 5] = w_0, w_1, w_2
        # D = Ḃ1 Y_i + Ḣ q̇ (eq. 6): ω_i × (v_j − v_i), plus the joint's own term
        D0, D1, D2 = _cross(wi0, wi1, wi2, v0 - vi0, v1 - vi1, v2 - vi2)
        A0, A1, A2 = 0.0, 0.0, 0.0
        if jt == REVOLUTE:
            u = qd[k]
            # q̇ ((ω_i × n) × s + n × (v_j − v_c)), v_c the joint point's velocity on the parent; angular q̇ ω_i × n
            n0, n1, n2 = _cross(wi0, wi1, wi2, ax0, ax1, ax2)
            y0, y1, y2 = _cross(n0, n1, n2, s0, s1, s2)
            vc0, vc1, vc2 = _cross(wi0, wi1, wi2, c0, c1, c2)
            z0, z1, z2 = _cross(ax0, ax1, ax2, v0 - vi0 - vc0, v1 - vi1 - vc1, v2 - vi2 - vc2)
            D0 += u * (y0 + z0)
            D1 += u * (y1 + z1)
            D2 += u * (y2 + z2)
            A0, A1, A2 = u * n0, u * n1, u * n2
        elif jt == PRISMATIC:
            u = qd[k]
            n0, n1, n2 = _cross(wi0, wi1, wi2, ax0, ax1, ax2)
            D0 += u * n0
            D1 += u * n1
            D2 += u * n2
        elif jt == SPHERICAL:
            # angular: ω_i × w + R_i (J̇_l φ̇), w = R_i J_l φ̇; linear: + D_ang × s + w × (ω_j × s)
            n0, n1, n2 = _cross(wi0, wi1, wi2, m0, m1, m2)
            A0, A1, A2 = n0 + g0, n1 + g1, n2 + g2
            y0, y1, y2 = _cross(A0, A1, A2, s0, s1, s2)
            o0, o1, o2 = _cross(w_0, w_1, w_2, s0, s1, s2)
            z0, z1, z2 = _cross(m0, m1, m2, o0, o1, o2)
            D0 += y0 + z0
            D1 += y1 + z1
            D2 += y2 + z2
        elif jt == FREE:
            A0, A1, A2 = g0, g1, g2
        bias[j, 0], bias[j, 1], bias[j, 2] = D0, D1, D2
        bias[j, 3], bias[j, 4], bias[j, 5] = A0, A1, A2


@jit_inline
def _axis_world(R, vel, nd, x0, x1, x2):
    """A DP1 row's body-frame axis in the world frame and its body's angular velocity (a ground side, nd < 0: the
    axis as given, ω = 0)."""
    if nd >= 0:
        a0, a1, a2 = _mv(R, nd, x0, x1, x2)
        return a0, a1, a2, vel[nd, 3], vel[nd, 4], vel[nd, 5]
    return x0, x1, x2, 0.0, 0.0, 0.0


@jit
def cut_rows(row_type, row_node, row_si, row_sj, row_ai, row_aj, row_c, row_f, pos, R, vel, phi, psi, gamma):
    """Value, velocity map and velocity-product term of every cut-joint row (thesis appendix B primitives).

    CD: ``Φ = c · (P_j − P_i) − f``, ``P = r + R s̄``; DP1: ``Φ = (R_i ā_i) · (R_j ā_j) − f``. ``psi`` (m, 2, 6):
    ``Φ̇ = psi[r, 0] · Y_i + psi[r, 1] · Y_j`` (the paper's Φ_Z, eqs. 11-12); ``gamma`` (m,): the rest of Φ̈,
    ``Φ̈ = Σ psi · Ẏ + gamma``. A ground side (node −1) has R = I, r = 0, Y = 0.
    """
    for r in range(row_type.shape[0]):
        ni, nj = row_node[r, 0], row_node[r, 1]
        for s in range(2):
            for a in range(6):
                psi[r, s, a] = 0.0
        if row_type[r] == ROW_CD:
            c0, c1, c2 = row_c[r, 0], row_c[r, 1], row_c[r, 2]
            val = -row_f[r]
            gam = 0.0
            for side in range(2):
                nd = ni if side == 0 else nj
                sg = -1.0 if side == 0 else 1.0
                if side == 0:
                    x0, x1, x2 = row_si[r, 0], row_si[r, 1], row_si[r, 2]
                else:
                    x0, x1, x2 = row_sj[r, 0], row_sj[r, 1], row_sj[r, 2]
                if nd >= 0:
                    s0, s1, s2 = _mv(R, nd, x0, x1, x2)
                    p0, p1, p2 = pos[nd, 0] + s0, pos[nd, 1] + s1, pos[nd, 2] + s2
                    w0, w1, w2 = vel[nd, 3], vel[nd, 4], vel[nd, 5]
                    m0, m1, m2 = _cross(s0, s1, s2, c0, c1, c2)
                    psi[r, side, 0], psi[r, side, 1], psi[r, side, 2] = sg * c0, sg * c1, sg * c2
                    psi[r, side, 3], psi[r, side, 4], psi[r, side, 5] = sg * m0, sg * m1, sg * m2
                    o0, o1, o2 = _cross(w0, w1, w2, s0, s1, s2)
                    t0, t1, t2 = _cross(w0, w1, w2, o0, o1, o2)
                    gam += sg * (c0 * t0 + c1 * t1 + c2 * t2)
                else:
                    p0, p1, p2 = x0, x1, x2
                val += sg * (c0 * p0 + c1 * p1 + c2 * p2)
            phi[r] = val
            gamma[r] = gam
        else:
            a0, a1, a2, wa0, wa1, wa2 = _axis_world(R, vel, ni, row_ai[r, 0], row_ai[r, 1], row_ai[r, 2])
            b0, b1, b2, wb0, wb1, wb2 = _axis_world(R, vel, nj, row_aj[r, 0], row_aj[r, 1], row_aj[r, 2])
            phi[r] = a0 * b0 + a1 * b1 + a2 * b2 - row_f[r]
            x0, x1, x2 = _cross(a0, a1, a2, b0, b1, b2)
            if ni >= 0:
                psi[r, 0, 3], psi[r, 0, 4], psi[r, 0, 5] = x0, x1, x2
            if nj >= 0:
                psi[r, 1, 3], psi[r, 1, 4], psi[r, 1, 5] = -x0, -x1, -x2
            # (ω_i − ω_j) · ((ω_i × a) × b + a × (ω_j × b))
            y0, y1, y2 = _cross(wa0, wa1, wa2, a0, a1, a2)
            z0, z1, z2 = _cross(y0, y1, y2, b0, b1, b2)
            y0, y1, y2 = _cross(wb0, wb1, wb2, b0, b1, b2)
            u0, u1, u2 = _cross(a0, a1, a2, y0, y1, y2)
            gamma[r] = (wa0 - wb0) * (z0 + u0) + (wa1 - wb1) * (z1 + u1) + (wa2 - wb2) * (z2 + u2)


@jit
def closure_jacobian(row_node, row_ptr, ent_node, ent_col, ent_side, pos, H, psi, Jval):
    """Φ_q of the cut rows on their fixed pattern (after :func:`cut_rows`).

    Row r's entries ``row_ptr[r]:row_ptr[r+1]`` are the motion columns of the joints on the root paths of its two
    bodies (``ent_node``, the column ``ent_col`` within the node, ``ent_side`` bit 1: on body i's path, bit 2: on
    body j's). A column ``(h_v, h_ω)`` of node k moves body s's centre by ``h_v + h_ω × (r_s − r_k)``; the entry
    is ``Σ_s psi[r, s] · (that, h_ω)``: both sides kept, they cancel only on the manifold.
    """
    for r in range(row_ptr.shape[0] - 1):
        for e in range(row_ptr[r], row_ptr[r + 1]):
            k = ent_node[e]
            c = ent_col[e]
            h0, h1, h2 = H[k, 0, c], H[k, 1, c], H[k, 2, c]
            w0, w1, w2 = H[k, 3, c], H[k, 4, c], H[k, 5, c]
            val = 0.0
            for side in range(2):
                if ent_side[e] & (1 << side):
                    b = row_node[r, side]
                    x0, x1, x2 = _cross(w0, w1, w2, pos[b, 0] - pos[k, 0], pos[b, 1] - pos[k, 1],
                                        pos[b, 2] - pos[k, 2])
                    val += (psi[r, side, 0] * (h0 + x0) + psi[r, side, 1] * (h1 + x1) + psi[r, side, 2] * (h2 + x2)
                            + psi[r, side, 3] * w0 + psi[r, side, 4] * w1 + psi[r, side, 5] * w2)
            Jval[e] = val


# ---------------------------------------------------------------------------- dynamics
@jit_inline
def _from_parent(acc, i, j, r_pc):
    """``B1 Ẏ_i`` carried to node j's centre (zero for a ground parent)."""
    if i < 0:
        return 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    w0, w1, w2 = acc[i, 3], acc[i, 4], acc[i, 5]
    x0, x1, x2 = _cross(w0, w1, w2, r_pc[j, 0], r_pc[j, 1], r_pc[j, 2])
    return acc[i, 0] + x0, acc[i, 1] + x1, acc[i, 2] + x2, w0, w1, w2


@jit_inline
def _body_inertia_world(R, j, Jb, W):
    """``W = R J̄ Rᵀ`` (3, 3), through ``T = J̄ Rᵀ``."""
    for a in range(3):
        t0 = Jb[0, 0] * R[j, a, 0] + Jb[0, 1] * R[j, a, 1] + Jb[0, 2] * R[j, a, 2]
        t1 = Jb[1, 0] * R[j, a, 0] + Jb[1, 1] * R[j, a, 1] + Jb[1, 2] * R[j, a, 2]
        t2 = Jb[2, 0] * R[j, a, 0] + Jb[2, 1] * R[j, a, 1] + Jb[2, 2] * R[j, a, 2]
        for b in range(3):
            W[b, a] = R[j, b, 0] * t0 + R[j, b, 1] * t1 + R[j, b, 2] * t2


@jit_inline
def _congruence_add(A, r0, r1, r2, T, out):
    """``out += B1ᵀ A B1`` for a 6 × 6 A, ``B1 = [[I, −[r]×], [0, I]]`` (T: work, (6, 6)).

    ``T = A B1`` has columns 3-5 ``A[:, 3:6] − A[:, 0:3] [r]×`` (row-wise ``x [r]× = x × r``); ``B1ᵀ T`` adds
    ``[r]× T[0:3, :]`` (column-wise ``r × t``) to rows 3-5.
    """
    for a in range(6):
        y0, y1, y2 = _cross(A[a, 0], A[a, 1], A[a, 2], r0, r1, r2)
        T[a, 0], T[a, 1], T[a, 2] = A[a, 0], A[a, 1], A[a, 2]
        T[a, 3], T[a, 4], T[a, 5] = A[a, 3] - y0, A[a, 4] - y1, A[a, 5] - y2
    for c in range(6):
        z0, z1, z2 = _cross(r0, r1, r2, T[0, c], T[1, c], T[2, c])
        out[0, c] += T[0, c]
        out[1, c] += T[1, c]
        out[2, c] += T[2, c]
        out[3, c] += T[3, c] + z0
        out[4, c] += T[4, c] + z1
        out[5, c] += T[5, c] + z2


@jit
def _invert_small(A, nd, work, out):
    """``out[:nd, :nd] = A[:nd, :nd]⁻¹`` by Gauss-Jordan with partial pivoting (work: (6, 6))."""
    for a in range(nd):
        for b in range(nd):
            work[a, b] = A[a, b]
            out[a, b] = 1.0 if a == b else 0.0
    for k in range(nd):
        p = k
        big = abs(work[k, k])
        for r in range(k + 1, nd):
            if abs(work[r, k]) > big:
                big = abs(work[r, k])
                p = r
        if p != k:
            for c in range(nd):
                work[k, c], work[p, c] = work[p, c], work[k, c]
                out[k, c], out[p, c] = out[p, c], out[k, c]
        d = 1.0 / work[k, k]
        for c in range(nd):
            work[k, c] *= d
            out[k, c] *= d
        for r in range(nd):
            if r != k:
                f = work[r, k]
                if f != 0.0:
                    for c in range(nd):
                        work[r, c] -= f * work[k, c]
                        out[r, c] -= f * out[k, c]


@jit_inline
def _joint_accelerations(U, Dinv, j, nd, u, y, x, out):
    """Node j's joint accelerations ``out = Dinv (u − Uᵀ y)`` (nd,), y its parent's acceleration carried to it
    (eq. 18; x: work, (nd,))."""
    for c in range(nd):
        s = u[c]
        for a in range(6):
            s -= U[j, a, c] * y[a]
        x[c] = s
    for c in range(nd):
        s = 0.0
        for d in range(nd):
            s += Dinv[j, c, d] * x[d]
        out[c] = s


@jit_inline
def _add_motion(H, j, nd, y, qdd, out):
    """Node j's body acceleration ``out = y + H q̈`` (6,) (eq. 6, y with D when it is the λ-free part)."""
    for a in range(6):
        s = y[a]
        for c in range(nd):
            s += H[j, a, c] * qdd[c]
        out[a] = s


@jit
def articulated_solve(node_parent, node_q, node_nd, H, r_pc, bias, vel, R, node_mass, node_inertia, node_force,
                      gravity, tau, joint_damping,
                      row_node, psi, gamma, drv_q, drv_acc, Ia, pA, Pl, U, Dinv, u0, ul, acc0, accl,
                      qdd0, qddl, G, rhs, work, qdd, lam, acc):
    """Joint accelerations and cut-joint multipliers in O(n m): Featherstone's articulated-body algorithm
    (han-sander-mao Table 1 in three dimensions) with the cut rows' loads carried as extra columns.

    Backward pass (eqs. 15-17): articulated inertia ``Ia`` (6 × 6, the
    paper's M + K), bias force ``pA`` (−(Q + L): gravity, force elements
    ``node_force`` (n, 6: world force and torque about the centre), the
    gyroscopic ``ω × J ω``), and per row the load column ``Pl`` (M̄ᵀ: the
    row's ``psi`` carried down the subtree). Per joint: ``U = Ia H``,
    ``Dinv = (Hᵀ U)⁻¹`` (nd × nd), ``u0 = τ − Hᵀ (Ia D + pA)``,
    ``ul = −Hᵀ Pl``. Forward pass (eq. 18, then eq. 6): every acceleration
    affine in λ. ``joint_damping`` (n,) adds ``h c`` to a coordinate's pivot ``Hᵀ U`` (the joint's own damping
    slope c, N m s/rad, made implicit over a step h: ``(M + h C) q̈ = Q + τ``, C diagonal; zeros leave the pass
    as it was). The rows' acceleration equations (eqs. 20-25)
    ``Σ psi · Ẏ + gamma = 0`` are then ``G λ = rhs`` (m × m), solved by
    Gaussian elimination with partial pivoting. Driver rows follow the cut
    rows: row ``n_cut_rows + d`` acts on coordinate ``drv_q[d]`` as the joint
    force −λ and asks ``q̈ = drv_acc[d]``. The equations are
    ``M q̈ + Φ_qᵀ λ = Q + τ``.
    """
    n = node_parent.shape[0]
    m = G.shape[0]
    nrow = row_node.shape[0]
    W = work[0]
    for j in range(n):
        _body_inertia_world(R, j, node_inertia[j], W)
        mj = node_mass[j]
        for a in range(6):
            for b in range(6):
                Ia[j, a, b] = 0.0
            for k in range(m):
                Pl[j, a, k] = 0.0
        for a in range(3):
            Ia[j, a, a] = mj
            for b in range(3):
                Ia[j, 3 + a, 3 + b] = W[a, b]
        w0, w1, w2 = vel[j, 3], vel[j, 4], vel[j, 5]
        h0 = W[0, 0] * w0 + W[0, 1] * w1 + W[0, 2] * w2
        h1 = W[1, 0] * w0 + W[1, 1] * w1 + W[1, 2] * w2
        h2 = W[2, 0] * w0 + W[2, 1] * w1 + W[2, 2] * w2
        g0, g1, g2 = _cross(w0, w1, w2, h0, h1, h2)
        pA[j, 0] = -(mj * gravity[0] + node_force[j, 0])
        pA[j, 1] = -(mj * gravity[1] + node_force[j, 1])
        pA[j, 2] = -(mj * gravity[2] + node_force[j, 2])
        pA[j, 3] = g0 - node_force[j, 3]
        pA[j, 4] = g1 - node_force[j, 4]
        pA[j, 5] = g2 - node_force[j, 5]
    for r in range(nrow):
        for side in range(2):
            b = row_node[r, side]
            if b >= 0:
                for a in range(6):
                    Pl[b, a, r] += psi[r, side, a]
    IaD = work[1, 0]
    fb = work[1, 1]
    for j in range(n - 1, -1, -1):
        nd = node_nd[j]
        k0 = node_q[j]
        for a in range(6):
            s = 0.0
            for b in range(6):
                s += Ia[j, a, b] * bias[j, b]
            IaD[a] = s
            for c in range(nd):
                s = 0.0
                for b in range(6):
                    s += Ia[j, a, b] * H[j, b, c]
                U[j, a, c] = s
        for c in range(nd):
            for d in range(nd):
                s = 0.0
                for a in range(6):
                    s += H[j, a, c] * U[j, a, d]
                W[c, d] = s
            s = tau[k0 + c]
            for a in range(6):
                s -= H[j, a, c] * (IaD[a] + pA[j, a])
            u0[k0 + c] = s
            for l in range(m):
                s = 0.0
                for a in range(6):
                    s -= H[j, a, c] * Pl[j, a, l]
                ul[k0 + c, l] = s
        for d in range(drv_q.shape[0]):
            kq = drv_q[d]
            if k0 <= kq < k0 + nd:
                ul[kq, nrow + d] -= 1.0
        for c in range(nd):
            W[c, c] += joint_damping[k0 + c]
        if nd == 1:
            Dinv[j, 0, 0] = 1.0 / W[0, 0]
        elif nd > 0:
            _invert_small(W, nd, work[2], Dinv[j])
        i = node_parent[j]
        if i < 0:
            continue
        # articulated inertia through the joint: Ia − U Dinv Uᵀ, then B1ᵀ (.) B1 into the parent (eq. 15)
        A = work[3]
        UD = work[4]  # U Dinv (6 × nd)
        if nd == 1:
            di = Dinv[j, 0, 0]
            for a in range(6):
                UD[a, 0] = U[j, a, 0] * di
            for a in range(6):
                for b in range(a, 6):
                    s = Ia[j, a, b] - UD[a, 0] * U[j, b, 0]
                    A[a, b] = s
                    A[b, a] = s
        else:
            for a in range(6):
                for c in range(nd):
                    s = 0.0
                    for d in range(nd):
                        s += U[j, a, d] * Dinv[j, d, c]
                    UD[a, c] = s
            for a in range(6):
                for b in range(6):
                    s = Ia[j, a, b]
                    for c in range(nd):
                        s -= UD[a, c] * U[j, b, c]
                    A[a, b] = s
        _congruence_add(A, r_pc[j, 0], r_pc[j, 1], r_pc[j, 2], work[5], Ia[i])
        # bias force (eq. 16): B1ᵀ (pA + Ia D + U Dinv u0)
        for a in range(6):
            s = pA[j, a] + IaD[a]
            for c in range(nd):
                s += UD[a, c] * u0[k0 + c]
            fb[a] = s
        x0, x1, x2 = _cross(r_pc[j, 0], r_pc[j, 1], r_pc[j, 2], fb[0], fb[1], fb[2])
        pA[i, 0] += fb[0]
        pA[i, 1] += fb[1]
        pA[i, 2] += fb[2]
        pA[i, 3] += fb[3] + x0
        pA[i, 4] += fb[4] + x1
        pA[i, 5] += fb[5] + x2
        # load columns (eq. 17): B1ᵀ (Pl + U Dinv ul)
        for l in range(m):
            for a in range(6):
                s = Pl[j, a, l]
                for c in range(nd):
                    s += UD[a, c] * ul[k0 + c, l]
                fb[a] = s
            x0, x1, x2 = _cross(r_pc[j, 0], r_pc[j, 1], r_pc[j, 2], fb[0], fb[1], fb[2])
            Pl[i, 0, l] += fb[0]
            Pl[i, 1, l] += fb[1]
            Pl[i, 2, l] += fb[2]
            Pl[i, 3, l] += fb[3] + x0
            Pl[i, 4, l] += fb[4] + x1
            Pl[i, 5, l] += fb[5] + x2
    # ---------------------------------------------------------------- forward (root to leaves)
    y = work[1, 2]
    x = work[1, 3]
    for j in range(n):
        i = node_parent[j]
        nd = node_nd[j]
        k0 = node_q[j]
        y[0], y[1], y[2], y[3], y[4], y[5] = _from_parent(acc0, i, j, r_pc)
        _joint_accelerations(U, Dinv, j, nd, u0[k0:k0 + nd], y, x, qdd0[k0:k0 + nd])
        for a in range(6):
            y[a] += bias[j, a]
        _add_motion(H, j, nd, y, qdd0[k0:k0 + nd], acc0[j])
        for l in range(m):
            y[0], y[1], y[2], y[3], y[4], y[5] = _from_parent(accl[:, :, l], i, j, r_pc)
            _joint_accelerations(U, Dinv, j, nd, ul[k0:k0 + nd, l], y, x, qddl[k0:k0 + nd, l])
            _add_motion(H, j, nd, y, qddl[k0:k0 + nd, l], accl[j, :, l])
    # ---------------------------------------------------------------- cut rows and drivers (eqs. 20-27)
    for r in range(nrow):
        s = -gamma[r]
        for l in range(m):
            G[r, l] = 0.0
        for side in range(2):
            b = row_node[r, side]
            if b < 0:
                continue
            for a in range(6):
                s -= psi[r, side, a] * acc0[b, a]
                for l in range(m):
                    G[r, l] += psi[r, side, a] * accl[b, a, l]
        rhs[r] = s
    driver_accelerations(drv_q, drv_acc, nrow, qdd0, qddl, G, rhs)
    if m > 0:
        gauss_solve(G, rhs, m, lam)
    affine_in_multipliers(qdd0, qddl, acc0, accl, lam, qdd, acc)


@jit
def inverse_dynamics(node_parent, node_q, node_nd, H, r_pc, bias, vel, R, node_mass, node_inertia, node_force,
                     gravity, qdd, with_bias, W, acc, F, tau):
    """τ = M(q) q̈ − Q(q, q̇) by the recursive Newton-Euler pass, O(n).

    Forward: ``Ẏ = B1 Ẏ_i + H q̈ (+ D)``, body force ``F = M Ẏ (+ ω × Jω −
    m g − node_force)``; backward: ``τ_j = Hᵀ F_j``, ``F_i += B1ᵀ F_j``.
    Without the bias terms, ``τ = M(q) q̈`` (cut joints not included).
    """
    n = node_parent.shape[0]
    for j in range(n):
        i = node_parent[j]
        y0, y1, y2, y3, y4, y5 = _from_parent(acc, i, j, r_pc)
        acc[j, 0], acc[j, 1], acc[j, 2], acc[j, 3], acc[j, 4], acc[j, 5] = y0, y1, y2, y3, y4, y5
        k0 = node_q[j]
        for a in range(6):
            s = acc[j, a]
            for c in range(node_nd[j]):
                s += H[j, a, c] * qdd[k0 + c]
            if with_bias:
                s += bias[j, a]
            acc[j, a] = s
        _body_inertia_world(R, j, node_inertia[j], W)
        mj = node_mass[j]
        for a in range(3):
            F[j, a] = mj * acc[j, a]
            F[j, 3 + a] = W[a, 0] * acc[j, 3] + W[a, 1] * acc[j, 4] + W[a, 2] * acc[j, 5]
        if with_bias:
            w0, w1, w2 = vel[j, 3], vel[j, 4], vel[j, 5]
            h0 = W[0, 0] * w0 + W[0, 1] * w1 + W[0, 2] * w2
            h1 = W[1, 0] * w0 + W[1, 1] * w1 + W[1, 2] * w2
            h2 = W[2, 0] * w0 + W[2, 1] * w1 + W[2, 2] * w2
            g0, g1, g2 = _cross(w0, w1, w2, h0, h1, h2)
            F[j, 3] += g0 - node_force[j, 3]
            F[j, 4] += g1 - node_force[j, 4]
            F[j, 5] += g2 - node_force[j, 5]
            for a in range(3):
                F[j, a] -= mj * gravity[a] + node_force[j, a]
    for j in range(n - 1, -1, -1):
        k0 = node_q[j]
        for c in range(node_nd[j]):
            s = 0.0
            for a in range(6):
                s += H[j, a, c] * F[j, a]
            tau[k0 + c] = s
        i = node_parent[j]
        if i >= 0:
            x0, x1, x2 = _cross(r_pc[j, 0], r_pc[j, 1], r_pc[j, 2], F[j, 0], F[j, 1], F[j, 2])
            for a in range(6):
                F[i, a] += F[j, a]
            F[i, 3] += x0
            F[i, 4] += x1
            F[i, 5] += x2


@jit
def to_absolute(node_body, pos, quat, R, vel, acc, q_abs, v_abs, a_abs):
    """Absolute body states (DESIGN.md's layout): position, quaternion, world velocity, body-frame ω and ω̇."""
    for j in range(node_body.shape[0]):
        b = node_body[j]
        for a in range(3):
            q_abs[b, a] = pos[j, a]
            v_abs[b, a] = vel[j, a]
            a_abs[b, a] = acc[j, a]
        for a in range(4):
            q_abs[b, 3 + a] = quat[j, a]
        w0, w1, w2 = _mtv(R, j, vel[j, 3], vel[j, 4], vel[j, 5])
        v_abs[b, 3], v_abs[b, 4], v_abs[b, 5] = w0, w1, w2
        w0, w1, w2 = _mtv(R, j, acc[j, 3], acc[j, 4], acc[j, 5])
        a_abs[b, 3], a_abs[b, 4], a_abs[b, 5] = w0, w1, w2


@jit
def evaluate(q, qd, node_parent, joint_type, node_q, node_nd, joint_sp, joint_sc, joint_ax, node_c0, pos, quat, R,
             vel, bias, H, r_pc, row_type, row_node, row_si, row_sj, row_ai, row_aj, row_c, row_f, phi, psi, gamma,
             node_mass, node_inertia, node_force, gravity, tau, joint_damping,
             drv_q, drv_acc, Ia, pA, Pl, U, Dinv, u0, ul, acc0,
             accl, qdd0, qddl, G, rhs, work, qdd, lam, acc):
    """:func:`forward_kinematics`, :func:`cut_rows` and :func:`articulated_solve` at (q, q̇): one call."""
    forward_kinematics(q, qd, node_parent, joint_type, node_q, joint_sp, joint_sc, joint_ax, node_c0, pos, quat, R,
                       vel, bias, H, r_pc)
    cut_rows(row_type, row_node, row_si, row_sj, row_ai, row_aj, row_c, row_f, pos, R, vel, phi, psi, gamma)
    articulated_solve(node_parent, node_q, node_nd, H, r_pc, bias, vel, R, node_mass, node_inertia, node_force,
                      gravity, tau, joint_damping,
                      row_node, psi, gamma, drv_q, drv_acc, Ia, pA, Pl, U, Dinv, u0, ul, acc0, accl,
                      qdd0, qddl, G, rhs, work, qdd, lam, acc)


@jit
def rk4_step(h, q0, v0, a1, node_parent, joint_type, node_q, node_nd, joint_sp, joint_sc, joint_ax, node_c0, pos,
             quat, R, vel, bias, H, r_pc, row_type, row_node, row_si, row_sj, row_ai, row_aj, row_c, row_f, phi, psi,
             gamma, node_mass, node_inertia, node_force, gravity, tau, joint_damping,
             drv_q, drv_acc, drv_stage_acc, Ia, pA, Pl, U,
             Dinv, u0, ul, acc0, accl, qdd0, qddl, G, rhs, work, qdd, lam, acc, kq, kv, qs, vs, q_out, v_out):
    """One classical RK4 step of ``(q, q̇)`` in compiled code, ``a1`` the first stage's q̈ (given).

    The three later stages run :func:`evaluate` with ``node_force`` held as
    given (the system uses this only without force elements: gravity and the
    gyroscopic terms are computed inside). ``drv_stage_acc`` (3, n_drv): the
    drivers' q̈ at t + h/2, t + h/2, t + h. Writes ``q_out``, ``v_out``; the
    closure is not projected here.
    """
    n = q0.shape[0]
    for st in range(3):
        rk4_stage_point(st, h, q0, v0, a1, kq, kv, qs, vs)
        for d in range(drv_q.shape[0]):
            drv_acc[d] = drv_stage_acc[st, d]
        evaluate(qs, vs, node_parent, joint_type, node_q, node_nd, joint_sp, joint_sc, joint_ax, node_c0, pos, quat,
                 R, vel, bias, H, r_pc, row_type, row_node, row_si, row_sj, row_ai, row_aj, row_c, row_f, phi, psi,
                 gamma, node_mass, node_inertia, node_force, gravity, tau, joint_damping,
                 drv_q, drv_acc, Ia, pA, Pl, U, Dinv, u0,
                 ul, acc0, accl, qdd0, qddl, G, rhs, work, qdd, lam, acc)
        for j in range(n):
            kq[st, j] = vs[j]
            kv[st, j] = qdd[j]
    rk4_update(h, q0, v0, a1, kq, kv, q_out, v_out)


@jit
def project(q, qd, tol, max_iter, node_parent, joint_type, node_q, joint_sp, joint_sc, joint_ax, node_c0, pos, quat,
            R, vel, bias, H, r_pc, row_type, row_node, row_si, row_sj, row_ai, row_aj, row_c, row_f, phi, psi, gamma,
            row_ptr, ent_node, ent_col, ent_side, Jval, drv_q, drv_pos, drv_vel, Jd, A, bw, y):
    """Newton on Φ(q) = 0 with the least-norm step ``Δq = −Φ_qᵀ (Φ_q Φ_qᵀ)⁻¹ Φ``, then ``Φ_q q̇ = 0``, in place.

    Returns the Newton iterations, or −1 when ``max|Φ| > tol`` after ``max_iter`` of them. ``phi`` holds the
    final Φ of the cut rows, then of the driver rows (``q_k = drv_pos``, ``q̇_k = drv_vel``). The corrections are
    the planar kernels' (:func:`~._recursive_kernels.newton_step`,
    :func:`~._recursive_kernels.projection_result`).
    """
    m = Jd.shape[0]
    n = q.shape[0]
    nrow = row_type.shape[0]
    it = 0
    err = 0.0
    while True:
        forward_kinematics(q, qd, node_parent, joint_type, node_q, joint_sp, joint_sc, joint_ax, node_c0, pos, quat,
                           R, vel, bias, H, r_pc)
        cut_rows(row_type, row_node, row_si, row_sj, row_ai, row_aj, row_c, row_f, pos, R, vel, phi, psi, gamma)
        closure_jacobian(row_node, row_ptr, ent_node, ent_col, ent_side, pos, H, psi, Jval)
        for r in range(m):
            for c in range(n):
                Jd[r, c] = 0.0
        for r in range(nrow):
            for e in range(row_ptr[r], row_ptr[r + 1]):
                Jd[r, node_q[ent_node[e]] + ent_col[e]] += Jval[e]
        driver_rows(q, drv_q, drv_pos, nrow, phi, Jd)
        err, stop = newton_step(Jd, phi[:m], tol, it, max_iter, A, bw, y, q)
        if stop:
            break
        it += 1
    return projection_result(err, tol, it, Jd, qd, nrow, drv_vel, A, bw, y)
