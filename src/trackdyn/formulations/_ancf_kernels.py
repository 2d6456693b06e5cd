"""Numba kernels of the 3-D ANCF cable element (wallin-shabana-2013 §8, eqs. 16-19; Gerstmayr & Shabana 2006).

An element of length l has 12 coordinates ``e = [r(0), r_x(0), r(l), r_x(l)]``
and the cubic Hermite field ``r(x) = S(x) e`` with ``S = [s1 I, s2 I, s3 I,
s4 I]`` (eq. 16). Its elastic energy (eq. 19)

    U = ½ ∫ EA ε² dx + ½ ∫ EI κ² dx,   ε = ½ (r_x·r_x - 1),
    κ² = |r_x × r_xx|² / |r_x|⁶ = (a b - c²) / a³,  a = r_x·r_x, b = r_xx·r_xx, c = r_x·r_xx,

(Green-Lagrange axial strain, the exact curvature of the centre line) is
integrated by Gauss-Legendre quadrature at the points and weights the caller
gives (:data:`trackdyn.formulations.ancf.GAUSS_POINTS`). The kernels return the
elastic force ``Q = -∂U/∂e`` and its Jacobian ``K = ∂Q/∂e`` per element.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

jit = nb.njit(cache=True)


@jit
def hermite(xi, l):
    """Shape functions s1..s4 and their first and second derivatives in x (eq. 16), at ξ = x / l."""
    s = np.empty(4)
    sx = np.empty(4)
    sxx = np.empty(4)
    hermite_into(xi, l, s, sx, sxx)
    return s, sx, sxx


@jit
def hermite_into(xi, l, s, sx, sxx):
    """:func:`hermite` into the caller's buffers (no allocation in the elements' loops)."""
    s[0] = 1.0 - 3.0 * xi**2 + 2.0 * xi**3
    s[1] = l * (xi - 2.0 * xi**2 + xi**3)
    s[2] = 3.0 * xi**2 - 2.0 * xi**3
    s[3] = l * (-xi**2 + xi**3)
    sx[0] = (-6.0 * xi + 6.0 * xi**2) / l
    sx[1] = 1.0 - 4.0 * xi + 3.0 * xi**2
    sx[2] = (6.0 * xi - 6.0 * xi**2) / l
    sx[3] = -2.0 * xi + 3.0 * xi**2
    sxx[0] = (-6.0 + 12.0 * xi) / l**2
    sxx[1] = (-4.0 + 6.0 * xi) / l
    sxx[2] = (6.0 - 12.0 * xi) / l**2
    sxx[3] = (-2.0 + 6.0 * xi) / l


@jit
def cable_elastic(conn, q, length, EA, EI, gauss_x, gauss_w, Qe, Ke, energy, jacobian=True):
    """Elastic force ``Qe[k] = -∂U_k/∂e_k`` (n_el, 12) and Jacobian ``Ke[k] = ∂Qe/∂e`` (n_el, 12, 12) of each
    element k between nodes ``conn[k]`` of the nodal coordinates ``q`` (n_node, 6: r, r_x); the elastic
    energy per element into ``energy``. Gauss points ``gauss_x`` on [0, 1] with weights ``gauss_w`` (sum 1).
    ``jacobian=False``: the forces and energy only (``Ke`` is left as it was).

    With ``g = r_x = Σ_n sx_n e_n`` and ``h = r_xx = Σ_n sxx_n e_n`` (e_n the element's four 3-vectors), a
    coordinate r = 3 n + c enters g and h only through component c: ``∂g/∂e_r = sx_n u_c``,
    ``∂h/∂e_r = sxx_n u_c``, so every term is assembled per (node, component) pair without the 6 x 12 map."""
    n_el = conn.shape[0]
    e = np.empty(12)
    H = np.empty((6, 6))   # Hessian of κ² in (g, h)
    Mg, Mgh, Mh = np.empty((3, 3)), np.empty((3, 3)), np.empty((3, 3))  # the blocks' 3 x 3 matrices
    dk = np.empty(6)       # gradient of κ² in (g, h)
    g = np.empty(3)
    h = np.empty(3)
    s4, sx, sxx = np.empty(4), np.empty(4), np.empty(4)
    for k in range(n_el):
        for side in range(2):
            for a in range(6):
                e[6 * side + a] = q[conn[k, side], a]
        l = length[k]
        for a in range(12):
            Qe[k, a] = 0.0
            if jacobian:
                for b in range(12):
                    Ke[k, a, b] = 0.0
        U = 0.0
        for p in range(gauss_x.shape[0]):
            hermite_into(gauss_x[p], l, s4, sx, sxx)
            w = gauss_w[p] * l
            for c in range(3):
                g[c] = sx[0] * e[c] + sx[1] * e[3 + c] + sx[2] * e[6 + c] + sx[3] * e[9 + c]
                h[c] = sxx[0] * e[c] + sxx[1] * e[3 + c] + sxx[2] * e[6 + c] + sxx[3] * e[9 + c]
            a_ = g[0] * g[0] + g[1] * g[1] + g[2] * g[2]
            b_ = h[0] * h[0] + h[1] * h[1] + h[2] * h[2]
            c_ = g[0] * h[0] + g[1] * h[1] + g[2] * h[2]
            eps = 0.5 * (a_ - 1.0)
            f = a_ * b_ - c_ * c_
            pa = a_**-3
            kappa2 = f * pa
            U += w * (0.5 * EA * eps * eps + 0.5 * EI * kappa2)
            # gradient of κ²: ∂/∂g = (2b g - 2c h) a⁻³ - 6 f a⁻⁴ g ; ∂/∂h = (2a h - 2c g) a⁻³
            for c in range(3):
                dk[c] = (2.0 * b_ * g[c] - 2.0 * c_ * h[c]) * pa - 6.0 * f * pa / a_ * g[c]
                dk[3 + c] = (2.0 * a_ * h[c] - 2.0 * c_ * g[c]) * pa
            if not jacobian:
                for nr in range(4):
                    for cr in range(3):
                        Qe[k, 3 * nr + cr] -= w * (EA * eps * sx[nr] * g[cr]
                                                   + 0.5 * EI * (sx[nr] * dk[cr] + sxx[nr] * dk[3 + cr]))
                continue
            # Hessian of κ² (derivation in the module docstring's terms)
            p6 = -6.0 * pa / a_
            p48 = 48.0 * pa / (a_ * a_)
            for i in range(3):
                fg_i = 2.0 * b_ * g[i] - 2.0 * c_ * h[i]
                pg_i = p6 * g[i]
                for j in range(3):
                    dij = 1.0 if i == j else 0.0
                    fg_j = 2.0 * b_ * g[j] - 2.0 * c_ * h[j]
                    fh_j = 2.0 * a_ * h[j] - 2.0 * c_ * g[j]
                    fgg = 2.0 * b_ * dij - 2.0 * h[i] * h[j]
                    pg_j = p6 * g[j]
                    pgg = p6 * dij + p48 * g[i] * g[j]
                    H[i, j] = fgg * pa + fg_i * pg_j + pg_i * fg_j + f * pgg
                    fgh = 4.0 * g[i] * h[j] - 2.0 * h[i] * g[j] - 2.0 * c_ * dij
                    H[i, 3 + j] = fgh * pa + pg_i * fh_j
                    H[3 + j, i] = H[i, 3 + j]
                    H[3 + i, 3 + j] = (2.0 * a_ * dij - 2.0 * g[i] * g[j]) * pa
            # Q = -∫ [EA ε Bgᵀ g + ½ EI Bᵀ dk] ; K = -∫ [EA (Bgᵀ g gᵀ Bg + ε Bgᵀ Bg) + ½ EI Bᵀ H B]. In blocks of
            # node pairs (n, m): K_nm = Σ_αβ S^α_n S^β_m M^αβ with S^x = sx, S^xx = sxx and the 3 x 3 matrices
            # M^xx = EA (g gᵀ + ε I) + ½ EI H_gg, M^x,xx = ½ EI H_gh, M^xx,x = its transpose, M^xx,xx = ½ EI H_hh
            # (36 products a block instead of the entries' own sums); K is symmetric (H is), so the blocks
            # n <= m are computed and mirrored
            for c in range(3):
                for d in range(3):
                    Mg[c, d] = EA * g[c] * g[d] + 0.5 * EI * H[c, d]
                    Mgh[c, d] = 0.5 * EI * H[c, 3 + d]
                    Mh[c, d] = 0.5 * EI * H[3 + c, 3 + d]
                Mg[c, c] += EA * eps
            for nr in range(4):
                for cr in range(3):
                    Qe[k, 3 * nr + cr] -= w * (EA * eps * sx[nr] * g[cr]
                                               + 0.5 * EI * (sx[nr] * dk[cr] + sxx[nr] * dk[3 + cr]))
            for nr in range(4):
                for ns in range(nr, 4):
                    a1 = w * sx[nr] * sx[ns]
                    a2 = w * sx[nr] * sxx[ns]
                    a3 = w * sxx[nr] * sx[ns]
                    a4 = w * sxx[nr] * sxx[ns]
                    for cr in range(3):
                        for cs in range(3):
                            acc = a1 * Mg[cr, cs] + a2 * Mgh[cr, cs] + a3 * Mgh[cs, cr] + a4 * Mh[cr, cs]
                            Ke[k, 3 * nr + cr, 3 * ns + cs] -= acc
        if jacobian:
            for nr in range(4):
                for ns in range(nr + 1, 4):
                    for cr in range(3):
                        for cs in range(3):
                            Ke[k, 3 * ns + cs, 3 * nr + cr] = Ke[k, 3 * nr + cr, 3 * ns + cs]
        energy[k] = U


@jit
def cable_gather(node_body, grad_body, pos, q):
    """The mesh's nodal coordinates ``q`` (n_node, 6: r, r_x) from the world positions ``pos`` of its point
    bodies (:class:`trackdyn.formulations.ancf.CableForces`: one body carries r, another r_x)."""
    for n in range(node_body.shape[0]):
        for c in range(3):
            q[n, c] = pos[node_body[n], c]
            q[n, 3 + c] = pos[grad_body[n], c]


@jit
def cable_predict(q, qd, h, qp):
    """The predicted coordinates ``qp = q + h qd`` (n_node, 6) of a linearised step's end (:class:`CableForces`)."""
    for n in range(q.shape[0]):
        for a in range(6):
            qp[n, a] = q[n, a] + h * qd[n, a]


@jit
def cable_shift(conn, qd, h, Ke, Qe, theta, Q0):
    """``Qe[k] = θ (Qe[k] - h Ke[k] ė_k) + (1 - θ) Q0[k]``: the elements' forces at a predicted
    position ``q + h qd`` brought back to the step's start along the linearisation the Newton matrix holds
    (``Ke`` is symmetric, the Hessian of the elastic energy: :func:`cable_elastic` mirrors it exactly; ``ė_k`` the element's twelve
    coordinate rates from ``qd``), weighted for the θ-method with the start's own forces ``Q0`` (not read
    when θ = 1)."""
    e = np.empty(12)
    for k in range(conn.shape[0]):
        for side in range(2):
            for a in range(6):
                e[6 * side + a] = qd[conn[k, side], a]
        for a in range(12):
            acc = 0.0
            for b in range(12):  # Ke is symmetric (cable_elastic fills both triangles alike)
                acc += Ke[k, a, b] * e[b]
            if theta == 1.0:
                Qe[k, a] -= h * acc
            else:
                Qe[k, a] = theta * (Qe[k, a] - h * acc) + (1.0 - theta) * Q0[k, a]


@jit
def cable_scatter(elem_body, Qe, Ke, slot, cK, f, data):
    """Add the elements' forces ``Qe`` (n_el, 12) into the bodies' translational rows of ``f`` (nb, 6) and
    ``-cK ∂Q/∂q`` into the Newton matrix values ``data`` through ``slot`` (n_el, 12, 12; upper triangle,
    -1 where no entry; ``data`` of size 0: forces only). Element coordinate a sits on body
    ``elem_body[k, a // 3]``, component ``a % 3``."""
    matrix = data.shape[0] > 0
    for k in range(elem_body.shape[0]):
        for a in range(12):
            f[elem_body[k, a // 3], a % 3] += Qe[k, a]
            if not matrix:
                continue
            for c in range(a, 12):
                sl = slot[k, a, c]
                if sl >= 0:
                    data[sl] -= cK * Ke[k, a, c]  # symmetric (cable_elastic)


@jit
def joint_bending(pairs, q, qd, axis, theta0, k, c, F, K, D, Kv, theta):
    """The pin springs of a pinned chain (:meth:`trackdyn.formulations.ancf.CableMesh.pinned_loop`): between
    the end gradient ``g_i`` of one element and the start gradient ``g_j`` of the next (mesh nodes
    ``pairs[p]``, gradients ``q[:, 3:]``, their rates ``qd``), the relative angle about the unit ``axis``
    (world)

        θ = atan2(s, c),  s = a · (g_i × g_j),  c = g_i · g_j

    (independent of the gradients' stretch), with the energy ½ k (θ - θ0)² and the damping moment c θ̇.
    Per pair: the force ``F`` (n, 6) on ``[g_i, g_j]``, ``K = ∂F/∂x`` without the damping's
    ``-c θ_x (θ_xx v)ᵀ`` (not symmetric: returned as ``Kv`` (n, 6), that term times v, for the right-hand
    side), ``D = ∂F/∂v = -c θ_x θ_xᵀ``, and ``theta`` (n,). The axis is held fixed: exact when the chain
    moves in the plane normal to it."""
    gx = np.empty(6)
    sx = np.empty(6)
    cx = np.empty(6)
    v = np.empty(6)
    H = np.empty((6, 6))
    gi = np.empty(3)
    gj = np.empty(3)
    # [a]x, constant over the pairs
    ax = np.zeros((3, 3))
    ax[0, 1], ax[0, 2], ax[1, 2] = -axis[2], axis[1], -axis[0]
    ax[1, 0], ax[2, 0], ax[2, 1] = axis[2], -axis[1], axis[0]
    for p in range(pairs.shape[0]):
        for r in range(3):  # into the buffers: no allocation per pair
            gi[r] = q[pairs[p, 0], 3 + r]
            gj[r] = q[pairs[p, 1], 3 + r]
        s = axis[0] * (gi[1] * gj[2] - gi[2] * gj[1]) + axis[1] * (gi[2] * gj[0] - gi[0] * gj[2]) \
            + axis[2] * (gi[0] * gj[1] - gi[1] * gj[0])
        cc = gi[0] * gj[0] + gi[1] * gj[1] + gi[2] * gj[2]
        rho = s * s + cc * cc
        th = np.arctan2(s, cc)
        d = th - theta0[p]
        d = (d + np.pi) % (2.0 * np.pi) - np.pi
        theta[p] = th
        # ∂s/∂g_i = g_j × a, ∂s/∂g_j = a × g_i
        sx[0] = gj[1] * axis[2] - gj[2] * axis[1]
        sx[1] = gj[2] * axis[0] - gj[0] * axis[2]
        sx[2] = gj[0] * axis[1] - gj[1] * axis[0]
        sx[3] = axis[1] * gi[2] - axis[2] * gi[1]
        sx[4] = axis[2] * gi[0] - axis[0] * gi[2]
        sx[5] = axis[0] * gi[1] - axis[1] * gi[0]
        for r in range(3):
            cx[r] = gj[r]
            cx[3 + r] = gi[r]
        for r in range(6):
            gx[r] = (cc * sx[r] - s * cx[r]) / rho
        for r in range(3):
            v[r] = qd[pairs[p, 0], 3 + r]
            v[3 + r] = qd[pairs[p, 1], 3 + r]
        rate = 0.0
        for r in range(6):
            rate += gx[r] * v[r]
        # θ_xx = [s_x c_xᵀ... ] : (c_y s_x + c H_s - s_y c_x - s H_c)/ρ - 2 θ_x (s s_y + c c_y)ᵀ/ρ, symmetrised
        for r in range(6):
            for t in range(6):
                H[r, t] = (cx[t] * sx[r] - sx[t] * cx[r]) / rho - 2.0 * gx[r] * (s * sx[t] + cc * cx[t]) / rho
        for r in range(3):
            H[r, 3 + r] -= s / rho
            H[3 + r, r] -= s / rho
        # H_s: ∂²s/∂g_i∂g_jᵀ = -[a]x (s = g_iᵀ (g_j x a) = -g_iᵀ [a]x g_j)
        for r in range(3):
            for t in range(3):
                H[r, 3 + t] -= cc * ax[r, t] / rho
                H[3 + t, r] -= cc * ax[r, t] / rho
        for r in range(6):
            for t in range(r + 1, 6):
                m_ = 0.5 * (H[r, t] + H[t, r])
                H[r, t] = m_
                H[t, r] = m_
        for r in range(6):
            F[p, r] = -(k * d + c * rate) * gx[r]
            for t in range(6):
                K[p, r, t] = -k * (gx[r] * gx[t] + d * H[r, t]) - c * rate * H[r, t]
                D[p, r, t] = -c * gx[r] * gx[t]
            Kv[p, r] = 0.0
        for r in range(6):
            hv = 0.0
            for t in range(6):
                hv += H[t, r] * v[t]
            for t in range(6):
                Kv[p, t] += -c * gx[t] * hv * v[r]


@jit
def pair_scatter(pair_body, F, K, D, Kv, vel, slot, cK, cD, f, data, Dv, Kxv):
    """Add the pin springs' forces ``F`` (n, 6) onto the two gradient bodies ``pair_body`` (n, 2), their
    ``-cK K - cD D`` into ``data`` through ``slot`` (n, 6, 6; upper triangle, -1 where no entry; ``data`` of
    size 0: forces only), ``D v`` into ``Dv`` and ``Kv`` (the position terms out of the matrix, times v)
    into ``Kxv``."""
    matrix = data.shape[0] > 0
    for p in range(pair_body.shape[0]):
        for a in range(6):
            b = pair_body[p, a // 3]
            f[b, a % 3] += F[p, a]
            if not matrix:
                continue
            acc = 0.0
            for t in range(6):
                acc += D[p, a, t] * vel[pair_body[p, t // 3], t % 3]
            Dv[b, a % 3] += acc
            Kxv[b, a % 3] += Kv[p, a]
            for t in range(a, 6):
                sl = slot[p, a, t]
                if sl >= 0:
                    data[sl] -= cK * 0.5 * (K[p, a, t] + K[p, t, a]) + cD * 0.5 * (D[p, a, t] + D[p, t, a])


@jit
def element_dashpot(pairs, q, qd, c, F, D, Kv):
    """A dashpot ``c`` (N s/m) along each element's chord, between its end nodes ``pairs[k]`` (mesh nodes; their
    positions ``q[:, :3]``, rates ``qd[:, :3]``): on the end ``F = -c ė t``, on the start ``+c ė t``, ``ė = (v_b -
    v_a)·t``. ``D = ∂F/∂v`` (n, 6, 6) and, for the right-hand side, ``Kv`` (n, 6) the force's position
    derivative along the velocities (the chord's turn)."""
    t = np.empty(3)
    v = np.empty(3)
    td = np.empty(3)
    for k in range(pairs.shape[0]):
        a, b = pairs[k, 0], pairs[k, 1]
        d0, d1, d2 = q[b, 0] - q[a, 0], q[b, 1] - q[a, 1], q[b, 2] - q[a, 2]
        L = math.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
        for r in range(3):
            t[r] = (q[b, r] - q[a, r]) / L
            v[r] = qd[b, r] - qd[a, r]
        e = v[0] * t[0] + v[1] * t[1] + v[2] * t[2]
        # the chord's turn along v: ṫ = (I - t tᵀ) v / L
        for r in range(3):
            td[r] = (v[r] - e * t[r]) / L
        ed = v[0] * td[0] + v[1] * td[1] + v[2] * td[2]  # ė's change through t
        for r in range(3):
            fb = -c * e * t[r]
            F[k, r] = -fb
            F[k, 3 + r] = fb
            kb = -c * (ed * t[r] + e * td[r])
            Kv[k, r] = -kb
            Kv[k, 3 + r] = kb
            for s in range(3):
                tt = -c * t[r] * t[s]
                D[k, r, s] = tt
                D[k, 3 + r, 3 + s] = tt
                D[k, r, 3 + s] = -tt
                D[k, 3 + r, s] = -tt


@jit
def cable_forces_step(node_body, grad_body, pos, vel, R, conn, length, EA, EI, gauss_x, gauss_w, Qe, Ke, energy,
                      q, qd, qp, h, predict, theta, Q0, K0, elem_body, slot, cK, cD, f, data, Dv, Kxv, grad_gravity,
                      dash_body, axial_c, dF, dK, dD, dKv, dash_slot,
                      joints, lat_index, axis_b, theta0, pin_k, pin_c, jF, jK, jD, jKv, pin_angle, pair_body,
                      pair_slot):
    """One evaluation of :meth:`trackdyn.formulations.ancf.CableForces.accumulate` in one compiled call (the
    per-kernel dispatch and the Python between them cost about a tenth of an APC step): gather the nodal
    coordinates and rates, the elastic forces (about the predicted end ``q + h q̇`` when ``predict``, weighted
    with the start's for the θ-method's ``theta`` < 1), their
    scatter, the gradients' gravity correction, the axial dashpots and the pin springs (about the lateral
    axis ``axis_b``, in the frame of body ``lat_index`` when it is >= 0)."""
    cable_gather(node_body, grad_body, pos, q)
    cable_gather(node_body, grad_body, vel, qd)
    if predict:
        if theta != 1.0:  # the θ-method's (1 - θ) f^l: the forces at the step's start
            cable_elastic(conn, q, length, EA, EI, gauss_x, gauss_w, Q0, K0, energy, False)
        cable_predict(q, qd, h, qp)
        cable_elastic(conn, qp, length, EA, EI, gauss_x, gauss_w, Qe, Ke, energy)
        cable_shift(conn, qd, h, Ke, Qe, theta, Q0)
    else:
        cable_elastic(conn, q, length, EA, EI, gauss_x, gauss_w, Qe, Ke, energy)
    cable_scatter(elem_body, Qe, Ke, slot, cK, f, data)
    for n in range(grad_body.shape[0]):
        for c in range(3):
            f[grad_body[n], c] += grad_gravity[n, c]
    if dF.shape[0] > 0:
        element_dashpot(conn, q, qd, axial_c, dF, dD, dKv)
        pair_scatter(dash_body, dF, dK, dD, dKv, vel, dash_slot, cK, cD, f, data, Dv, Kxv)
    if jF.shape[0] > 0:
        axis = np.empty(3)
        for r in range(3):
            if lat_index < 0:
                axis[r] = axis_b[r]
            else:
                axis[r] = R[lat_index, r, 0] * axis_b[0] + R[lat_index, r, 1] * axis_b[1] \
                    + R[lat_index, r, 2] * axis_b[2]
        joint_bending(joints, q, qd, axis, theta0, pin_k, pin_c, jF, jK, jD, jKv, pin_angle)
        pair_scatter(pair_body, jF, jK, jD, jKv, vel, pair_slot, cK, cD, f, data, Dv, Kxv)

