"""Numba kernels of the subsystem synthesis method (kim-2012): effective mass and force, base solve, time loops.

A *batch* is ``n`` subsystems of one body each, hinged to the base body by a
revolute joint with a rotational spring-damper about its axis and a point
tyre on the body (:mod:`trackdyn.contact.tyre`). Every kernel loops over the
batch inside compiled code. Velocities follow the project's convention:
``(ṙ world, ω̄ body frame)`` per body, for the base too.

Parameters of subsystem ``i`` are the row ``sp[i]`` (columns ``P_*`` below)
and ``Rrel0[i]`` (the body's orientation in the base frame at θ = 0). The
Cartesian subsystem's joint rows (``c_*``) are the project's constraint
primitives (:func:`trackdyn.mbs._kernels.constraint_eval`), body 0 the base,
body 1 the subsystem body.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from ..contact.tyre import vertical_force
from ..math._chart import chart_log, chart_rate
from ..linsolve._dense_kernels import gauss_solve
from ..math._kernels import quat_mul
from ..mbs._kernels import advance_positions_dq, constraint_eval

P_M, P_I, P_S0, P_S1, P_A0, P_U0, P_C1 = 0, 1, 10, 13, 16, 19, 22
P_R, P_KT, P_CT, P_KR, P_CR, P_TH0, P_IINV = 25, 26, 27, 28, 29, 30, 31
NP = 40
NR = 5  # rows of a revolute joint

CARTESIAN = 0
JOINT = 1


# ------------------------------------------------------------------------------------------ small algebra
@nb.njit(cache=True)
def _det(A, n, work):
    """Determinant of the leading n × n block of A (copied into work)."""
    for r in range(n):
        for c in range(n):
            work[r, c] = A[r, c]
    d = 1.0
    for k in range(n):
        p = k
        big = abs(work[k, k])
        for r in range(k + 1, n):
            if abs(work[r, k]) > big:
                big = abs(work[r, k])
                p = r
        if big == 0.0:
            return 0.0
        if p != k:
            d = -d
            for c in range(n):
                tmp = work[k, c]
                work[k, c] = work[p, c]
                work[p, c] = tmp
        d *= work[k, k]
        for r in range(k + 1, n):
            m = work[r, k] / work[k, k]
            for c in range(k, n):
                work[r, c] -= m * work[k, c]
    return d


@nb.njit(cache=True)
def _cross(a, b, out):
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]


@nb.njit(cache=True)
def _quat_R(q, R):
    """Rotation matrix of the unit quaternion q[3:7] (scalar first)."""
    e0, e1, e2, e3 = q[3], q[4], q[5], q[6]
    R[0, 0] = e0 * e0 + e1 * e1 - e2 * e2 - e3 * e3
    R[0, 1] = 2.0 * (e1 * e2 - e3 * e0)
    R[0, 2] = 2.0 * (e1 * e3 + e2 * e0)
    R[1, 0] = 2.0 * (e1 * e2 + e3 * e0)
    R[1, 1] = e0 * e0 - e1 * e1 + e2 * e2 - e3 * e3
    R[1, 2] = 2.0 * (e2 * e3 - e1 * e0)
    R[2, 0] = 2.0 * (e1 * e3 - e2 * e0)
    R[2, 1] = 2.0 * (e1 * e0 + e2 * e3)
    R[2, 2] = e0 * e0 - e1 * e1 - e2 * e2 + e3 * e3


@nb.njit(cache=True)
def _axis_rot(a, th, R):
    """Rodrigues: rotation by th about the unit vector a."""
    c = math.cos(th)
    s = math.sin(th)
    C = 1.0 - c
    x, y, z = a[0], a[1], a[2]
    R[0, 0] = c + x * x * C
    R[0, 1] = x * y * C - z * s
    R[0, 2] = x * z * C + y * s
    R[1, 0] = y * x * C + z * s
    R[1, 1] = c + y * y * C
    R[1, 2] = y * z * C - x * s
    R[2, 0] = z * x * C - y * s
    R[2, 1] = z * y * C + x * s
    R[2, 2] = c + z * z * C


@nb.njit(cache=True)
def _tyre(sp, t, r1, R1, v1, w1w, road, speed, fade, F, arm):
    """Tyre force F (world) on the body and the arm from its centre of mass to the contact point."""
    for k in range(3):
        arm[k] = R1[k, 0] * sp[P_C1] + R1[k, 1] * sp[P_C1 + 1] + R1[k, 2] * sp[P_C1 + 2]
    cx = r1[0] + arm[0]
    cz = r1[2] + arm[2]
    vcx = v1[0] + w1w[1] * arm[2] - w1w[2] * arm[1]
    vcz = v1[2] + w1w[0] * arm[1] - w1w[1] * arm[0]
    fz = vertical_force(cx, cz, vcx, vcz, t, sp[P_R], sp[P_KT], sp[P_CT], road, speed, fade)
    F[0] = 0.0
    F[1] = 0.0
    F[2] = fz
    arm[2] -= sp[P_R]


# ------------------------------------------------------------------------------------------ workspace
@nb.njit(cache=True)
def make_work(n):
    """Scratch arrays of one batch of n subsystems (a tuple; allocated once per run)."""
    f6 = np.zeros((n, 6))
    return (np.zeros((n, 6, 6)), f6, np.zeros(n), np.zeros(n),            # 0-3 joint: Myq (unused 6x6), Myq, Mqq, Pq
            np.zeros((n, NR, NR)), np.zeros((n, NR, 6)), np.zeros((n, NR, 6)),  # 4-6 cart: S, Φ0, Φ̄
            np.zeros((n, 6)), np.zeros((n, NR)), np.zeros((n, NR)),     # 7-9 M̄⁻¹ḡ, γ, φ
            np.zeros((3, 3)), np.zeros((3, 3, 3)), np.zeros((3, 3)), np.zeros((3, 3)),  # 10-13 pos, R, vel, ω
            np.zeros(NR), np.zeros((NR, 12)), np.zeros(NR), np.zeros(NR),  # 14-17 φ, J, φ_t, γ scratch
            np.zeros((12, 12)), np.zeros(12), np.zeros((n, 6)),          # 18-20 dense solve scratch, ḡ
            np.zeros((n, 6)))                                            # 21 direct force on the base


@nb.njit(cache=True)
def _base_kin(q0, v0, R0, w0w):
    _quat_R(q0, R0)
    for k in range(3):
        w0w[k] = R0[k, 0] * v0[3] + R0[k, 1] * v0[4] + R0[k, 2] * v0[5]


# ------------------------------------------------------------------------------------------ joint subsystem
@nb.njit(cache=True)
def joint_terms(i, t, sp, Rrel0, q0, v0, th, thd, gravity, road, speed, fade, Meff, Peff, Myq, Mqq, Pq):
    """Subsystem i in the joint coordinate θ from the virtual base (kim-2012 eq. 21-26): adds M̆ (eq. 25) and
    P̆ (eq. 26) to Meff (6, 6) and Peff (6) on the base's (ṙ, ω̄); stores M_yq, M_qq and P_q for eq. 30."""
    p = sp[i]
    R0 = np.empty((3, 3))
    _quat_R(q0, R0)
    w0w = np.empty(3)
    for k in range(3):
        w0w[k] = R0[k, 0] * v0[3] + R0[k, 1] * v0[4] + R0[k, 2] * v0[5]
    a0 = p[P_A0:P_A0 + 3]
    Rth = np.empty((3, 3))
    _axis_rot(a0, th, Rth)
    R1 = R0 @ (Rth @ Rrel0[i])
    d0 = R0 @ p[P_S0:P_S0 + 3]
    d1 = R1 @ p[P_S1:P_S1 + 3]
    rho = d0 - d1
    r1 = q0[:3] + rho
    aw = R0 @ a0
    w1w = w0w + aw * thd
    axd1 = np.empty(3)
    _cross(aw, d1, axd1)
    wxr = np.empty(3)
    _cross(w0w, rho, wxr)
    v1 = v0[:3] + wxr - thd * axd1
    # T (6 x 6) on (ṙ0, ω̄0) and b (6) on θ̇: the body's (ṙ1, ω̄1) = T Y0 + b θ̇
    T = np.zeros((6, 6))
    for k in range(3):
        T[k, k] = 1.0
    # -[ρ]× R0
    for c in range(3):
        col = R0[:, c]
        x = np.empty(3)
        _cross(col, rho, x)  # -(ρ × col) = col × ρ
        for k in range(3):
            T[k, 3 + c] = x[k]
    R10 = R1.T @ R0
    for k in range(3):
        for c in range(3):
            T[3 + k, 3 + c] = R10[k, c]
    b = np.empty(6)
    b[:3] = -axd1
    b[3:] = R1.T @ aw
    # velocity-product accelerations c (6)
    cvec = np.empty(6)
    dv = v1 - v0[:3]
    x1 = np.empty(3)
    _cross(w0w, dv, x1)
    wa = np.empty(3)
    _cross(w0w, aw, wa)
    x2 = np.empty(3)
    _cross(wa, d1, x2)
    w1d1 = np.empty(3)
    _cross(w1w, d1, w1d1)
    x3 = np.empty(3)
    _cross(aw, w1d1, x3)
    cvec[:3] = x1 - thd * (x2 + x3)
    cvec[3:] = (R1.T @ wa) * thd
    # applied forces on the body: gravity, tyre, gyroscopic
    m1 = p[P_M]
    I1 = p[P_I:P_I + 9].reshape(3, 3)
    F = np.empty(3)
    arm = np.empty(3)
    _tyre(p, t, r1, R1, v1, w1w, road, speed, fade, F, arm)
    nc = np.empty(3)
    _cross(arm, F, nc)
    w1b = R1.T @ w1w
    Iw = I1 @ w1b
    gy = np.empty(3)
    _cross(w1b, Iw, gy)
    g1 = np.empty(6)
    g1[:3] = m1 * gravity + F
    g1[3:] = R1.T @ nc - gy
    # g1 - M1 c
    h1 = np.empty(6)
    h1[:3] = g1[:3] - m1 * cvec[:3]
    h1[3:] = g1[3:] - I1 @ cvec[3:]
    Mb = np.empty(6)
    Mb[:3] = m1 * b[:3]
    Mb[3:] = I1 @ b[3:]
    mqq = 0.0
    pq = 0.0
    for k in range(6):
        mqq += b[k] * Mb[k]
        pq += b[k] * h1[k]
    pq += -(p[P_KR] * (th - p[P_TH0]) + p[P_CR] * thd)  # the rotational spring-damper on θ
    myq = T.T @ Mb
    MT = np.empty((6, 6))
    MT[:3, :] = m1 * T[:3, :]
    MT[3:, :] = I1 @ T[3:, :]
    Myy = T.T @ MT
    Py = T.T @ h1
    for r in range(6):
        Peff[r] += Py[r] - myq[r] * pq / mqq
        for c in range(6):
            Meff[r, c] += Myy[r, c] - myq[r] * myq[c] / mqq
    for k in range(6):
        Myq[i, k] = myq[k]
    Mqq[i] = mqq
    Pq[i] = pq


