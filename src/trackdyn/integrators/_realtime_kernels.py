"""Numba kernels of the real-time stepper: a massless vehicle in minimal coordinates, one linear solve per step.

The massless vehicle is a depth-1 tree: the hull (6 coordinates ``u_C =
(ṙ_C world, ω̄_C body)``) and, on revolutes to it, the *degree-of-freedom*
bodies (sprockets, road arms: one joint rate each) and the *spin* bodies
(idlers, rollers, road wheels — on the hull or on an arm — whose spin about
their own axle carries no force in the massless model and is kept at its
rate relative to the parent; their mass and their inertia across the axle
move with the parent).

For a body b the bases ``T_b`` (3, 7) and ``W_b`` (3, 7) give its centre's
velocity and its world angular velocity from the hull's six rates and the
rate of the joint that moves it (column 6): ``v_b = T_b u``, ``ω_b = W_b u``.
Then ``M = Σ m_b T_bᵀT_b + W_bᵀ J_b W_b`` and the generalized forces are
``T_bᵀ (f_b - m_b c_b) + W_bᵀ (τ_b - J_b c^ω_b - ω_b × J_b ω_b)`` with the
velocity-product accelerations ``c`` of the tree (Pogorelov's minimal
coordinates, agapov-kovalev-pogorelov §3.1 and its ref. [7]).

One step (linearised implicit Euler, as the project's default integrator)::

    (M - h D - h² K) u⁺ = (M - h D) u + h Q,     q⁺ = q ⊕ h u⁺

``K``, ``D``: the Jacobians of the stiff forces — track contacts
(:mod:`._kernels`, ``jac = STIFF``), torsion-bar stops (RSDA tables),
dampers (TSDA tables), the drive's torque-speed slope and brake. Joints
hold exactly (positions follow from the joint rotations); there are no
multipliers.
"""

from __future__ import annotations

import math

import numba as nb

from ..driver._compiled import decide
from ..math._kernels import quat_exp_half, quat_mul
from ..mbs._force_kernels import table_eval
from ..mbs._kernels import body_kinematics
from ..powertrain import sprocket_torque
from ..contact.massless import _kernels as K
from ..contact.massless._kernels import _mat_tvec, _mat_vec  # the same no-NRT helpers
from ..contact.massless._slice import _cross, _dot

jit = nb.njit(cache=True, _nrt=False)  # no allocation, no reference counting of the many arrays passed

KIND_HULL = 0
KIND_DOF = 1     # revolute to the hull, one joint rate
KIND_SPIN = 2    # spins on an axle of the hull or of a DOF body; moves with it



@jit
def bases(C, kind, parent, dof, pivot, axis, pos, R, body_T, body_W):
    """T_b, W_b (nb, 3, 7) of every body at the current pose (see the module docstring)."""
    nb_ = kind.shape[0]
    for b in range(nb_):
        for i in range(3):
            for c in range(7):
                body_T[b, i, c] = 0.0
                body_W[b, i, c] = 0.0
        rho = (pos[b, 0] - pos[C, 0], pos[b, 1] - pos[C, 1], pos[b, 2] - pos[C, 2])
        for i in range(3):
            body_T[b, i, i] = 1.0
        # -ρ~ A_C e_m = (A_C e_m) × ρ
        for m in range(3):
            em = (R[C, 0, m], R[C, 1, m], R[C, 2, m])
            x = _cross(em, rho)
            for i in range(3):
                body_T[b, i, 3 + m] = x[i]
                body_W[b, i, 3 + m] = em[i]
        d = dof[b]
        if d >= 0:
            j = b if kind[b] == KIND_DOF else parent[b]
            a = _mat_vec(R, C, (axis[j, 0], axis[j, 1], axis[j, 2]))
            p = _mat_vec(R, C, (pivot[j, 0], pivot[j, 1], pivot[j, 2]))
            q = (pos[b, 0] - pos[C, 0] - p[0], pos[b, 1] - pos[C, 1] - p[1], pos[b, 2] - pos[C, 2] - p[2])
            x = _cross(a, q)
            for i in range(3):
                body_T[b, i, 6] = x[i]
                body_W[b, i, 6] = a[i]


@jit
def _scatter7(b, dof, g7, g):
    """Compact (7,) body vector into the global reduced vector g (hull columns 0..5, joint column dof[b])."""
    for c in range(6):
        g[c] += g7[c]
    if dof[b] >= 0:
        g[6 + dof[b]] += g7[6]


@jit
def _grad_dir(b, dof, Wb, z, g):
    """g = W_bᵀ z in global reduced coordinates (added)."""
    for c in range(6):
        g[c] += Wb[0, c] * z[0] + Wb[1, c] * z[1] + Wb[2, c] * z[2]
    if dof[b] >= 0:
        g[6 + dof[b]] += Wb[0, 6] * z[0] + Wb[1, 6] * z[1] + Wb[2, 6] * z[2]


