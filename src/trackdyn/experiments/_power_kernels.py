"""Numba kernels of the power audit (:mod:`trackdyn.experiments.power`): each term from its element's own law.

- :func:`contact_terms`: per contact class, the power dissipated by the normal
  damping and by the tangential law at a step's new velocities, and the
  elastic energies of the normal law and of the shear spring, from the records
  of the step's contact evaluation (:mod:`trackdyn.contact._kernels`);
- :func:`tsda_rates`, :func:`rsda_rates`: the elements' rates at given
  velocities; :func:`damping_power`: the power dissipated by their damping
  part (``c ẋ + table_d(ẋ)``, times ``ẋ``);
- :func:`spring_energy`, :func:`spring_stiffness`: potential energy and
  stiffness of their spring part (``½ k (x - x0)² - actuation x + ∫ table_s``);
- :func:`applied_work`: the work each element's force did in a linearized
  step, as the step applied it (force, Jacobians and what the step matrix
  holds of them);
- :func:`drive_power`, :func:`step_terms`, :func:`world_velocities`: the
  sprockets' power, the step's kinetic, gyroscopic and constraint terms.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from ..contact._kernels import L_KV, L_WINKLER, P_MU, P_VSLIP, normal_law, record_element
from ..mbs._force_kernels import table_eval
from ..powertrain import sprocket_torque

jit = nb.njit(cache=True, error_model="numpy")

# 8-point Gauss-Legendre on [0, 1]: with s = δ u² the Hertz law's δ^{3/2} and a linear law's δ become
# polynomials in u (integrated exactly); the Winkler disc's segment volume is smooth in u
_x, _w = np.polynomial.legendre.leggauss(8)
GL_U = 0.5 * (_x + 1.0)
GL_W = 0.5 * _w


@jit
def _elastic_energy(law, par, delta, reff, meff, w, area, wtype, rad, gu, gw):
    """``∫₀^δ F_el(s) ds`` of the law's elastic part (its force at δ̇ = 0); Gauss-Legendre in u = √(s/δ)."""
    acc = 0.0
    for k in range(gu.shape[0]):
        u = gu[k]
        s = delta * u * u
        if s <= 0.0:
            continue
        el = normal_law(law, par, s, 0.0, reff, meff, w, area, wtype, rad)[0]
        acc += gw[k] * el * u
    return 2.0 * delta * acc


@jit
def _point_velocity(b, p, pos, R, v):
    """World velocity of body b's material point at p for velocities v (nb + 1, 6; ω̄ in the body frame);
    the ground (b < 0) is at rest."""
    if b < 0:
        return 0.0, 0.0, 0.0
    w0 = R[b, 0, 0] * v[b, 3] + R[b, 0, 1] * v[b, 4] + R[b, 0, 2] * v[b, 5]
    w1 = R[b, 1, 0] * v[b, 3] + R[b, 1, 1] * v[b, 4] + R[b, 1, 2] * v[b, 5]
    w2 = R[b, 2, 0] * v[b, 3] + R[b, 2, 1] * v[b, 4] + R[b, 2, 2] * v[b, 5]
    r0 = p[0] - pos[b, 0]
    r1 = p[1] - pos[b, 1]
    r2 = p[2] - pos[b, 2]
    return v[b, 0] + w1 * r2 - w2 * r1, v[b, 1] + w2 * r0 - w0 * r2, v[b, 2] + w0 * r1 - w1 * r0


