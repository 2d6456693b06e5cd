"""Numba kernels of force elements: generalized forces and their exact Jacobians.

Every two-body element ``e`` writes its generalized force ``Q[e]`` (12,) and
the Jacobians ``Kx[e] = ∂Q/∂(r_i, π̄_i, r_j, π̄_j)`` and
``Kv[e] = ∂Q/∂(ṙ_i, ω̄_i, ṙ_j, ω̄_j)`` (12, 12); one-body elements use the
ground (-1) as body ``i``. Forces are built from two primitives:

- a world force ``F`` on body j at the body point ``s̄_j`` and ``-F`` on body i
  at ``s̄_i`` (:func:`apply_point_force`);
- a world torque ``T`` on body j and ``-T`` on body i (:func:`apply_torque`).

Each primitive maps ``F`` (or ``T``) and its derivatives ``∂F/∂x`` (3, 12),
``∂F/∂v`` (3, 12) to the generalized quantities, including the geometric
terms from ``∂(Aᵀ F)/∂π̄ = (Aᵀ F)~``.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from ..math._kernels import mat_tvec, mat_vec, row3, vadd, vcross, vdot, vscale, vsub

# The per-step kernels allocate nothing (their work space is the caller's), so they run without reference
# counting: with it, a call wraps every array argument in a counted handle and counts references inside.
jit = nb.njit(cache=True, _nrt=False)
jit_inline = nb.njit(cache=True, _nrt=False, inline="always")


# --------------------------------------------------------------------------- tables
@jit_inline
def table_eval(xs, ys, start, count, x):
    """Piecewise-linear y(x) and dy/dx; linear extrapolation from the end segments."""
    if count <= 0:
        return 0.0, 0.0
    if count == 1:
        return ys[start], 0.0
    lo = start
    hi = start + count - 1
    if x <= xs[lo + 1]:
        k = lo
    elif x >= xs[hi - 1]:
        k = hi - 1
    else:
        a = lo + 1
        b = hi - 1
        while b - a > 1:
            m = (a + b) // 2
            if xs[m] <= x:
                a = m
            else:
                b = m
        k = a
    slope = (ys[k + 1] - ys[k]) / (xs[k + 1] - xs[k])
    return ys[k] + slope * (x - xs[k]), slope


# --------------------------------------------------------------------------- helpers
@jit_inline
def _add_skew_block(M, col, sign, R, b, s):
    """M[:, col:col+3] += sign * (-A_b s̃)  (∂(A s̄)/∂π̄ = -A s̃)."""
    # columns of s̃: e0 -> (0, s2, -s1), e1 -> (-s2, 0, s0), e2 -> (s1, -s0, 0)
    c0 = mat_vec(R, b, (0.0, s[2], -s[1]))
    c1 = mat_vec(R, b, (-s[2], 0.0, s[0]))
    c2 = mat_vec(R, b, (s[1], -s[0], 0.0))
    for k in range(3):
        M[k, col] -= sign * c0[k]
        M[k, col + 1] -= sign * c1[k]
        M[k, col + 2] -= sign * c2[k]


@jit_inline
def _add_identity(M, col, sign):
    for k in range(3):
        M[k, col + k] += sign


@jit_inline
def _zero(M):
    for a in range(M.shape[0]):
        for b in range(M.shape[1]):
            M[a, b] = 0.0


@jit
def point_pair_jacobians(R, bi, bj, si, sj, wi_b, wj_b, Dd, Ddx, Ddv):
    """Jacobians of ``d = p_j - p_i`` and ``ḋ``.

    Dd = ∂d/∂x, Ddx = ∂ḋ/∂x, Ddv = ∂ḋ/∂v, each (3, 12).
    """
    _zero(Dd)
    _zero(Ddx)
    _zero(Ddv)
    _add_identity(Dd, 0, -1.0)
    _add_skew_block(Dd, 3, -1.0, R, bi, si)
    _add_identity(Dd, 6, 1.0)
    _add_skew_block(Dd, 9, 1.0, R, bj, sj)
    _add_skew_block(Ddx, 3, -1.0, R, bi, vcross(wi_b, si))
    _add_skew_block(Ddx, 9, 1.0, R, bj, vcross(wj_b, sj))
    for a in range(3):
        for c in range(12):
            Ddv[a, c] = Dd[a, c]


@jit_inline
def _rows_skewmat_A_T(R, b, s, dF, K, e, r0, sign):
    """K[e, r0:r0+3, :] += sign * s̃ A_bᵀ dF (dF is 3 x 12)."""
    for c in range(12):
        col = mat_tvec(R, b, (dF[0, c], dF[1, c], dF[2, c]))
        v = vcross(s, col)
        K[e, r0, c] += sign * v[0]
        K[e, r0 + 1, c] += sign * v[1]
        K[e, r0 + 2, c] += sign * v[2]


@jit
def apply_point_force(e, F, dFx, dFv, R, bi, bj, si, sj, Q, Kx, Kv):
    """Add force F on body j at s̄_j and -F on body i at s̄_i (world F)."""
    Fj = mat_tvec(R, bj, F)
    Fi = mat_tvec(R, bi, F)
    mj = vcross(sj, Fj)
    mi = vcross(si, Fi)
    for k in range(3):
        Q[e, 6 + k] += F[k]
        Q[e, 9 + k] += mj[k]
        Q[e, k] -= F[k]
        Q[e, 3 + k] -= mi[k]
        for c in range(12):
            Kx[e, 6 + k, c] += dFx[k, c]
            Kv[e, 6 + k, c] += dFv[k, c]
            Kx[e, k, c] -= dFx[k, c]
            Kv[e, k, c] -= dFv[k, c]
    _rows_skewmat_A_T(R, bj, sj, dFx, Kx, e, 9, 1.0)
    _rows_skewmat_A_T(R, bj, sj, dFv, Kv, e, 9, 1.0)
    _rows_skewmat_A_T(R, bi, si, dFx, Kx, e, 3, -1.0)
    _rows_skewmat_A_T(R, bi, si, dFv, Kv, e, 3, -1.0)
    # geometric terms: ∂(s̄ × Aᵀ F)/∂π̄ = s̃ (Aᵀ F)~ ; column m = s × (Fb × e_m)
    for m in range(3):
        em = (1.0 if m == 0 else 0.0, 1.0 if m == 1 else 0.0, 1.0 if m == 2 else 0.0)
        gj = vcross(sj, vcross(Fj, em))
        gi = vcross(si, vcross(Fi, em))
        for k in range(3):
            Kx[e, 9 + k, 9 + m] += gj[k]
            Kx[e, 3 + k, 3 + m] -= gi[k]


@jit
def apply_torque(e, T, dTx, dTv, R, bi, bj, Q, Kx, Kv):
    """Add world torque T on body j and -T on body i (the RSDA writes these products out: :func:`rsda_eval`)."""
    Tj = mat_tvec(R, bj, T)
    Ti = mat_tvec(R, bi, T)
    for k in range(3):
        Q[e, 9 + k] += Tj[k]
        Q[e, 3 + k] -= Ti[k]
    for c in range(12):
        aj = mat_tvec(R, bj, (dTx[0, c], dTx[1, c], dTx[2, c]))
        ai = mat_tvec(R, bi, (dTx[0, c], dTx[1, c], dTx[2, c]))
        vj = mat_tvec(R, bj, (dTv[0, c], dTv[1, c], dTv[2, c]))
        vi = mat_tvec(R, bi, (dTv[0, c], dTv[1, c], dTv[2, c]))
        for k in range(3):
            Kx[e, 9 + k, c] += aj[k]
            Kx[e, 3 + k, c] -= ai[k]
            Kv[e, 9 + k, c] += vj[k]
            Kv[e, 3 + k, c] -= vi[k]
    for m in range(3):
        em = (1.0 if m == 0 else 0.0, 1.0 if m == 1 else 0.0, 1.0 if m == 2 else 0.0)
        gj = vcross(Tj, em)
        gi = vcross(Ti, em)
        for k in range(3):
            Kx[e, 9 + k, 9 + m] += gj[k]
            Kx[e, 3 + k, 3 + m] -= gi[k]


@jit_inline
def _clear_element(e, Q, Kx, Kv):
    for a in range(12):
        Q[e, a] = 0.0
        for c in range(12):
            Kx[e, a, c] = 0.0
            Kv[e, a, c] = 0.0


@jit_inline
def _body_omega(v, b):
    if b < 0:
        return (0.0, 0.0, 0.0)
    return (v[b, 3], v[b, 4], v[b, 5])


# --------------------------------------------------------------------------- TSDA
@jit
def tsda_eval(
    body, s, k, c, l0, f_act, tab_x, tab_y, spring_tab, damper_tab,
    use_ext, ext_force, ext_dl, ext_dldot,
    pos, R, vel, omega_w, v,
    Q, Kx, Kv, out_force, out_length, out_rate, work, w33,
):
    """Translational spring-damper-actuator between two body points.

    Tension ``F(l, l̇) = k (l - l0) + c l̇ - f_act + table_s(l) + table_d(l̇)``
    (positive pulls the points together); force ``-F u`` on body j with
    ``u = (p_j - p_i)/l``. Elements with ``use_ext`` take F and its partials
    from ``ext_*`` (a user callable evaluated outside).
    """
    Dd = work[0]
    Ddx = work[1]
    Ddv = work[2]
    dFx = work[3]
    dFv = work[4]
    Gd = w33[0]
    Gv = w33[1]
    for e in range(body.shape[0]):
        _clear_element(e, Q, Kx, Kv)
        bi = body[e, 0]
        bj = body[e, 1]
        si = (s[e, 0, 0], s[e, 0, 1], s[e, 0, 2])
        sj = (s[e, 1, 0], s[e, 1, 1], s[e, 1, 2])
        pi = vadd(row3(pos, bi), mat_vec(R, bi, si))
        pj = vadd(row3(pos, bj), mat_vec(R, bj, sj))
        wi = row3(omega_w, bi)
        wj = row3(omega_w, bj)
        vi = vadd(row3(vel, bi), vcross(wi, mat_vec(R, bi, si)))
        vj = vadd(row3(vel, bj), vcross(wj, mat_vec(R, bj, sj)))
        d = vsub(pj, pi)
        dd = vsub(vj, vi)
        l = math.sqrt(vdot(d, d))
        out_length[e] = l
        if l < 1e-12:
            out_force[e] = 0.0
            out_rate[e] = 0.0
            continue
        u = vscale(1.0 / l, d)
        ldot = vdot(u, dd)
        out_rate[e] = ldot
        if use_ext[e]:
            F = ext_force[e]
            Fl = ext_dl[e]
            Fld = ext_dldot[e]
        else:
            ys, dys = table_eval(tab_x, tab_y, spring_tab[e, 0], spring_tab[e, 1], l)
            yd, dyd = table_eval(tab_x, tab_y, damper_tab[e, 0], damper_tab[e, 1], ldot)
            F = k[e] * (l - l0[e]) + c[e] * ldot - f_act[e] + ys + yd
            Fl = k[e] + dys
            Fld = c[e] + dyd
        out_force[e] = F
        # Fw = -F u ; ∂Fw/∂d = -(u (Fl uᵀ + Fld ḋᵀ P / l) + F P / l) ; ∂Fw/∂ḋ = -Fld u uᵀ
        point_pair_jacobians(R, bi, bj, si, sj, _body_omega(v, bi), _body_omega(v, bj), Dd, Ddx, Ddv)
        # P ḋ / l
        pdd = vscale(1.0 / l, vsub(dd, vscale(ldot, u)))
        for a in range(3):
            for b in range(3):
                P = (1.0 if a == b else 0.0) - u[a] * u[b]
                Gd[a, b] = -(u[a] * (Fl * u[b] + Fld * pdd[b]) + F * P / l)
                Gv[a, b] = -Fld * u[a] * u[b]
        for a in range(3):
            for cc in range(12):
                sx = 0.0
                sv = 0.0
                for b in range(3):
                    sx += Gd[a, b] * Dd[b, cc] + Gv[a, b] * Ddx[b, cc]
                    sv += Gv[a, b] * Ddv[b, cc]
                dFx[a, cc] = sx
                dFv[a, cc] = sv
        apply_point_force(e, vscale(-F, u), dFx, dFv, R, bi, bj, si, sj, Q, Kx, Kv)


# --------------------------------------------------------------------------- RSDA
@jit
def rsda_eval(
    body, zi, xi, xj, k, c, theta0, t_act, tab_x, tab_y, spring_tab, damper_tab,
    pos, R, vel, omega_w, v,
    Q, Kx, Kv, out_torque, out_angle, out_rate,
):
    """Rotational spring-damper-actuator about the axis z̄_i of body i.

    Angle ``θ = atan2(y_i · x_j, x_i · x_j)`` of the body-j reference vector
    about ``z_i``; torque ``T = k (θ - θ0) + c θ̇ - t_act + table_s(θ) +
    table_d(θ̇)`` acts as ``-T z`` on body j and ``+T z`` on body i.
    """
    for e in range(body.shape[0]):
        bi = body[e, 0]
        bj = body[e, 1]
        zib = (zi[e, 0], zi[e, 1], zi[e, 2])
        xib = (xi[e, 0], xi[e, 1], xi[e, 2])
        xjb = (xj[e, 0], xj[e, 1], xj[e, 2])
        yib = vcross(zib, xib)
        z = mat_vec(R, bi, zib)
        xiw = mat_vec(R, bi, xib)
        yiw = mat_vec(R, bi, yib)
        xjw = mat_vec(R, bj, xjb)
        X = vdot(xiw, xjw)
        Y = vdot(yiw, xjw)
        theta = math.atan2(Y, X)
        wi = row3(omega_w, bi)
        wj = row3(omega_w, bj)
        thd = vdot(z, vsub(wj, wi))
        out_angle[e] = theta
        out_rate[e] = thd
        ys, dys = table_eval(tab_x, tab_y, spring_tab[e, 0], spring_tab[e, 1], theta)
        yd, dyd = table_eval(tab_x, tab_y, damper_tab[e, 0], damper_tab[e, 1], thd)
        T = k[e] * (theta - theta0[e]) + c[e] * thd - t_act[e] + ys + yd
        Tth = k[e] + dys
        Tthd = c[e] + dyd
        out_torque[e] = T
        # gradients of θ (positions), θ̇ (positions and velocities) with respect to π̄_i (a) and π̄_j (3 + a)
        r2 = X * X + Y * Y
        dXi = vcross(xib, mat_tvec(R, bi, xjw))
        dXj = vcross(xjb, mat_tvec(R, bj, xiw))
        dYi = vcross(yib, mat_tvec(R, bi, xjw))
        dYj = vcross(xjb, mat_tvec(R, bj, yiw))
        zj_b = mat_tvec(R, bj, z)
        dthd_pi = vcross(zib, mat_tvec(R, bi, wj))
        dthd_pj = vcross(_body_omega(v, bj), zj_b)
        # The world torque τ = -T z acts on j, -τ on i; in body frames Q_j = A_jᵀ τ = -T z̄_j, Q_i = T z̄_i.
        # With ∂T/∂π̄ = g (positions), ∂T/∂ω̄ = Ṫ_θ̇ w (velocities), ∂z/∂π̄_i = -A_i z̃̄_i and ∂A_bᵀτ/∂π̄_b =
        # (A_bᵀ τ)~ (the body's own frame turning), every block of the rotations is an outer product plus,
        # in the i columns of the j rows, -T A_jᵀ ∂z/∂π̄_i = T A_jᵀ (z × A_i e_a); in the i rows the frame term
        # cancels the ∂z term (apply_torque's general products, written out: one pass, no 3×12 scratch)
        for m in range(3):
            Q[e, m] = 0.0
            Q[e, 6 + m] = 0.0
            Q[e, 3 + m] = T * zib[m]
            Q[e, 9 + m] = -T * zj_b[m]
        for a in range(3):
            gi = Tth * ((X * dYi[a] - Y * dXi[a]) / r2) + Tthd * dthd_pi[a]
            gj = Tth * ((X * dYj[a] - Y * dXj[a]) / r2) + Tthd * dthd_pj[a]
            hi = -Tthd * zib[a]
            hj = Tthd * zj_b[a]
            sk = mat_tvec(R, bj, vcross(z, (R[bi, 0, a], R[bi, 1, a], R[bi, 2, a])))
            # (τ̄_j × e_a) with τ̄_j = -T z̄_j
            fj = vcross(zj_b, (1.0 if a == 0 else 0.0, 1.0 if a == 1 else 0.0, 1.0 if a == 2 else 0.0))
            for m in range(3):
                Kx[e, 3 + m, 3 + a] = zib[m] * gi
                Kx[e, 3 + m, 9 + a] = zib[m] * gj
                Kx[e, 9 + m, 3 + a] = -zj_b[m] * gi + T * sk[m]
                Kx[e, 9 + m, 9 + a] = -zj_b[m] * gj - T * fj[m]
                Kv[e, 3 + m, 3 + a] = zib[m] * hi
                Kv[e, 3 + m, 9 + a] = zib[m] * hj
                Kv[e, 9 + m, 3 + a] = -zj_b[m] * hi
                Kv[e, 9 + m, 9 + a] = -zj_b[m] * hj


# --------------------------------------------------------------------------- bushing
@jit_inline
def _mat3_vec(M, e, a):
    return (
        M[e, 0, 0] * a[0] + M[e, 0, 1] * a[1] + M[e, 0, 2] * a[2],
        M[e, 1, 0] * a[0] + M[e, 1, 1] * a[1] + M[e, 1, 2] * a[2],
        M[e, 2, 0] * a[0] + M[e, 2, 1] * a[1] + M[e, 2, 2] * a[2],
    )


@jit
def bushing_eval(
    body, s, frame, frame_q, Kr, Cr, Kt, Ct, q_ext,
    pos, R, vel, omega_w, v,
    Q, Kx, Kv, out_defl, out_rot, out_force, out_moment, work,
):
    """Linear 6-dof bushing (wallin-shabana-2013 eq. 15).

    Bushing frame ``B = A_j Ā_j`` on body j (``frame[e, 1]``); deformation
    ``δ = Bᵀ (p_i - p_j)``, rate ``δ̇ = Bᵀ (ṗ_i - ṗ_j)``, small rotation
    ``θ = 2 sgn(s) v`` of ``q_rel = q_Bjᶜ q_Bi = (s, v)``, relative angular
    velocity ``ω_r = Bᵀ (ω_i - ω_j)``. Force ``F_b = K_r δ + C_r δ̇`` and moment
    ``M_b = K_θ θ + C_θ ω_r`` act as ``-B F_b`` at p_i and ``-B M_b`` on body
    i, and the opposite on body j.
    """
    Dd = work[0]
    Ddx = work[1]
    Ddv = work[2]
    Pd = work[3]   # ∂δ/∂x
    Pdx = work[4]  # ∂δ̇/∂x
    Pdv = work[5]  # ∂δ̇/∂v
    Th = work[6]   # ∂θ/∂x
    Wx = work[7]   # ∂ω_r/∂x
    Wv = work[8]   # ∂ω_r/∂v
    dFx = work[9]
    dFv = work[10]
    dMx = work[11]
    dMv = work[12]
    for e in range(body.shape[0]):
        _clear_element(e, Q, Kx, Kv)
        bi = body[e, 0]
        bj = body[e, 1]
        si = (s[e, 0, 0], s[e, 0, 1], s[e, 0, 2])
        sj = (s[e, 1, 0], s[e, 1, 1], s[e, 1, 2])
        wi_b = _body_omega(v, bi)
        wj_b = _body_omega(v, bj)
        # point-pair Jacobians for p_j - p_i; the bushing uses d = p_i - p_j
        point_pair_jacobians(R, bi, bj, si, sj, wi_b, wj_b, Dd, Ddx, Ddv)
        pi = vadd(row3(pos, bi), mat_vec(R, bi, si))
        pj = vadd(row3(pos, bj), mat_vec(R, bj, sj))
        wi = row3(omega_w, bi)
        wj = row3(omega_w, bj)
        vi = vadd(row3(vel, bi), vcross(wi, mat_vec(R, bi, si)))
        vj = vadd(row3(vel, bj), vcross(wj, mat_vec(R, bj, sj)))
        d = vsub(pi, pj)
        dd = vsub(vi, vj)
        dj = mat_tvec(R, bj, d)      # A_jᵀ d
        ddj = mat_tvec(R, bj, dd)    # A_jᵀ ḋ
        # frame of body j: Ā_j = frame[e, 1]; B = A_j Ā_j
        delta = (
            frame[e, 1, 0, 0] * dj[0] + frame[e, 1, 1, 0] * dj[1] + frame[e, 1, 2, 0] * dj[2],
            frame[e, 1, 0, 1] * dj[0] + frame[e, 1, 1, 1] * dj[1] + frame[e, 1, 2, 1] * dj[2],
            frame[e, 1, 0, 2] * dj[0] + frame[e, 1, 1, 2] * dj[1] + frame[e, 1, 2, 2] * dj[2],
        )
        ddelta = (
            frame[e, 1, 0, 0] * ddj[0] + frame[e, 1, 1, 0] * ddj[1] + frame[e, 1, 2, 0] * ddj[2],
            frame[e, 1, 0, 1] * ddj[0] + frame[e, 1, 1, 1] * ddj[1] + frame[e, 1, 2, 1] * ddj[2],
            frame[e, 1, 0, 2] * ddj[0] + frame[e, 1, 1, 2] * ddj[1] + frame[e, 1, 2, 2] * ddj[2],
        )
        # ∂δ/∂x = Āᵀ A_jᵀ (-Dd) + [π̄_j] Āᵀ (A_jᵀ d)~
        for cc in range(12):
            col = mat_tvec(R, bj, (-Dd[0, cc], -Dd[1, cc], -Dd[2, cc]))
            colx = mat_tvec(R, bj, (-Ddx[0, cc], -Ddx[1, cc], -Ddx[2, cc]))
            colv = mat_tvec(R, bj, (-Ddv[0, cc], -Ddv[1, cc], -Ddv[2, cc]))
            for a in range(3):
                Pd[a, cc] = frame[e, 1, 0, a] * col[0] + frame[e, 1, 1, a] * col[1] + frame[e, 1, 2, a] * col[2]
                Pdx[a, cc] = frame[e, 1, 0, a] * colx[0] + frame[e, 1, 1, a] * colx[1] + frame[e, 1, 2, a] * colx[2]
                Pdv[a, cc] = frame[e, 1, 0, a] * colv[0] + frame[e, 1, 1, a] * colv[1] + frame[e, 1, 2, a] * colv[2]
        for m in range(3):
            em = (1.0 if m == 0 else 0.0, 1.0 if m == 1 else 0.0, 1.0 if m == 2 else 0.0)
            g = vcross(dj, em)
            gd = vcross(ddj, em)
            for a in range(3):
                Pd[a, 9 + m] += frame[e, 1, 0, a] * g[0] + frame[e, 1, 1, a] * g[1] + frame[e, 1, 2, a] * g[2]
                Pdx[a, 9 + m] += frame[e, 1, 0, a] * gd[0] + frame[e, 1, 1, a] * gd[1] + frame[e, 1, 2, a] * gd[2]
        # relative rotation
        qi = (q_ext[bi, 3], q_ext[bi, 4], q_ext[bi, 5], q_ext[bi, 6])
        qj = (q_ext[bj, 3], q_ext[bj, 4], q_ext[bj, 5], q_ext[bj, 6])
        fqi = (frame_q[e, 0, 0], frame_q[e, 0, 1], frame_q[e, 0, 2], frame_q[e, 0, 3])
        fqj = (frame_q[e, 1, 0], frame_q[e, 1, 1], frame_q[e, 1, 2], frame_q[e, 1, 3])
        qbi = _qmul(qi, fqi)
        qbj = _qmul(qj, fqj)
        qr = _qmul((qbj[0], -qbj[1], -qbj[2], -qbj[3]), qbi)
        sg = 1.0 if qr[0] >= 0.0 else -1.0
        sr = qr[0]
        vr = (qr[1], qr[2], qr[3])
        theta = (2.0 * sg * vr[0], 2.0 * sg * vr[1], 2.0 * sg * vr[2])
        for a in range(3):
            for cc in range(12):
                Th[a, cc] = 0.0
                Wx[a, cc] = 0.0
                Wv[a, cc] = 0.0
        # ∂θ/∂π̄_i = sg (s I + ṽ) Ā_iᵀ ; ∂θ/∂π̄_j = -sg (s I - ṽ) Ā_jᵀ
        for m in range(3):
            # column m of Ā_iᵀ is row m of Ā_i
            ci = (frame[e, 0, m, 0], frame[e, 0, m, 1], frame[e, 0, m, 2])
            cj = (frame[e, 1, m, 0], frame[e, 1, m, 1], frame[e, 1, m, 2])
            ti = vadd(vscale(sr, ci), vcross(vr, ci))
            tj = vsub(vscale(sr, cj), vcross(vr, cj))
            for a in range(3):
                Th[a, 3 + m] = sg * ti[a]
                Th[a, 9 + m] = -sg * tj[a]
        # ω_r = Āᵀ (A_jᵀ A_i ω̄_i - ω̄_j)
        wij = mat_tvec(R, bj, wi)
        rel = vsub(wij, wj_b)
        omr = (
            frame[e, 1, 0, 0] * rel[0] + frame[e, 1, 1, 0] * rel[1] + frame[e, 1, 2, 0] * rel[2],
            frame[e, 1, 0, 1] * rel[0] + frame[e, 1, 1, 1] * rel[1] + frame[e, 1, 2, 1] * rel[2],
            frame[e, 1, 0, 2] * rel[0] + frame[e, 1, 1, 2] * rel[1] + frame[e, 1, 2, 2] * rel[2],
        )
        for m in range(3):
            em = (1.0 if m == 0 else 0.0, 1.0 if m == 1 else 0.0, 1.0 if m == 2 else 0.0)
            # ∂/∂ω̄_i: A_jᵀ A_i e_m ; ∂/∂π̄_i: -A_jᵀ A_i (ω̄_i × e_m)... = A_jᵀ A_i (e_m × ω̄_i)
            ci = mat_tvec(R, bj, mat_vec(R, bi, em))
            cpi = mat_tvec(R, bj, mat_vec(R, bi, vcross(em, wi_b)))
            cpj = vcross(wij, em)  # (A_jᵀ ω_i)~ e_m
            for a in range(3):
                Wv[a, 3 + m] = frame[e, 1, 0, a] * ci[0] + frame[e, 1, 1, a] * ci[1] + frame[e, 1, 2, a] * ci[2]
                Wv[a, 9 + m] = -frame[e, 1, m, a]
                Wx[a, 3 + m] = frame[e, 1, 0, a] * cpi[0] + frame[e, 1, 1, a] * cpi[1] + frame[e, 1, 2, a] * cpi[2]
                Wx[a, 9 + m] = frame[e, 1, 0, a] * cpj[0] + frame[e, 1, 1, a] * cpj[1] + frame[e, 1, 2, a] * cpj[2]
        Fb = vadd(_mat3_vec(Kr, e, delta), _mat3_vec(Cr, e, ddelta))
        Mb = vadd(_mat3_vec(Kt, e, theta), _mat3_vec(Ct, e, omr))
        for a in range(3):
            out_defl[e, a] = delta[a]
            out_rot[e, a] = theta[a]
        # world force/moment on body j: B F_b, B M_b
        FbA = (
            frame[e, 1, 0, 0] * Fb[0] + frame[e, 1, 0, 1] * Fb[1] + frame[e, 1, 0, 2] * Fb[2],
            frame[e, 1, 1, 0] * Fb[0] + frame[e, 1, 1, 1] * Fb[1] + frame[e, 1, 1, 2] * Fb[2],
            frame[e, 1, 2, 0] * Fb[0] + frame[e, 1, 2, 1] * Fb[1] + frame[e, 1, 2, 2] * Fb[2],
        )
        MbA = (
            frame[e, 1, 0, 0] * Mb[0] + frame[e, 1, 0, 1] * Mb[1] + frame[e, 1, 0, 2] * Mb[2],
            frame[e, 1, 1, 0] * Mb[0] + frame[e, 1, 1, 1] * Mb[1] + frame[e, 1, 1, 2] * Mb[2],
            frame[e, 1, 2, 0] * Mb[0] + frame[e, 1, 2, 1] * Mb[1] + frame[e, 1, 2, 2] * Mb[2],
        )
        Fw = mat_vec(R, bj, FbA)
        Mw = mat_vec(R, bj, MbA)
        for a in range(3):
            out_force[e, a] = Fw[a]
            out_moment[e, a] = Mw[a]
        # dF_b, dM_b (bushing frame), then world with the frame-rotation term
        for a in range(3):
            for cc in range(12):
                sfx = 0.0
                sfv = 0.0
                smx = 0.0
                smv = 0.0
                for b in range(3):
                    sfx += Kr[e, a, b] * Pd[b, cc] + Cr[e, a, b] * Pdx[b, cc]
                    sfv += Cr[e, a, b] * Pdv[b, cc]
                    smx += Kt[e, a, b] * Th[b, cc] + Ct[e, a, b] * Wx[b, cc]
                    smv += Ct[e, a, b] * Wv[b, cc]
                dFx[a, cc] = sfx
                dFv[a, cc] = sfv
                dMx[a, cc] = smx
                dMv[a, cc] = smv
        # rotate columns: B dF = A_j Ā_j dF
        for cc in range(12):
            for out in (dFx, dFv, dMx, dMv):
                col = (out[0, cc], out[1, cc], out[2, cc])
                ca = (
                    frame[e, 1, 0, 0] * col[0] + frame[e, 1, 0, 1] * col[1] + frame[e, 1, 0, 2] * col[2],
                    frame[e, 1, 1, 0] * col[0] + frame[e, 1, 1, 1] * col[1] + frame[e, 1, 1, 2] * col[2],
                    frame[e, 1, 2, 0] * col[0] + frame[e, 1, 2, 1] * col[1] + frame[e, 1, 2, 2] * col[2],
                )
                w = mat_vec(R, bj, ca)
                out[0, cc] = w[0]
                out[1, cc] = w[1]
                out[2, cc] = w[2]
        # ∂(A_j c)/∂π̄_j = -A_j c̃ with c = Ā_j F_b (resp. M_b)
        _add_skew_block(dFx, 9, 1.0, R, bj, FbA)
        _add_skew_block(dMx, 9, 1.0, R, bj, MbA)
        apply_point_force(e, Fw, dFx, dFv, R, bi, bj, si, sj, Q, Kx, Kv)
        apply_torque(e, Mw, dMx, dMv, R, bi, bj, Q, Kx, Kv)


@jit_inline
def _qmul(p, q):
    return (
        p[0] * q[0] - p[1] * q[1] - p[2] * q[2] - p[3] * q[3],
        p[0] * q[1] + p[1] * q[0] + p[2] * q[3] - p[3] * q[2],
        p[0] * q[2] - p[1] * q[3] + p[2] * q[0] + p[3] * q[1],
        p[0] * q[3] + p[1] * q[2] - p[2] * q[1] + p[3] * q[0],
    )


# --------------------------------------------------------------------------- point loads
@jit
def point_load_eval(body, s, load, is_torque, body_frame, R, Q, Kx, Kv, work):
    """Constant-in-step force (at s̄) or torque on one body, world or body frame."""
    dX = work[0]  # zeroed per element below
    dV = work[1]
    _zero(dV)
    for e in range(body.shape[0]):
        _clear_element(e, Q, Kx, Kv)
        bj = body[e]
        L = (load[e, 0], load[e, 1], load[e, 2])
        for a in range(3):
            for cc in range(12):
                dX[a, cc] = 0.0
        if body_frame[e]:
            W = mat_vec(R, bj, L)
            _add_skew_block(dX, 9, 1.0, R, bj, L)
        else:
            W = L
        if is_torque[e]:
            apply_torque(e, W, dX, dV, R, -1, bj, Q, Kx, Kv)
        else:
            sj = (s[e, 0], s[e, 1], s[e, 2])
            apply_point_force(e, W, dX, dV, R, -1, bj, (0.0, 0.0, 0.0), sj, Q, Kx, Kv)


# --------------------------------------------------------------------------- bodies
@jit
def body_forces(mass, inertia, v, gravity, f):
    """Gravity and gyroscopic torque ``-ω̄ × J̄ ω̄`` of every body into f (nb, 6)."""
    for b in range(mass.shape[0]):
        f[b, 0] = mass[b] * gravity[0]
        f[b, 1] = mass[b] * gravity[1]
        f[b, 2] = mass[b] * gravity[2]
        w = (v[b, 3], v[b, 4], v[b, 5])
        Jw = (
            inertia[b, 0, 0] * w[0] + inertia[b, 0, 1] * w[1] + inertia[b, 0, 2] * w[2],
            inertia[b, 1, 0] * w[0] + inertia[b, 1, 1] * w[1] + inertia[b, 1, 2] * w[2],
            inertia[b, 2, 0] * w[0] + inertia[b, 2, 1] * w[1] + inertia[b, 2, 2] * w[2],
        )
        g = vcross(w, Jw)
        f[b, 3] = -g[0]
        f[b, 4] = -g[1]
        f[b, 5] = -g[2]


# --------------------------------------------------------------------------- scatter
@jit_inline
def _add_element_forces(e, body, Q, f):
    """Element e's generalized forces Q[e] (12,) into f (nb, 6) of its bodies (a ground side skipped)."""
    for side in range(2):
        b = body[e, side]
        if b < 0:
            continue
        for k in range(6):
            f[b, k] += Q[e, 6 * side + k]