@jit
def _outer(A, s, g1, g2):
    n = g1.shape[0]
    for i in range(n):
        if g1[i] == 0.0:
            continue
        for j in range(n):
            A[i, j] += s * g1[i] * g2[j]


@jit
def _inertia_row(R, J_b, b, i):
    """Row i of body b's world inertia ``A J̄ Aᵀ`` (a tuple: the kernels of this module allocate nothing)."""
    AJ0 = R[b, i, 0] * J_b[b, 0, 0] + R[b, i, 1] * J_b[b, 1, 0] + R[b, i, 2] * J_b[b, 2, 0]
    AJ1 = R[b, i, 0] * J_b[b, 0, 1] + R[b, i, 1] * J_b[b, 1, 1] + R[b, i, 2] * J_b[b, 2, 1]
    AJ2 = R[b, i, 0] * J_b[b, 0, 2] + R[b, i, 1] * J_b[b, 1, 2] + R[b, i, 2] * J_b[b, 2, 2]
    return (AJ0 * R[b, 0, 0] + AJ1 * R[b, 0, 1] + AJ2 * R[b, 0, 2],
            AJ0 * R[b, 1, 0] + AJ1 * R[b, 1, 1] + AJ2 * R[b, 1, 2],
            AJ0 * R[b, 2, 0] + AJ1 * R[b, 2, 1] + AJ2 * R[b, 2, 2])


@jit
def dynamics(C, kind, parent, dof, pivot, axis, mass, J_b, gravity, pos, R, vel, omega, body_T, body_W, u,
             M, Q, g7, g):
    """Mass matrix M and the generalized gravity, gyroscopic and velocity-product forces Q."""
    n = M.shape[0]
    for i in range(n):
        Q[i] = 0.0
        for j in range(n):
            M[i, j] = 0.0
    wC = (omega[C, 0], omega[C, 1], omega[C, 2])
    for b in range(kind.shape[0]):
        Jw = (_inertia_row(R, J_b, b, 0), _inertia_row(R, J_b, b, 1), _inertia_row(R, J_b, b, 2))  # A J̄ Aᵀ
        # compact columns: 0..5 hull, 6 joint
        nc = 7 if dof[b] >= 0 else 6
        m = mass[b]
        # ω_b (rigid part) and velocity-product accelerations
        wb = (0.0, 0.0, 0.0)
        for c in range(nc):
            uc = u[c] if c < 6 else u[6 + dof[b]]
            wb = (wb[0] + body_W[b, 0, c] * uc, wb[1] + body_W[b, 1, c] * uc, wb[2] + body_W[b, 2, c] * uc)
        cv = (0.0, 0.0, 0.0)
        cw = (0.0, 0.0, 0.0)
        if b != C:
            rho = (pos[b, 0] - pos[C, 0], pos[b, 1] - pos[C, 1], pos[b, 2] - pos[C, 2])
            if dof[b] >= 0:
                j = b if kind[b] == KIND_DOF else parent[b]
                a = _mat_vec(R, C, (axis[j, 0], axis[j, 1], axis[j, 2]))
                p = _mat_vec(R, C, (pivot[j, 0], pivot[j, 1], pivot[j, 2]))
                q = (rho[0] - p[0], rho[1] - p[1], rho[2] - p[2])
                th = u[6 + dof[b]]
                wa = (wC[0] + th * a[0], wC[1] + th * a[1], wC[2] + th * a[2])
                axq = _cross(a, q)
                rd = _cross(wC, rho)
                rd = (rd[0] + th * axq[0], rd[1] + th * axq[1], rd[2] + th * axq[2])
                t1 = _cross(wC, rd)
                t2 = _cross(_cross(wC, a), q)
                t3 = _cross(a, _cross(wa, q))
                cv = (t1[0] + th * (t2[0] + t3[0]), t1[1] + th * (t2[1] + t3[1]), t1[2] + th * (t2[2] + t3[2]))
                cw = _cross(wC, a)
                cw = (th * cw[0], th * cw[1], th * cw[2])
            else:
                cv = _cross(wC, _cross(wC, rho))
        Jwb = (Jw[0][0] * wb[0] + Jw[0][1] * wb[1] + Jw[0][2] * wb[2],
               Jw[1][0] * wb[0] + Jw[1][1] * wb[1] + Jw[1][2] * wb[2],
               Jw[2][0] * wb[0] + Jw[2][1] * wb[1] + Jw[2][2] * wb[2])
        gyro = _cross(wb, Jwb)
        Jcw = (Jw[0][0] * cw[0] + Jw[0][1] * cw[1] + Jw[0][2] * cw[2],
               Jw[1][0] * cw[0] + Jw[1][1] * cw[1] + Jw[1][2] * cw[2],
               Jw[2][0] * cw[0] + Jw[2][1] * cw[1] + Jw[2][2] * cw[2])
        f = (m * (gravity[0] - cv[0]), m * (gravity[1] - cv[1]), m * (gravity[2] - cv[2]))
        tq = (-Jcw[0] - gyro[0], -Jcw[1] - gyro[1], -Jcw[2] - gyro[2])
        for c in range(nc):
            g7[c] = (body_T[b, 0, c] * f[0] + body_T[b, 1, c] * f[1] + body_T[b, 2, c] * f[2]
                     + body_W[b, 0, c] * tq[0] + body_W[b, 1, c] * tq[1] + body_W[b, 2, c] * tq[2])
        if nc == 6:
            g7[6] = 0.0
        _scatter7(b, dof, g7, Q)
        # mass matrix
        for c1 in range(nc):
            i1 = c1 if c1 < 6 else 6 + dof[b]
            JW = (Jw[0][0] * body_W[b, 0, c1] + Jw[0][1] * body_W[b, 1, c1] + Jw[0][2] * body_W[b, 2, c1],
                  Jw[1][0] * body_W[b, 0, c1] + Jw[1][1] * body_W[b, 1, c1] + Jw[1][2] * body_W[b, 2, c1],
                  Jw[2][0] * body_W[b, 0, c1] + Jw[2][1] * body_W[b, 1, c1] + Jw[2][2] * body_W[b, 2, c1])
            for c2 in range(nc):
                i2 = c2 if c2 < 6 else 6 + dof[b]
                M[i1, i2] += (m * (body_T[b, 0, c1] * body_T[b, 0, c2] + body_T[b, 1, c1] * body_T[b, 1, c2]
                                   + body_T[b, 2, c1] * body_T[b, 2, c2])
                              + JW[0] * body_W[b, 0, c2] + JW[1] * body_W[b, 1, c2] + JW[2] * body_W[b, 2, c2])