@jit
def contact_terms(n, body, pair, reff, weight, area, wtype, ra, key, delta, normal, point, vrel, fn, s_d0, s_kt,
                  s_cap,
                  s_hist, pair_law, pair_par, mass, shape_class, pos, R, v1, h, gu, gw, p_damp, p_tan, u_norm,
                  u_shear):
    """Per contact class, the step's dissipation rates and the elastic energies, from one step's records.

    The records are those of the step's force evaluation at its start (positions ``pos``, ``R``; normal
    force ``fn``, staged shear history ``s_*``); ``v1`` (nb + 1, 6, ground last) are the step's new
    velocities, with which the step moved the positions. Rates (W) per class, zeroed here:

    - ``p_damp``, normal damping, as the linearized step applies it: the law ``F_n = F_el(δ) + c(δ) δ̇`` at
      the step's start plus its derivatives times the step's motion, less the elastic part, times ``δ̇⁺``:
      ``(c(δ) + h c'(δ) δ̇) δ̇⁺²`` (the damping at the step's end penetration); while the law is clamped at
      zero (no force although ``δ > 0``) the elastic energy released without doing work,
      ``-(F_el + ½ F_el' h δ̇⁺) δ̇⁺``;
    - ``p_tan``, minus the power of the tangential law at the new velocity: ``-F_t(v_t⁺) · v_t⁺`` with
      ``F_t = -k_t (P H + h v_t⁺) - g_t v_t⁺`` capped at ``μ F_n`` (history laws), or
      ``-μ F_n tanh(|v_t⁺|/v_s) v̂_t⁺`` (Kelvin-Voigt, Winkler); it includes the rate of the shear
      spring's energy, which ``u_shear`` returns, less the step's own loss in it while the contact sticks,
      ``½ k_t h |v_t⁺|²`` (the spring's force at the step's start plus its stiffness times the step's
      motion stores more than the energy function gains: implicit Euler's potential-side dissipation).

    Energies (J) at the records' state: ``u_norm`` ``∫₀^δ F_el`` (the law at ``δ̇ = 0``), ``u_shear``
    ``½ k_t |P H|²``. ``shape_class`` (n_shapes, n_shapes + 1) maps (probe shape, target) to a class; a
    target beyond the shapes is the terrain (last column).
    """
    for c in range(p_damp.shape[0]):
        p_damp[c] = 0.0
        p_tan[c] = 0.0
        u_norm[c] = 0.0
        u_shear[c] = 0.0
    n_shapes = shape_class.shape[0]
    for r in range(n):
        d = delta[r]
        if d <= 0.0:
            continue
        probe = key[r, 0] >> 16
        target = key[r, 1] >> 32
        if target >= n_shapes:
            target = n_shapes  # the terrain
        c = shape_class[probe, target]
        bA = body[r, 0]
        bB = body[r, 1]
        mA = mass[bA] if bA >= 0 else np.inf
        mB = mass[bB] if bB >= 0 else np.inf
        meff = mB if bA < 0 else (mA if bB < 0 else mA * mB / (mA + mB))
        pr = pair[r]
        law = pair_law[pr]
        par = pair_par[pr]
        p = (point[r, 0], point[r, 1], point[r, 2])
        a0, a1, a2 = _point_velocity(bA, p, pos, R, v1)
        b0, b1, b2 = _point_velocity(bB, p, pos, R, v1)
        vr = (b0 - a0, b1 - a1, b2 - a2)
        nn = (normal[r, 0], normal[r, 1], normal[r, 2])
        vn = nn[0] * vr[0] + nn[1] * vr[1] + nn[2] * vr[2]
        vt = (vr[0] - vn * nn[0], vr[1] - vn * nn[1], vr[2] - vn * nn[2])
        ddot = -vn
        el, el_d, cn, _, _, gt, _ = normal_law(law, par, d, 0.0, reff[r], meff, weight[r], area[r], wtype[r],
                                               ra[r])
        # the damping coefficient's change with δ, times the step's start δ̇ (the law's ∂F_n/∂δ less F_el')
        ddot0 = -(nn[0] * vrel[r, 0] + nn[1] * vrel[r, 1] + nn[2] * vrel[r, 2])
        fn_d = normal_law(law, par, d, ddot0, reff[r], meff, weight[r], area[r], wtype[r], ra[r])[1]
        u_norm[c] += _elastic_energy(law, par, d, reff[r], meff, weight[r], area[r], wtype[r], ra[r], gu, gw)
        if fn[r] <= 0.0:
            p_damp[c] -= (el + 0.5 * el_d * h * ddot) * ddot
            continue
        p_damp[c] += (cn + h * (fn_d - el_d)) * ddot * ddot
        if law == L_KV or law == L_WINKLER:
            s = math.sqrt(vt[0] * vt[0] + vt[1] * vt[1] + vt[2] * vt[2])
            p_tan[c] += par[P_MU] * fn[r] * math.tanh(s / par[P_VSLIP]) * s
            continue
        if not s_hist[r]:
            continue
        kt = s_kt[r]
        T = (-kt * (s_d0[r, 0] + h * vt[0]) - gt * vt[0], -kt * (s_d0[r, 1] + h * vt[1]) - gt * vt[1],
             -kt * (s_d0[r, 2] + h * vt[2]) - gt * vt[2])
        Tn = math.sqrt(T[0] * T[0] + T[1] * T[1] + T[2] * T[2])
        stick = Tn <= s_cap[r]
        g = 1.0 if stick else s_cap[r] / Tn
        p_tan[c] -= g * (T[0] * vt[0] + T[1] * vt[1] + T[2] * vt[2])
        if stick:
            p_tan[c] -= 0.5 * kt * h * (vt[0] * vt[0] + vt[1] * vt[1] + vt[2] * vt[2])
        u_shear[c] += 0.5 * kt * (s_d0[r, 0] ** 2 + s_d0[r, 1] ** 2 + s_d0[r, 2] ** 2)


