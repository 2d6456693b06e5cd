"""Numba kernel of the contact of an ANCF cable's points with circles (wheels) and the ground (issue #30).

A contact point of a cable element is ``P = S(ξ) e`` (wallin-shabana-2013 eq. 16) at a fixed ξ, its
gradient ``r_x(ξ) = S_x(ξ) e``; its shoe's inner face (towards the wheels) lies ``top`` along the inner
normal ``n_in = sign · (t × a)`` (t the unit tangent, a the wheel axis), its pad ``bottom`` below it on the
other side. Against a wheel (a circle of radius R about its body's axis a through its centre c) the inner
face touches when the pin line comes within ``R + top`` of the axis (the face's offset curve of the circle):
``δ = R + top - d``, ``d = |(P - c)_⊥a|``, normal ``n = (P - c)_⊥a / d``, gated by the face looking at the
wheel (``n_in · n < 0``). Against the ground (height ``z0``, normal +z): ``δ = z0 - (P_z - bottom)``, gated
by the pads looking down (``n_in · z > 0``). The law is Kelvin-Voigt with tanh friction (han-sander-mao
eq. 28, wallin-shabana Table 2): ``f_n = max(0, k δ + c δ̇)``, ``F_t = -μ f_n tanh(|v_t|/v_s) v_t/|v_t|``.
The force F on P acts on the element's four bodies as ``s_i F`` (``Sᵀ F``), its reaction on the wheel body
at the contact point ``c + (R + top) n`` (plus the axial offset) as a force and a body-frame moment.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

jit = nb.njit(cache=True)


@jit
def _tanh_over(s, vs):
    """φ(s) = tanh(s/vs)/s and φ'(s)/s (finite at s = 0)."""
    x = s / vs
    if x < 1e-3:
        return (1.0 - x * x / 3.0) / vs, (-2.0 / 3.0 + 8.0 * x * x / 15.0) / (vs * vs * vs)
    th = math.tanh(x)
    return th / s, ((1.0 - th * th) / vs * s - th) / (s * s * s)


@jit
def _react(f, R, b, F, rc):
    """The reaction ``-F`` (world) at the world arm ``rc`` from body ``b``'s centre: ``f[b, :3] -= F``, and the
    body-frame moment ``s̄ × (Rᵀ(-F))`` with ``s̄ = Rᵀ rc``."""
    F0 = -(R[b, 0, 0] * F[0] + R[b, 1, 0] * F[1] + R[b, 2, 0] * F[2])
    F1 = -(R[b, 0, 1] * F[0] + R[b, 1, 1] * F[1] + R[b, 2, 1] * F[2])
    F2 = -(R[b, 0, 2] * F[0] + R[b, 1, 2] * F[1] + R[b, 2, 2] * F[2])
    s0 = R[b, 0, 0] * rc[0] + R[b, 1, 0] * rc[1] + R[b, 2, 0] * rc[2]
    s1 = R[b, 0, 1] * rc[0] + R[b, 1, 1] * rc[1] + R[b, 2, 1] * rc[2]
    s2 = R[b, 0, 2] * rc[0] + R[b, 1, 2] * rc[1] + R[b, 2, 2] * rc[2]
    for i in range(3):
        f[b, i] -= F[i]
    f[b, 3] += s1 * F2 - s2 * F1
    f[b, 4] += s2 * F0 - s0 * F2
    f[b, 5] += s0 * F1 - s1 * F0