# ------------------------------------------------------------------------------------------ Cartesian subsystem
@nb.njit(cache=True)
def _cart_rows(i, q0, v0, q1, v1, c_type, c_body, c_a, c_s, c_c, c_u, c_f, w, want_gamma):
    """Kinematics of base and body i into the work arrays and the revolute's rows (φ, J, γ in w[14:18])."""
    pos, R, vel, om = w[10], w[11], w[12], w[13]
    for k in range(3):
        pos[0, k] = q0[k]
        pos[1, k] = q1[k]
        vel[0, k] = v0[k]
        vel[1, k] = v1[k]
        pos[2, k] = 0.0
        vel[2, k] = 0.0
        om[2, k] = 0.0
        for m in range(3):
            R[2, k, m] = 1.0 if k == m else 0.0
    _quat_R(q0, R[0])
    _quat_R(q1, R[1])
    for k in range(3):
        om[0, k] = R[0, k, 0] * v0[3] + R[0, k, 1] * v0[4] + R[0, k, 2] * v0[5]
        om[1, k] = R[1, k, 0] * v1[3] + R[1, k, 1] * v1[4] + R[1, k, 2] * v1[5]
    constraint_eval(c_type[i], c_body, c_a[i], c_s[i], c_c[i], c_u[i], c_f[i], pos, R, vel, om, want_gamma,
                    w[14], w[15], w[16], w[17])


@nb.njit(cache=True)
def cart_force_rows(i, t, sp, Rrel0, c_type, c_body, c_a, c_s, c_c, c_u, c_f, q0, v0, q1, v1, gravity, road, speed,
                    fade, w, want_gamma):
    """Rows of subsystem i's joint (φ, J, γ into w[14:18]), the body's ḡ (6, into w[20][i]: gravity, tyre,
    gyroscopic, spring-damper) and the spring-damper's reaction on the base (into w[21][i])."""
    p = sp[i]
    _cart_rows(i, q0, v0, q1, v1, c_type, c_body, c_a, c_s, c_c, c_u, c_f, w, want_gamma)
    pos, R, vel, om = w[10], w[11], w[12], w[13]
    R0 = R[0]
    R1 = R[1]
    # applied forces
    F = np.empty(3)
    arm = np.empty(3)
    _tyre(p, t, pos[1], R1, vel[1], om[1], road, speed, fade, F, arm)
    nc = np.empty(3)
    _cross(arm, F, nc)
    a0 = p[P_A0:P_A0 + 3]
    aw = R0 @ a0
    u0w = R0 @ p[P_U0:P_U0 + 3]
    n0w = np.empty(3)
    _cross(aw, u0w, n0w)
    # the body's copy of u0 (u0 turned with the body from θ = 0): R1 Rrel0ᵀ u0
    u1w = R1 @ (Rrel0[i].T @ p[P_U0:P_U0 + 3])
    th = math.atan2(n0w[0] * u1w[0] + n0w[1] * u1w[1] + n0w[2] * u1w[2],
                    u0w[0] * u1w[0] + u0w[1] * u1w[1] + u0w[2] * u1w[2])
    thd = aw[0] * (om[1, 0] - om[0, 0]) + aw[1] * (om[1, 1] - om[0, 1]) + aw[2] * (om[1, 2] - om[0, 2])
    tau = -(p[P_KR] * (th - p[P_TH0]) + p[P_CR] * thd)
    m1 = p[P_M]
    I1 = p[P_I:P_I + 9].reshape(3, 3)
    w1b = np.empty(3)
    for k in range(3):
        w1b[k] = v1[3 + k]
    Iw = I1 @ w1b
    gy = np.empty(3)
    _cross(w1b, Iw, gy)
    g = w[20][i]
    g[:3] = m1 * gravity + F
    g[3:] = R1.T @ (nc + tau * aw) - gy
    gb = w[21][i]
    gb[:3] = 0.0
    gb[3:] = -(R0.T @ (tau * aw))


@nb.njit(cache=True)
def cart_terms(i, t, sp, Rrel0, c_type, c_body, c_a, c_s, c_c, c_u, c_f, q0, v0, q1, v1, gravity, road, speed,
               fade, Meff, Peff, w):
    """Subsystem i in absolute coordinates with its joint (kim-2012 eq. 5-10): adds M̆ (eq. 9) and ğ (eq. 10, plus
    the spring-damper's direct reaction on the base) to Meff, Peff; stores S = Φ̄ M̄⁻¹ Φ̄ᵀ, Φ0, Φ̄, M̄⁻¹ḡ, γ."""
    p = sp[i]
    cart_force_rows(i, t, sp, Rrel0, c_type, c_body, c_a, c_s, c_c, c_u, c_f, q0, v0, q1, v1, gravity, road,
                    speed, fade, w, True)
    J = w[15]
    g = w[20][i]
    gb = w[21][i]
    m1 = p[P_M]
    I1inv = p[P_IINV:P_IINV + 9].reshape(3, 3)
    # M̄⁻¹ḡ, Φ0, Φ̄, S
    Mg = w[7][i]
    Mg[:3] = g[:3] / m1
    Mg[3:] = I1inv @ g[3:]
    Phi0 = w[5][i]
    Phib = w[6][i]
    for r in range(NR):
        for c in range(6):
            Phi0[r, c] = J[r, c]
            Phib[r, c] = J[r, 6 + c]
    MiPt = np.empty((6, NR))
    for r in range(NR):
        MiPt[:3, r] = Phib[r, :3] / m1
        MiPt[3:, r] = I1inv @ Phib[r, 3:]
    S = w[4][i]
    S[:, :] = Phib @ MiPt
    gam = w[8][i]
    rhs = w[19]
    for r in range(NR):
        gam[r] = w[17][r]
        w[9][i, r] = w[14][r]
        s = gam[r]
        for c in range(6):
            s -= Phib[r, c] * Mg[c]
        rhs[r] = s
    A = w[18]
    # S⁻¹ Φ0 (columns) and S⁻¹ (γ - Φ̄ M̄⁻¹ ḡ)
    X = np.empty((NR, 6))
    for c in range(6):
        for r in range(NR):
            for m in range(NR):
                A[r, m] = S[r, m]
            rhs[NR + r] = Phi0[r, c]
        col = rhs[NR:2 * NR]
        gauss_solve(A, col, NR, col)
        for r in range(NR):
            X[r, c] = col[r]
    for r in range(NR):
        for m in range(NR):
            A[r, m] = S[r, m]
    y = rhs[:NR]
    gauss_solve(A, y, NR, y)
    for r in range(6):
        s = gb[r]
        for k in range(NR):
            s += Phi0[k, r] * y[k]
        Peff[r] += s
        for c in range(6):
            s2 = 0.0
            for k in range(NR):
                s2 += Phi0[k, r] * X[k, c]
            Meff[r, c] += s2