@jit
def tsda_rates(body, s, pos, R, v1, out):
    """Length rate (m/s) of each TSDA for velocities v1 (nb + 1, 6) at the positions pos, R, into out (n,)."""
    for e in range(body.shape[0]):
        bi = body[e, 0]
        bj = body[e, 1]
        pi = (pos[bi, 0], pos[bi, 1], pos[bi, 2])
        pj = (pos[bj, 0], pos[bj, 1], pos[bj, 2])
        for k in range(3):
            pi = (pi[0] + R[bi, 0, k] * s[e, 0, k], pi[1] + R[bi, 1, k] * s[e, 0, k], pi[2] + R[bi, 2, k] * s[e, 0, k])
            pj = (pj[0] + R[bj, 0, k] * s[e, 1, k], pj[1] + R[bj, 1, k] * s[e, 1, k], pj[2] + R[bj, 2, k] * s[e, 1, k])
        d = (pj[0] - pi[0], pj[1] - pi[1], pj[2] - pi[2])
        ln = math.sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2])
        if ln < 1e-12:
            out[e] = 0.0
            continue
        a0, a1, a2 = _point_velocity(bi, pi, pos, R, v1)
        b0, b1, b2 = _point_velocity(bj, pj, pos, R, v1)
        out[e] = (d[0] * (b0 - a0) + d[1] * (b1 - a1) + d[2] * (b2 - a2)) / ln


@jit
def rsda_rates(body, zi, R, v1, out):
    """Angle rate (rad/s) of each RSDA, ``z · (ω_j - ω_i)`` with ``z = A_i z̄_i``, for velocities v1, into out."""
    for e in range(body.shape[0]):
        bi = body[e, 0]
        bj = body[e, 1]
        acc = 0.0
        for a in range(3):
            z = R[bi, a, 0] * zi[e, 0] + R[bi, a, 1] * zi[e, 1] + R[bi, a, 2] * zi[e, 2]
            wj = R[bj, a, 0] * v1[bj, 3] + R[bj, a, 1] * v1[bj, 4] + R[bj, a, 2] * v1[bj, 5]
            wi = R[bi, a, 0] * v1[bi, 3] + R[bi, a, 1] * v1[bi, 4] + R[bi, a, 2] * v1[bi, 5]
            acc += z * (wj - wi)
        out[e] = acc


@jit
def spring_stiffness(k, tab_x, tab_y, spring_tab, x, out):
    """Stiffness ``k + table_s'(x)`` of each element's spring part at x, into out (n,)."""
    for e in range(x.shape[0]):
        out[e] = k[e] + table_eval(tab_x, tab_y, spring_tab[e, 0], spring_tab[e, 1], x[e])[1]


@jit
def damping_power(c, tab_x, tab_y, damper_tab, rate, out):
    """Power (W) dissipated by each element's damping part at ``rate``, ``(c ẋ + table_d(ẋ)) ẋ``, into out."""
    for e in range(rate.shape[0]):
        yd = table_eval(tab_x, tab_y, damper_tab[e, 0], damper_tab[e, 1], rate[e])[0]
        out[e] = (c[e] * rate[e] + yd) * rate[e]


@jit
def _table_integral(xs, ys, start, count, x):
    """``∫ table(s) ds`` from the table's first abscissa to x, with table_eval's linear extrapolation."""
    if count <= 0:
        return 0.0
    if count == 1:
        return ys[start] * (x - xs[start])
    lo = start
    hi = start + count - 1
    acc = 0.0
    k = lo
    while k < hi - 1 and x >= xs[k + 1]:
        acc += 0.5 * (ys[k] + ys[k + 1]) * (xs[k + 1] - xs[k])
        k += 1
    slope = (ys[k + 1] - ys[k]) / (xs[k + 1] - xs[k])
    dx = x - xs[k]
    return acc + ys[k] * dx + 0.5 * slope * dx * dx