@jit
def cable_contact(elem_body, pt_s, pt_sx, sign, top, bottom, pos, vel, R, omega_w,
                  wheel_body, wheel_radius, wheel_axis_b, wheel_half, wheel_par, ground_z, ground_par, lat_body,
                  lat_axis_b, f, Kpp, n_active, point_force, wheel_force, ground_force, pt_P, wheel_hits, Kw,
                  pt_pin, sp_body, sp_par, sp_law, sp_force):
    """Contact forces of every element's points (``pt_s``, ``pt_sx``: (n_pt, 4) shape-function weights of
    the element's bodies [node_a, grad_a, node_b, grad_b] for P and r_x) with the wheels and the ground.

    Adds into ``f`` (nb, 6: world force, body-frame moment) and writes, per element and point, the 3 x 3
    ``∂F/∂P`` position block and ``∂F/∂v_P`` velocity block into ``Kpp`` (n_el, n_pt, 2, 3, 3) (the normal
    stiffness with the circle's geometric term, the damping, the friction's Jacobians; the friction's
    dependence on the normal's direction and on the contact point's motion over the wheel is left out), the number
    of active contacts ``n_active`` (n_el, n_pt), the force on P ``point_force`` (n_el, n_pt, 3), and sums
    the reactions per wheel ``wheel_force`` (n_w, 3, world, on the wheel) and on the ground
    ``ground_force`` (3); ``pt_P`` (n_el, n_pt, 3) the points; ``wheel_hits`` (n_el, n_pt, n_hit) the bodies
    of the wheels a point touches (-1 after the last; contacts beyond n_hit are dropped) and ``Kw`` (n_el,
    n_pt, n_hit, 3, 3) each one's ``∂F/∂P`` (for the terms :func:`cable_contact_scatter` leaves out).
    ``wheel_par``/``ground_par``: (k, c, μ, v_s); a ground stiffness of 0: no ground.

    Sprockets (``sp_body`` (n_s,), ``sp_par`` (n_s, 7): teeth, arc-centre radius, arc radius, phase, half
    width, pin radius, tip radius; ``sp_law`` (n_s, 4)) act on the points flagged in ``pt_pin`` (the pins)
    through the tooth gaps of :class:`~trackdyn.contact.shapes.Sprocket` (gap k centred at body angle
    phase + 2πk/n from -z towards +x, a concave arc): a pin of radius r inside the nearest gap's arc circle
    presses on it by ``δ = d + r - R_arc`` (d its distance from the arc's centre), the force pushing it back
    towards the centre; outside it, the tooth tips (the addendum circle, radius R_tip; 0: none) hold the pin
    out, ``δ = R_tip + r - d_c`` (d_c from the sprocket's axis); the reaction on the sprocket sums into
    ``sp_force`` (n_s, 3).
    """
    n_el = elem_body.shape[0]
    n_pt = pt_s.shape[0]
    wheel_force[:] = 0.0
    ground_force[:] = 0.0
    sp_force[:] = 0.0
    P = np.zeros(3)
    V = np.zeros(3)
    rx = np.zeros(3)
    F = np.zeros(3)
    Kx = np.zeros((3, 3))
    Kv = np.zeros((3, 3))
    a = np.zeros(3)
    # the contacts' vectors, reused (no allocation per point or contact)
    n = np.empty(3)
    nF = np.empty(3)
    rc = np.empty(3)
    vr = np.empty(3)
    vt = np.empty(3)
    Fw = np.empty(3)
    pb = np.empty(3)
    C = np.empty(3)
    rp = np.empty(3)
    for e in range(n_el):
        for p in range(n_pt):
            P[:] = 0.0
            V[:] = 0.0
            rx[:] = 0.0
            for i in range(4):
                b = elem_body[e, i]
                for c in range(3):
                    P[c] += pt_s[p, i] * pos[b, c]
                    V[c] += pt_s[p, i] * vel[b, c]
                    rx[c] += pt_sx[p, i] * pos[b, c]
            for c in range(3):
                pt_P[e, p, c] = P[c]
            F[:] = 0.0
            Kx[:] = 0.0
            Kv[:] = 0.0
            count = 0
            hits = 0
            for h in range(wheel_hits.shape[2]):
                wheel_hits[e, p, h] = -1
            # the wheels
            for w in range(wheel_body.shape[0]):
                bw = wheel_body[w]
                # the cheap rejection first, in scalars (no arrays for the wheels out of reach)
                for c in range(3):
                    a[c] = R[bw, c, 0] * wheel_axis_b[w, 0] + R[bw, c, 1] * wheel_axis_b[w, 1] \
                        + R[bw, c, 2] * wheel_axis_b[w, 2]
                d0, d1, d2 = P[0] - pos[bw, 0], P[1] - pos[bw, 1], P[2] - pos[bw, 2]
                ax = d0 * a[0] + d1 * a[1] + d2 * a[2]
                if abs(ax) > wheel_half[w]:
                    continue
                r0, r1, r2 = d0 - ax * a[0], d1 - ax * a[1], d2 - ax * a[2]
                d = math.sqrt(r0 * r0 + r1 * r1 + r2 * r2)
                reach = wheel_radius[w] + top
                if d >= reach or d < 1e-9:
                    continue
                n[0], n[1], n[2] = r0 / d, r1 / d, r2 / d
                # the inner face looks at the wheel: n_in = sign (t x a), n_in . n < 0
                tn = math.sqrt(rx[0] ** 2 + rx[1] ** 2 + rx[2] ** 2)
                st = sign / tn
                nin0 = (rx[1] * a[2] - rx[2] * a[1]) * st
                nin1 = (rx[2] * a[0] - rx[0] * a[2]) * st
                nin2 = (rx[0] * a[1] - rx[1] * a[0]) * st
                if nin0 * n[0] + nin1 * n[1] + nin2 * n[2] >= 0.0:
                    continue
                delta = reach - d
                # the contact point on the wheel's rim (the face touches the rim: the wheel rolls on it at its radius,
                # not at the pin line's offset circle, which would slip by top/R of the speed); rc its arm from the
                # wheel's centre
                for c in range(3):
                    rc[c] = (pos[bw, c] + ax * a[c] + wheel_radius[w] * n[c]) - pos[bw, c]
                ow0, ow1, ow2 = omega_w[bw, 0], omega_w[bw, 1], omega_w[bw, 2]
                vr[0] = V[0] - (vel[bw, 0] + (ow1 * rc[2] - ow2 * rc[1]))
                vr[1] = V[1] - (vel[bw, 1] + (ow2 * rc[0] - ow0 * rc[2]))
                vr[2] = V[2] - (vel[bw, 2] + (ow0 * rc[1] - ow1 * rc[0]))
                vn = vr[0] * n[0] + vr[1] * n[1] + vr[2] * n[2]
                k, cdamp, mu, vs = wheel_par[w, 0], wheel_par[w, 1], wheel_par[w, 2], wheel_par[w, 3]
                fn = k * delta - cdamp * vn
                if fn <= 0.0 or hits == wheel_hits.shape[2]:
                    continue
                wheel_hits[e, p, hits] = bw
                for c in range(3):
                    vt[c] = vr[c] - vn * n[c]
                s = math.sqrt(vt[0] ** 2 + vt[1] ** 2 + vt[2] ** 2)
                phi, dphis = _tanh_over(s, vs)
                for c in range(3):
                    Fw[c] = fn * n[c] - mu * fn * phi * vt[c]
                    F[c] += Fw[c]
                for i in range(3):
                    wheel_force[w, i] -= Fw[i]
                    for j in range(3):
                        dij = 1.0 if i == j else 0.0
                        # ∂(f_n n)/∂P with f_n's stiffness and n's turning about the axis:
                        # -k n nᵀ + f_n/d (I - n nᵀ - a aᵀ)
                        # friction through f_n's stiffness and damping: μ φ v_t (k n)ᵀ and μ φ v_t (c n)ᵀ
                        kx = -k * n[i] * n[j] + fn / d * (dij - n[i] * n[j] - a[i] * a[j]) \
                            + mu * k * phi * vt[i] * n[j]
                        Kx[i, j] += kx
                        Kw[e, p, hits, i, j] = kx
                        pt = dij - n[i] * n[j]
                        Kv[i, j] += -cdamp * n[i] * n[j] - mu * fn * (phi * pt + dphis * vt[i] * vt[j]) \
                            + mu * cdamp * phi * vt[i] * n[j]
                # reaction on the wheel: -Fw at xc; body-frame moment s_b x (Rᵀ(-Fw))
                _react(f, R, bw, Fw, rc)
                count += 1
                hits += 1
            # the sprockets' tooth gaps on the pins
            for q in range(sp_body.shape[0] if pt_pin[p] else 0):
                if hits == wheel_hits.shape[2]:
                    break
                bs = sp_body[q]
                dP0, dP1, dP2 = P[0] - pos[bs, 0], P[1] - pos[bs, 1], P[2] - pos[bs, 2]
                for i in range(3):
                    pb[i] = R[bs, 0, i] * dP0 + R[bs, 1, i] * dP1 + R[bs, 2, i] * dP2
                if abs(pb[1]) > sp_par[q, 4]:
                    continue
                n_t = sp_par[q, 0]
                pitch = 2.0 * math.pi / n_t
                phi = math.atan2(pb[0], -pb[2])
                kq = round((phi - sp_par[q, 3]) / pitch)
                phik = sp_par[q, 3] + kq * pitch
                cb0, cb1, cb2 = sp_par[q, 1] * math.sin(phik), pb[1], -sp_par[q, 1] * math.cos(phik)
                for c in range(3):
                    C[c] = pos[bs, c] + (R[bs, c, 0] * cb0 + R[bs, c, 1] * cb1 + R[bs, c, 2] * cb2)
                    a[c] = R[bs, c, 1]
                for c in range(3):
                    rp[c] = P[c] - C[c]
                ra_ = rp[0] * a[0] + rp[1] * a[1] + rp[2] * a[2]
                for c in range(3):
                    rp[c] = rp[c] - ra_ * a[c]
                d = math.sqrt(rp[0] ** 2 + rp[1] ** 2 + rp[2] ** 2)
                Rarc = sp_par[q, 2]
                if d < Rarc:  # in the gap: the concave arc pushes the pin back towards the arc's centre
                    delta = d + sp_par[q, 5] - Rarc
                    if delta <= 0.0 or d < 1e-12:
                        continue
                    for c in range(3):
                        nF[c] = -rp[c] / d
                        rc[c] = (C[c] + Rarc * (rp[c] / d)) - pos[bs, c]  # the contact point's arm
                    # the gap is the arc's part inside the sprocket (within the tips' circle, or the arcs' centre
                    # circle without tips): beyond it the circle is open air, which a leaving pin must not meet
                    ra_ = rc[0] * a[0] + rc[1] * a[1] + rc[2] * a[2]
                    ra0, ra1, ra2 = rc[0] - ra_ * a[0], rc[1] - ra_ * a[1], rc[2] - ra_ * a[2]
                    lim = sp_par[q, 6] if sp_par[q, 6] > 0.0 else sp_par[q, 1]
                    if ra0 ** 2 + ra1 ** 2 + ra2 ** 2 > lim * lim:
                        continue
                    geo = -1.0 / d  # the concave arc turns nF the other way from a wheel
                else:  # between gaps: the tooth tips (the addendum circle) push the pin outwards
                    Rtip = sp_par[q, 6]
                    for c in range(3):
                        rp[c] = P[c] - pos[bs, c]
                    ra_ = rp[0] * a[0] + rp[1] * a[1] + rp[2] * a[2]
                    for c in range(3):
                        rp[c] = rp[c] - ra_ * a[c]
                    d = math.sqrt(rp[0] ** 2 + rp[1] ** 2 + rp[2] ** 2)
                    delta = Rtip + sp_par[q, 5] - d
                    if Rtip <= 0.0 or delta <= 0.0 or d < 1e-12:
                        continue
                    for c in range(3):
                        nF[c] = rp[c] / d
                        rc[c] = (pos[bs, c] + Rtip * nF[c]) - pos[bs, c]  # the contact point's arm
                    geo = 1.0 / d
                ow0, ow1, ow2 = omega_w[bs, 0], omega_w[bs, 1], omega_w[bs, 2]
                vr[0] = V[0] - (vel[bs, 0] + (ow1 * rc[2] - ow2 * rc[1]))
                vr[1] = V[1] - (vel[bs, 1] + (ow2 * rc[0] - ow0 * rc[2]))
                vr[2] = V[2] - (vel[bs, 2] + (ow0 * rc[1] - ow1 * rc[0]))
                vn = vr[0] * nF[0] + vr[1] * nF[1] + vr[2] * nF[2]
                k, cdamp, mu, vs = sp_law[q, 0], sp_law[q, 1], sp_law[q, 2], sp_law[q, 3]
                fn = k * delta - cdamp * vn
                if fn <= 0.0:
                    continue
                wheel_hits[e, p, hits] = bs
                for c in range(3):
                    vt[c] = vr[c] - vn * nF[c]
                s_ = math.sqrt(vt[0] ** 2 + vt[1] ** 2 + vt[2] ** 2)
                phi_t, dphis = _tanh_over(s_, vs)
                for c in range(3):
                    Fw[c] = fn * nF[c] - mu * fn * phi_t * vt[c]
                    F[c] += Fw[c]
                for i in range(3):
                    sp_force[q, i] -= Fw[i]
                    for j in range(3):
                        dij = 1.0 if i == j else 0.0
                        # ∂δ/∂P = -nF as for a wheel; nF's turn: ± f_n/d (I - n nᵀ - a aᵀ) (geo: + on the
                        # convex tips, - in the concave gap)
                        kx = -k * nF[i] * nF[j] + fn * geo * (dij - nF[i] * nF[j] - a[i] * a[j]) \
                            + mu * k * phi_t * vt[i] * nF[j]
                        Kx[i, j] += kx
                        Kw[e, p, hits, i, j] = kx
                        Kv[i, j] += -cdamp * nF[i] * nF[j] - mu * fn * (phi_t * (dij - nF[i] * nF[j])
                                                                       + dphis * vt[i] * vt[j]) \
                            + mu * cdamp * phi_t * vt[i] * nF[j]
                _react(f, R, bs, Fw, rc)
                count += 1
                hits += 1
            # the ground (flat, z = ground_z): the pads look down
            zb = P[2] - bottom
            if zb < ground_z and ground_par[0] > 0.0:
                # n_in . z with a the lateral axis (``lat_axis_b`` in body ``lat_body``'s frame; -1: the world)
                for c in range(3):
                    a[c] = R[lat_body, c, 0] * lat_axis_b[0] + R[lat_body, c, 1] * lat_axis_b[1] \
                        + R[lat_body, c, 2] * lat_axis_b[2]
                nin_z = sign * (rx[0] * a[1] - rx[1] * a[0])
                if nin_z > 0.0:
                    k, cdamp, mu, vs = ground_par[0], ground_par[1], ground_par[2], ground_par[3]
                    fn = k * (ground_z - zb) - cdamp * V[2]
                    if fn > 0.0:
                        vt[0], vt[1], vt[2] = V[0], V[1], 0.0
                        s = math.sqrt(vt[0] ** 2 + vt[1] ** 2)
                        phi, dphis = _tanh_over(s, vs)
                        Fw[0], Fw[1], Fw[2] = -mu * fn * phi * vt[0], -mu * fn * phi * vt[1], fn
                        for c in range(3):
                            F[c] += Fw[c]
                            ground_force[c] -= Fw[c]
                        Kx[2, 2] += -k
                        Kv[2, 2] += -cdamp
                        for i in range(2):
                            Kx[i, 2] += mu * k * phi * vt[i]
                            Kv[i, 2] += mu * cdamp * phi * vt[i]
                            for j in range(2):
                                dij = 1.0 if i == j else 0.0
                                Kv[i, j] += -mu * fn * (phi * dij + dphis * vt[i] * vt[j])
                        count += 1
            n_active[e, p] = count
            for i in range(3):
                point_force[e, p, i] = F[i]
                for j in range(3):
                    Kpp[e, p, 0, i, j] = Kx[i, j]
                    Kpp[e, p, 1, i, j] = Kv[i, j]
            for i in range(4):
                b = elem_body[e, i]
                for c in range(3):
                    f[b, c] += pt_s[p, i] * F[c]


