"""Numba kernels of penalty revolute joints (wallin-shabana-2013 §6.2, eqs. 11-14).

A penalty pin k between bodies i and j keeps the five constraint equations of
a revolute joint as a violation vector (eq. 11)

    d = [ r_P^ij ; v_1^i · v^j ; v_2^i · v^j ],   r_P^ij = p_i - p_j,

(``p`` the pin point on each body, ``v^j`` the pin axis on body j, ``v_1^i``,
``v_2^i`` two unit normals of the axis on body i) and enforces it by the
restoring force ``f = k d + c ḋ``, whose virtual work ``-fᵀ δd`` (eq. 12)
gives the generalised forces of eq. 14: the point force ``F_B`` at the pin
and, from the two axis rows, the Cartesian moments ``F_a (v_a^i × v^j)``
(eq. 14's ``M_a^j``) that the body's rotation coordinates turn into
generalised moments (``Gᵀ M``, here the body-frame components ``Aᵀ M`` of the
absolute-coordinate system's π̄). Generalised forces and their exact position
and velocity Jacobians per pin come out as the 12-vector elements of
:mod:`trackdyn.mbs._force_kernels`, which scatters them into the Newton
matrix.
"""

from __future__ import annotations

import numba as nb

from ..math._kernels import mat_tvec, mat_vec, row3, vadd, vcross, vdot, vscale, vsub
from ..mbs._force_kernels import _clear_element, apply_point_force, apply_torque, point_pair_jacobians

jit = nb.njit(cache=True, _nrt=False)


@jit
def body_velocities(R, vel, omega_w, v):
    """The absolute system's velocities ``(ṙ, ω̄)`` (nb, 6) from the world kinematics (last row: ground)."""
    for b in range(v.shape[0]):
        wb = mat_tvec(R, b, row3(omega_w, b))
        for k in range(3):
            v[b, k] = vel[b, k]
            v[b, 3 + k] = wb[k]


@jit
def penalty_pins_eval(body, s, axis_j, normal_i, k_pos, c_pos, k_axis, c_axis,
                      pos, R, vel, omega_w, Q, Kx, Kv, out_d, out_force, out_torque, work):
    """Penalty revolute pins: ``Q = -Jᵀ (k d + c ḋ)`` with exact ``∂Q/∂x``, ``∂Q/∂v`` (eqs. 11-14).

    ``body`` (n, 2) bodies i, j (-1: ground); ``s`` (n, 2, 3) the pin point in
    each body's frame; ``axis_j`` (n, 3) the axis in body j's frame;
    ``normal_i`` (n, 2, 3) its two normals in body i's frame; stiffness and
    damping of the point rows (``k_pos``, ``c_pos``, N/m, N s/m) and of the
    axis rows (``k_axis``, ``c_axis``, N m, N m s per unit of the dot
    products). Outputs: ``out_d`` (n, 5) the violation d, ``out_force`` and
    ``out_torque`` (n, 3) the world force at the pin and the moment on body j.
    """
    Dd = work[0]
    Ddx = work[1]
    Ddv = work[2]
    dFx = work[3]
    dFv = work[4]
    dTx = work[5]
    dTv = work[6]
    for e in range(body.shape[0]):
        _clear_element(e, Q, Kx, Kv)
        bi = body[e, 0]
        bj = body[e, 1]
        si = (s[e, 0, 0], s[e, 0, 1], s[e, 0, 2])
        sj = (s[e, 1, 0], s[e, 1, 1], s[e, 1, 2])
        wi = row3(omega_w, bi)
        wj = row3(omega_w, bj)
        wi_b = mat_tvec(R, bi, wi)
        wj_b = mat_tvec(R, bj, wj)
        # ---- point rows: F_B = k r_P^ij + c ṙ_P^ij acts on j (and -F_B on i); Dd is ∂(p_j - p_i)/∂x
        point_pair_jacobians(R, bi, bj, si, sj, wi_b, wj_b, Dd, Ddx, Ddv)
        ri = mat_vec(R, bi, si)
        rj = mat_vec(R, bj, sj)
        d = vsub(vadd(row3(pos, bi), ri), vadd(row3(pos, bj), rj))
        dd = vsub(vadd(row3(vel, bi), vcross(wi, ri)), vadd(row3(vel, bj), vcross(wj, rj)))
        kp = k_pos[e]
        cp = c_pos[e]
        F = vadd(vscale(kp, d), vscale(cp, dd))
        for a in range(3):
            for c in range(12):
                dFx[a, c] = -(kp * Dd[a, c] + cp * Ddx[a, c])
                dFv[a, c] = -cp * Ddv[a, c]
        apply_point_force(e, F, dFx, dFv, R, bi, bj, si, sj, Q, Kx, Kv)
        # ---- axis rows: d_a = v_a^i · v^j, ḋ_a = (ω_i - ω_j) · n_a with n_a = v_a^i × v^j;
        # -F_a δd_a is the moment T = Σ F_a n_a on j (and -T on i)
        for a in range(3):
            for c in range(12):
                dTx[a, c] = 0.0
                dTv[a, c] = 0.0
        vj = mat_vec(R, bj, (axis_j[e, 0], axis_j[e, 1], axis_j[e, 2]))
        wr = vsub(wi, wj)
        ka = k_axis[e]
        ca = c_axis[e]
        T = (0.0, 0.0, 0.0)
        for r in range(2):
            va = mat_vec(R, bi, (normal_i[e, r, 0], normal_i[e, r, 1], normal_i[e, r, 2]))
            n = vcross(va, vj)
            da = vdot(va, vj)
            dda = vdot(wr, n)
            Fa = ka * da + ca * dda
            out_d[e, 3 + r] = da
            T = vadd(T, vscale(Fa, n))
            for m in range(3):
                # body i turns about its axis m (world g): δv_a = g × v_a, δω_i = g × ω_i
                g = (R[bi, 0, m], R[bi, 1, m], R[bi, 2, m])
                dn = vcross(vcross(g, va), vj)
                ddot_x = vdot(vcross(g, wi), n) + vdot(wr, dn)
                gn = vdot(g, n)
                dF = ka * gn + ca * ddot_x
                for k in range(3):
                    dTx[k, 3 + m] += n[k] * dF + Fa * dn[k]
                    dTv[k, 3 + m] += n[k] * ca * gn
                # body j turns about its axis m: δv^j = g × v^j, δω_j = g × ω_j
                g = (R[bj, 0, m], R[bj, 1, m], R[bj, 2, m])
                dn = vcross(va, vcross(g, vj))
                ddot_x = -vdot(vcross(g, wj), n) + vdot(wr, dn)
                gn = vdot(g, n)
                dF = -ka * gn + ca * ddot_x
                for k in range(3):
                    dTx[k, 9 + m] += n[k] * dF + Fa * dn[k]
                    dTv[k, 9 + m] -= n[k] * ca * gn
        apply_torque(e, T, dTx, dTv, R, bi, bj, Q, Kx, Kv)
        for a in range(3):
            out_d[e, a] = d[a]
            out_force[e, a] = F[a]
            out_torque[e, a] = T[a]