@jit
def elements(dof, R, pos, vel, omega, body_T, body_W,
             rs_body, rs_zi, rs_xi, rs_xj, rs_k, rs_c, rs_th0, rs_act, rs_tx, rs_ty, rs_stab, rs_dtab,
             ts_body, ts_s, ts_k, ts_c, ts_l0, ts_act, ts_tx, ts_ty, ts_stab, ts_dtab,
             Q, Kx, Dv, g):
    """Torsion bars (RSDA) and dampers (TSDA) of the model in reduced coordinates (tables as in the core)."""
    n = Q.shape[0]
    for e in range(rs_body.shape[0]):
        bi = rs_body[e, 0]
        bj = rs_body[e, 1]
        z = _mat_vec(R, bi, (rs_zi[e, 0], rs_zi[e, 1], rs_zi[e, 2]))
        xi = _mat_vec(R, bi, (rs_xi[e, 0], rs_xi[e, 1], rs_xi[e, 2]))
        yb = _cross((rs_zi[e, 0], rs_zi[e, 1], rs_zi[e, 2]), (rs_xi[e, 0], rs_xi[e, 1], rs_xi[e, 2]))
        yi = _mat_vec(R, bi, yb)
        xj = _mat_vec(R, bj, (rs_xj[e, 0], rs_xj[e, 1], rs_xj[e, 2]))
        th = math.atan2(_dot(yi, xj), _dot(xi, xj))
        thd = _dot(z, (omega[bj, 0] - omega[bi, 0], omega[bj, 1] - omega[bi, 1], omega[bj, 2] - omega[bi, 2]))
        ys, dys = table_eval(rs_tx, rs_ty, rs_stab[e, 0], rs_stab[e, 1], th)
        yd, dyd = table_eval(rs_tx, rs_ty, rs_dtab[e, 0], rs_dtab[e, 1], thd)
        T = rs_k[e] * (th - rs_th0[e]) + rs_c[e] * thd - rs_act[e] + ys + yd
        for i in range(n):
            g[i] = 0.0
        _grad_dir(bj, dof, body_W[bj], z, g)
        mz = (-z[0], -z[1], -z[2])
        _grad_dir(bi, dof, body_W[bi], mz, g)
        for i in range(n):
            Q[i] -= T * g[i]
        _outer(Kx, -(rs_k[e] + dys), g, g)
        _outer(Dv, -(rs_c[e] + dyd), g, g)
    for e in range(ts_body.shape[0]):
        bi = ts_body[e, 0]
        bj = ts_body[e, 1]
        si = _mat_vec(R, bi, (ts_s[e, 0, 0], ts_s[e, 0, 1], ts_s[e, 0, 2]))
        sj = _mat_vec(R, bj, (ts_s[e, 1, 0], ts_s[e, 1, 1], ts_s[e, 1, 2]))
        pi = (pos[bi, 0] + si[0], pos[bi, 1] + si[1], pos[bi, 2] + si[2])
        pj = (pos[bj, 0] + sj[0], pos[bj, 1] + sj[1], pos[bj, 2] + sj[2])
        d = (pj[0] - pi[0], pj[1] - pi[1], pj[2] - pi[2])
        l = math.sqrt(_dot(d, d))
        if l < 1e-12:
            continue
        ev = (d[0] / l, d[1] / l, d[2] / l)
        wi = (omega[bi, 0], omega[bi, 1], omega[bi, 2])
        wj = (omega[bj, 0], omega[bj, 1], omega[bj, 2])
        vi = _cross(wi, si)
        vj = _cross(wj, sj)
        dd = (vel[bj, 0] + vj[0] - vel[bi, 0] - vi[0], vel[bj, 1] + vj[1] - vel[bi, 1] - vi[1],
              vel[bj, 2] + vj[2] - vel[bi, 2] - vi[2])
        ld = _dot(ev, dd)
        ys, dys = table_eval(ts_tx, ts_ty, ts_stab[e, 0], ts_stab[e, 1], l)
        yd, dyd = table_eval(ts_tx, ts_ty, ts_dtab[e, 0], ts_dtab[e, 1], ld)
        F = ts_k[e] * (l - ts_l0[e]) + ts_c[e] * ld - ts_act[e] + ys + yd
        for i in range(n):
            g[i] = 0.0
        # g = (J_pj - J_pi)ᵀ e, J_p = T - ρ~ W
        for side in range(2):
            b = bj if side == 1 else bi
            s = sj if side == 1 else si
            sg = 1.0 if side == 1 else -1.0
            for c in range(7):
                if c == 6 and dof[b] < 0:
                    continue
                wc = (body_W[b, 0, c], body_W[b, 1, c], body_W[b, 2, c])
                x = _cross(wc, s)
                val = sg * ((body_T[b, 0, c] + x[0]) * ev[0] + (body_T[b, 1, c] + x[1]) * ev[1]
                            + (body_T[b, 2, c] + x[2]) * ev[2])
                if c < 6:
                    g[c] += val
                else:
                    g[6 + dof[b]] += val
        for i in range(n):
            Q[i] -= F * g[i]
        _outer(Kx, -(ts_k[e] + dys), g, g)
        _outer(Dv, -(ts_c[e] + dyd), g, g)


