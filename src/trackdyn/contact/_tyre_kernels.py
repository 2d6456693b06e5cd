"""Numba kernels of the point tyre on a terrain: force and exact Jacobians over a batch of wheels.

The law is the one of :mod:`trackdyn.contact.tyre` (vertical spring-damper, saturating slip law), here on a
terrain given as a level plane plus a piecewise-linear height table along a straight path (a profile
terrain's exact surface; :class:`~trackdyn.contact.tyre.TerrainTyres` builds the table). Per wheel ``e``
(body ``b``, centre at its centre of mass):

    s = (c - o) · u,  h = H(s),  δ = h - (c_z - R)                 path coordinate, road height, deflection
    δ̇ = H'(s) (u · ċ) - ċ_z
    F_z = max(0, k δ + c_t δ̇)  if δ > 0, else 0
    l = (a × e_z)/|a × e_z|,  t = e_z × l                            heading and lateral directions (a: axle)
    Ω = ω · a                                                        spin about the axle
    den = max(|l · ċ|, |Ω| R, v_min)
    σ = (Ω R - l · ċ, -t · ċ) / den                                  slip vector (σ_l is the slip κ)
    (F_l, F_t) = μ F_z g(|σ|) σ,  g(s) = tanh(s / σ_ref) / s
    F = F_l l + F_t t + F_z e_z  at the contact point  c - R e_z

Generalized force on the wheel body and its Jacobians ``∂Q/∂(r, π̄)``, ``∂Q/∂(ṙ, ω̄)`` (exact, except the
road's curvature H'' and the kinks of ``max`` and of the table, where one side's derivative is taken) through
:func:`~trackdyn.mbs._force_kernels.apply_point_force` and ``apply_torque`` with the ground as body i.
"""

from __future__ import annotations

import math

import numba as nb

from ..mbs import _force_kernels as FK

jit = nb.njit(cache=True, _nrt=False)


@nb.njit(cache=True, _nrt=False, inline="always")
def table_height(s, table_s, table_z):
    """Height H(s) and slope H'(s) of a piecewise-linear table, constant beyond its ends."""
    n = table_s.shape[0]
    if s <= table_s[0]:
        return table_z[0], 0.0
    if s >= table_s[n - 1]:
        return table_z[n - 1], 0.0
    lo, hi = 0, n - 1
    while hi - lo > 1:
        m = (lo + hi) // 2
        if table_s[m] <= s:
            lo = m
        else:
            hi = m
    slope = (table_z[hi] - table_z[lo]) / (table_s[hi] - table_s[lo])
    return table_z[lo] + slope * (s - table_s[lo]), slope


@nb.njit(cache=True, _nrt=False, inline="always")
def _g(s, sref):
    """g(s) = tanh(s/sref)/s and g'(s)/s (series below s = 1e-4 sref)."""
    x = s / sref
    if x < 1e-4:
        return (1.0 - x * x / 3.0) / sref, -2.0 / (3.0 * sref ** 3)
    th = math.tanh(x)
    g = th / s
    dg = ((1.0 - th * th) / sref * s - th) / (s * s)
    return g, dg / s