@jit
def spring_energy(k, x0, act, tab_x, tab_y, spring_tab, x, out):
    """Potential energy (J) of each element's spring part at x (length or angle) into out (n,).

    ``½ k (x - x0)² - act x + ∫ table_s`` (the actuation is a constant force or torque: its potential is
    ``-act x``); defined up to a constant per element, so only differences mean something.
    """
    for e in range(x.shape[0]):
        out[e] = (0.5 * k[e] * (x[e] - x0[e]) ** 2 - act[e] * x[e]
                  + _table_integral(tab_x, tab_y, spring_tab[e, 0], spring_tab[e, 1], x[e]))


@jit
def step_terms(mass, inertia, v0, v1, J, row_body, lam, out):
    """The step's kinetic terms into out (3,): ``½ Δvᵀ M Δv``; the rate of the explicit gyroscopic torque
    on the new velocities, ``-ω̄⁺ · (ω̄ × J̄ ω̄)`` (W); and ``λ⁺ · J v⁺`` (W).

    ``v0`` (nb, 6) the step's start velocities, ``v1`` (nb + 1, 6) its new ones with the ground's (zero) last.
    """
    kin = 0.0
    gyro = 0.0
    for b in range(mass.shape[0]):
        d0 = v1[b, 0] - v0[b, 0]
        d1 = v1[b, 1] - v0[b, 1]
        d2 = v1[b, 2] - v0[b, 2]
        kin += 0.5 * mass[b] * (d0 * d0 + d1 * d1 + d2 * d2)
        for i in range(3):
            Jd = 0.0
            for k in range(3):
                Jd += inertia[b, i, k] * (v1[b, 3 + k] - v0[b, 3 + k])
            kin += 0.5 * (v1[b, 3 + i] - v0[b, 3 + i]) * Jd
        w0 = (v0[b, 3], v0[b, 4], v0[b, 5])
        Jw0 = (inertia[b, 0, 0] * w0[0] + inertia[b, 0, 1] * w0[1] + inertia[b, 0, 2] * w0[2],
               inertia[b, 1, 0] * w0[0] + inertia[b, 1, 1] * w0[1] + inertia[b, 1, 2] * w0[2],
               inertia[b, 2, 0] * w0[0] + inertia[b, 2, 1] * w0[1] + inertia[b, 2, 2] * w0[2])
        g0 = w0[1] * Jw0[2] - w0[2] * Jw0[1]
        g1 = w0[2] * Jw0[0] - w0[0] * Jw0[2]
        g2 = w0[0] * Jw0[1] - w0[1] * Jw0[0]
        gyro -= v1[b, 3] * g0 + v1[b, 4] * g1 + v1[b, 5] * g2
    lj = 0.0
    for r in range(J.shape[0]):
        bi = row_body[r, 0]
        bj = row_body[r, 1]
        s = 0.0
        for k in range(6):
            s += J[r, k] * v1[bi, k] + J[r, 6 + k] * v1[bj, k]
        lj += lam[r] * s
    out[0] = kin
    out[1] = gyro
    out[2] = lj


@jit
def world_velocities(R, v1, vel, omega_w):
    """World linear and angular velocities (nb + 1, 3) of the velocities v1 (nb + 1, 6; ω̄ body frame)."""
    for b in range(v1.shape[0]):
        for a in range(3):
            vel[b, a] = v1[b, a]
            omega_w[b, a] = R[b, a, 0] * v1[b, 3] + R[b, a, 1] * v1[b, 4] + R[b, a, 2] * v1[b, 5]