@jit
def drive(C, spr, dof, R, omega, body_W, throttle, braking, map_w, map_t, brake_torque, Q, Dv, g, out):
    """Sprocket torque of trackdyn.powertrain.Drivetrain (map at the sprocket's speed relative to the hull; brake).

    ``map_w`` is the map's abscissa in sprocket rad/s (the stepper divides a
    track-speed map by the drivetrain's ``map_scale``).
    """
    n = Q.shape[0]
    ay = (R[C, 0, 1], R[C, 1, 1], R[C, 2, 1])
    for e in range(spr.shape[0]):
        b = spr[e]
        ws = _dot(ay, (omega[b, 0] - omega[C, 0], omega[b, 1] - omega[C, 1], omega[b, 2] - omega[C, 2]))
        T, dT = sprocket_torque(ws, throttle[e], braking[e], brake_torque, map_w, map_t, 1.0)
        out[e, 0] = T
        out[e, 1] = ws
        for i in range(n):
            g[i] = 0.0
        _grad_dir(b, dof, body_W[b], ay, g)
        _grad_dir(C, dof, body_W[C], (-ay[0], -ay[1], -ay[2]), g)
        for i in range(n):
            Q[i] += T * g[i]
        _outer(Dv, dT, g, g)


@jit
def advance(C, kind, parent, dof, pivot, axis, spin, q, unew, h, qout):
    """Positions after the step: the hull by the exponential map, joints by their rotation, spins by theirs."""
    # hull
    qout[C, 0] = q[C, 0] + h * unew[0]
    qout[C, 1] = q[C, 1] + h * unew[1]
    qout[C, 2] = q[C, 2] + h * unew[2]
    dq = quat_exp_half((unew[3], unew[4], unew[5]), h)
    qc0 = (q[C, 3], q[C, 4], q[C, 5], q[C, 6])
    qc = quat_mul(qc0, dq)
    nq = math.sqrt(qc[0] * qc[0] + qc[1] * qc[1] + qc[2] * qc[2] + qc[3] * qc[3])
    qc = (qc[0] / nq, qc[1] / nq, qc[2] / nq, qc[3] / nq)
    for i in range(4):
        qout[C, 3 + i] = qc[i]
    for order in range(2):  # DOF bodies and hull spins first, then spins on DOF bodies
        for b in range(kind.shape[0]):
            if b == C:
                continue
            on_dof = kind[b] == KIND_SPIN and parent[b] != C
            if (order == 0) == on_dof:
                continue
            pb = C if kind[b] == KIND_DOF or parent[b] == C else parent[b]
            qp0 = (q[pb, 3], q[pb, 4], q[pb, 5], q[pb, 6]) if pb != C else qc0
            cp0 = (qp0[0], -qp0[1], -qp0[2], -qp0[3])
            qp1 = (qout[pb, 3], qout[pb, 4], qout[pb, 5], qout[pb, 6])
            # relative pose in the parent's frame at the start of the step
            d = (q[b, 0] - q[pb, 0], q[b, 1] - q[pb, 1], q[b, 2] - q[pb, 2])
            rel = quat_mul(quat_mul(cp0, (0.0, d[0], d[1], d[2])), qp0)
            rb = (rel[1], rel[2], rel[3])
            qrel = quat_mul(cp0, (q[b, 3], q[b, 4], q[b, 5], q[b, 6]))
            if kind[b] == KIND_DOF:
                a = (axis[b, 0], axis[b, 1], axis[b, 2])
                p = (pivot[b, 0], pivot[b, 1], pivot[b, 2])
                rot = quat_exp_half(a, h * unew[6 + dof[b]])
                rp = (rb[0] - p[0], rb[1] - p[1], rb[2] - p[2])
                t = quat_mul(quat_mul(rot, (0.0, rp[0], rp[1], rp[2])), (rot[0], -rot[1], -rot[2], -rot[3]))
                rb = (p[0] + t[1], p[1] + t[2], p[2] + t[3])
                qrel = quat_mul(rot, qrel)
            else:
                qrel = quat_mul(qrel, quat_exp_half((0.0, 1.0, 0.0), h * spin[b]))
            w = quat_mul(quat_mul(qp1, (0.0, rb[0], rb[1], rb[2])), (qp1[0], -qp1[1], -qp1[2], -qp1[3]))
            qb = quat_mul(qp1, qrel)
            nq = math.sqrt(qb[0] * qb[0] + qb[1] * qb[1] + qb[2] * qb[2] + qb[3] * qb[3])
            qout[b, 0] = qout[pb, 0] + w[1]
            qout[b, 1] = qout[pb, 1] + w[2]
            qout[b, 2] = qout[pb, 2] + w[3]
            for i in range(4):
                qout[b, 3 + i] = qb[i] / nq