@nb.njit(cache=True)
def cart_recover(i, sp, a0, w, a1, lam):
    """Multipliers (eq. 13) and body accelerations (eq. 12) of Cartesian subsystem i given the base's a0."""
    p = sp[i]
    S, Phi0, Phib, Mg, gam = w[4][i], w[5][i], w[6][i], w[7][i], w[8][i]
    A = w[18]
    for r in range(NR):
        s = -gam[r]
        for c in range(6):
            s += Phi0[r, c] * a0[c] + Phib[r, c] * Mg[c]
        lam[r] = s
        for m in range(NR):
            A[r, m] = S[r, m]
    gauss_solve(A, lam, NR, lam)
    m1 = p[P_M]
    I1inv = p[P_IINV:P_IINV + 9].reshape(3, 3)
    g = w[20][i]
    x = np.empty(6)
    for c in range(6):
        s = g[c]
        for r in range(NR):
            s -= Phib[r, c] * lam[r]
        x[c] = s
    a1[:3] = x[:3] / m1
    a1[3:] = I1inv @ x[3:]


# ------------------------------------------------------------------------------------------ base body
@nb.njit(cache=True)
def base_solve(q0, v0, m0, I0, B, gravity, Meff, Peff, a0):
    """The base body's equation with the subsystems' effective mass and force (kim-2012 eq. 11 / 28), restricted
    to the base's own motion ``Y0 = B u`` (B constant: free base I, or a translational joint to the ground)."""
    M = Meff.copy()
    g = Peff.copy()
    for k in range(3):
        M[k, k] += m0
        g[k] += m0 * gravity[k]
    w = v0[3:]
    Iw = I0 @ w
    gy = np.empty(3)
    _cross(w, Iw, gy)
    for r in range(3):
        g[3 + r] -= gy[r]
        for c in range(3):
            M[3 + r, 3 + c] += I0[r, c]
    nf = B.shape[1]
    Mr = B.T @ (M @ B)
    gr = B.T @ g
    gauss_solve(Mr, gr, nf, gr)
    a = B @ gr
    for k in range(6):
        a0[k] = a[k]


# ------------------------------------------------------------------------------------------ whole-system evaluation
@nb.njit(cache=True)
def evaluate_joint(t, q0, v0, th, thd, m0, I0, B, gravity, sp, Rrel0, road, speed, fade, w, Meff, Peff, a0, thdd):
    """Joint-coordinate synthesis at one instant: every subsystem's M̆, P̆ (eq. 25-26), the base equation (eq. 28)
    and the subsystems' accelerations (eq. 30), into a0 (6) and thdd (n)."""
    n = th.shape[0]
    Meff[:, :] = 0.0
    Peff[:] = 0.0
    for i in range(n):
        joint_terms(i, t, sp, Rrel0, q0, v0, th[i], thd[i], gravity, road, speed, fade, Meff, Peff, w[1], w[2],
                    w[3])
    base_solve(q0, v0, m0, I0, B, gravity, Meff, Peff, a0)
    for i in range(n):
        s = w[3][i]
        for k in range(6):
            s -= w[1][i, k] * a0[k]
        thdd[i] = s / w[2][i]


@nb.njit(cache=True)
def evaluate_cart(t, q0, v0, q1, v1, m0, I0, B, gravity, sp, Rrel0, c_type, c_body, c_a, c_s, c_c, c_u, c_f, road,
                  speed, fade, w, Meff, Peff, a0, a1, lam):
    """Cartesian synthesis at one instant: M̆, ğ of every subsystem (eq. 9-10), the base equation (eq. 11) and the
    subsystems' multipliers and accelerations (eq. 12-13), into a0 (6), a1 (n, 6), lam (n, 5)."""
    n = q1.shape[0]
    Meff[:, :] = 0.0
    Peff[:] = 0.0
    for i in range(n):
        cart_terms(i, t, sp, Rrel0, c_type, c_body, c_a, c_s, c_c, c_u, c_f, q0, v0, q1[i], v1[i], gravity, road,
                   speed, fade, Meff, Peff, w)
    base_solve(q0, v0, m0, I0, B, gravity, Meff, Peff, a0)
    for i in range(n):
        cart_recover(i, sp, a0, w, a1[i], lam[i])


# ------------------------------------------------------------------------------------------ coordinate partitioning
@nb.njit(cache=True)
def gcp_correct(i, q0, v0, q1, v1, c_type, c_body, c_a, c_s, c_c, c_u, c_f, w, ind, dref, tol):
    """Generalized coordinate partitioning of Cartesian subsystem i (Haug 1989 §6.3): keep the independent chart
    coordinate ind[i] of q1[i] (1, 7) and v1[i], solve the dependent ones from Φ = 0 (Newton) and from the
    velocity equation. The partition is re-chosen (largest |det J_D|) when |det J_D| falls under half its value
    at the last choice. Returns the Newton iterations (-1 if Φ did not converge)."""
    J = w[15]
    phi = w[14]
    A = w[18]
    work = np.empty((NR, NR))
    dx = np.zeros((1, 6))
    qrow = q1[i:i + 1]
    _cart_rows(i, q0, v0, q1[i], v1[i], c_type, c_body, c_a, c_s, c_c, c_u, c_f, w, False)
    k = ind[i]
    if k >= 0:
        for r in range(NR):
            m = 0
            for c in range(6):
                if c != k:
                    A[r, m] = J[r, 6 + c]
                    m += 1
        d = abs(_det(A, NR, work))
    if k < 0 or d < 0.5 * dref[i]:
        best = -1.0
        for kk in range(6):
            for r in range(NR):
                m = 0
                for c in range(6):
                    if c != kk:
                        A[r, m] = J[r, 6 + c]
                        m += 1
            d = abs(_det(A, NR, work))
            if d > best:
                best = d
                k = kk
        ind[i] = k
        dref[i] = best
    b = w[19]
    it = 0
    for it in range(30):
        err = 0.0
        for r in range(NR):
            err = max(err, abs(phi[r]))
        if err <= tol:
            break
        for r in range(NR):
            m = 0
            for c in range(6):
                if c != k:
                    A[r, m] = J[r, 6 + c]
                    m += 1
            b[r] = -phi[r]
        gauss_solve(A, b, NR, b)
        m = 0
        for c in range(6):
            if c != k:
                dx[0, c] = b[m]
                m += 1
            else:
                dx[0, c] = 0.0
        advance_positions_dq(qrow, dx, qrow)
        _cart_rows(i, q0, v0, q1[i], v1[i], c_type, c_body, c_a, c_s, c_c, c_u, c_f, w, False)
    else:
        return -1
    # dependent velocities: J_D v_D = -(Φ0 v0 + J_I v_I + φ_t)
    for r in range(NR):
        s = -w[16][r] - J[r, 6 + k] * v1[i, k]
        for c in range(6):
            s -= J[r, c] * v0[c]
        b[r] = s
        m = 0
        for c in range(6):
            if c != k:
                A[r, m] = J[r, 6 + c]
                m += 1
    gauss_solve(A, b, NR, b)
    m = 0
    for c in range(6):
        if c != k:
            v1[i, c] = b[m]
            m += 1
    return it


# ------------------------------------------------------------------------------------------ time loops
@nb.njit(cache=True)
def _ab(order):
    """Adams-Bashforth coefficients of the given order (1-3), newest first."""
    c = np.zeros(3)
    if order == 1:
        c[0] = 1.0
    elif order == 2:
        c[0] = 1.5
        c[1] = -0.5
    else:
        c[0] = 23.0 / 12.0
        c[1] = -16.0 / 12.0
        c[2] = 5.0 / 12.0
    return c


@nb.njit(cache=True)
def _advance_base(q0, v0, hv0, ha0, c, h):
    """AB step of the base: q0 ⊕ h Σ c_j v0_j (exponential map) and v0 + h Σ c_j a0_j."""
    dx = np.zeros((1, 6))
    for j in range(3):
        for k in range(6):
            dx[0, k] += h * c[j] * hv0[j, k]
            v0[k] += h * c[j] * ha0[j, k]
    q = q0.reshape(1, 7)
    advance_positions_dq(q, dx, q)


@nb.njit(cache=True)
def _push(hist, new):
    for j in range(hist.shape[0] - 1, 0, -1):
        hist[j] = hist[j - 1]
    hist[0] = new


@nb.njit(cache=True)
def _record(out, k, q0, v0, a0, bound):
    out[k, 0] = q0[2]
    out[k, 1] = v0[2]
    out[k, 2] = a0[2]
    ok = True
    for c in range(3):
        if not np.isfinite(out[k, c]):
            ok = False
    if abs(q0[2] - out[0, 0]) > bound:
        ok = False
    return ok


