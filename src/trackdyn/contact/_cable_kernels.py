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
    Fb = np.zeros(3)
    sb = np.zeros(3)
    for i in range(3):
        for c in range(3):
            Fb[i] -= R[b, c, i] * F[c]
            sb[i] += R[b, c, i] * rc[c]
    for i in range(3):
        f[b, i] -= F[i]
    f[b, 3] += sb[1] * Fb[2] - sb[2] * Fb[1]
    f[b, 4] += sb[2] * Fb[0] - sb[0] * Fb[2]
    f[b, 5] += sb[0] * Fb[1] - sb[1] * Fb[0]


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

    Sprockets (``sp_body`` (n_s,), ``sp_par`` (n_s, 6): teeth, arc-centre radius, arc radius, phase, half
    width, pin radius; ``sp_law`` (n_s, 4)) act on the points flagged in ``pt_pin`` (the pins) through the
    tooth gaps of :class:`~trackdyn.contact.shapes.Sprocket` (gap k centred at body angle phase + 2πk/n
    from -z towards +x, a concave arc): a pin of radius r inside the nearest gap's arc circle presses on
    it by ``δ = d + r - R_arc`` (d its distance from the arc's centre), the force pushing it back towards
    the centre; the reaction on the sprocket sums into ``sp_force`` (n_s, 3). The tooth tips between the
    gaps are not modelled (a pin leaving its gap meets nothing).
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
                rp = np.array([r0, r1, r2])
                n = rp / d
                # the inner face looks at the wheel: n_in = sign (t x a), n_in . n < 0
                tn = math.sqrt(rx[0] ** 2 + rx[1] ** 2 + rx[2] ** 2)
                nin = np.array([rx[1] * a[2] - rx[2] * a[1], rx[2] * a[0] - rx[0] * a[2],
                                rx[0] * a[1] - rx[1] * a[0]]) * (sign / tn)
                if nin[0] * n[0] + nin[1] * n[1] + nin[2] * n[2] >= 0.0:
                    continue
                delta = reach - d
                xc = pos[bw] + ax * a + reach * n  # the contact point, on the wheel's rim offset by the face
                ow = omega_w[bw]
                rc = xc - pos[bw]
                vw = vel[bw] + np.array([ow[1] * rc[2] - ow[2] * rc[1], ow[2] * rc[0] - ow[0] * rc[2],
                                         ow[0] * rc[1] - ow[1] * rc[0]])
                vr = V - vw
                vn = vr[0] * n[0] + vr[1] * n[1] + vr[2] * n[2]
                k, cdamp, mu, vs = wheel_par[w, 0], wheel_par[w, 1], wheel_par[w, 2], wheel_par[w, 3]
                fn = k * delta - cdamp * vn
                if fn <= 0.0 or hits == wheel_hits.shape[2]:
                    continue
                wheel_hits[e, p, hits] = bw
                vt = vr - vn * n
                s = math.sqrt(vt[0] ** 2 + vt[1] ** 2 + vt[2] ** 2)
                phi, dphis = _tanh_over(s, vs)
                Fw = fn * n - mu * fn * phi * vt
                F += Fw
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
                dP = P - pos[bs]
                pb = np.zeros(3)
                for i in range(3):
                    pb[i] = R[bs, 0, i] * dP[0] + R[bs, 1, i] * dP[1] + R[bs, 2, i] * dP[2]
                if abs(pb[1]) > sp_par[q, 4]:
                    continue
                n_t = sp_par[q, 0]
                pitch = 2.0 * math.pi / n_t
                phi = math.atan2(pb[0], -pb[2])
                kq = round((phi - sp_par[q, 3]) / pitch)
                phik = sp_par[q, 3] + kq * pitch
                cb = np.array([sp_par[q, 1] * math.sin(phik), pb[1], -sp_par[q, 1] * math.cos(phik)])
                C = pos[bs] + R[bs] @ cb
                a = np.array([R[bs, 0, 1], R[bs, 1, 1], R[bs, 2, 1]])
                rp = P - C
                rp = rp - (rp[0] * a[0] + rp[1] * a[1] + rp[2] * a[2]) * a
                d = math.sqrt(rp[0] ** 2 + rp[1] ** 2 + rp[2] ** 2)
                Rarc = sp_par[q, 2]
                delta = d + sp_par[q, 5] - Rarc
                if d >= Rarc or delta <= 0.0 or d < 1e-12:
                    continue
                nF = -rp / d  # the force on the pin, back towards the arc's centre
                xc = C + Rarc * (rp / d)
                ow = omega_w[bs]
                rc = xc - pos[bs]
                vw = vel[bs] + np.array([ow[1] * rc[2] - ow[2] * rc[1], ow[2] * rc[0] - ow[0] * rc[2],
                                         ow[0] * rc[1] - ow[1] * rc[0]])
                vr = V - vw
                vn = vr[0] * nF[0] + vr[1] * nF[1] + vr[2] * nF[2]
                k, cdamp, mu, vs = sp_law[q, 0], sp_law[q, 1], sp_law[q, 2], sp_law[q, 3]
                fn = k * delta - cdamp * vn
                if fn <= 0.0:
                    continue
                wheel_hits[e, p, hits] = bs
                vt = vr - vn * nF
                s_ = math.sqrt(vt[0] ** 2 + vt[1] ** 2 + vt[2] ** 2)
                phi_t, dphis = _tanh_over(s_, vs)
                Fs = fn * nF - mu * fn * phi_t * vt
                F += Fs
                for i in range(3):
                    sp_force[q, i] -= Fs[i]
                    for j in range(3):
                        dij = 1.0 if i == j else 0.0
                        # ∂δ/∂P = -nF as for a wheel; the concave arc turns nF the other way:
                        # -f_n/d (I - n nᵀ - a aᵀ)
                        kx = -k * nF[i] * nF[j] - fn / d * (dij - nF[i] * nF[j] - a[i] * a[j]) \
                            + mu * k * phi_t * vt[i] * nF[j]
                        Kx[i, j] += kx
                        Kw[e, p, hits, i, j] = kx
                        Kv[i, j] += -cdamp * nF[i] * nF[j] - mu * fn * (phi_t * (dij - nF[i] * nF[j])
                                                                       + dphis * vt[i] * vt[j]) \
                            + mu * cdamp * phi_t * vt[i] * nF[j]
                _react(f, R, bs, Fs, rc)
                count += 1
                hits += 1
            # the ground (flat, z = ground_z): the pads look down
            zb = P[2] - bottom
            if zb < ground_z and ground_par[0] > 0.0:
                # n_in . z with a the lateral axis (``lat_axis_b`` in body ``lat_body``'s frame; -1: the world)
                a = np.zeros(3)
                for c in range(3):
                    a[c] = R[lat_body, c, 0] * lat_axis_b[0] + R[lat_body, c, 1] * lat_axis_b[1] \
                        + R[lat_body, c, 2] * lat_axis_b[2]
                nin_z = sign * (rx[0] * a[1] - rx[1] * a[0])
                if nin_z > 0.0:
                    k, cdamp, mu, vs = ground_par[0], ground_par[1], ground_par[2], ground_par[3]
                    fn = k * (ground_z - zb) - cdamp * V[2]
                    if fn > 0.0:
                        vt = np.array([V[0], V[1], 0.0])
                        s = math.sqrt(vt[0] ** 2 + vt[1] ** 2)
                        phi, dphis = _tanh_over(s, vs)
                        Fg = np.array([-mu * fn * phi * vt[0], -mu * fn * phi * vt[1], fn])
                        F += Fg
                        ground_force -= Fg
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
def cable_contact_scatter(elem_body, pt_s, Kpp, n_active, wheel_hits, Kw, vel, cK, cD, slot, data, Dv, Kxv):
    """The contact's Newton-matrix terms: ``s_i s_j ∂F/∂P`` and ``s_i s_j ∂F/∂v_P`` into the element's
    four bodies' translational blocks (``slot`` (n_el, 12, 12), the cable's own coupling), the velocity
    terms' ``Kv v`` into ``Dv``. The wheels' side is left out of the matrix; its position terms go to
    ``Kxv`` (the cable bodies' ``s_i (-∂F/∂P) v_w`` and the wheel's ``-∂F/∂P (v_P - v_w)``) from
    ``wheel_hits`` (n_el, n_pt, n_hit_max) wheel bodies (-1: none), so the linearised right-hand side
    stays exact (ForceContext)."""
    for e in range(elem_body.shape[0]):
        for p in range(pt_s.shape[0]):
            if n_active[e, p] == 0:
                continue
            vP = np.zeros(3)
            for i in range(4):
                for c in range(3):
                    vP[c] += pt_s[p, i] * vel[elem_body[e, i], c]
            for a in range(12):
                ia = a // 3
                for b in range(a, 12):
                    sl = slot[e, a, b]
                    if sl < 0:
                        continue
                    ib = b // 3
                    w = pt_s[p, ia] * pt_s[p, ib]
                    kx = 0.5 * (Kpp[e, p, 0, a % 3, b % 3] + Kpp[e, p, 0, b % 3, a % 3]) * w
                    kv = 0.5 * (Kpp[e, p, 1, a % 3, b % 3] + Kpp[e, p, 1, b % 3, a % 3]) * w
                    data[sl] -= cK * kx + cD * kv
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