@jit
def spins(C, kind, parent, q, v, spin):
    """Spin rate of every spin body about its own y axle relative to its parent, rad/s."""
    for b in range(kind.shape[0]):
        spin[b] = 0.0
        if kind[b] != KIND_SPIN:
            continue
        pb = parent[b]
        # ω̄_b - A_bᵀ A_p ω̄_p, y component: y_b · (ω_b - ω_p) in the world
        qb = (q[b, 3], q[b, 4], q[b, 5], q[b, 6])
        qp = (q[pb, 3], q[pb, 4], q[pb, 5], q[pb, 6])
        wb = quat_mul(quat_mul(qb, (0.0, v[b, 3], v[b, 4], v[b, 5])), (qb[0], -qb[1], -qb[2], -qb[3]))
        wp = quat_mul(quat_mul(qp, (0.0, v[pb, 3], v[pb, 4], v[pb, 5])), (qp[0], -qp[1], -qp[2], -qp[3]))
        yb = quat_mul(quat_mul(qb, (0.0, 0.0, 1.0, 0.0)), (qb[0], -qb[1], -qb[2], -qb[3]))
        spin[b] = yb[1] * (wb[1] - wp[1]) + yb[2] * (wb[2] - wp[2]) + yb[3] * (wb[3] - wp[3])


@jit
def velocities(C, kind, dof, spin, q, R, body_T, body_W, u, vout):
    """Absolute velocities (ṙ world, ω̄ body) of every body from the reduced rates and the spins."""
    for b in range(kind.shape[0]):
        v = (0.0, 0.0, 0.0)
        w = (0.0, 0.0, 0.0)
        for c in range(7):
            if c == 6 and dof[b] < 0:
                continue
            uc = u[c] if c < 6 else u[6 + dof[b]]
            v = (v[0] + body_T[b, 0, c] * uc, v[1] + body_T[b, 1, c] * uc, v[2] + body_T[b, 2, c] * uc)
            w = (w[0] + body_W[b, 0, c] * uc, w[1] + body_W[b, 1, c] * uc, w[2] + body_W[b, 2, c] * uc)
        wb = _mat_tvec(R, b, w)
        vout[b, 0] = v[0]
        vout[b, 1] = v[1]
        vout[b, 2] = v[2]
        vout[b, 3] = wb[0]
        vout[b, 4] = wb[1] + spin[b]
        vout[b, 5] = wb[2]