@nb.njit(cache=True)
def run_joint_explicit(h, nsteps, q0, v0, th, thd, m0, I0, B, gravity, sp, Rrel0, road, speed, fade, bound, out):
    """Joint explicit model (kim-2012 Table 2, model 3): AB3 (AB1, AB2 for the first steps) on the base and on
    every θ, with the synthesis evaluation (eq. 25-30) once per step. ``out`` (nsteps + 1, 3): base z, ż, z̈.
    Returns the number of steps completed (nsteps unless the run left ``bound`` or became non-finite)."""
    n = th.shape[0]
    w = make_work(n)
    Meff = np.zeros((6, 6))
    Peff = np.zeros(6)
    a0 = np.zeros(6)
    thdd = np.zeros(n)
    hv0 = np.zeros((3, 6))
    ha0 = np.zeros((3, 6))
    hthd = np.zeros((3, n))
    hthdd = np.zeros((3, n))
    for step in range(nsteps + 1):
        t = step * h
        evaluate_joint(t, q0, v0, th, thd, m0, I0, B, gravity, sp, Rrel0, road, speed, fade, w, Meff, Peff, a0, thdd)
        if not _record(out, step, q0, v0, a0, bound):
            return step
        if step == nsteps:
            break
        _push(hv0, v0)
        _push(ha0, a0)
        _push(hthd, thd)
        _push(hthdd, thdd)
        c = _ab(min(step + 1, 3))
        _advance_base(q0, v0, hv0, ha0, c, h)
        for j in range(3):
            for i in range(n):
                th[i] += h * c[j] * hthd[j, i]
                thd[i] += h * c[j] * hthdd[j, i]
    return nsteps


@nb.njit(cache=True)
def run_cart_explicit(h, nsteps, q0, v0, q1, v1, m0, I0, B, gravity, sp, Rrel0, c_type, c_body, c_a, c_s, c_c, c_u,
                      c_f, road, speed, fade, bound, tol, out):
    """Cartesian explicit model (Table 2, model 1): AB3 on the base and on every subsystem body's (q, v), then
    coordinate partitioning (:func:`gcp_correct`), the synthesis evaluation (eq. 9-13) once per step."""
    n = q1.shape[0]
    w = make_work(n)
    Meff = np.zeros((6, 6))
    Peff = np.zeros(6)
    a0 = np.zeros(6)
    a1 = np.zeros((n, 6))
    lam = np.zeros((n, NR))
    hv0 = np.zeros((3, 6))
    ha0 = np.zeros((3, 6))
    hv1 = np.zeros((3, n, 6))
    ha1 = np.zeros((3, n, 6))
    ind = np.full(n, -1, dtype=np.int64)
    dref = np.zeros(n)
    dx = np.zeros((n, 6))
    for i in range(n):
        if gcp_correct(i, q0, v0, q1, v1, c_type, c_body, c_a, c_s, c_c, c_u, c_f, w, ind, dref, tol) < 0:
            return 0
    for step in range(nsteps + 1):
        t = step * h
        evaluate_cart(t, q0, v0, q1, v1, m0, I0, B, gravity, sp, Rrel0, c_type, c_body, c_a, c_s, c_c, c_u, c_f,
                      road, speed, fade, w, Meff, Peff, a0, a1, lam)
        if not _record(out, step, q0, v0, a0, bound):
            return step
        if step == nsteps:
            break
        _push(hv0, v0)
        _push(ha0, a0)
        _push(hv1, v1)
        _push(ha1, a1)
        c = _ab(min(step + 1, 3))
        _advance_base(q0, v0, hv0, ha0, c, h)
        dx[:, :] = 0.0
        for j in range(3):
            for i in range(n):
                for k in range(6):
                    dx[i, k] += h * c[j] * hv1[j, i, k]
                    v1[i, k] += h * c[j] * ha1[j, i, k]
        advance_positions_dq(q1, dx, q1)
        for i in range(n):
            if gcp_correct(i, q0, v0, q1, v1, c_type, c_body, c_a, c_s, c_c, c_u, c_f, w, ind, dref, tol) < 0:
                return step
    return nsteps


@nb.njit(cache=True)
def _joint_residual(i, t, sp, Rrel0, q0, v0, th, thd, thdd, a0p, gravity, road, speed, fade, alpha, Fn, Meff,
                    Peff, Myq, Mqq, Pq, weighted):
    """Ψ of kim-2012 eq. 31 for subsystem i at (θ, θ̇, θ̈) with the base's acceleration a0p (``weighted``: its
    term α-weighted with the forces, which keeps HHT second order; eq. 31 as printed leaves it at t_{n+1})."""
    Meff[:, :] = 0.0
    Peff[:] = 0.0
    joint_terms(i, t, sp, Rrel0, q0, v0, th, thd, gravity, road, speed, fade, Meff, Peff, Myq, Mqq, Pq)
    ma = 0.0
    for k in range(6):
        ma += Myq[i, k] * a0p[k]
    if weighted:  # the base's inertial coupling weighted as a force: (1+α)(M_yqᵀẎ0 - P_q)_{n+1} - α(...)_n
        return Mqq[i] * thdd + (1.0 + alpha) * (ma - Pq[i]) - alpha * Fn
    return ma + Mqq[i] * thdd - (1.0 + alpha) * Pq[i] - alpha * Fn


@nb.njit(cache=True)
def run_joint_ei(h, nsteps, q0, v0, th, thd, m0, I0, B, gravity, sp, Rrel0, road, speed, fade, bound, alpha,
                 rtol, atol, max_iter, predict, weighted, out, iters, jac_evals):
    """Joint explicit-implicit model (Table 2, model 4): AB3 on the base; HHT-α on each θ (eq. 31-35) with the
    base at t_{n+1} from AB3 and its acceleration taken from t_n. Newton with the Jacobian of eq. 35 by finite
    differences, kept from step to step (a chord iteration) and refreshed when a step does not converge with it.
    After the subsystems, the base equation at t_{n+1} gives a0_{n+1}. ``iters`` (nsteps,) receives the largest
    Newton count of each step, ``jac_evals[0]`` the Jacobian evaluations. Returns the steps completed."""
    n = th.shape[0]
    w = make_work(n)
    Meff = np.zeros((6, 6))
    Peff = np.zeros(6)
    Ms = np.zeros((6, 6))
    Ps = np.zeros(6)
    a0 = np.zeros(6)
    thdd_c = np.zeros(n)
    hv0 = np.zeros((3, 6))
    ha0 = np.zeros((3, 6))
    ga = 0.5 - alpha
    be = 0.25 * (1.0 - alpha) ** 2
    evaluate_joint(0.0, q0, v0, th, thd, m0, I0, B, gravity, sp, Rrel0, road, speed, fade, w, Meff, Peff, a0, thdd_c)
    thdd = thdd_c.copy()
    Myq, Mqq, Pq = w[1], w[2], w[3]
    Fn = -Pq.copy()
    if weighted:
        Fn += Myq @ a0
    jac = np.zeros(n)
    for step in range(nsteps + 1):
        if not _record(out, step, q0, v0, a0, bound):
            return step
        if step == nsteps:
            break
        t1 = (step + 1) * h
        _push(hv0, v0)
        _push(ha0, a0)
        # the base acceleration at t_{n+1} in eq. 31: the last one (predict = 0) or extrapolated linearly (1)
        a0p = a0.copy()
        if predict == 1 and step >= 1:
            for k in range(6):
                a0p[k] = 2.0 * ha0[0, k] - ha0[1, k]
        c = _ab(min(step + 1, 3))
        _advance_base(q0, v0, hv0, ha0, c, h)
        worst = 0
        for i in range(n):
            thb = th[i] + h * thd[i] + h * h * (0.5 - be) * thdd[i]
            thdb = thd[i] + h * (1.0 - ga) * thdd[i]
            conv = False
            for attempt in range(2):
                fresh = jac[i] == 0.0 or attempt == 1
                x = thdd[i]
                for it in range(1, max_iter + 1):
                    tq = thb + be * h * h * x
                    tv = thdb + ga * h * x
                    r = _joint_residual(i, t1, sp, Rrel0, q0, v0, tq, tv, x, a0p, gravity, road, speed, fade,
                                        alpha, Fn[i], Ms, Ps, Myq, Mqq, Pq, weighted)
                    if fresh and it == 1:
                        eq = 1e-7 * max(1.0, abs(tq))
                        ev = 1e-6 * max(1.0, abs(tv))
                        rq = _joint_residual(i, t1, sp, Rrel0, q0, v0, tq + eq, tv, x, a0p, gravity, road, speed,
                                             fade, alpha, Fn[i], Ms, Ps, Myq, Mqq, Pq, weighted)
                        rv = _joint_residual(i, t1, sp, Rrel0, q0, v0, tq, tv + ev, x, a0p, gravity, road, speed,
                                             fade, alpha, Fn[i], Ms, Ps, Myq, Mqq, Pq, weighted)
                        jac[i] = Mqq[i] + be * h * h * (rq - r) / eq + ga * h * (rv - r) / ev
                        jac_evals[0] += 1
                    dxx = -r / jac[i]
                    x += dxx
                    if ga * h * abs(dxx) <= atol + rtol * abs(tv):
                        conv = True
                        worst = max(worst, it)
                        break
                if (conv and np.isfinite(x)) or fresh:
                    break
            if not conv or not np.isfinite(x):
                return step
            th[i] = thb + be * h * h * x
            thd[i] = thdb + ga * h * x
            thdd[i] = x
        iters[step] = worst
        evaluate_joint(t1, q0, v0, th, thd, m0, I0, B, gravity, sp, Rrel0, road, speed, fade, w, Meff, Peff, a0,
                       thdd_c)
        # eq. 31's force term at t_{n+1}, (Φᵀλ - P_q)_{n+1} = -P_q(θ_{n+1}, θ̇_{n+1}) (+ M_yqᵀ Ẏ0 if weighted)
        for i in range(n):
            Fn[i] = -Pq[i]
            if weighted:
                for k in range(6):
                    Fn[i] += Myq[i, k] * a0[k]
    return nsteps


