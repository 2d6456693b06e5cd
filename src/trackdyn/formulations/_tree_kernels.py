"""Numba kernels for the recorded outputs of the real-time path (:class:`trackdyn.formulations.tree.TreeSystem`)."""

from __future__ import annotations

import math

import numba as nb

from ..math._kernels import mat_vec, row3, vadd, vcross, vdot, vscale, vsub
from ..mbs._force_kernels import table_eval
from ..mbs._kernels import body_kinematics

jit = nb.njit(cache=True)


@jit
def markers(body, s, pos, R, vel, omega_w, acc, out):
    """Marker position, velocity and acceleration (world) into ``out`` (n, 9).

    As :class:`trackdyn.mbs.markers.MarkerOutputs` (its Python loop with
    ``np.cross`` cost ~120 µs per recorded sample for the M113's markers).
    ``s`` (n, 3) body-frame offsets; ``acc`` (nb, 6) the state's accelerations
    (world linear, body-frame angular): ``a = a_b + α × s + ω × (ω × s)``.
    """
    for k in range(body.shape[0]):
        b = body[k]
        sw = (R[b, 0, 0] * s[k, 0] + R[b, 0, 1] * s[k, 1] + R[b, 0, 2] * s[k, 2],
              R[b, 1, 0] * s[k, 0] + R[b, 1, 1] * s[k, 1] + R[b, 1, 2] * s[k, 2],
              R[b, 2, 0] * s[k, 0] + R[b, 2, 1] * s[k, 1] + R[b, 2, 2] * s[k, 2])
        w = (omega_w[b, 0], omega_w[b, 1], omega_w[b, 2])
        al = (R[b, 0, 0] * acc[b, 3] + R[b, 0, 1] * acc[b, 4] + R[b, 0, 2] * acc[b, 5],
              R[b, 1, 0] * acc[b, 3] + R[b, 1, 1] * acc[b, 4] + R[b, 1, 2] * acc[b, 5],
              R[b, 2, 0] * acc[b, 3] + R[b, 2, 1] * acc[b, 4] + R[b, 2, 2] * acc[b, 5])
        ws = (w[1] * sw[2] - w[2] * sw[1], w[2] * sw[0] - w[0] * sw[2], w[0] * sw[1] - w[1] * sw[0])
        wws = (w[1] * ws[2] - w[2] * ws[1], w[2] * ws[0] - w[0] * ws[2], w[0] * ws[1] - w[1] * ws[0])
        als = (al[1] * sw[2] - al[2] * sw[1], al[2] * sw[0] - al[0] * sw[2], al[0] * sw[1] - al[1] * sw[0])
        for i in range(3):
            out[k, i] = pos[b, i] + sw[i]
            out[k, 3 + i] = vel[b, i] + ws[i]
            out[k, 6 + i] = acc[b, i] + als[i] + wws[i]


@jit
def tsda_outputs(body, s, k, c, l0, f_act, tab_x, tab_y, spring_tab, damper_tab, use_ext, ext_force,
                 pos, R, vel, omega_w, out_force, out_length, out_rate):
    """Tension, length and rate of TSDA elements: the outputs of
    :func:`~trackdyn.mbs._force_kernels.tsda_eval`, by its very expressions (bit-identical), without its
    generalized forces and Jacobians (which recording does not need)."""
    for e in range(body.shape[0]):
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
        else:
            ys, _ = table_eval(tab_x, tab_y, spring_tab[e, 0], spring_tab[e, 1], l)
            yd, _ = table_eval(tab_x, tab_y, damper_tab[e, 0], damper_tab[e, 1], ldot)
            F = k[e] * (l - l0[e]) + c[e] * ldot - f_act[e] + ys + yd
        out_force[e] = F


@jit
def rsda_outputs(body, zi, xi, xj, k, c, theta0, t_act, tab_x, tab_y, spring_tab, damper_tab,
                 R, omega_w, out_torque, out_angle, out_rate):
    """Torque, angle and rate of RSDA elements: the outputs of
    :func:`~trackdyn.mbs._force_kernels.rsda_eval`, by its very expressions (bit-identical), without its
    generalized forces and Jacobians."""
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
        ys, _ = table_eval(tab_x, tab_y, spring_tab[e, 0], spring_tab[e, 1], theta)
        yd, _ = table_eval(tab_x, tab_y, damper_tab[e, 0], damper_tab[e, 1], thd)
        out_torque[e] = k[e] * (theta - theta0[e]) + c[e] * thd - t_act[e] + ys + yd


@jit
def outputs(q, v, acc, q_ext, pos, R, vel, omega_w,
            ts_body, ts_s, ts_k, ts_c, ts_l0, ts_act, ts_tx, ts_ty, ts_stab, ts_dtab, ts_ext, ts_ef,
            ts_force, ts_length, ts_rate,
            rs_body, rs_zi, rs_xi, rs_xj, rs_k, rs_c, rs_th0, rs_act, rs_tx, rs_ty, rs_stab, rs_dtab,
            rs_torque, rs_angle, rs_rate, mk_body, mk_s, mk_out):
    """The recorded outputs of a sample in one call: kinematics, dampers (TSDA), torsion bars (RSDA), markers.

    :func:`~trackdyn.mbs._kernels.body_kinematics` into ``pos, R, vel,
    omega_w`` and ``q`` into ``q_ext``'s body rows (as
    ``AbsoluteSystem.update_kinematics``), then :func:`tsda_outputs`,
    :func:`rsda_outputs` (``ts_*``, ``rs_*``: their blocks' arrays; an empty
    block has no elements) and :func:`markers`: the values of the general
    path (the blocks' ``evaluate``) bit for bit, in one call instead of four
    Python-level ones with their argument gathering, and without the
    elements' Jacobians. The arguments are flat on purpose: Numba unboxes a
    tuple of arrays at about twice the cost of the same arrays passed one by
    one.
    """
    body_kinematics(q, v, pos, R, vel, omega_w)
    for b in range(q.shape[0]):
        for i in range(7):
            q_ext[b, i] = q[b, i]
    tsda_outputs(ts_body, ts_s, ts_k, ts_c, ts_l0, ts_act, ts_tx, ts_ty, ts_stab, ts_dtab, ts_ext, ts_ef,
                 pos, R, vel, omega_w, ts_force, ts_length, ts_rate)
    rsda_outputs(rs_body, rs_zi, rs_xi, rs_xj, rs_k, rs_c, rs_th0, rs_act, rs_tx, rs_ty, rs_stab, rs_dtab,
                 R, omega_w, rs_torque, rs_angle, rs_rate)
    markers(mk_body, mk_s, pos, R, vel, omega_w, acc, mk_out)