@jit
def joint_rates(C, kind, dof, axis, R, omega, u):
    """u (hull part set by the caller) completed with the joint rates a·(ω_b - ω_C)."""
    for b in range(kind.shape[0]):
        if kind[b] == KIND_DOF:
            a = _mat_vec(R, C, (axis[b, 0], axis[b, 1], axis[b, 2]))
            u[6 + dof[b]] = _dot(a, (omega[b, 0] - omega[C, 0], omega[b, 1] - omega[C, 1], omega[b, 2] - omega[C, 2]))


@jit
def lu_solve(A, b):
    """Solve A x = b in place (x in b; A overwritten): Gaussian elimination with partial pivoting.

    For the small dense Newton matrix of the step (18 x 18 for the M113):
    no allocation and no BLAS threads (LAPACK through ``np.linalg.solve``
    costs more in call overhead and thread hand-off than the arithmetic).
    Returns False when a pivot is exactly zero (singular matrix).
    """
    n = A.shape[0]
    for k in range(n):
        p = k
        big = abs(A[k, k])
        for i in range(k + 1, n):
            a = abs(A[i, k])
            if a > big:
                big = a
                p = i
        if big == 0.0:
            return False
        if p != k:
            for j in range(n):
                tmp = A[k, j]
                A[k, j] = A[p, j]
                A[p, j] = tmp
            tmp = b[k]
            b[k] = b[p]
            b[p] = tmp
        inv = 1.0 / A[k, k]
        for i in range(k + 1, n):
            f = A[i, k] * inv
            if f == 0.0:
                continue
            A[i, k] = f
            for j in range(k + 1, n):
                A[i, j] -= f * A[k, j]
            b[i] -= f * b[k]
    for i in range(n - 1, -1, -1):
        s = b[i]
        for j in range(i + 1, n):
            s -= A[i, j] * b[j]
        b[i] = s / A[i, i]
    return True


@jit
def step(h, q, v, qout, vout, acc, C, kind, parent, dof, pivot, axis, mass, J_b, gravity,
         rs, ts, spr, throttle, braking, map_w, map_t, brake_torque, drive_out,
         track_on, T, V, P_, buf, work, Qe, Kxe, Kve, on, gmap, wout, sout, hout, tout, flags,
         pos, R, vel, omega, body_T, body_W, spin, u, M, Q, Kx, Dv, A, rhs, g7, g):
    """One linearised implicit Euler step of the tree; returns 0, 1 when the slice buffer overflowed, 3 when
    the Newton matrix is singular."""
    nb_ = q.shape[0]
    n = M.shape[0]
    body_kinematics(q, v, pos[:nb_], R[:nb_], vel[:nb_], omega[:nb_])
    spins(C, kind, parent, q, v, spin)
    bases(C, kind, parent, dof, pivot, axis, pos, R, body_T, body_W)
    u[0] = v[C, 0]
    u[1] = v[C, 1]
    u[2] = v[C, 2]
    u[3] = v[C, 3]
    u[4] = v[C, 4]
    u[5] = v[C, 5]
    joint_rates(C, kind, dof, axis, R, omega, u)
    dynamics(C, kind, parent, dof, pivot, axis, mass, J_b, gravity, pos, R, vel, omega, body_T, body_W, u, M, Q,
             g7, g)
    for i in range(n):
        for j in range(n):
            Kx[i, j] = 0.0
            Dv[i, j] = 0.0
    elements(dof, R, pos, vel, omega, body_T, body_W, rs[0], rs[1], rs[2], rs[3], rs[4], rs[5], rs[6], rs[7],
             rs[8], rs[9], rs[10], rs[11], ts[0], ts[1], ts[2], ts[3], ts[4], ts[5], ts[6], ts[7], ts[8], ts[9],
             Q, Kx, Dv, g)
    drive(C, spr, dof, R, omega, body_W, throttle, braking, map_w, map_t, brake_torque, Q, Dv, g, drive_out)
    if track_on:
        K.evaluate(K.REDUCED, K.STIFF, T, V, P_, pos, R, vel, omega, body_T, body_W, buf, work, Qe, Kxe, Kve, on,
                   wout, sout, hout, tout, flags)
        if flags[1] != 0.0:
            return 1
        K.scatter_reduced(gmap, Qe, Kxe, Kve, on, Q, Kx, Dv)
    # (M - h D - h² K) u⁺ = (M - h D) u + h Q
    for i in range(n):
        s = h * Q[i]
        for j in range(n):
            mhd = M[i, j] - h * Dv[i, j]
            A[i, j] = mhd - h * h * Kx[i, j]
            s += mhd * u[j]
        rhs[i] = s
    if not lu_solve(A, rhs):
        return 3
    unew = rhs  # the caller reads the new rates here (the divergence monitor's work estimate)
    advance(C, kind, parent, dof, pivot, axis, spin, q, unew, h, qout)
    vout[:] = 0.0
    body_kinematics(qout, vout, pos[:nb_], R[:nb_], vel[:nb_], omega[:nb_])  # the new pose's R
    bases(C, kind, parent, dof, pivot, axis, pos, R, body_T, body_W)
    velocities(C, kind, dof, spin, qout, R, body_T, body_W, unew, vout)
    for b in range(nb_):
        for i in range(6):
            acc[b, i] = (vout[b, i] - v[b, i]) / h
    return 0