@jit
def _scatter_weighted(slot_e, w, Kx, Kv, cK, cD, data):
    """Add ``-cK w_i w_j sym(Kx) - cD w_i w_j sym(Kv)`` (a force at a point of shape weights ``w`` (4) on the
    element's four bodies, its 3 x 3 position and velocity Jacobians) into ``data`` through the element's slot
    map ``slot_e`` (12, 12; upper triangle, -1 where no entry)."""
    for a in range(12):
        ia = a // 3
        for b in range(a, 12):
            sl = slot_e[a, b]
            if sl < 0:
                continue
            ww = w[ia] * w[b // 3]
            kx = 0.5 * (Kx[a % 3, b % 3] + Kx[b % 3, a % 3]) * ww
            kv = 0.5 * (Kv[a % 3, b % 3] + Kv[b % 3, a % 3]) * ww
            data[sl] -= cK * kx + cD * kv


@jit
def cable_contact_scatter(elem_body, pt_s, Kpp, n_active, wheel_hits, Kw, vel, cK, cD, slot, data, Dv, Kxv):
    """The contact's Newton-matrix terms: ``s_i s_j ∂F/∂P`` and ``s_i s_j ∂F/∂v_P`` into the element's
    four bodies' translational blocks (``slot`` (n_el, 12, 12), the cable's own coupling), the velocity
    terms' ``Kv v`` into ``Dv``. The wheels' side is left out of the matrix; its position terms go to
    ``Kxv`` (the cable bodies' ``s_i (-∂F/∂P) v_w`` and the wheel's ``-∂F/∂P (v_P - v_w)``) from
    ``wheel_hits`` (n_el, n_pt, n_hit_max) wheel bodies (-1: none), so the linearised right-hand side
    stays exact (ForceContext)."""
    vP = np.empty(3)
    for e in range(elem_body.shape[0]):
        for p in range(pt_s.shape[0]):
            if n_active[e, p] == 0:
                continue
            vP[:] = 0.0
            for i in range(4):
                for c in range(3):
                    vP[c] += pt_s[p, i] * vel[elem_body[e, i], c]
            _scatter_weighted(slot[e], pt_s[p], Kpp[e, p, 0], Kpp[e, p, 1], cK, cD, data)
            for i in range(4):
                bi = elem_body[e, i]
                for r in range(3):
                    acc = 0.0
                    for c in range(3):
                        acc += 0.5 * (Kpp[e, p, 1, r, c] + Kpp[e, p, 1, c, r]) * vP[c]
                    Dv[bi, r] += pt_s[p, i] * acc
            for h in range(wheel_hits.shape[2]):
                bw = wheel_hits[e, p, h]
                if bw < 0:
                    break
                for r in range(3):
                    kvw = 0.0
                    krel = 0.0
                    for c in range(3):
                        kvw += Kw[e, p, h, r, c] * vel[bw, c]
                        krel += Kw[e, p, h, r, c] * (vP[c] - vel[bw, c])
                    for i in range(4):
                        Kxv[elem_body[e, i], r] -= pt_s[p, i] * kvw
                    Kxv[bw, r] -= krel


@jit
def _lateral(R, lat_body, lat_axis_b):
    a = np.zeros(3)
    for c in range(3):
        a[c] = R[lat_body, c, 0] * lat_axis_b[0] + R[lat_body, c, 1] * lat_axis_b[1] + R[lat_body, c, 2] * lat_axis_b[2]
    return a


@jit
def _friction_law(F, Kx, Kv, n, V, fn, k, cdamp, mu, vs):
    """Add the Kelvin-Voigt contact of normal ``n`` (the force's direction on the cable), normal force ``fn``
    and the tanh friction on the relative velocity V (the terrain at rest) to F, and their Jacobians
    (``∂F/∂P`` with ``∂δ/∂P = -n``, ``∂F/∂v``) to Kx, Kv."""
    vn = V[0] * n[0] + V[1] * n[1] + V[2] * n[2]
    vt = np.array([V[0] - vn * n[0], V[1] - vn * n[1], V[2] - vn * n[2]])
    s = math.sqrt(vt[0] ** 2 + vt[1] ** 2 + vt[2] ** 2)
    phi, dphis = _tanh_over(s, vs)
    for i in range(3):
        F[i] += fn * n[i] - mu * fn * phi * vt[i]
        for j in range(3):
            dij = 1.0 if i == j else 0.0
            Kx[i, j] += -k * n[i] * n[j] + mu * k * phi * vt[i] * n[j]
            Kv[i, j] += -cdamp * n[i] * n[j] - mu * fn * (phi * (dij - n[i] * n[j]) + dphis * vt[i] * vt[j]) \
                + mu * cdamp * phi * vt[i] * n[j]


@jit
def _dF_dn(n, V, fn, cdamp, mu, vs):
    """∂F/∂n (3 x 3) of the Kelvin-Voigt force ``F = f_n n - μ f_n φ(|v_t|) v_t`` with ``f_n = k δ - c V·n``
    and ``v_t = V - (V·n) n``, δ held (its dependence on n vanishes at the foot)."""
    vn = V[0] * n[0] + V[1] * n[1] + V[2] * n[2]
    vt = np.array([V[0] - vn * n[0], V[1] - vn * n[1], V[2] - vn * n[2]])
    s = math.sqrt(vt[0] ** 2 + vt[1] ** 2 + vt[2] ** 2)
    phi, dphis = _tanh_over(s, vs)
    D = np.zeros((3, 3))
    for i in range(3):
        for j in range(3):
            dij = 1.0 if i == j else 0.0
            dfn = -cdamp * V[j]  # ∂f_n/∂n_j
            dvt_ij = -vn * dij - n[i] * V[j]  # ∂v_t,i/∂n_j
            D[i, j] = fn * dij + n[i] * dfn - mu * phi * vt[i] * dfn
            for m in range(3):
                dvt_mj = -vn * (1.0 if m == j else 0.0) - n[m] * V[j]
                D[i, j] -= mu * fn * ((phi if m == i else 0.0) + dphis * vt[i] * vt[m]) * dvt_mj
            _ = dvt_ij
    return D


@jit
def _dnin_drx(rx, a, sign):
    """∂n_in/∂r_x (3 x 3) of ``n_in = sign (r_x x a) / |r_x|``."""
    t2 = rx[0] ** 2 + rx[1] ** 2 + rx[2] ** 2
    tn = math.sqrt(t2)
    n = np.array([rx[1] * a[2] - rx[2] * a[1], rx[2] * a[0] - rx[0] * a[2], rx[0] * a[1] - rx[1] * a[0]]) * (sign / tn)
    G = np.zeros((3, 3))
    # ∂(r_x x a)/∂r_x = -[a]x
    G[0, 1], G[0, 2], G[1, 2] = a[2], -a[1], a[0]
    G[1, 0], G[2, 0], G[2, 1] = -a[2], a[1], -a[0]
    for i in range(3):
        for j in range(3):
            G[i, j] = sign * G[i, j] / tn - n[i] * rx[j] / t2
    return G


@jit
def _profile_nearest(qx, qz, px, pz, reach):
    """The nearest point (cx, cz) of the polyline (px, pz) (x non-decreasing, the solid below it) to (qx, qz)
    within ``reach`` of x, its distance, and whether (qx, qz) lies inside the solid (below the polyline's
    highest point at qx)."""
    m = px.shape[0]
    i0 = max(np.searchsorted(px, qx - reach) - 1, 0)
    best, cx, cz = 1e300, qx, qz
    top = -1e300
    i = i0
    while i < m - 1 and px[i] <= qx + reach:
        ax, az, bx, bz = px[i], pz[i], px[i + 1], pz[i + 1]
        dx, dz = bx - ax, bz - az
        L2 = dx * dx + dz * dz
        if L2 > 0.0:
            t = ((qx - ax) * dx + (qz - az) * dz) / L2
            t = min(max(t, 0.0), 1.0)
            x, z = ax + t * dx, az + t * dz
            d = math.hypot(qx - x, qz - z)
            if d < best:
                best, cx, cz = d, x, z
        if dx > 0.0 and ax <= qx <= bx:
            top = max(top, az + (qx - ax) / dx * dz)
        elif dx == 0.0 and qx == ax:
            top = max(top, max(az, bz))
        i += 1
    return cx, cz, best, qz < top


@jit
def _record_contact(nc, e, w, F, Kx, Kv, elem_body, f, ground_force, c_el, c_w, c_K):
    """Contact ``nc`` of element ``e`` at the shape weights ``w`` (4): its force ``F`` on the element's four
    bodies (``w_i F``) and, reacted, on the ground; the element, the weights and the Jacobians kept for
    :func:`cable_weighted_scatter`."""
    c_el[nc] = e
    for i in range(4):
        c_w[nc, i] = w[i]
        b = elem_body[e, i]
        for c in range(3):
            f[b, c] += w[i] * F[c]
    for i in range(3):
        ground_force[i] -= F[i]
        for j in range(3):
            c_K[nc, 0, i, j] = Kx[i, j]
            c_K[nc, 1, i, j] = Kv[i, j]


@jit
def cable_profile_contact(elem_body, length, pt_s, pt_sx, sign, bottom, pos, vel, R, lat_body, lat_axis_b, px, pz,
                          vx, vz, vnx, vnz, law, edge_law, reach, f, ground_force, c_el, c_w, c_K, c_kxv):
    """The cable's pads against a profile terrain (a polyline (px, pz) in the world x-z plane, x
    non-decreasing, the solid below it, extruded along y), with the law ``(k, c, μ, v_s)``:

    - every element's points (``pt_s``, ``pt_sx`` as :func:`cable_contact`'s): the pad point
      ``Q = P - bottom n_in`` inside the solid is pushed out through the nearest surface, ``δ = |Q - C|``,
      gated by the pad facing that surface (``n_in · n > 0``) and ``δ < reach``;
    - every convex vertex ``(vx, vz)`` (outward normal ``(vnx, vnz)``, the mean of its two sides') against each
      element's pad line ``r(ξ) - bottom n_in`` (the chord's inner normal): where the vertex lies on the track's
      side of the pad, ``δ = (V - L(ξ*)) · n_in`` at the foot ξ* in (0, 1), the force ``f_n n_in`` at ξ*, gated by
      the pad facing the vertex (``n_in · n_v > 0``) and ``δ < reach``.

    Forces into ``f`` through the element's four bodies' shape weights, their sum on the ground into
    ``ground_force``; per contact the element ``c_el``, the weights ``c_w`` (4) and ``∂F/∂P``, ``∂F/∂v``
    into ``c_K`` (n_c, 2, 3, 3) for :func:`cable_weighted_scatter`, and the rate of the force's terms left out
    of the matrix (the normal's turn with r_x at an edge, the pad offset's at a point: ``∂F/∂r_x ṙ_x``) into
    ``c_kxv`` (n_c, 4, 3: per body of the element). The vertices' contacts take ``edge_law``. Returns the number
    of contacts."""
    n_el = elem_body.shape[0]
    n_pt = pt_s.shape[0]
    k, cdamp, mu, vs = law[0], law[1], law[2], law[3]
    ke, ce, mue, vse = edge_law[0], edge_law[1], edge_law[2], edge_law[3]
    a = _lateral(R, lat_body, lat_axis_b)
    nc = 0
    F = np.zeros(3)
    Kx = np.zeros((3, 3))
    Kv = np.zeros((3, 3))
    nrm = np.zeros(3)
    V = np.zeros(3)
    rx = np.zeros(3)
    for e in range(n_el):
        na, ga, nb_, gb = elem_body[e, 0], elem_body[e, 1], elem_body[e, 2], elem_body[e, 3]
        for p in range(n_pt):
            P0, P2 = 0.0, 0.0
            for i in range(4):
                b = elem_body[e, i]
                P0 += pt_s[p, i] * pos[b, 0]
                P2 += pt_s[p, i] * pos[b, 2]
            rx[:] = 0.0
            for i in range(4):
                b = elem_body[e, i]
                for c in range(3):
                    rx[c] += pt_sx[p, i] * pos[b, c]
            tn = math.sqrt(rx[0] ** 2 + rx[1] ** 2 + rx[2] ** 2)
            nin_x = sign * (rx[1] * a[2] - rx[2] * a[1]) / tn
            nin_z = sign * (rx[0] * a[1] - rx[1] * a[0]) / tn
            qx, qz = P0 - bottom * nin_x, P2 - bottom * nin_z
            cx, cz, d, inside = _profile_nearest(qx, qz, px, pz, reach)
            if not inside or d >= reach or d < 1e-12:
                continue
            nrm[0], nrm[1], nrm[2] = (cx - qx) / d, 0.0, (cz - qz) / d
            if nin_x * nrm[0] + nin_z * nrm[2] <= 0.0:
                continue
            V[:] = 0.0
            for i in range(4):
                b = elem_body[e, i]
                for c in range(3):
                    V[c] += pt_s[p, i] * vel[b, c]
            vn = V[0] * nrm[0] + V[2] * nrm[2]
            fn = k * d - cdamp * vn
            if fn <= 0.0:
                continue
            F[:] = 0.0
            Kx[:] = 0.0
            Kv[:] = 0.0
            _friction_law(F, Kx, Kv, nrm, V, fn, k, cdamp, mu, vs)
            # the pad offset turns with r_x: ∂δ/∂r_x = bottom nᵀ ∂n_in/∂r_x, ∂F/∂δ = -Kx n (the law's)
            G = _dnin_drx(rx, a, sign)
            rxd = np.zeros(3)
            for i in range(4):
                b = elem_body[e, i]
                for c in range(3):
                    rxd[c] += pt_sx[p, i] * vel[b, c]
            ddel = 0.0
            for i in range(3):
                for j in range(3):
                    ddel += bottom * nrm[i] * G[i, j] * rxd[j]
            for i in range(3):
                dF = -(Kx[i, 0] * nrm[0] + Kx[i, 1] * nrm[1] + Kx[i, 2] * nrm[2]) * ddel
                for m in range(4):
                    c_kxv[nc, m, i] = pt_s[p, m] * dF
            _record_contact(nc, e, pt_s[p], F, Kx, Kv, elem_body, f, ground_force, c_el, c_w, c_K)
            nc += 1
        # the convex vertices against the pad line of this element (straight from pin to pin)
        ax_, az_ = pos[na, 0], pos[na, 2]
        bx_, bz_ = pos[nb_, 0], pos[nb_, 2]
        tx, ty, tz = bx_ - ax_, pos[nb_, 1] - pos[na, 1], bz_ - az_
        L = math.sqrt(tx * tx + ty * ty + tz * tz)
        nin_x = sign * (ty * a[2] - tz * a[1]) / L
        nin_z = sign * (tx * a[1] - ty * a[0]) / L
        lo = min(ax_, bx_) - reach
        hi = max(ax_, bx_) + reach
        j0 = max(np.searchsorted(vx, lo) - 1, 0)
        j = j0
        while j < vx.shape[0] and vx[j] <= hi:
            if vx[j] < lo or nin_x * vnx[j] + nin_z * vnz[j] <= 0.0:
                j += 1
                continue
            # the pad line A + ξ (B - A), A, B the pins offset by -bottom n_in
            Ax, Az = ax_ - bottom * nin_x, az_ - bottom * nin_z
            dx, dz = bx_ - ax_, bz_ - az_
            L2 = dx * dx + dz * dz
            xi = ((vx[j] - Ax) * dx + (vz[j] - Az) * dz) / L2
            if xi <= 0.0 or xi >= 1.0:
                j += 1
                continue
            # at the foot, the pad line of the element's own field: r(ξ) - bottom n_in(r_x(ξ)), so that the force
            # (applied through the same shape weights) has the Jacobian -k w_i w_j n nᵀ to first order
            l = length[e]
            w0 = 1.0 - 3.0 * xi**2 + 2.0 * xi**3
            w1 = l * (xi - 2.0 * xi**2 + xi**3)
            w2 = 3.0 * xi**2 - 2.0 * xi**3
            w3 = l * (xi**3 - xi**2)
            u0 = 6.0 * (xi**2 - xi) / l
            u1 = 1.0 - 4.0 * xi + 3.0 * xi**2
            u2 = 6.0 * (xi - xi**2) / l
            u3 = 3.0 * xi**2 - 2.0 * xi
            rxi = np.zeros(3)
            rfx, rfz = 0.0, 0.0
            for c in range(3):
                rxi[c] = u0 * pos[na, c] + u1 * pos[ga, c] + u2 * pos[nb_, c] + u3 * pos[gb, c]
            rfx = w0 * pos[na, 0] + w1 * pos[ga, 0] + w2 * pos[nb_, 0] + w3 * pos[gb, 0]
            rfz = w0 * pos[na, 2] + w1 * pos[ga, 2] + w2 * pos[nb_, 2] + w3 * pos[gb, 2]
            # the inner normal in the profile's plane: n_in = sign (r_x x a) / |r_x| projected on x-z, unit
            tn = math.sqrt(rxi[0] ** 2 + rxi[1] ** 2 + rxi[2] ** 2)
            ex = sign * (rxi[1] * a[2] - rxi[2] * a[1]) / tn
            ez = sign * (rxi[0] * a[1] - rxi[1] * a[0]) / tn
            pn = math.sqrt(ex * ex + ez * ez)
            ex, ez = ex / pn, ez / pn
            delta = (vx[j] - rfx) * ex + (vz[j] - rfz) * ez + bottom
            if delta <= 0.0 or delta >= reach:
                j += 1
                continue
            for c in range(3):
                V[c] = w0 * vel[na, c] + w1 * vel[ga, c] + w2 * vel[nb_, c] + w3 * vel[gb, c]
            nrm[0], nrm[1], nrm[2] = ex, 0.0, ez
            vn = V[0] * nrm[0] + V[2] * nrm[2]
            fn = ke * delta - ce * vn
            if fn > 0.0:
                F[:] = 0.0
                Kx[:] = 0.0
                Kv[:] = 0.0
                _friction_law(F, Kx, Kv, nrm, V, fn, ke, ce, mue, vse)
                # what the matrix's w_i w_j ∂F/∂P leaves out, as rates along the velocities: the foot's slide
                # ξ̇ (from the chord's foot formula), which moves the force's weights, the point's velocity and
                # r_x(ξ), and the normal n_in(r_x(ξ)) turning with the element (∂F/∂n ṅ, and δ's share
                # t_⊥ · ṅ of the foot's tangential offset t_⊥)
                ta = np.array([tx, ty, tz])
                td = np.array([vel[nb_, 0] - vel[na, 0], vel[nb_, 1] - vel[na, 1], vel[nb_, 2] - vel[na, 2]])
                Gc = _dnin_drx(ta, a, sign)
                ncd = Gc @ td
                Adx, Adz = vel[na, 0] - bottom * ncd[0], vel[na, 2] - bottom * ncd[2]
                xid = (-(Adx * dx + Adz * dz) + (vx[j] - Ax) * td[0] + (vz[j] - Az) * td[2]
                       - 2.0 * xi * (dx * td[0] + dz * td[2])) / L2
                dw0 = (-6.0 * xi + 6.0 * xi**2)
                dw1 = l * (1.0 - 4.0 * xi + 3.0 * xi**2)
                dw2 = (6.0 * xi - 6.0 * xi**2)
                dw3 = l * (3.0 * xi**2 - 2.0 * xi)
                du0, du1, du2, du3 = (12.0 * xi - 6.0) / l, -4.0 + 6.0 * xi, (6.0 - 12.0 * xi) / l, 6.0 * xi - 2.0
                rxd = np.zeros(3)
                Vs = np.zeros(3)
                for c in range(3):
                    rxd[c] = (u0 * vel[na, c] + u1 * vel[ga, c] + u2 * vel[nb_, c] + u3 * vel[gb, c]
                              + xid * (du0 * pos[na, c] + du1 * pos[ga, c] + du2 * pos[nb_, c] + du3 * pos[gb, c]))
                    Vs[c] = dw0 * vel[na, c] + dw1 * vel[ga, c] + dw2 * vel[nb_, c] + dw3 * vel[gb, c]
                G3 = _dnin_drx(rxi, a, sign)
                # ∂n/∂r_x of the projected, renormalised normal: (I - n nᵀ) P G3 / |P n_in|, P = diag(1, 0, 1)
                G = np.zeros((3, 3))
                for r_ in (0, 2):
                    for c in range(3):
                        G[r_, c] = G3[r_, c] / pn
                nvec = np.array([ex, 0.0, ez])
                G = G - np.outer(nvec, nvec @ G)
                nd = G @ rxd
                Dn = _dF_dn(nrm, V, fn, ce, mue, vse)
                # t_⊥: the vertex's offset from the foot r(ξ) - bottom n, less its normal part
                ry = w0 * pos[na, 1] + w1 * pos[ga, 1] + w2 * pos[nb_, 1] + w3 * pos[gb, 1]
                off = np.array([vx[j] - rfx + bottom * ex, 0.0 * ry, vz[j] - rfz + bottom * ez])
                on = off[0] * ex + off[2] * ez
                tperp = np.array([off[0] - on * ex, 0.0, off[2] - on * ez])
                ddel = tperp[0] * nd[0] + tperp[1] * nd[1] + tperp[2] * nd[2]
                ext = np.zeros(3)
                for i in range(3):
                    acc = 0.0
                    for m in range(3):
                        acc += Dn[i, m] * nd[m] + Kv[i, m] * Vs[m] * xid
                    acc -= (Kx[i, 0] * nrm[0] + Kx[i, 1] * nrm[1] + Kx[i, 2] * nrm[2]) * ddel
                    ext[i] = acc
                wts = (w0, w1, w2, w3)
                dws = (dw0, dw1, dw2, dw3)
                for m in range(4):
                    for i in range(3):
                        c_kxv[nc, m, i] = wts[m] * ext[i] + dws[m] * xid * F[i]
                _record_contact(nc, e, np.array([w0, w1, w2, w3]), F, Kx, Kv, elem_body, f, ground_force, c_el,
                                c_w, c_K)
                nc += 1
            j += 1
    return nc


@jit
def cable_weighted_scatter(elem_body, c_el, c_w, c_K, c_kxv, nc, vel, cK, cD, slot, data, Dv, Kxv):
    """The Newton-matrix terms of :func:`cable_profile_contact`'s contacts: ``w_i w_j ∂F/∂P`` and
    ``w_i w_j ∂F/∂v`` (symmetric parts) into the element's blocks, ``w_i (∂F/∂v) v_P`` into ``Dv``, the
    terms left out of the matrix (``c_kxv``, and the non-symmetric parts of ∂F/∂P times v) into ``Kxv``."""
    for q in range(nc):
        e = c_el[q]
        vP = np.zeros(3)
        for i in range(4):
            for c in range(3):
                vP[c] += c_w[q, i] * vel[elem_body[e, i], c]
        _scatter_weighted(slot[e], c_w[q], c_K[q, 0], c_K[q, 1], cK, cD, data)
        for i in range(4):
            bi = elem_body[e, i]
            for r in range(3):
                acc = 0.0
                skew = 0.0
                for c in range(3):
                    acc += 0.5 * (c_K[q, 1, r, c] + c_K[q, 1, c, r]) * vP[c]
                    skew += 0.5 * (c_K[q, 0, r, c] - c_K[q, 0, c, r]) * vP[c]
                Dv[bi, r] += c_w[q, i] * acc
                Kxv[bi, r] += c_kxv[q, i, r] + c_w[q, i] * skew