@jit
def tyre_batch(body, R, pos, vel, omega_w, radius, k, c, mu, sref, v_min, origin, u, table_s, table_z,
               Q, Kx, Kv, out, dL, dW, dFx, dFv, dT):
    """Tyre forces of every wheel (module docstring) into Q (n, 12), Kx, Kv (n, 12, 12).

    ``out`` (n, 6) receives F (world, 3), δ, κ (σ_l) and σ_t per wheel; ``dL``, ``dW``, ``dFx``, ``dFv``,
    ``dT`` (3, 12) are scratch.
    """
    for e in range(body.shape[0]):
        for p in range(12):
            Q[e, p] = 0.0
            for q in range(12):
                Kx[e, p, q] = 0.0
                Kv[e, p, q] = 0.0
        for p in range(6):
            out[e, p] = 0.0
        b = body[e]
        cx, cy, cz = pos[b, 0], pos[b, 1], pos[b, 2]
        vx, vy, vz = vel[b, 0], vel[b, 1], vel[b, 2]
        s = (cx - origin[0]) * u[0] + (cy - origin[1]) * u[1]
        h, hs = table_height(s, table_s, table_z)
        delta = h - (cz - radius)
        out[e, 3] = delta
        if delta <= 0.0:
            continue
        ddelta = hs * (u[0] * vx + u[1] * vy) - vz
        fz = k * delta + c * ddelta
        if fz <= 0.0:
            continue
        # local derivatives of everything w.r.t. w = (c 0:3, ċ 3:6, ω 6:9, a 9:12), rows (F_x, F_y, F_z)
        for p in range(3):
            for q in range(12):
                dL[p, q] = 0.0
        dfz = (k * hs * u[0], k * hs * u[1], -k, c * hs * u[0], c * hs * u[1], -c)
        ax, ay, az = R[b, 0, 1], R[b, 1, 1], R[b, 2, 1]
        n = math.sqrt(ax * ax + ay * ay)
        wx, wy, wz = omega_w[b, 0], omega_w[b, 1], omega_w[b, 2]
        lx, ly = ay / n, -ax / n
        tx, ty = ax / n, ay / n
        vl = lx * vx + ly * vy
        spin = ax * wx + ay * wy + az * wz
        ul = vl - radius * spin
        ut = tx * vx + ty * vy
        # d(ul), d(ut), d(den) w.r.t. w (12,)
        dul = dW[0]
        dut = dW[1]
        dden = dW[2]
        for q in range(12):
            dul[q] = 0.0
            dut[q] = 0.0
            dden[q] = 0.0
        dul[3], dul[4] = lx, ly
        dut[3], dut[4] = tx, ty
        # the spin Ω = a · ω: ∂/∂ω = a, ∂/∂a = ω
        dul[6], dul[7], dul[8] = -radius * ax, -radius * ay, -radius * az
        dul[9], dul[10], dul[11] = -radius * wx, -radius * wy, -radius * wz
        # l = (a_y, -a_x)/n, t = (a_x, a_y)/n; ∂n/∂a = (a_x, a_y)/n
        n3 = n * n * n
        dlx = (-ay * ax / n3, 1.0 / n - ay * ay / n3)       # ∂l_x/∂(a_x, a_y)
        dly = (-1.0 / n + ax * ax / n3, ax * ay / n3)       # ∂l_y/∂(a_x, a_y)
        dtx = (1.0 / n - ax * ax / n3, -ax * ay / n3)
        dty = (-ax * ay / n3, 1.0 / n - ay * ay / n3)
        for j in range(2):
            dul[9 + j] += dlx[j] * vx + dly[j] * vy
            dut[9 + j] = dtx[j] * vx + dty[j] * vy
        wr = abs(spin) * radius
        if abs(vl) >= wr and abs(vl) >= v_min:
            den = abs(vl)
            sg = 1.0 if vl >= 0.0 else -1.0
            dden[3], dden[4] = sg * lx, sg * ly
            for j in range(2):
                dden[9 + j] = sg * (dlx[j] * vx + dly[j] * vy)
        elif wr >= v_min:
            den = wr
            sg = radius if spin >= 0.0 else -radius
            dden[6], dden[7], dden[8] = sg * ax, sg * ay, sg * az
            dden[9], dden[10], dden[11] = sg * wx, sg * wy, sg * wz
        else:
            den = v_min
        sl = -ul / den
        st = -ut / den
        smag = math.sqrt(sl * sl + st * st)
        g, dgs = _g(smag, sref)
        fl = mu * fz * g * sl
        ft = mu * fz * g * st
        # ∂(F_l, F_t)/∂σ = μ F_z (g I + (g'/s) σ σᵀ)
        a11 = mu * fz * (g + dgs * sl * sl)
        a12 = mu * fz * dgs * sl * st
        a22 = mu * fz * (g + dgs * st * st)
        for q in range(12):
            dsl = -dul[q] / den + ul / (den * den) * dden[q]
            dst = -dut[q] / den + ut / (den * den) * dden[q]
            dfl = a11 * dsl + a12 * dst
            dft = a12 * dsl + a22 * dst
            if q < 6:  # F_z's own dependence (on c and ċ): F_l, F_t scale with it
                dfl += fl / fz * dfz[q]
                dft += ft / fz * dfz[q]
            dL[0, q] = dfl * lx + dft * tx
            dL[1, q] = dfl * ly + dft * ty
        for q in range(6):
            dL[2, q] = dfz[q]
        for j in range(2):  # the directions l, t turn with the axle
            dL[0, 9 + j] += fl * dlx[j] + ft * dtx[j]
            dL[1, 9 + j] += fl * dly[j] + ft * dty[j]
        F = (fl * lx + ft * tx, fl * ly + ft * ty, fz)
        out[e, 0], out[e, 1], out[e, 2] = F
        out[e, 4], out[e, 5] = sl, st
        # map to the generalized coordinates of the wheel (columns 6..11; 0..5 are the ground's)
        for p in range(3):
            for q in range(12):
                dFx[p, q] = 0.0
                dFv[p, q] = 0.0
        for p in range(3):
            for j in range(3):
                dFx[p, 6 + j] = dL[p, j]
                dFv[p, 6 + j] = dL[p, 3 + j]
                # ω = A ω̄: ∂ω/∂ω̄ = A ; ∂ω/∂π̄ column m = -A (ω̄ × e_m) ; a = A e_y: ∂a/∂π̄ column m = -A (e_y × e_m)
                acc = 0.0
                for i in range(3):
                    acc += dL[p, 6 + i] * R[b, i, j]
                dFv[p, 9 + j] = acc
        wb0 = R[b, 0, 0] * wx + R[b, 1, 0] * wy + R[b, 2, 0] * wz
        wb1 = R[b, 0, 1] * wx + R[b, 1, 1] * wy + R[b, 2, 1] * wz
        wb2 = R[b, 0, 2] * wx + R[b, 1, 2] * wy + R[b, 2, 2] * wz
        for m in range(3):
            # ω̄ × e_m and e_y × e_m in the body frame
            if m == 0:
                cw = (0.0, wb2, -wb1)
                ce = (0.0, 0.0, -1.0)
            elif m == 1:
                cw = (-wb2, 0.0, wb0)
                ce = (0.0, 0.0, 0.0)
            else:
                cw = (wb1, -wb0, 0.0)
                ce = (1.0, 0.0, 0.0)
            dw = (-(R[b, 0, 0] * cw[0] + R[b, 0, 1] * cw[1] + R[b, 0, 2] * cw[2]),
                  -(R[b, 1, 0] * cw[0] + R[b, 1, 1] * cw[1] + R[b, 1, 2] * cw[2]),
                  -(R[b, 2, 0] * cw[0] + R[b, 2, 1] * cw[1] + R[b, 2, 2] * cw[2]))
            da = (-(R[b, 0, 0] * ce[0] + R[b, 0, 1] * ce[1] + R[b, 0, 2] * ce[2]),
                  -(R[b, 1, 0] * ce[0] + R[b, 1, 1] * ce[1] + R[b, 1, 2] * ce[2]),
                  -(R[b, 2, 0] * ce[0] + R[b, 2, 1] * ce[1] + R[b, 2, 2] * ce[2]))
            for p in range(3):
                dFx[p, 9 + m] = (dL[p, 6] * dw[0] + dL[p, 7] * dw[1] + dL[p, 8] * dw[2]
                                 + dL[p, 9] * da[0] + dL[p, 10] * da[1] + dL[p, 11] * da[2])
        FK.apply_point_force(e, F, dFx, dFv, R, -1, b, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), Q, Kx, Kv)
        # the contact point lies R below the centre in the world: torque d × F with d = (0, 0, -R) fixed
        T = (radius * F[1], -radius * F[0], 0.0)
        for q in range(12):
            dT[0, q] = radius * dFx[1, q]
            dT[1, q] = -radius * dFx[0, q]
            dT[2, q] = 0.0
        for p in range(3):
            for q in range(12):
                dL[p, q] = 0.0
        for q in range(12):
            dL[0, q] = radius * dFv[1, q]
            dL[1, q] = -radius * dFv[0, q]
        FK.apply_torque(e, T, dT, dL, R, -1, b, Q, Kx, Kv)