# --------------------------------------------------------------------------- several steps per call
# pid (13,): see trackdyn.driver._compiled (DRV_* kinds, decide)
# lim (4,): max_speed, max_spin, max_energy_jump, check (1.0: run the divergence checks)


@jit
def _checks(q, v, u, unew, M, Q, h, lim):
    """RealtimeStepper + RealtimeMonitor checks of one step: True if the step passes (see run.RealtimeMonitor)."""
    for b in range(q.shape[0]):
        for i in range(7):
            if not math.isfinite(q[b, i]):
                return False
        for i in range(6):
            if not math.isfinite(v[b, i]):
                return False
    if lim[3] == 0.0:
        return True
    ms2 = lim[0] * lim[0]
    mw2 = lim[1] * lim[1]
    for b in range(v.shape[0]):
        if v[b, 0] * v[b, 0] + v[b, 1] * v[b, 1] + v[b, 2] * v[b, 2] > ms2:
            return False
        if v[b, 3] * v[b, 3] + v[b, 4] * v[b, 4] + v[b, 5] * v[b, 5] > mw2:
            return False
    n = u.shape[0]
    ke_old = 0.0
    ke_new = 0.0
    qu = 0.0
    qn = 0.0
    for i in range(n):
        a = 0.0
        c = 0.0
        for j in range(n):
            a += M[i, j] * u[j]
            c += M[i, j] * unew[j]
        ke_old += u[i] * a
        ke_new += unew[i] * c
        qu += Q[i] * u[i]
        qn += Q[i] * unew[i]
    ke_old *= 0.5
    dE = 0.5 * ke_new - ke_old
    work = h * (abs(qu) + abs(qn))
    if dE > lim[2] * work + 1.0 and dE > 0.1 * ke_old:
        return False
    return True


@jit
def run_steps(nsteps, t0, drv, pid, mem, lim, want_outputs, first_outputs, wsc, ssc, hsc, tsc,
              h, q, v, qout, vout, acc, C, kind, parent, dof, pivot, axis, mass, J_b, gravity,
              rs, ts, spr, throttle, braking, map_w, map_t, brake_torque, drive_out,
              track_on, T, V, P_, buf, work, Qe, Kxe, Kve, on, gmap, wout, sout, hout, tout, flags,
              pos, R, vel, omega, body_T, body_W, spin, u, M, Q, Kx, Dv, A, rhs, g7, g, mem_try):
    """Up to ``nsteps`` steps of :func:`step` with the driver decided in between, in one call.

    ``q``, ``v`` (in/out): the state at ``t0``, advanced in place step by step
    (``acc`` holds the last step's accelerations, ``mem`` the driver's memory).
    A step that fails a check (slice buffer overflow, non-finite state, the
    divergence monitor's limits ``lim``) is *not* taken: the call returns
    ``(code, k)`` with ``k`` the steps done and the state, memory and time
    those before the failing step, so the caller can redo that step on the
    Python path (which grows buffers or raises the monitor's diagnostic);
    code 0: all done; 1: buffer overflow; 2: a check failed. With
    ``want_outputs`` the track's outputs (``wout, sout, hout, tout``) are
    evaluated at the final state (as for recording). With ``first_outputs``
    the first step's evaluation (at ``t0``) leaves its outputs in ``wout,
    sout, hout, tout`` and later steps write theirs into the scratch ``wsc,
    ssc, hsc, tsc``: the outputs of the state at ``t0`` (a recorded sample)
    come without an evaluation of their own.
    """
    t = t0
    nb_ = q.shape[0]
    for k in range(nsteps):
        for i in range(mem.shape[0]):
            mem_try[i] = mem[i]
        decide(drv, pid, t, h, q, v, C, mem_try, throttle, braking)
        wo, so, ho, to = wsc, ssc, hsc, tsc
        if k == 0 and first_outputs:
            wo, so, ho, to = wout, sout, hout, tout
        code = step(h, q, v, qout, vout, acc, C, kind, parent, dof, pivot, axis, mass, J_b, gravity,
                    rs, ts, spr, throttle, braking, map_w, map_t, brake_torque, drive_out,
                    track_on, T, V, P_, buf, work, Qe, Kxe, Kve, on, gmap, wo, so, ho, to, flags,
                    pos, R, vel, omega, body_T, body_W, spin, u, M, Q, Kx, Dv, A, rhs, g7, g)
        if code != 0:
            return (1 if code == 1 else 2), k, t
        if not _checks(qout, vout, u, rhs, M, Q, h, lim):
            return 2, k, t
        for b in range(nb_):
            for i in range(7):
                q[b, i] = qout[b, i]
            for i in range(6):
                v[b, i] = vout[b, i]
        for i in range(mem.shape[0]):
            mem[i] = mem_try[i]
        t = t + h
    if want_outputs and track_on:
        body_kinematics(q, v, pos[:nb_], R[:nb_], vel[:nb_], omega[:nb_])
        bases(C, kind, parent, dof, pivot, axis, pos, R, body_T, body_W)
        K.evaluate(K.REDUCED, K.STIFF, T, V, P_, pos, R, vel, omega, body_T, body_W, buf, work, Qe, Kxe, Kve, on,
                   wout, sout, hout, tout, flags)
        if flags[1] != 0.0:
            return 1, nsteps, t
    return 0, nsteps, t