@nb.njit(cache=True)
def _cart_psi(i, t, sp, Rrel0, c_type, c_body, c_a, c_s, c_c, c_u, c_f, q0, v0, q1i, v1i, gravity, road, speed,
              fade, w, lam, a, alpha, Fn, psi):
    """Ψ/(1+α) of kim-2012 eq. 14 for Cartesian subsystem i (rows evaluated into w as a side effect)."""
    cart_force_rows(i, t, sp, Rrel0, c_type, c_body, c_a, c_s, c_c, c_u, c_f, q0, v0, q1i, v1i, gravity, road,
                    speed, fade, w, False)
    p = sp[i]
    J = w[15]
    g = w[20][i]
    m1 = p[P_M]
    for k in range(6):
        s = -g[k]
        for r in range(NR):
            s += J[r, 6 + k] * lam[r]
        if k < 3:
            ma = m1 * a[k]
        else:
            ma = p[P_I + 3 * (k - 3)] * a[3] + p[P_I + 3 * (k - 3) + 1] * a[4] + p[P_I + 3 * (k - 3) + 2] * a[5]
        psi[k] = ma / (1.0 + alpha) + s - alpha / (1.0 + alpha) * Fn[k]


@nb.njit(cache=True)
def run_cart_ei(h, nsteps, q0, v0, q1, v1, m0, I0, B, gravity, sp, Rrel0, c_type, c_body, c_a, c_s, c_c, c_u, c_f,
                road, speed, fade, bound, tol, alpha, rtol, atol, max_iter, project, out, iters, jac_evals):
    """Cartesian explicit-implicit model (Table 2, model 2): AB3 on the base; HHT-α on each subsystem body
    (eq. 14-20: unknowns ā and λ̄, constraint rows scaled by 1/(βh²)) with the base at t_{n+1} from AB3; Newton
    matrix by finite differences, kept from step to step and refreshed when a step does not converge with it.
    Then the base equation at t_{n+1} gives a0_{n+1}. ``project`` = 0 is the paper's index-3 scheme; 1 puts each
    subsystem back on its position and velocity constraints by partitioning (:func:`gcp_correct`) after HHT."""
    n = q1.shape[0]
    w = make_work(n)
    Meff = np.zeros((6, 6))
    Peff = np.zeros(6)
    a0 = np.zeros(6)
    a1c = np.zeros((n, 6))
    lamc = np.zeros((n, NR))
    hv0 = np.zeros((3, 6))
    ha0 = np.zeros((3, 6))
    ga = 0.5 - alpha
    be = 0.25 * (1.0 - alpha) ** 2
    ind = np.full(n, -1, dtype=np.int64)
    dref = np.zeros(n)
    for i in range(n):
        if gcp_correct(i, q0, v0, q1, v1, c_type, c_body, c_a, c_s, c_c, c_u, c_f, w, ind, dref, tol) < 0:
            return 0
    evaluate_cart(0.0, q0, v0, q1, v1, m0, I0, B, gravity, sp, Rrel0, c_type, c_body, c_a, c_s, c_c, c_u, c_f, road,
                  speed, fade, w, Meff, Peff, a0, a1c, lamc)
    a1 = a1c.copy()
    lam = lamc.copy()
    # (Φ̄ᵀλ - ḡ)_0 = -M̄ a_0
    Fn = np.zeros((n, 6))
    for i in range(n):
        p = sp[i]
        for k in range(3):
            Fn[i, k] = -p[P_M] * a1[i, k]
            Fn[i, 3 + k] = -(p[P_I + 3 * k] * a1[i, 3] + p[P_I + 3 * k + 1] * a1[i, 4] + p[P_I + 3 * k + 2] * a1[i, 5])
    qb = np.zeros((1, 7))
    qt = np.zeros((1, 7))
    xb = np.zeros((1, 6))
    xt = np.zeros((1, 6))
    vt = np.zeros(6)
    psi = np.zeros(6)
    psi2 = np.zeros(6)
    H = np.zeros((11, 11))
    A = np.zeros((11, 11))
    rhs = np.zeros(11)
    a = np.zeros(6)
    lm = np.zeros(NR)
    Hn = np.zeros((n, 11, 11))
    for step in range(nsteps + 1):
        if not _record(out, step, q0, v0, a0, bound):
            return step
        if step == nsteps:
            break
        t1 = (step + 1) * h
        _push(hv0, v0)
        _push(ha0, a0)
        c = _ab(min(step + 1, 3))
        _advance_base(q0, v0, hv0, ha0, c, h)
        worst = 0
        for i in range(n):
            p = sp[i]
            for k in range(7):
                qb[0, k] = q1[i, k]
            for k in range(6):
                xb[0, k] = h * v1[i, k] + h * h * (0.5 - be) * a1[i, k]
                a[k] = a1[i, k]
            for r in range(NR):
                lm[r] = lam[i, r]
            conv = False
            for attempt in range(2):
                fresh = Hn[i, 0, 0] == 0.0 or attempt == 1
                for k in range(6):
                    a[k] = a1[i, k]
                for r in range(NR):
                    lm[r] = lam[i, r]
                for it in range(1, max_iter + 1):
                    for k in range(6):
                        xt[0, k] = xb[0, k] + be * h * h * a[k]
                        vt[k] = v1[i, k] + h * (1.0 - ga) * a1[i, k] + ga * h * a[k]
                    advance_positions_dq(qb, xt, qt)
                    _cart_psi(i, t1, sp, Rrel0, c_type, c_body, c_a, c_s, c_c, c_u, c_f, q0, v0, qt[0], vt, gravity,
                              road, speed, fade, w, lm, a, alpha, Fn[i], psi)
                    if fresh and it == 1:
                        # Newton matrix (eq. 18, 20): M̄/(1+α) + βh² ∂(Φ̄ᵀλ - ḡ)/∂x + γh ∂(-ḡ)/∂v, by differences
                        H[:, :] = 0.0
                        for k in range(6):
                            eps = 1e-7
                            xt[0, k] += eps
                            advance_positions_dq(qb, xt, qt)
                            _cart_psi(i, t1, sp, Rrel0, c_type, c_body, c_a, c_s, c_c, c_u, c_f, q0, v0, qt[0], vt,
                                      gravity, road, speed, fade, w, lm, a, alpha, Fn[i], psi2)
                            xt[0, k] -= eps
                            for r in range(6):
                                H[r, k] += be * h * h * (psi2[r] - psi[r]) / eps
                            ev = 1e-6
                            vt[k] += ev
                            advance_positions_dq(qb, xt, qt)
                            _cart_psi(i, t1, sp, Rrel0, c_type, c_body, c_a, c_s, c_c, c_u, c_f, q0, v0, qt[0], vt,
                                      gravity, road, speed, fade, w, lm, a, alpha, Fn[i], psi2)
                            vt[k] -= ev
                            for r in range(6):
                                H[r, k] += ga * h * (psi2[r] - psi[r]) / ev
                        for k in range(3):
                            H[k, k] += p[P_M] / (1.0 + alpha)
                            for m in range(3):
                                H[3 + k, 3 + m] += p[P_I + 3 * k + m] / (1.0 + alpha)
                        advance_positions_dq(qb, xt, qt)
                        _cart_psi(i, t1, sp, Rrel0, c_type, c_body, c_a, c_s, c_c, c_u, c_f, q0, v0, qt[0], vt, gravity,
                                  road, speed, fade, w, lm, a, alpha, Fn[i], psi)
                        J = w[15]
                        for r in range(NR):
                            for k in range(6):
                                H[6 + r, k] = J[r, 6 + k]
                                H[k, 6 + r] = J[r, 6 + k]
                        Hn[i, :, :] = H
                        jac_evals[0] += 1
                    A[:, :] = Hn[i]
                    for k in range(6):
                        rhs[k] = -psi[k]
                    for r in range(NR):
                        rhs[6 + r] = -w[14][r] / (be * h * h)
                    gauss_solve(A, rhs, 11, rhs)
                    da = 0.0
                    dl = 0.0
                    lmax = 0.0
                    vmax = 0.0
                    for k in range(6):
                        a[k] += rhs[k]
                        da = max(da, abs(rhs[k]))
                        vmax = max(vmax, abs(vt[k]))
                    for r in range(NR):
                        lm[r] += rhs[6 + r]
                        dl = max(dl, abs(rhs[6 + r]))
                        lmax = max(lmax, abs(lm[r]))
                    if ga * h * da <= atol + rtol * vmax and dl <= rtol * lmax + atol * p[P_M] / h:
                        conv = True
                        worst = max(worst, it)
                        break
                if conv or fresh:
                    break
            if not conv:
                return step
            for k in range(6):
                xt[0, k] = xb[0, k] + be * h * h * a[k]
            advance_positions_dq(qb, xt, qt)
            for k in range(7):
                q1[i, k] = qt[0, k]
            for k in range(6):
                v1[i, k] = v1[i, k] + h * (1.0 - ga) * a1[i, k] + ga * h * a[k]
            for k in range(3):
                ma = p[P_M] * a[k]
                mr = p[P_I + 3 * k] * a[3] + p[P_I + 3 * k + 1] * a[4] + p[P_I + 3 * k + 2] * a[5]
                Fn[i, k] = -(ma - alpha * Fn[i, k]) / (1.0 + alpha)
                Fn[i, 3 + k] = -(mr - alpha * Fn[i, 3 + k]) / (1.0 + alpha)
            for k in range(6):
                a1[i, k] = a[k]
            for r in range(NR):
                lam[i, r] = lm[r]
            if project and gcp_correct(i, q0, v0, q1, v1, c_type, c_body, c_a, c_s, c_c, c_u, c_f, w, ind, dref,
                                       tol) < 0:
                return step
        iters[step] = worst
        evaluate_cart(t1, q0, v0, q1, v1, m0, I0, B, gravity, sp, Rrel0, c_type, c_body, c_a, c_s, c_c, c_u, c_f,
                      road, speed, fade, w, Meff, Peff, a0, a1c, lamc)
    return nsteps