@jit
def scatter_elements(body, Q, Kx, Kv, slot, cK, cD, v, f, data, Dv, Kxv):
    """Add element forces into f (nb, 6), ``-cK Kx - cD Kv`` (symmetric part) into
    the KKT values and ``Kv_sym v`` into Dv (nb, 6) for the right-hand side.

    Entries of a coupling block that the pattern does not hold (``slot < 0``
    between two different bodies, "diagonal" coupling) are left out of the
    matrix *and* of Dv, and their position terms go to ``Kxv += Kx_sym v``:
    only the Newton matrix is approximated, the linearised right-hand side
    stays exact (Galilean invariance).

    The entry code is written out here, in :func:`scatter_rotational` and in the massless ``scatter_absolute``
    on purpose: as a shared helper (``inline="always"`` or a plain call) this scatter took 7-11x longer on the
    M113 (38 -> 280-420 µs).
    """
    for e in range(body.shape[0]):
        _add_element_forces(e, body, Q, f)
        for a in range(12):
            ba = body[e, a // 6]
            if ba < 0:
                continue
            for c in range(a, 12):
                bc = body[e, c // 6]
                if bc < 0:
                    continue
                sl = slot[e, a, c]
                kx = 0.5 * (Kx[e, a, c] + Kx[e, c, a])
                kv = 0.5 * (Kv[e, a, c] + Kv[e, c, a])
                if sl >= 0:
                    data[sl] -= cK * kx + cD * kv
                    if kv != 0.0:
                        Dv[ba, a % 6] += kv * v[bc, c % 6]
                        if c != a:
                            Dv[bc, c % 6] += kv * v[ba, a % 6]
                elif kx != 0.0 and ba != bc:
                    Kxv[ba, a % 6] += kx * v[bc, c % 6]
                    Kxv[bc, c % 6] += kx * v[ba, a % 6]


def rotational_slots(slot):
    """The 21 upper-triangle entries of the rotations' 6 x 6 of each element's (12, 12) slot map, as int32
    (n, 21), in the order :func:`scatter_rotational` visits them."""
    rot = np.r_[3:6, 9:12]
    a, c = np.triu_indices(6)
    return np.ascontiguousarray(slot[:, rot[a], rot[c]], dtype=np.int32)


@jit
def scatter_rotational(body, Q, Kx, Kv, slot_rot, cK, cD, v, f, data, Dv, Kxv):
    """:func:`scatter_elements` for elements whose Kx and Kv are zero outside the rotations' rows and columns
    (torques that depend on orientations and angular velocities only, RSDA): only those 21 of 78 upper-triangle
    entries are visited, with the compact slot map ``slot_rot`` (n, 21) of :func:`rotational_slots` — the
    element's full (12, 12) int64 map spreads them over up to 12 cache lines (the M113's 135 RSDAs: 29-32 ->
    23-27 µs isolated)."""
    for e in range(body.shape[0]):
        _add_element_forces(e, body, Q, f)
        n = 0  # position in slot_rot[e]: row ia's entries start after the 6 + 5 + ... of the rows above
        for ia in range(6):
            ba = body[e, 0 if ia < 3 else 1]
            if ba < 0:
                n += 6 - ia
                continue
            a = ia + 3 if ia < 3 else ia + 6
            ka = a - 6 if a >= 6 else a
            for ic in range(ia, 6):
                sl = slot_rot[e, n]
                n += 1
                c = ic + 3 if ic < 3 else ic + 6
                bc = body[e, 0 if ic < 3 else 1]
                if bc < 0:
                    continue
                kc = c - 6 if c >= 6 else c
                kx = 0.5 * (Kx[e, a, c] + Kx[e, c, a])
                kv = 0.5 * (Kv[e, a, c] + Kv[e, c, a])
                if sl >= 0:
                    data[sl] -= cK * kx + cD * kv
                    if kv != 0.0:
                        Dv[ba, ka] += kv * v[bc, kc]
                        if c != a:
                            Dv[bc, kc] += kv * v[ba, ka]
                elif kx != 0.0 and ba != bc:
                    Kxv[ba, ka] += kx * v[bc, kc]
                    Kxv[bc, kc] += kx * v[ba, ka]


# --------------------------------------------------------------------------- constraint stiffness
@jit
def _apply_torque_on(e, side, T, dTx, R, b, Q, Kx):
    """Add world torque T on the body of ``side`` (0: i, 1: j) only; position Jacobian dTx."""
    o = 6 * side + 3
    Tb = mat_tvec(R, b, T)
    for k in range(3):
        Q[e, o + k] += Tb[k]
    for c in range(12):
        col = mat_tvec(R, b, (dTx[0, c], dTx[1, c], dTx[2, c]))
        for k in range(3):
            Kx[e, o + k, c] += col[k]
    for m in range(3):
        em = (1.0 if m == 0 else 0.0, 1.0 if m == 1 else 0.0, 1.0 if m == 2 else 0.0)
        g = vcross(Tb, em)
        for k in range(3):
            Kx[e, o + k, o + m] += g[k]


@jit
def _row_stiffness(r, e, row_type, row_body, row_a, row_s, row_c, row_u, row_f, lm, pos, R, Q, Kx, Kv,
                   Dd, Ddx, Ddv, dF, dT, zero):
    """Generalized force ``-Jᵀλ`` of row r and its position Jacobian into element e of Q, Kx, Kv."""
    _clear_element(e, Q, Kx, Kv)
    if lm == 0.0:
        return
    t = row_type[r]
    bi = row_body[r, 0]
    bj = row_body[r, 1]
    for a in range(3):
        for c in range(12):
            dF[a, c] = 0.0
            dT[a, c] = 0.0
    if t == 0 or t == 4:  # DP1 / DP1R: torque T = λ (a_i × a_j) on j, -T on i
        aib = _dp1_vector_i(r, t, row_a, row_u, row_f)
        ajb = (row_a[r, 1, 0], row_a[r, 1, 1], row_a[r, 1, 2])
        ai = mat_vec(R, bi, aib)
        aj = mat_vec(R, bj, ajb)
        T = vscale(lm, vcross(ai, aj))
        # dT/dπ̄_i = λ ã_j A_i ã̄_i ; dT/dπ̄_j = -λ ã_i A_j ã̄_j  (columns: e_m)
        for m in range(3):
            em = (1.0 if m == 0 else 0.0, 1.0 if m == 1 else 0.0, 1.0 if m == 2 else 0.0)
            dai = mat_vec(R, bi, vcross(em, aib))   # = -A_i ã̄_i e_m ... sign below
            daj = mat_vec(R, bj, vcross(em, ajb))
            # da_i/dπ̄_i e_m = A_i (e_m × ā_i) = -A_i (ā_i × e_m)
            ci = vscale(lm, vcross(dai, aj))
            cj = vscale(lm, vcross(ai, daj))
            for k in range(3):
                dT[k, 3 + m] = ci[k]
                dT[k, 9 + m] = cj[k]
        apply_torque(e, T, dT, zero, R, bi, bj, Q, Kx, Kv)
    elif t == 3:  # CD: F = -λ c on j at s_j
        c3 = (row_c[r, 0], row_c[r, 1], row_c[r, 2])
        si = (row_s[r, 0, 0], row_s[r, 0, 1], row_s[r, 0, 2])
        sj = (row_s[r, 1, 0], row_s[r, 1, 1], row_s[r, 1, 2])
        apply_point_force(e, vscale(-lm, c3), dF, zero, R, bi, bj, si, sj, Q, Kx, Kv)
    else:
        si = (row_s[r, 0, 0], row_s[r, 0, 1], row_s[r, 0, 2])
        sj = (row_s[r, 1, 0], row_s[r, 1, 1], row_s[r, 1, 2])
        point_pair_jacobians(R, bi, bj, si, sj, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), Dd, Ddx, Ddv)
        pi = vadd(row3(pos, bi), mat_vec(R, bi, si))
        pj = vadd(row3(pos, bj), mat_vec(R, bj, sj))
        d = vsub(pj, pi)
        if t == 2:  # D: F = -2λ d
            for a in range(3):
                for c in range(12):
                    dF[a, c] = -2.0 * lm * Dd[a, c]
            apply_point_force(e, vscale(-2.0 * lm, d), dF, zero, R, bi, bj, si, sj, Q, Kx, Kv)
        else:  # DP2: F = -λ a_i on j (and -F on i); torque -λ a_i × d on i
            aib = (row_a[r, 0, 0], row_a[r, 0, 1], row_a[r, 0, 2])
            ai = mat_vec(R, bi, aib)
            for m in range(3):
                em = (1.0 if m == 0 else 0.0, 1.0 if m == 1 else 0.0, 1.0 if m == 2 else 0.0)
                dai = mat_vec(R, bi, vcross(em, aib))
                for k in range(3):
                    dF[k, 3 + m] = -lm * dai[k]
            apply_point_force(e, vscale(-lm, ai), dF, zero, R, bi, bj, si, sj, Q, Kx, Kv)
            Ti = vscale(-lm, vcross(ai, d))
            # dTi = -λ (da_i × d + a_i × dd)
            for c in range(12):
                ddc = (Dd[0, c], Dd[1, c], Dd[2, c])
                v_ = vcross(ai, ddc)
                for k in range(3):
                    dT[k, c] = -lm * v_[k]
            for m in range(3):
                em = (1.0 if m == 0 else 0.0, 1.0 if m == 1 else 0.0, 1.0 if m == 2 else 0.0)
                dai = mat_vec(R, bi, vcross(em, aib))
                v_ = vcross(dai, d)
                for k in range(3):
                    dT[k, 3 + m] -= lm * v_[k]
            _apply_torque_on(e, 0, Ti, dT, R, bi, Q, Kx)


@jit_inline
def _dp1_vector_i(r, t, row_a, row_u, row_f):
    """Body-i vector ā_i of a DP1 row, or of a DP1R (motor) row at its current angle."""
    if t == 0:
        return (row_a[r, 0, 0], row_a[r, 0, 1], row_a[r, 0, 2])
    cth = math.cos(row_f[r, 0])
    sth = math.sin(row_f[r, 0])
    return (cth * row_u[r, 0, 0] - sth * row_u[r, 1, 0],
            cth * row_u[r, 0, 1] - sth * row_u[r, 1, 1],
            cth * row_u[r, 0, 2] - sth * row_u[r, 1, 2])


@nb.njit(cache=True)
def constraint_stiffness_eval(row_type, row_body, row_a, row_s, row_c, row_u, row_f, lam,
                              pos, R, Q, Kx, Kv):
    """Generalized constraint forces ``-Jᵀλ`` of each row and their position Jacobian.

    This is the term ``∂(∇_q Cᵀ λ)/∂q`` of the Newton matrix of thesis eq.
    2.12 (the geometric stiffness of the joints), evaluated for given λ.
    Row types as in :func:`trackdyn.mbs._kernels.constraint_eval`.
    """
    Dd = np.empty((3, 12))
    Ddx = np.empty((3, 12))
    Ddv = np.empty((3, 12))
    dF = np.empty((3, 12))
    dT = np.empty((3, 12))
    zero = np.zeros((3, 12))
    for r in range(row_type.shape[0]):
        _row_stiffness(r, r, row_type, row_body, row_a, row_s, row_c, row_u, row_f, lam[r], pos, R, Q, Kx, Kv,
                       Dd, Ddx, Ddv, dF, dT, zero)


@jit
def constraint_stiffness_add(row_type, row_body, row_a, row_s, row_c, row_u, row_f, lam, pos, R, slot, rot_slot,
                             cpl_slot, row_end, cK, v, want_kxv, data, Kxv, Qs, Kxs, Kvs, work, w33):
    """Add ``-cK sym(∂(-Jᵀλ)/∂q)`` of every row into the KKT values (the joints' geometric stiffness).

    Same quantity as :func:`constraint_stiffness_eval` followed by
    :func:`scatter_elements` (``cD = 0``), with the non-zero 3 x 3 blocks of
    CD and DP1 rows written in closed form (the spherical and
    perpendicularity parts of revolutes, i.e. almost every row):

    - CD, ``F = -λ c`` on j at ``s̄_j`` (and ``-F`` on i): only the
      rotational diagonal blocks ``s̃ F̃`` (F in the body frame), whose
      symmetric part is ``(F sᵀ + s Fᵀ)/2 - (s·F) I``;
    - DP1, ``T = λ a_i × a_j`` on j (and ``-T`` on i): the rotational blocks
      of both bodies and their coupling. The DP1 rows ``r .. row_end[r] - 1``
      (same bodies and ā_j, grouped at set-up: a revolute's two) are written
      once with ``w̄ = Σ λ ā_i`` for ``λ ā_i``: every block is linear in it.
      (Summing a spherical part's three CD rows the same way measured slower:
      M113 37 -> 42 µs, chain64 7.0 -> 10.0 µs; their blocks are cheap.)

    Coupling entries without a slot (``joint_coupling="diagonal"``) times v go
    to ``Kxv`` when ``want_kxv``. Other row types take the generic path
    through the scratch element ``Qs`` (1, 12), ``Kxs``/``Kvs`` (1, 12, 12)
    (work space: ``work`` (6, 3, 12), ``w33`` (4, 3, 3)) and the full slot map
    ``slot`` (nc, 12, 12). The closed-form rows read
    the compact maps ``rot_slot`` (nc, 2, 6), the upper triangle
    ``(0,0), (0,1), (0,2), (1,1), (1,2), (2,2)`` of each side's rotational
    block, and ``cpl_slot`` (nc, 3, 3), the ``(π̄_i, π̄_j)`` coupling block
    (``-1``: not stored): the per-step memory traffic of the maps is then
    about 1/5 of that of ``slot``, which matters as much as the arithmetic.
    """
    Dd = work[0]
    Ddx = work[1]
    Ddv = work[2]
    dF = work[3]
    dT = work[4]
    zero = work[5]
    _zero(zero)
    Kii = w33[0]
    Kjj = w33[1]
    Kij = w33[2]
    Kji = w33[3]
    r_next = 0
    for r in range(row_type.shape[0]):
        if r < r_next:
            continue  # summed into an earlier row
        r_next = row_end[r]
        lm = lam[r]
        t = row_type[r]
        bi = row_body[r, 0]
        bj = row_body[r, 1]
        if t == 3:
            if lm == 0.0:
                continue
            c3 = (row_c[r, 0], row_c[r, 1], row_c[r, 2])
            F = (-lm * c3[0], -lm * c3[1], -lm * c3[2])
            for side in range(2):
                b = bi if side == 0 else bj
                if b < 0:
                    continue
                s = (row_s[r, side, 0], row_s[r, side, 1], row_s[r, side, 2])
                Fb = mat_tvec(R, b, F)
                sF = vdot(s, Fb)
                # -cK * (±1) * sym(s̃ F̃); body i carries -F
                g = cK if side == 0 else -cK
                u = 0
                for k in range(3):
                    for m in range(k, 3):
                        sl = rot_slot[r, side, u]
                        u += 1
                        if sl >= 0:
                            val = 0.5 * (Fb[k] * s[m] + Fb[m] * s[k])
                            if k == m:
                                val -= sF
                            data[sl] += g * val
        elif t == 0 or t == 4:
            # w̄ = Σ λ ā_i of the group (rows of the same bodies share their slots)
            wb = vscale(lm, _dp1_vector_i(r, t, row_a, row_u, row_f))
            for rr in range(r + 1, r_next):
                wb = vadd(wb, vscale(lam[rr], _dp1_vector_i(rr, row_type[rr], row_a, row_u, row_f)))
            if wb[0] == 0.0 and wb[1] == 0.0 and wb[2] == 0.0:
                continue
            ajb = (row_a[r, 1, 0], row_a[r, 1, 1], row_a[r, 1, 2])
            ai = mat_vec(R, bi, wb)
            aj = mat_vec(R, bj, ajb)
            T = vcross(ai, aj)
            Ti = mat_tvec(R, bi, T)
            Tj = mat_tvec(R, bj, T)
            aj_i = mat_tvec(R, bi, aj)  # a_j in body i's frame
            ai_j = mat_tvec(R, bj, ai)  # A_i w̄ in body j's frame
            # body-frame blocks (column m: derivative w.r.t. π̄_m), w̄ for λ ā_i:
            #   K_jj = w̄_j × (e_m × ā_j) + T̄_j × e_m       K_ii = -(e_m × w̄) × ā_ji - T̄_i × e_m
            #   K_ji = A_jᵀ((A_i (e_m × w̄)) × a_j)        K_ij = -A_iᵀ((A_i w̄) × (A_j (e_m × ā_j)))
            for m in range(3):
                em = (1.0 if m == 0 else 0.0, 1.0 if m == 1 else 0.0, 1.0 if m == 2 else 0.0)
                ei_m = vcross(em, wb)
                ej_m = vcross(em, ajb)
                cjj = vadd(vcross(ai_j, ej_m), vcross(Tj, em))
                cii = vadd(vscale(-1.0, vcross(ei_m, aj_i)), vscale(-1.0, vcross(Ti, em)))
                dai = mat_vec(R, bi, ei_m)
                daj = mat_vec(R, bj, ej_m)
                cji = mat_tvec(R, bj, vcross(dai, aj))
                cij = vscale(-1.0, mat_tvec(R, bi, vcross(ai, daj)))
                for k in range(3):
                    Kjj[k, m] = cjj[k]
                    Kii[k, m] = cii[k]
                    Kji[k, m] = cji[k]
                    Kij[k, m] = cij[k]
            for side in range(2):
                b = bi if side == 0 else bj
                if b < 0:
                    continue
                M = Kii if side == 0 else Kjj
                u = 0
                for k in range(3):
                    for m in range(k, 3):
                        sl = rot_slot[r, side, u]
                        u += 1
                        if sl >= 0:
                            data[sl] -= cK * 0.5 * (M[k, m] + M[m, k])
            if bi >= 0 and bj >= 0 and bi != bj:
                for k in range(3):
                    for m in range(3):
                        kx = 0.5 * (Kij[k, m] + Kji[m, k])
                        sl = cpl_slot[r, k, m]
                        if sl >= 0:
                            data[sl] -= cK * kx
                        elif want_kxv and kx != 0.0:
                            Kxv[bi, 3 + k] += kx * v[bj, 3 + m]
                            Kxv[bj, 3 + m] += kx * v[bi, 3 + k]
        elif lm != 0.0:
            _row_stiffness(r, 0, row_type, row_body, row_a, row_s, row_c, row_u, row_f, lm, pos, R, Qs, Kxs, Kvs,
                           Dd, Ddx, Ddv, dF, dT, zero)
            _scatter_stiffness(bi, bj, Kxs, slot, r, cK, v, want_kxv, data, Kxv)


@jit
def _scatter_stiffness(bi, bj, Kx, slot, r, cK, v, want_kxv, data, Kxv):
    """``-cK sym(Kx[0])`` of one row into the KKT values; slot-less coupling times v into Kxv."""
    for a in range(12):
        ba = bi if a < 6 else bj
        if ba < 0:
            continue
        for c in range(a, 12):
            bc = bi if c < 6 else bj
            if bc < 0:
                continue
            kx = 0.5 * (Kx[0, a, c] + Kx[0, c, a])
            sl = slot[r, a, c]
            if sl >= 0:
                data[sl] -= cK * kx
            elif want_kxv and kx != 0.0 and ba != bc:
                Kxv[ba, a % 6] += kx * v[bc, c % 6]
                Kxv[bc, c % 6] += kx * v[ba, a % 6]