@jit
def applied_work(body, Q, Kx, Kv, slot, h, v0, v1, out):
    """Work (J) each element did on the bodies in a linearized step, into out (n,): ``h v⁺ · Q̃`` with the
    force the step applied, ``Q̃ = Q + h K_in v⁺ + D_in (v⁺ - v) + h K_out v`` (symmetric parts; ``_in``
    the entries held in the step matrix, ``slot >= 0``; ``_out`` the coupling entries left out, whose
    position terms the right-hand side takes at the start velocities and whose velocity terms it drops:
    :func:`trackdyn.mbs._force_kernels.scatter_elements`)."""
    for e in range(body.shape[0]):
        w = 0.0
        for a in range(12):
            ba = body[e, a // 6]
            if ba < 0:
                continue
            ka = a % 6
            f = Q[e, a]
            for c in range(12):
                bc = body[e, c // 6]
                if bc < 0:
                    continue
                kc = c % 6
                lo = a if a < c else c
                hi = c if a < c else a
                kx = 0.5 * (Kx[e, a, c] + Kx[e, c, a])
                kv = 0.5 * (Kv[e, a, c] + Kv[e, c, a])
                if slot[e, lo, hi] >= 0:
                    f += h * kx * v1[bc, kc] + kv * (v1[bc, kc] - v0[bc, kc])
                elif ba != bc:
                    f += h * kx * v0[bc, kc]
            w += h * v1[ba, ka] * f
        out[e] = w


@jit
def drive_power(chassis, sprockets, R, v1, tau, w, throttle, braking, brake_torque, map_w, map_t, map_scale,
                servo_gain, out):
    """Power (W) of each sprocket's drive in a step, into out: the torque the step applied,
    ``τ + ∂τ/∂ω (ω⁺ - ω)``, times ``ω⁺``, the sprocket's angular velocity relative to the chassis about
    the chassis's y axis at the new velocities v1 (body-frame ω̄); ``servo_gain > 0``: a speed servo,
    ``∂τ/∂ω = -K``."""
    c = chassis
    for e in range(sprockets.shape[0]):
        b = sprockets[e]
        w1 = 0.0
        for a in range(3):
            ws = R[b, a, 0] * v1[b, 3] + R[b, a, 1] * v1[b, 4] + R[b, a, 2] * v1[b, 5]
            wc = R[c, a, 0] * v1[c, 3] + R[c, a, 1] * v1[c, 4] + R[c, a, 2] * v1[c, 5]
            w1 += R[c, a, 1] * (ws - wc)
        if servo_gain > 0.0:
            dT = -servo_gain
        else:
            dT = sprocket_torque(w[e], throttle[e], braking[e], brake_torque, map_w, map_t, map_scale)[1]
        out[e] = (tau[e] + dT * (w1 - w[e])) * w1


@jit
def contact_applied_work(n, rec, out, pair_law, pair_par, mass, hist_key, hist_disp, pos, R, vel, omega_w, v0, v1,
                         h, implicit, shape_class, f, w):
    """Work (J) the contact forces did on the bodies in a linearized step, per class into w (zeroed here).

    Each record's force and Jacobians are evaluated again at the step's start exactly as the step did
    (:func:`trackdyn.contact._kernels.record_element` without the explicit friction terms; the same
    inputs give the same outputs), and ``h v⁺ · Q̃`` taken with the force the step applied,
    ``Q̃ = Q + h K_in v⁺ + D_in (v⁺ - v) + h K_out v`` (symmetric parts; a body pair's coupling block is
    in the step matrix when the record has one, ``rec.pslot >= 0``; left-out position terms act with the
    start velocities, left-out velocity terms not at all: :func:`trackdyn.contact._kernels._scatter`);
    explicit contact (``implicit`` False) applies ``Q`` alone. ``f`` (nb, 6) is zero scratch.
    """
    for c in range(w.shape[0]):
        w[c] = 0.0
    Kx = np.zeros((12, 12))
    Kv = np.zeros((12, 12))
    n_shapes = shape_class.shape[0]
    for r in range(n):
        if out.delta[r] <= 0.0:
            continue
        if not record_element(r, rec, out, pair_law, pair_par, mass, hist_key, hist_disp, pos, R, vel, omega_w,
                              v0, h, f, Kx, Kv, False):
            continue
        bA = rec.body[r, 0]
        bB = rec.body[r, 1]
        coupled = rec.pslot[r] >= 0
        probe = rec.key[r, 0] >> 16
        target = rec.key[r, 1] >> 32
        if target >= n_shapes:
            target = n_shapes
        work = 0.0
        for a in range(12):
            ba = bA if a < 6 else bB
            if ba < 0:
                continue
            ka = a % 6
            q = f[ba, ka]
            if implicit:
                for c in range(12):
                    bc = bA if c < 6 else bB
                    if bc < 0:
                        continue
                    kc = c % 6
                    kx = 0.5 * (Kx[a, c] + Kx[c, a])
                    kv = 0.5 * (Kv[a, c] + Kv[c, a])
                    if (a < 6) == (c < 6) or coupled:
                        q += h * kx * v1[bc, kc] + kv * (v1[bc, kc] - v0[bc, kc])
                    else:
                        q += h * kx * v0[bc, kc]
            work += h * v1[ba, ka] * q
        w[shape_class[probe, target]] += work
        for k in range(6):
            if bA >= 0:
                f[bA, k] = 0.0
            if bB >= 0:
                f[bB, k] = 0.0