@nb.njit(cache=True, inline="always")
def _mv(R, x):
    """R x for a 3 × 3 R (written out: a BLAS call per 3-vector costs more than the arithmetic)."""
    out = np.empty(3)
    for r in range(3):
        out[r] = R[r, 0] * x[0] + R[r, 1] * x[1] + R[r, 2] * x[2]
    return out


@nb.njit(cache=True, inline="always")
def _mtv(R, x):
    """Rᵀ x for a 3 × 3 R."""
    out = np.empty(3)
    for r in range(3):
        out[r] = R[0, r] * x[0] + R[1, r] * x[1] + R[2, r] * x[2]
    return out


# ------------------------------------------------------------------------------------------ chain subsystems
# A *chain subsystem* is a small open chain of up to NBS bodies hanging from the base, each on a revolute or a
# prismatic joint to its parent in the chain (local index >= 0) or to the base (-1), in relative joint coordinates
# θ measured from a massless virtual base welded to the base body (kim-2012 eq. 21-30 generalised from one body to
# a chain). Its arrays, one row per subsystem i and one column per chain body j (parents before children):
#   ch_body (n, NBS) model body index (-1 unused), ch_parent (n, NBS) local parent (-1 base), ch_nb (n) bodies,
#   ch_axis (n, NBS, 3) joint axis in the parent's body frame (a unit vector), ch_sp / ch_sc (n, NBS, 3) the
#   joint point in the parent's / the body's frame (from the centre of mass) at θ = 0, ch_q0 (n, NBS, 4) the
#   body's orientation relative to its parent at θ = 0 (a unit quaternion, scalar first), ch_type (n, NBS) the
#   joint type (REVOLUTE: θ the angle about the axis, rad; PRISMATIC: θ the slide along the axis, m).
# θ = 0 is the model's assembled pose. With a the axis and R_p, ω_p the parent's rotation and world angular
# velocity, d_p = R_p s_p (revolute) or R_p (s_p + a θ) (prismatic) and d_c = R_c s_c (world):
#   revolute   ρ_c = ρ_p ⊗ (cos θ/2, a sin θ/2) ⊗ ρ_rel0,  ω_c = ω_p + R_p a θ̇,
#   prismatic  ρ_c = ρ_p ⊗ ρ_rel0,                       ω_c = ω_p,
#   both       r_c = r_p + d_p − d_c,  ṙ_c = ṙ_p + ω_p × d_p − ω_c × d_c (+ R_p a θ̇, prismatic).
# The applied forces of every body (gravity, gyroscopic, force elements,
# providers) come in as f (nb, 6) = (world force, body-frame torque), the absolute formulation's own vector, so
# the spring-dampers and motors between base, arm and wheel enter through the velocity transformation
# (Q_θ = Σ b_jᵀ f_j) rather than as joint torques: the same numbers, without a second copy of the force laws.
NBS = 4  # bodies per chain subsystem, at most
REVOLUTE = 0  # ch_type: the joint of a chain body
PRISMATIC = 1


@nb.njit(cache=True)
def chain_pose(q0, v0, th, thd, ch_body, ch_parent, ch_nb, ch_axis, ch_sp, ch_sc, ch_q0, ch_type, q, v):
    """Absolute positions q (nb, 7) and velocities v (nb, 6) of every chain body from the base state (q0 (7),
    v0 (6): (ṙ world, ω̄ body)) and the joint coordinates th, thd (n, NBS) (the section's joint kinematics).
    The base's own row and the rows of bodies in no chain are the caller's."""
    Rp = np.empty((3, 3))
    Rb = np.empty((NBS, 3, 3))
    pos = np.empty((NBS, 3))
    vel = np.empty((NBS, 3))
    om = np.empty((NBS, 3))
    qu = np.empty((NBS, 4))
    R0 = np.empty((3, 3))
    _quat_R(q0, R0)
    w0 = _mv(R0, v0[3:])
    rp = np.empty(3)
    vp = np.empty(3)
    wp = np.empty(3)
    qp = np.empty(4)
    tmp = np.empty(7)
    x1 = np.empty(3)
    x2 = np.empty(3)
    for i in range(ch_nb.shape[0]):
        for j in range(ch_nb[i]):
            p = ch_parent[i, j]
            for r in range(3):
                if p < 0:
                    rp[r], vp[r], wp[r] = q0[r], v0[r], w0[r]
                    for c in range(3):
                        Rp[r, c] = R0[r, c]
                else:
                    rp[r], vp[r], wp[r] = pos[p, r], vel[p, r], om[p, r]
                    for c in range(3):
                        Rp[r, c] = Rb[p, r, c]
            for k in range(4):
                qp[k] = q0[3 + k] if p < 0 else qu[p, k]
            a = ch_axis[i, j]
            slide = ch_type[i, j] == PRISMATIC
            if slide:
                qa = (1.0, 0.0, 0.0, 0.0)
            else:
                s = math.sin(0.5 * th[i, j])
                qa = (math.cos(0.5 * th[i, j]), s * a[0], s * a[1], s * a[2])
            qr = quat_mul(quat_mul((qp[0], qp[1], qp[2], qp[3]), qa),
                          (ch_q0[i, j, 0], ch_q0[i, j, 1], ch_q0[i, j, 2], ch_q0[i, j, 3]))
            nrm = math.sqrt(qr[0] ** 2 + qr[1] ** 2 + qr[2] ** 2 + qr[3] ** 2)
            for k in range(4):
                qu[j, k] = qr[k] / nrm
                tmp[3 + k] = qu[j, k]
            _quat_R(tmp, Rb[j])
            aw = _mv(Rp, a)
            for k in range(3):
                x1[k] = ch_sp[i, j, k] + a[k] * th[i, j] if slide else ch_sp[i, j, k]
            dp = _mv(Rp, x1)
            dc = _mv(Rb[j], ch_sc[i, j])
            for k in range(3):
                pos[j, k] = rp[k] + dp[k] - dc[k]
                om[j, k] = wp[k] if slide else wp[k] + aw[k] * thd[i, j]
            _cross(wp, dp, x1)
            _cross(om[j], dc, x2)
            for k in range(3):
                vel[j, k] = vp[k] + x1[k] - x2[k]
                if slide:
                    vel[j, k] += aw[k] * thd[i, j]
            b = ch_body[i, j]
            for k in range(3):
                q[b, k] = pos[j, k]
                v[b, k] = vel[j, k]
            for k in range(4):
                q[b, 3 + k] = qu[j, k]
            wb = _mtv(Rb[j], om[j])
            for k in range(3):
                v[b, 3 + k] = wb[k]


@nb.njit(cache=True)
def _skew_mul_add(d, W, out, sign, ncol):
    """out[:, :ncol] += sign · [d]× W (W (3, ncol))."""
    for c in range(ncol):
        x = d[1] * W[2, c] - d[2] * W[1, c]
        y = d[2] * W[0, c] - d[0] * W[2, c]
        z = d[0] * W[1, c] - d[1] * W[0, c]
        out[0, c] += sign * x
        out[1, c] += sign * y
        out[2, c] += sign * z