@jit
def run_samples(nsamp, every, t0, drv, pid, mem, lim, first_outputs, wsc, ssc, hsc, tsc,
                hist_t, hist_q, hist_v, hist_acc, hist_mem, hist_w, hist_s, hist_h, hist_g,
                h, q, v, qout, vout, acc, C, kind, parent, dof, pivot, axis, mass, J_b, gravity,
                rs, ts, spr, throttle, braking, map_w, map_t, brake_torque, drive_out,
                track_on, T, V, P_, buf, work, Qe, Kxe, Kve, on, gmap, wout, sout, hout, tout, flags,
                pos, R, vel, omega, body_T, body_W, spin, u, M, Q, Kx, Dv, A, rhs, g7, g, mem_try):
    """Up to ``nsamp`` output samples of ``every`` steps each in one call: :func:`run_steps` per sample, the
    samples kept in history buffers for the caller to record afterwards.

    Sample ``j`` (its state after ``(j + 1) every`` steps) goes to ``hist_t[j]``, ``hist_q[j]``,
    ``hist_v[j]``, ``hist_acc[j]``, ``hist_mem[j]``; its track outputs come from the first step after it
    (the evaluation that step makes of that very state, as :func:`run_steps`'s ``first_outputs``) into
    ``hist_w[j]``, ``hist_s[j]``, ``hist_h[j]``, ``hist_g[j]`` — for the last sample of the call, from the
    next call. With ``first_outputs`` the first step of this call writes the outputs of the state at ``t0``
    (the previous call's last sample) into ``wout, sout, hout, tout``. ``q``, ``v``, ``acc``, ``mem``
    advance in place as in :func:`run_steps`. Returns ``(code, samples, steps, t)``: ``samples`` complete
    samples in the history, ``steps`` steps taken in all, the state at ``t`` after them; code 0: all done,
    else the next step was refused (1: the slice buffer must grow, 2: a check failed), as :func:`run_steps`.
    """
    t = t0
    steps = 0
    for j in range(nsamp):
        if j == 0:
            wo, so, ho, to = wout, sout, hout, tout
            fo = first_outputs
        else:
            wo, so, ho, to = hist_w[j - 1], hist_s[j - 1], hist_h[j - 1], hist_g[j - 1]
            fo = True
        code, k, t = run_steps(every, t, drv, pid, mem, lim, False, fo, wsc, ssc, hsc, tsc,
                               h, q, v, qout, vout, acc, C, kind, parent, dof, pivot, axis, mass, J_b, gravity,
                               rs, ts, spr, throttle, braking, map_w, map_t, brake_torque, drive_out,
                               track_on, T, V, P_, buf, work, Qe, Kxe, Kve, on, gmap, wo, so, ho, to, flags,
                               pos, R, vel, omega, body_T, body_W, spin, u, M, Q, Kx, Dv, A, rhs, g7, g, mem_try)
        steps += k
        if code != 0:
            return code, j, steps, t
        hist_t[j] = t
        for b in range(q.shape[0]):
            for i in range(7):
                hist_q[j, b, i] = q[b, i]
            for i in range(6):
                hist_v[j, b, i] = v[b, i]
                hist_acc[j, b, i] = acc[b, i]
        for i in range(mem.shape[0]):
            hist_mem[j, i] = mem[i]
    return 0, nsamp, steps, t