@nb.njit(cache=True)
def chain_work(q0, v0):
    """Scratch of :func:`chain_terms` (one allocation per evaluation, shared by the batch), with the base's
    rotation, world angular velocity and velocity-transformation rows filled in."""
    R0 = np.empty((3, 3))
    _quat_R(q0, R0)
    w0 = _mv(R0, v0[3:])
    JvB = np.zeros((3, 6 + NBS))
    JwB = np.zeros((3, 6 + NBS))
    for k in range(3):
        JvB[k, k] = 1.0
        for c in range(3):
            JwB[k, 3 + c] = R0[k, c]
    return (R0, w0, np.zeros((NBS, 3, 6 + NBS)), np.zeros((NBS, 3, 6 + NBS)), np.zeros((NBS, 3)),
            np.zeros((NBS, 3)), np.empty((3, 3)), np.empty((3, 3)), JvB, JwB, np.zeros((6 + NBS, 6 + NBS)),
            np.zeros(6 + NBS), np.zeros((6, 6 + NBS)), np.zeros(6), np.zeros(3), np.empty(3), np.empty(3),
            np.empty(3), np.empty(3), np.empty(3), np.empty(3), np.empty((NBS, 7)), np.empty((NBS, NBS)),
            np.empty(NBS))


@nb.njit(cache=True)
def chain_terms(i, q0, v0, th, thd, f, mass, inertia, ch_body, ch_parent, ch_nb, ch_axis, ch_sp, ch_sc, ch_q0,
                ch_type, Meff, Peff, Myq, Mqq, Pq, Jb, cb, q, v, wk):
    """Chain subsystem i in joint coordinates (kim-2012 eq. 21-26 for a chain): the velocity transformation of
    every chain body, ``(ṙ_j, ω̄_j) = Jb[i, j] (Y0, θ̇)`` and acceleration ``Jb[i, j] (Ẏ0, θ̈) + cb[i, j]``, and
    from them M_yy, M_yq (6, nq), M_qq (nq, nq), P_y, P_q (eq. 24); adds M̆ = M_yy - M_yq M_qq⁻¹ M_yqᵀ (eq. 25)
    to Meff and P̆ = P_y - M_yq M_qq⁻¹ P_q (eq. 26) to Peff, and stores M_yq, M_qq and P_q for eq. 30.
    Positions and velocities of the chain bodies are read from q, v (nb, 7), (nb, 6) (:func:`chain_pose`).

    Velocity products (every Ẏ0 and θ̈ zero; c_ω, c_a of the parent p and body j, world; a_w = R_p a,
    d_p, d_c as in the section's note), from differentiating the joint's velocity once more:

    - revolute: ``c_ω,j = c_ω,p + (ω_p × a_w) θ̇``,
      ``c_a,j = c_a,p + c_ω,p × d_p + ω_p × (ω_p × d_p) − c_ω,j × d_c − ω_j × (ω_j × d_c)``;
    - prismatic: ``ḋ_p = ω_p × d_p + a_w θ̇`` and ``(a_w θ̇)˙ = (ω_p × a_w) θ̇ + a_w θ̈``, so ``c_ω,j = c_ω,p``
      and ``c_a,j`` is the revolute's plus the Coriolis term ``2 ω_p × a_w θ̇`` (one ``ω_p × a_w θ̇`` from
      the turning of the slide's offset d_p, one from the turning of the slide direction a_w); the
      Jacobian's θ̇ column is a_w in the translational rows and zero in the rotational ones."""
    nq = ch_nb[i]
    ncol = 6 + nq
    R0, w0, Jv, Jw, ca, cw, Rj, Rp, JvB, JwB, A, P, MJ, h, zero3, x, t1, y, t2, t3, t4, X, S, col = wk
    A[:, :] = 0.0
    P[:] = 0.0
    for j in range(nq):
        p = ch_parent[i, j]
        b = ch_body[i, j]
        if p < 0:
            Jvp, Jwp = JvB, JwB
            cap, cwp = zero3, zero3
            wp = w0
            for r in range(3):
                for c in range(3):
                    Rp[r, c] = R0[r, c]
        else:
            Jvp, Jwp = Jv[p], Jw[p]
            cap, cwp = ca[p], cw[p]
            bp = ch_body[i, p]
            _quat_R(q[bp], Rp)
            wp = _mv(Rp, v[bp, 3:])
        _quat_R(q[b], Rj)
        wj = _mv(Rj, v[b, 3:])
        slide = ch_type[i, j] == PRISMATIC
        aw = _mv(Rp, ch_axis[i, j])
        for k in range(3):
            x[k] = ch_sp[i, j, k] + ch_axis[i, j, k] * th[i, j] if slide else ch_sp[i, j, k]
        dp = _mv(Rp, x)
        dc = _mv(Rj, ch_sc[i, j])
        for r in range(3):
            for c in range(ncol):
                Jw[j, r, c] = Jwp[r, c]
                Jv[j, r, c] = Jvp[r, c]
            if slide:
                Jv[j, r, 6 + j] += aw[r]
            else:
                Jw[j, r, 6 + j] += aw[r]
        _skew_mul_add(dp, Jwp, Jv[j], -1.0, ncol)
        _skew_mul_add(dc, Jw[j], Jv[j], 1.0, ncol)
        # velocity-product accelerations (every Ẏ0 and θ̈ zero)
        _cross(wp, aw, x)
        for k in range(3):
            cw[j, k] = cwp[k] if slide else cwp[k] + x[k] * thd[i, j]
        _cross(cwp, dp, t1)
        _cross(wp, dp, y)
        _cross(wp, y, t2)
        _cross(cw[j], dc, t3)
        _cross(wj, dc, y)
        _cross(wj, y, t4)
        for k in range(3):
            ca[j, k] = cap[k] + t1[k] + t2[k] - t3[k] - t4[k]
            if slide:
                ca[j, k] += 2.0 * x[k] * thd[i, j]  # Coriolis: 2 ω_p × (R_p a) θ̇
        # the body's rows in (ṙ world, ω̄ body): Jb and cb
        m = mass[b]
        I = inertia[b]
        for r in range(3):
            for c in range(ncol):
                Jb[i, j, r, c] = Jv[j, r, c]
                s = 0.0
                for k in range(3):
                    s += Rj[k, r] * Jw[j, k, c]
                Jb[i, j, 3 + r, c] = s
            cb[i, j, r] = ca[j, r]
            s = 0.0
            for k in range(3):
                s += Rj[k, r] * cw[j, k]
            cb[i, j, 3 + r] = s
        for r in range(3):
            for c in range(ncol):
                MJ[r, c] = m * Jb[i, j, r, c]
                s = 0.0
                for k in range(3):
                    s += I[r, k] * Jb[i, j, 3 + k, c]
                MJ[3 + r, c] = s
            h[r] = f[b, r] - m * cb[i, j, r]
            s = f[b, 3 + r]
            for k in range(3):
                s -= I[r, k] * cb[i, j, 3 + k]
            h[3 + r] = s
        for r in range(ncol):
            s = 0.0
            for k in range(6):
                s += Jb[i, j, k, r] * h[k]
            P[r] += s
            for c in range(ncol):
                s = 0.0
                for k in range(6):
                    s += Jb[i, j, k, r] * MJ[k, c]
                A[r, c] += s
    # eq. 25-26: M̆ and P̆ by M_qq⁻¹ [M_yqᵀ | P_q]
    for c in range(7):
        for r in range(nq):
            for k in range(nq):
                S[r, k] = A[6 + r, 6 + k]
            col[r] = A[c, 6 + r] if c < 6 else P[6 + r]
        gauss_solve(S, col, nq, col)
        for r in range(nq):
            X[r, c] = col[r]
    for r in range(6):
        s = P[r]
        for k in range(nq):
            s -= A[r, 6 + k] * X[k, 6]
        Peff[r] += s
        for c in range(6):
            s = A[r, c]
            for k in range(nq):
                s -= A[r, 6 + k] * X[k, c]
            Meff[r, c] += s
    for r in range(nq):
        Pq[i, r] = P[6 + r]
        for c in range(nq):
            Mqq[i, r, c] = A[6 + r, 6 + c]
        for k in range(6):
            Myq[i, k, r] = A[k, 6 + r]


@nb.njit(cache=True)
def chain_base_solve(f0, m0, I0, Meff, Peff, a0):
    """The free base's equation (eq. 28): (M0 + Σ M̆) Ẏ0 = g0 + Σ P̆ with g0 = f0 (its applied force and torque,
    gyroscopic included) on (ṙ world, ω̄ body)."""
    M = np.empty((6, 6))
    g = np.empty(6)
    for r in range(6):
        g[r] = f0[r] + Peff[r]
        for c in range(6):
            M[r, c] = Meff[r, c]
    for k in range(3):
        M[k, k] += m0
        for c in range(3):
            M[3 + k, 3 + c] += I0[k, c]
    gauss_solve(M, g, 6, a0)


@nb.njit(cache=True)
def chain_recover(a0, ch_nb, Myq, Mqq, Pq, thdd):
    """θ̈ of every chain subsystem (eq. 30): M_qq θ̈ = P_q - M_yqᵀ Ẏ0."""
    S = np.empty((NBS, NBS))
    col = np.empty(NBS)
    for i in range(ch_nb.shape[0]):
        nq = ch_nb[i]
        for r in range(nq):
            s = Pq[i, r]
            for k in range(6):
                s -= Myq[i, k, r] * a0[k]
            col[r] = s
            for c in range(nq):
                S[r, c] = Mqq[i, r, c]
        gauss_solve(S, col, nq, col)
        for r in range(nq):
            thdd[i, r] = col[r]


@nb.njit(cache=True)
def chain_evaluate(q0, v0, th, thd, f, base, mass, inertia, ch_body, ch_parent, ch_nb, ch_axis, ch_sp, ch_sc,
                   ch_q0, ch_type, q, v, Meff, Peff, Myq, Mqq, Pq, Jb, cb, a0, thdd, solve_base):
    """Joint-coordinate synthesis of a free base with chain subsystems at one instant: every subsystem's
    M̆, P̆ (eq. 25-26), the base equation (eq. 28; ``solve_base`` 0 skips it and keeps a0) and every θ̈
    (eq. 30)."""
    Meff[:, :] = 0.0
    Peff[:] = 0.0
    wk = chain_work(q0, v0)
    for i in range(ch_nb.shape[0]):
        chain_terms(i, q0, v0, th, thd, f, mass, inertia, ch_body, ch_parent, ch_nb, ch_axis, ch_sp, ch_sc, ch_q0,
                    ch_type, Meff, Peff, Myq, Mqq, Pq, Jb, cb, q, v, wk)
    if solve_base:
        chain_base_solve(f[base], mass[base], inertia[base], Meff, Peff, a0)
    chain_recover(a0, ch_nb, Myq, Mqq, Pq, thdd)


@nb.njit(cache=True)
def chain_body_acc(a0, thdd, base, ch_body, ch_nb, Jb, cb, acc):
    """Absolute accelerations (nb, 6) = (r̈ world, ω̄̇ body) of the base and the chain bodies."""
    for k in range(6):
        acc[base, k] = a0[k]
    for i in range(ch_nb.shape[0]):
        nq = ch_nb[i]
        for j in range(nq):
            b = ch_body[i, j]
            for r in range(6):
                s = cb[i, j, r]
                for c in range(6):
                    s += Jb[i, j, r, c] * a0[c]
                for c in range(nq):
                    s += Jb[i, j, r, 6 + c] * thdd[i, c]
                acc[b, r] = s


@nb.njit(cache=True)
def chain_coordinates(q, v, ch_body, ch_parent, ch_nb, ch_axis, ch_sp, ch_sc, ch_q0, ch_type, base, th, thd):
    """θ, θ̇ (n, NBS) of every chain joint from absolute positions and velocities (the inverse of
    :func:`chain_pose` for states on the joints' manifold). Revolute: θ in (-π, π] from the relative rotation,
    θ̇ = a_w · (ω_c − ω_p). Prismatic: θ = a · (R_pᵀ (r_c + d_c − r_p) − s_p), θ̇ = a_w · (ṙ_c + ω_c × d_c − ṙ_p
    − ω_p × (r_c + d_c − r_p)) (the slide's rate seen from the turning parent)."""
    Rp = np.empty((3, 3))
    Rc = np.empty((3, 3))
    x1 = np.empty(3)
    x2 = np.empty(3)
    e = np.empty(3)
    for i in range(ch_nb.shape[0]):
        for j in range(ch_nb[i]):
            p = ch_parent[i, j]
            bp = base if p < 0 else ch_body[i, p]
            b = ch_body[i, j]
            a = ch_axis[i, j]
            _quat_R(q[bp], Rp)
            _quat_R(q[b], Rc)
            wp = _mv(Rp, v[bp, 3:])
            wc = _mv(Rc, v[b, 3:])
            aw = _mv(Rp, a)
            if ch_type[i, j] == PRISMATIC:
                dc = _mv(Rc, ch_sc[i, j])
                for k in range(3):
                    e[k] = q[b, k] + dc[k] - q[bp, k]
                el = _mtv(Rp, e)
                th[i, j] = (a[0] * (el[0] - ch_sp[i, j, 0]) + a[1] * (el[1] - ch_sp[i, j, 1])
                            + a[2] * (el[2] - ch_sp[i, j, 2]))
                _cross(wc, dc, x1)
                _cross(wp, e, x2)
                s = 0.0
                for k in range(3):
                    s += aw[k] * (v[b, k] + x1[k] - v[bp, k] - x2[k])
                thd[i, j] = s
                continue
            # rotation about the axis: conj(ρ_p) ρ_c conj(ρ_rel0) = (cos θ/2, sin θ/2 a)
            qp = (q[bp, 3], -q[bp, 4], -q[bp, 5], -q[bp, 6])
            qc = (q[b, 3], q[b, 4], q[b, 5], q[b, 6])
            qr = quat_mul(quat_mul(qp, qc), (ch_q0[i, j, 0], -ch_q0[i, j, 1], -ch_q0[i, j, 2], -ch_q0[i, j, 3]))
            s = qr[1] * a[0] + qr[2] * a[1] + qr[3] * a[2]
            th[i, j] = 2.0 * math.atan2(s, qr[0])
            if th[i, j] > math.pi:
                th[i, j] -= 2.0 * math.pi
            elif th[i, j] <= -math.pi:
                th[i, j] += 2.0 * math.pi
            thd[i, j] = aw[0] * (wc[0] - wp[0]) + aw[1] * (wc[1] - wp[1]) + aw[2] * (wc[2] - wp[2])


@nb.njit(cache=True)
def chain_pose_full(q0, v0, th, thd, base, ch_body, ch_parent, ch_nb, ch_axis, ch_sp, ch_sc, ch_q0, ch_type, q, v):
    """:func:`chain_pose` with the base's row."""
    for k in range(7):
        q[base, k] = q0[k]
    for k in range(6):
        v[base, k] = v0[k]
    chain_pose(q0, v0, th, thd, ch_body, ch_parent, ch_nb, ch_axis, ch_sp, ch_sc, ch_q0, ch_type, q, v)


@nb.njit(cache=True)
def chain_ab_advance(h, c, k, Hq0, Hv0, Ha0, th, Hthd, Hthdd, joints, q0n, v0n, thn, thdn):
    """One Adams-Bashforth step of order k (coefficients c, newest first) of the free base in the chart at its
    newest orientation (the past points mapped exactly, their rates by dexp⁻¹: ``ẋ_j = L(x_j) v_j``) and, if
    ``joints``, of the joint coordinates; into q0n (7), v0n (6), thn, thdn (n, NBS)."""
    qn = Hq0[0:1]
    x = np.zeros((1, 6))
    r = np.zeros((1, 6))
    dx = np.zeros((1, 6))
    for k6 in range(6):
        v0n[k6] = Hv0[0, k6]
    for j in range(k):
        chart_log(qn, Hq0[j:j + 1], x)
        chart_rate(x, Hv0[j:j + 1], r)
        for k6 in range(6):
            dx[0, k6] += h * c[j] * r[0, k6]
            v0n[k6] += h * c[j] * Ha0[j, k6]
    out = np.zeros((1, 7))
    advance_positions_dq(qn, dx, out)
    for k7 in range(7):
        q0n[k7] = out[0, k7]
    if joints:
        n, m = th.shape
        for i in range(n):
            for a in range(m):
                s = th[i, a]
                sd = Hthd[0, i, a]
                for j in range(k):
                    s += h * c[j] * Hthd[j, i, a]
                    sd += h * c[j] * Hthdd[j, i, a]
                thn[i, a] = s
                thdn[i, a] = sd


@nb.njit(cache=True)
def chain_hht_residual(ch_nb, Mqq, Myq, Pq, a0p, x, Fn, alpha, weighted, r):
    """HHT residual of every chain subsystem (eq. 31 for a chain) at the last evaluation: ``M_qq x
    + (1+α)(M_yqᵀ Ẏ0 − P_q) − α F_n`` (``weighted``), or eq. 31 as printed, ``M_qq x + M_yqᵀ Ẏ0
    − (1+α) P_q − α F_n`` with ``F_n = −P_q(t_n)``; zero on the coordinates a shorter chain lacks."""
    for i in range(ch_nb.shape[0]):
        nq = ch_nb[i]
        for a in range(r.shape[1]):
            if a >= nq:
                r[i, a] = 0.0
                continue
            s = 0.0
            for c in range(nq):
                s += Mqq[i, a, c] * x[i, c]
            ma = 0.0
            for k in range(6):
                ma += Myq[i, k, a] * a0p[k]
            if weighted:
                r[i, a] = s + (1.0 + alpha) * (ma - Pq[i, a]) - alpha * Fn[i, a]
            else:
                r[i, a] = s + ma - (1.0 + alpha) * Pq[i, a] - alpha * Fn[i, a]


@nb.njit(cache=True)
def chain_newton_update(ch_nb, H, r, x, dx):
    """One Newton update per chain subsystem: H_i dx_i = −r_i (its nq × nq block), x += dx."""
    S = np.empty((NBS, NBS))
    b = np.empty(NBS)
    for i in range(ch_nb.shape[0]):
        nq = ch_nb[i]
        for a in range(nq):
            b[a] = -r[i, a]
            for c in range(nq):
                S[a, c] = H[i, a, c]
        gauss_solve(S, b, nq, b)
        for a in range(dx.shape[1]):
            dx[i, a] = b[a] if a < nq else 0.0
            x[i, a] += dx[i, a]
