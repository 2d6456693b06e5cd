"""Numba kernels of non-smooth contact (NSC): envelope correction, contact frames, cone projection, PSOR.

The narrow phase (:mod:`trackdyn.contact._detect`) reports only penetrating
features. NSC needs contacts *before* they touch (a collision envelope), so
:class:`~trackdyn.contact.nsc.NscContact` runs it on a copy of the shapes
inflated by the envelope ``env`` (radii of spheres, capsules and cylinders
grow by ``env``, box half extents by ``env``, every vertex of a convex
polyhedron moves out by its offset :func:`poly_vertex_offsets`) and :func:`correct_records`
moves every record's features back onto the true shapes: the geometry kernel
(:func:`trackdyn.contact._kernels.contact_geometry`) then gives the true
signed distance, negative ``δ`` being a gap.

Contact frames: row 0 the normal ``n`` (direction in which side B is pushed),
rows 1-2 tangents. The Jacobian of contact ``i`` maps the generalized
velocities of its two bodies ``(ṙ_A, ω̄_A, ṙ_B, ω̄_B)`` (world linear, body
angular) to the velocity of B's material point relative to A's along the
frame: ``u_k = d_k · (v_B + ω_B × r_B - v_A - ω_A × r_A)`` with rows
``±(d_k, R_bᵀ (r_b × d_k))``.

The cone complementarity problem (Anitescu 2006; Tasora & Anitescu 2011) on
impulses ``γ_i = (γ_n, γ_t1, γ_t2)``: ``γ_i ∈ K_i = {|γ_t| ≤ μ_i γ_n}``,
``u_i = (N γ + r)_i ∈ K_i°°`` (the dual cone), ``γ_i · u_i = 0``.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from ..linsolve._ldl_kernels import supernodal_solve_inplace
from ._detect import (
    INV_SQRT3,
    POLY_LINE_KEY,
    S_BOX,
    S_CAPSULE,
    S_CYLINDER,
    S_POLY,
    S_SPHERE,
    S_SPROCKET,
)
from ._kernels import (
    K_DN,
    K_PL,
    K_PN,
    K_PP,
    _find_history,
    contact_geometry,
    witness_point,
)

jit = nb.njit(cache=True, error_model="numpy")


@jit
def correct_records(n, rec, s_type, s_rot, ns, env, bad, s_v0, pv_offset):
    """Move the features of records found on shapes inflated by ``env`` back onto the true shapes.

    Side A of every record is the probe shape (key[0] >> 16), side B the target (key[1] >> 32: a shape index,
    or ``ns + terrain part``). Radii shrink by ``env``; box corners move back by ``env`` along each of their
    axes; box faces (``K_PN``, ``K_DN``) move back by ``env`` along their normal (also a box's or a polyhedron's
    face against a terrain line, ``_box_solid_profile`` and ``_poly_line``, whose station points move back onto
    the true box's Gauss points), box edges (``K_PL``) and
    vertices (``K_PP``) along the axes the feature code names (``_detect._sphere_feature_box``,
    ``_detect._cylinder_box``); a polyhedron's vertex (its probe against a terrain) moves back by its offset
    ``pv_offset[s_v0[s] + vertex]`` (shape frame, :func:`poly_vertex_offsets`). Returns the number
    of records it cannot correct (their index in ``bad``).
    """
    nbad = 0
    for r in range(n):
        sA = rec.key[r, 0] >> 16
        sub = rec.key[r, 0] & 0xFFFF
        tid = rec.key[r, 1] >> 32
        feat = rec.key[r, 1] & 0xFFFFFFFF
        kind = rec.kind[r]
        ok = True
        tA = s_type[sA]
        if tA == S_SPHERE or tA == S_CAPSULE:
            rec.ra[r] -= env
        elif tA == S_CYLINDER:
            if kind == K_DN or kind == K_PL:  # rim on a face or along an edge (a wheel on a box)
                rec.ra[r] -= env
        elif tA == S_BOX and sub >= 40 and sub < 64:
            # a face against a terrain line (_box_solid_profile: 40 + 8 station + 2 face axis + sign; the box is
            # side B): the face point back along its normal, the station back onto the true box's Gauss point
            for k in range(3):
                rec.tb[r, k] -= env * rec.te[r, k]
            st = (-1.0 if (sub - 40) // 8 == 0 else 1.0) * env * INV_SQRT3
            for k in range(3):
                rec.sp[r, k] -= st * rec.sn[r, k]
        elif tA == S_BOX:
            c = sub - 32 if sub >= 32 else sub  # 32 + c: a corner on a wheel's flat side (_cylinder_box)
            if c < 0 or c > 7:
                ok = False
            else:
                for i in range(3):
                    sg = 1.0 if (c >> i) & 1 else -1.0
                    for k in range(3):
                        rec.pa[r, k] -= env * sg * s_rot[sA, k, i]
        elif tA == S_POLY and sub >= POLY_LINE_KEY and sub < 2 * POLY_LINE_KEY:
            # a face against a terrain line (_poly_line; the polyhedron is side B, its face planes grown by env)
            for k in range(3):
                rec.tb[r, k] -= env * rec.te[r, k]
        elif tA == S_POLY and sub < POLY_LINE_KEY:  # a vertex probe (Winkler probes are not NSC's)
            iv = s_v0[sA] + sub
            for k in range(3):
                rec.pa[r, k] -= (s_rot[sA, k, 0] * pv_offset[iv, 0] + s_rot[sA, k, 1] * pv_offset[iv, 1]
                                 + s_rot[sA, k, 2] * pv_offset[iv, 2])
        else:
            ok = False
        if tid < ns:
            tB = s_type[tid]
            if tB == S_SPHERE or tB == S_CAPSULE:
                rec.rb[r] -= env
            elif tB == S_CYLINDER:
                if kind == K_PL or kind == K_PP:
                    rec.rb[r] -= env
            elif tB == S_BOX:
                if kind == K_PN or kind == K_DN:
                    for k in range(3):
                        rec.tb[r, k] -= env * rec.te[r, k]
                elif kind == K_PL and feat < 16:
                    # a wheel's rim along an edge (_cylinder_box): feature 8 + b1 + 2 b2, the edge along the box
                    # axis j that te names, its point at ±h on axes i1 = j+1, i2 = j+2 (signs b1, b2)
                    j = 0
                    best = -1.0
                    for i in range(3):
                        a = abs(s_rot[tid, 0, i] * rec.te[r, 0] + s_rot[tid, 1, i] * rec.te[r, 1]
                                + s_rot[tid, 2, i] * rec.te[r, 2])
                        if a > best:
                            best = a
                            j = i
                    bits = feat - 8
                    for q in range(2):
                        i = (j + 1 + q) % 3
                        sg = 1.0 if (bits >> q) & 1 else -1.0
                        for k in range(3):
                            rec.tb[r, k] -= env * sg * s_rot[tid, k, i]
                elif kind == K_PL or kind == K_PP:
                    if kind == K_PL:
                        code = feat - 16
                        bits = code // 4
                        free = code % 4
                    else:
                        bits = feat - 64
                        free = 3
                    for i in range(3):
                        if i == free:
                            continue
                        sg = 1.0 if (bits >> i) & 1 else -1.0
                        for k in range(3):
                            rec.tb[r, k] -= env * sg * s_rot[tid, k, i]
                else:
                    ok = False
            elif tB != S_SPROCKET:  # a sprocket is not inflated: its pins' and guides' radii carry the envelope
                ok = False
        if not ok:
            if nbad < bad.shape[0]:
                bad[nbad] = r
            nbad += 1
    return nbad


def poly_vertex_offsets(vertices, face_normal, face_vertices, env):
    """Outward offsets (nv, 3) of a convex polyhedron's vertices for an envelope ``env`` (shape frame).

    The offset ``o`` of vertex ``v`` satisfies ``o . n_f >= env`` for every face ``f`` at ``v``. A plane
    (or any support direction) for which ``v`` is the lowest point has its unit normal ``n`` in ``v``'s normal
    cone, ``n = Σ α_f n_f`` with ``α_f >= 0`` and ``Σ α_f >= 1``, so ``o . n >= env``: the moved vertex
    reaches at least ``env`` further towards the plane, and a vertex within ``env`` of it is found. ``o`` is
    the mean of the faces' normals, scaled so that its smallest projection is ``env``. Plain Python (build
    time).
    """
    vertices = np.asarray(vertices, float)
    out = np.zeros_like(vertices)
    for v in range(len(vertices)):
        normals = np.array([face_normal[f] for f, poly in enumerate(face_vertices) if v in list(poly)])
        if len(normals) == 0:  # not on the hull: never the lowest point, its records are exact as they are
            continue
        u = normals.sum(axis=0)
        u /= np.linalg.norm(u)
        low = float(np.min(normals @ u))
        if low < 0.05:
            raise ValueError(f"ConvexPolyhedron: vertex {v} is too sharp for the NSC envelope (its faces' mean "
                             f"normal makes {math.degrees(math.acos(low)):.1f} deg with one of them)")
        out[v] = env / low * u
    return out


@nb.njit(cache=True, inline="always")
def _tangents(n):
    """Two unit vectors completing n into a right-handed orthonormal frame."""
    ax = abs(n[0])
    ay = abs(n[1])
    az = abs(n[2])
    if ax <= ay and ax <= az:
        a = (1.0, 0.0, 0.0)
    elif ay <= az:
        a = (0.0, 1.0, 0.0)
    else:
        a = (0.0, 0.0, 1.0)
    t1 = (n[1] * a[2] - n[2] * a[1], n[2] * a[0] - n[0] * a[2], n[0] * a[1] - n[1] * a[0])
    L = math.sqrt(t1[0] * t1[0] + t1[1] * t1[1] + t1[2] * t1[2])
    t1 = (t1[0] / L, t1[1] / L, t1[2] / L)
    t2 = (n[1] * t1[2] - n[2] * t1[1], n[2] * t1[0] - n[0] * t1[2], n[0] * t1[1] - n[1] * t1[0])
    return t1, t2


@nb.njit(cache=True, inline="always")
def _torque_block(m, i, kind, key_bit, coef, n_rows, bA, bB, R, c_body, c_frame, c_point, c_phi, c_mu, c_e, c_un, c_D,
                  c_key, c_kind, c_parent, c_roll):
    """Block ``m`` of kind ``kind`` (1 rolling, 2 spinning) after contact ``i``: its frame, point and gap, its key
    (``i``'s with bit ``key_bit`` set), its coefficient ``coef`` (``c_roll``), and Jacobian rows on the relative
    angular velocity along the first ``n_rows`` directions of the frame (the others empty)."""
    c_body[m, 0] = bA
    c_body[m, 1] = bB
    for d in range(3):
        for k in range(3):
            c_frame[m, d, k] = c_frame[i, d, k]
        for j in range(12):
            c_D[m, d, j] = 0.0
    for k in range(3):
        c_point[m, k] = c_point[i, k]
    c_phi[m] = c_phi[i]
    c_mu[m] = 0.0
    c_e[m] = 0.0
    c_un[m] = 0.0
    c_key[m, 0] = c_key[i, 0] | (np.int64(1) << key_bit)
    c_key[m, 1] = c_key[i, 1]
    c_kind[m] = kind
    c_parent[m] = i
    c_roll[m] = coef
    for side in range(2):
        b = bA if side == 0 else bB
        if b < 0:
            continue
        sg = -1.0 if side == 0 else 1.0
        for d in range(n_rows):
            for k in range(3):
                c_D[m, d, 6 * side + 3 + k] = sg * (R[b, 0, k] * c_frame[i, d, 0] + R[b, 1, k] * c_frame[i, d, 1]
                                                    + R[b, 2, k] * c_frame[i, d, 2])


@jit
def contact_frames(n, rec, pos, R, vel, omega_w, pair_mu, pair_e, pair_roll, pair_spin, keep_gap, c_body, c_frame,
                   c_point, c_phi, c_mu, c_e, c_un, c_D, c_key, c_kind, c_parent, c_roll, S):
    """Frames, gaps and Jacobian rows of the corrected records whose gap is below ``keep_gap``; returns
    their count of blocks (the arrays need room for 3n).

    ``c_frame[i]`` rows (n, t1, t2), world; ``c_phi`` the signed distance (m, negative: penetration);
    ``c_un`` the normal relative velocity at the step's start (m/s); ``c_D[i, k]`` the 12 Jacobian entries
    of direction k on ``(ṙ_A, ω̄_A, ṙ_B, ω̄_B)`` (a ground side's stay zero). ``S`` scratch (10, 3, 12).
    A contact of a pair with rolling friction (``pair_roll > 0``, m) is followed by a rolling block
    (``c_kind`` 1, ``c_parent`` its contact): torque impulses about (n, t1, t2) on the relative angular
    velocity ``ω_B - ω_A``, spin held at zero torque, rolling torque in the disc ``c_roll γ_n`` (the
    stepper sets the radius ``c_mu`` from the contact's normal impulse). A contact of a pair with spinning
    friction (``pair_spin > 0``, m) is followed by a spinning block (``c_kind`` 2, ``c_roll`` the coefficient
    ``c_s``): its first row the relative angular velocity about n, its torque impulse in ``[-c_s γ_n, c_s γ_n]``,
    its other two rows empty (their impulses stay zero).
    """
    m = 0
    cx = S[0]
    t1s = S[1]
    t2s = S[2]
    t3s = S[3]
    nx = S[4]
    px = S[5]
    vx = S[6]
    dx = S[8, 0]
    for r in range(n):
        bA = rec.body[r, 0]
        bB = rec.body[r, 1]
        c = witness_point(rec.pmode[r], bA, bB, rec.lside[r], (rec.pa[r, 0], rec.pa[r, 1], rec.pa[r, 2]),
                          (rec.da[r, 0], rec.da[r, 1], rec.da[r, 2]), (rec.sp[r, 0], rec.sp[r, 1], rec.sp[r, 2]),
                          (rec.sn[r, 0], rec.sn[r, 1], rec.sn[r, 2]), pos, R, cx, t1s, t2s, t3s, vx, 0, 0, False)
        delta, nrm, p = contact_geometry(rec.kind[r], rec.conc[r], bA, bB, c, cx, rec.ra[r], rec.rb[r],
                                         (rec.tb[r, 0], rec.tb[r, 1], rec.tb[r, 2]),
                                         (rec.te[r, 0], rec.te[r, 1], rec.te[r, 2]),
                                         (rec.da[r, 0], rec.da[r, 1], rec.da[r, 2]), pos, R, dx, nx, px, t1s, t2s,
                                         t3s, 0, 0, False)
        phi = -delta
        if phi > keep_gap or math.isnan(phi):
            continue
        t1, t2 = _tangents(nrm)
        c_body[m, 0] = bA
        c_body[m, 1] = bB
        for k in range(3):
            c_frame[m, 0, k] = nrm[k]
            c_frame[m, 1, k] = t1[k]
            c_frame[m, 2, k] = t2[k]
            c_point[m, k] = p[k]
        c_phi[m] = phi
        pr = rec.pair[r]
        c_mu[m] = pair_mu[pr]
        c_e[m] = pair_e[pr]
        c_key[m, 0] = rec.key[r, 0]
        c_key[m, 1] = rec.key[r, 1]
        un = 0.0
        for d in range(3):
            for j in range(12):
                c_D[m, d, j] = 0.0
        for side in range(2):
            b = bA if side == 0 else bB
            if b < 0:
                continue
            sg = -1.0 if side == 0 else 1.0
            o = 6 * side
            rx = p[0] - pos[b, 0]
            ry = p[1] - pos[b, 1]
            rz = p[2] - pos[b, 2]
            # velocity of the material point at p
            wx = omega_w[b, 0]
            wy = omega_w[b, 1]
            wz = omega_w[b, 2]
            vp = (vel[b, 0] + wy * rz - wz * ry, vel[b, 1] + wz * rx - wx * rz, vel[b, 2] + wx * ry - wy * rx)
            un += sg * (nrm[0] * vp[0] + nrm[1] * vp[1] + nrm[2] * vp[2])
            for d in range(3):
                e0 = c_frame[m, d, 0]
                e1 = c_frame[m, d, 1]
                e2 = c_frame[m, d, 2]
                cr = (ry * e2 - rz * e1, rz * e0 - rx * e2, rx * e1 - ry * e0)
                for k in range(3):
                    c_D[m, d, o + k] = sg * c_frame[m, d, k]
                    c_D[m, d, o + 3 + k] = sg * (R[b, 0, k] * cr[0] + R[b, 1, k] * cr[1] + R[b, 2, k] * cr[2])
        c_un[m] = un
        c_kind[m] = 0
        c_parent[m] = m
        c_roll[m] = 0.0
        m += 1
        i = m - 1
        if pair_roll[pr] > 0.0:  # its rolling block: torque impulses about (n, t1, t2)
            _torque_block(m, i, 1, 62, pair_roll[pr], 3, bA, bB, R, c_body, c_frame, c_point, c_phi, c_mu, c_e, c_un,
                          c_D, c_key, c_kind, c_parent, c_roll)
            m += 1
        if pair_spin[pr] > 0.0:  # its spinning block: the torque impulse about n (rows 1-2 empty)
            _torque_block(m, i, 2, 61, pair_spin[pr], 1, bA, bB, R, c_body, c_frame, c_point, c_phi, c_mu, c_e, c_un,
                          c_D, c_key, c_kind, c_parent, c_roll)
            m += 1
    return m


@jit
def stabilisation(m, c_kind, c_phi, c_un, c_e, h, recovery_speed, bounce_speed, b):
    """The normal bias ``b_n`` of every contact (``u_n = n·v⁺ + b_n ≥ 0``), tangential biases zero.

    ``b_n = max(φ/h, -v_rec)``: a gap may close within the step, a penetration is recovered at most at the
    recovery speed. Newton's impact law: a contact closing within this step at more than ``bounce_speed``
    (``φ + h u_n⁻ < 0``, ``-u_n⁻ > bounce_speed``) with restitution ``e`` leaves at ``u_n⁺ ≥ -e u_n⁻``.
    """
    for i in range(m):
        if c_kind[i] != 0:
            b[3 * i] = 0.0
            b[3 * i + 1] = 0.0
            b[3 * i + 2] = 0.0
            continue
        bn = max(c_phi[i] / h, -recovery_speed)
        un = c_un[i]
        if c_e[i] > 0.0 and -un > bounce_speed and c_phi[i] + h * un < 0.0:
            bn = min(bn, c_e[i] * un)
        b[3 * i] = bn
        b[3 * i + 1] = 0.0
        b[3 * i + 2] = 0.0


#: ``iperm`` of :func:`scatter_Dt` and :func:`gather_D` for generalized velocities in body order
NO_PERM = np.zeros(0, np.int64)


@jit
def scatter_Dt(lo, hi, c_body, c_D, iperm, x, out):
    """out[p(6b + k)] += (D_iᵀ x_i)[b, k] for the contacts lo..hi-1 (out is not zeroed first); ``p`` is
    ``iperm`` (generalized velocity -> elimination position of a factorisation), the identity when it is
    empty (:data:`NO_PERM`)."""
    perm = iperm.shape[0] > 0
    for i in range(lo, hi):
        for side in range(2):
            b = c_body[i, side]
            if b < 0:
                continue
            o = 6 * side
            for k in range(6):
                j = 6 * b + k
                if perm:
                    j = iperm[j]
                out[j] += c_D[i, 0, o + k] * x[3 * i] + c_D[i, 1, o + k] * x[3 * i + 1] + c_D[i, 2, o + k] * x[3 * i + 2]


@jit
def gather_D(m, c_body, c_D, iperm, y, out):
    """out (3m,) = D y for generalized velocities y (flat, 6 per body) read through ``iperm`` as in
    :func:`scatter_Dt`."""
    perm = iperm.shape[0] > 0
    for i in range(m):
        for d in range(3):
            s = 0.0
            for side in range(2):
                b = c_body[i, side]
                if b < 0:
                    continue
                o = 6 * side
                for k in range(6):
                    j = 6 * b + k
                    if perm:
                        j = iperm[j]
                    s += c_D[i, d, o + k] * y[j]
            out[3 * i + d] = s


@jit
def block_scale(m, c_body, c_D, mass, inv_inertia, eta):
    """η_i = trace(D_i M⁻¹ D_iᵀ)/3: the mean effective inverse mass of contact i (1/kg), from the bodies'
    mass matrices alone (joints left out): the scale of the residual and of PSOR's step."""
    for i in range(m):
        s = 0.0
        for side in range(2):
            b = c_body[i, side]
            if b < 0:
                continue
            o = 6 * side
            for d in range(3):
                for k in range(3):
                    s += c_D[i, d, o + k] ** 2 / mass[b]
                for k in range(3):
                    for j in range(3):
                        s += c_D[i, d, o + 3 + k] * inv_inertia[b, k, j] * c_D[i, d, o + 3 + j]
        eta[i] = s / 3.0 if s > 0.0 else 1.0


@nb.njit(cache=True, inline="always")
def _project(kind, mu, gn, g1, g2):
    """Euclidean projection of (γ_n, γ_t) onto the cone |γ_t| ≤ μ γ_n (kind 0), of a rolling block onto
    {spin = 0, |(g1, g2)| ≤ mu} (kind 1: mu is the disc's radius), or of a spinning block onto
    {|spin| ≤ mu, 0, 0} (kind 2)."""
    if kind == 2:
        return min(max(gn, -mu), mu), 0.0, 0.0
    s = math.sqrt(g1 * g1 + g2 * g2)
    if kind != 0:
        if s <= mu:
            return 0.0, g1, g2
        f = mu / s
        return 0.0, f * g1, f * g2
    if s <= mu * gn:
        return gn, g1, g2
    if mu * s <= -gn or (mu == 0.0 and gn <= 0.0):
        return 0.0, 0.0, 0.0
    if mu == 0.0:
        return gn, 0.0, 0.0
    a = (gn + mu * s) / (1.0 + mu * mu)
    f = mu * a / s
    return a, f * g1, f * g2


@jit
def project_cones(m, kind, mu, x, out):
    """out = Π_K(x) block by block (out may be x)."""
    for i in range(m):
        a, b, c = _project(kind[i], mu[i], x[3 * i], x[3 * i + 1], x[3 * i + 2])
        out[3 * i] = a
        out[3 * i + 1] = b
        out[3 * i + 2] = c


@jit
def ccp_measures(m, kind, mu, eta, gamma, u):
    """(residual, complementarity gap) of impulses γ with contact velocities u = Nγ + r.

    Residual: ``max_i η_i |γ_i - Π_K(γ_i - u_i/η_i)|`` (m/s), the natural map of the CCP scaled to a
    velocity; zero exactly at a solution. Gap: ``max_i |γ_i · u_i|`` (N s · m/s).
    """
    res = 0.0
    gap = 0.0
    for i in range(m):
        e = eta[i]
        g0 = gamma[3 * i]
        g1 = gamma[3 * i + 1]
        g2 = gamma[3 * i + 2]
        a, b, c = _project(kind[i], mu[i], g0 - u[3 * i] / e, g1 - u[3 * i + 1] / e, g2 - u[3 * i + 2] / e)
        d = e * math.sqrt((g0 - a) ** 2 + (g1 - b) ** 2 + (g2 - c) ** 2)
        if d > res or math.isnan(d):
            res = d
        cg = abs(g0 * u[3 * i] + g1 * u[3 * i + 1] + g2 * u[3 * i + 2])
        gap = max(gap, cg)
    return res, gap


@jit
def psor(m, kind, N, r, mu, eta, gamma, u, omega, tol, max_iter, check_every):
    """Projected Gauss-Seidel (SOR) over contact blocks on the dense Delassus matrix ``N`` (3m, 3m).

    One sweep: ``γ_i ← Π_K(γ_i - ω (N γ + r)_i / η_ii)`` in contact order, with ``η_ii`` the largest
    absolute row sum of the block ``N_ii`` (not Tasora & Anitescu's ``trace(N_ii)/3``: see below). Every ``check_every`` sweeps, ``u = Nγ + r`` and
    :func:`ccp_measures`' residual; stops below ``tol``. Returns (sweeps, residual, gap); ``u`` holds
    ``Nγ + r`` of the returned γ.
    """
    n3 = 3 * m
    diag = np.empty(m)
    for i in range(m):
        # Gershgorin's bound of the block's largest eigenvalue: each block step is then a projected gradient
        # step of at most 1/λ_max, which never increases the objective (Tasora's trace/3 overshoots by up to
        # 3x on a contact that moves in one direction only, a tip on a pinned rod, and PSOR diverges)
        big = 0.0
        for a in range(3):
            row = 0.0
            for c in range(3):
                row += abs(N[3 * i + a, 3 * i + c])
            big = max(big, row)
        diag[i] = big if big > 0.0 else 1.0
    res = np.inf
    gap = 0.0
    it = 0
    while it < max_iter:
        it += 1
        for i in range(m):
            w0 = r[3 * i]
            w1 = r[3 * i + 1]
            w2 = r[3 * i + 2]
            for j in range(n3):
                gj = gamma[j]
                w0 += N[3 * i, j] * gj
                w1 += N[3 * i + 1, j] * gj
                w2 += N[3 * i + 2, j] * gj
            s = omega / diag[i]
            a, b, c = _project(kind[i], mu[i], gamma[3 * i] - s * w0, gamma[3 * i + 1] - s * w1,
                               gamma[3 * i + 2] - s * w2)
            gamma[3 * i] = a
            gamma[3 * i + 1] = b
            gamma[3 * i + 2] = c
        if it % check_every == 0 or it == max_iter:
            for k in range(n3):
                s = r[k]
                for j in range(n3):
                    s += N[k, j] * gamma[j]
                u[k] = s
            res, gap = ccp_measures(m, kind, mu, eta, gamma, u)
            if res <= tol:
                break
    return it, res, gap


@jit
def warm_start(m, c_key, c_frame, c_kind, c_mu, keys, imp, gamma, old_slip, slip):
    """γ of every contact whose key is among the previous step's (sorted ``keys``, world impulses ``imp``):
    the old impulse in today's frame, projected on the cone; 0 otherwise. ``slip[i]`` its old slip speed
    ``old_slip[k]`` (-1 if not found). Returns how many were found."""
    found = 0
    for i in range(m):
        k = _find_history(keys, c_key[i, 0], c_key[i, 1])
        if k < 0:
            gamma[3 * i] = 0.0
            gamma[3 * i + 1] = 0.0
            gamma[3 * i + 2] = 0.0
            slip[i] = -1.0
            continue
        slip[i] = old_slip[k]
        found += 1
        for d in range(3):
            gamma[3 * i + d] = c_frame[i, d, 0] * imp[k, 0] + c_frame[i, d, 1] * imp[k, 1] + c_frame[i, d, 2] * imp[k, 2]
        a, b, c = _project(c_kind[i], c_mu[i], gamma[3 * i], gamma[3 * i + 1], gamma[3 * i + 2])
        gamma[3 * i] = a
        gamma[3 * i + 1] = b
        gamma[3 * i + 2] = c
    return found


# ---------------------------------------------------------------------------------------------------------------
# Compiled CCP solvers (issue #29, performance): the whole iteration in one kernel, N applied either as a dense
# matrix or through the step's supernodal factorisation (the joints stay exact, only the contact unknowns iterate)


@jit
def delassus_apply(m, c_body, c_D, N, fac, work, x, out):
    """out (3m,) = N x: ``N @ x`` when the dense N is given (``N.shape[0] > 0``), otherwise ``D G Dᵀ x`` with one
    factorised solve (``fac``: iperm (unknown -> elimination position) and the supernodal factor's arrays, as
    :func:`trackdyn.linsolve._ldl_kernels.supernodal_solve_inplace` takes them; ``work`` (n,) scratch)."""
    n3 = 3 * m
    if N.shape[0] > 0:
        for k in range(n3):
            s = 0.0
            for j in range(n3):
                s += N[k, j] * x[j]
            out[k] = s
        return
    iperm, X, Dg, flag, n_sn, sn_w, sn_nr, sn_start, sn_off, e_ptr, e_size, e_gstart, e_row = fac
    for k in range(work.shape[0]):
        work[k] = 0.0
    scatter_Dt(0, m, c_body, c_D, iperm, x, work)
    supernodal_solve_inplace(X, Dg, flag, n_sn, sn_w, sn_nr, sn_start, sn_off, e_ptr, e_size, e_gstart, e_row, work)
    gather_D(m, c_body, c_D, iperm, work, out)


@jit
def delassus_reg_apply(m, c_body, c_D, N, fac, work, reg, x, out):
    """out = (N + diag(reg)) x: :func:`delassus_apply` plus the contacts' compliance (``reg`` (3m,), empty for
    none; the stepper's ``contact_compliance / h²``)."""
    delassus_apply(m, c_body, c_D, N, fac, work, x, out)
    if reg.shape[0]:
        for k in range(3 * m):
            out[k] += reg[k] * x[k]


@jit
def delassus_columns(m, c_body, c_D, fac, work, unit, N):
    """N (3m, 3m) = D G Dᵀ, one factorised solve per column (``fac``, ``work`` as :func:`delassus_apply`;
    ``unit`` (3m,) zeros, returned as zeros)."""
    iperm, X, Dg, flag, n_sn, sn_w, sn_nr, sn_start, sn_off, e_ptr, e_size, e_gstart, e_row = fac
    for col in range(3 * m):
        for k in range(work.shape[0]):
            work[k] = 0.0
        unit[col] = 1.0
        scatter_Dt(col // 3, col // 3 + 1, c_body, c_D, iperm, unit, work)
        unit[col] = 0.0
        supernodal_solve_inplace(X, Dg, flag, n_sn, sn_w, sn_nr, sn_start, sn_off, e_ptr, e_size, e_gstart, e_row,
                                 work)
        gather_D(m, c_body, c_D, iperm, work, N[:, col])


@jit
def apgd(m, kind, mu, eta, r, gamma, u, tol, max_iter, c_body, c_D, N, fac, work, reg):
    """Nesterov's accelerated projected gradient (Mazhar et al. 2015) on the CCP, γ warm-started and projected.

    Backtracking on the Lipschitz estimate ``L`` with the sufficient decrease tested as ``dxᵀN dx ≤ L |dx|²``
    (exact for the quadratic objective; round-off cannot fail it), ``L`` decays by 0.9 per iteration, adaptive
    restart (O'Donoghue & Candès) when the momentum points uphill. Returns (iterations, products with N,
    residual, gap) of the best iterate, which is left in γ with ``u = Nγ + r``.
    """
    n3 = 3 * m
    x = gamma.copy()
    Nx = np.empty(n3)
    delassus_reg_apply(m, c_body, c_D, N, fac, work, reg, x, Nx)
    products = 1
    g = Nx + r
    res, gap = ccp_measures(m, kind, mu, eta, x, g)
    if res <= tol:
        u[:n3] = g
        return 0, products, res, gap
    L = 2.0 * (np.max(eta) + (np.max(reg) if reg.shape[0] else 0.0))
    y = x.copy()
    Ny = Nx.copy()
    x_prev = x.copy()
    Nx_prev = Nx.copy()
    theta = 1.0
    best_res = res
    best_gap = gap
    xb = x.copy()
    gb = g.copy()
    xn = np.empty(n3)
    Nxn = np.empty(n3)
    gy = np.empty(n3)
    it = 0
    while it < max_iter:
        it += 1
        for k in range(n3):
            gy[k] = Ny[k] + r[k]
        while True:
            for k in range(n3):
                xn[k] = y[k] - gy[k] / L
            project_cones(m, kind, mu, xn, xn)
            delassus_reg_apply(m, c_body, c_D, N, fac, work, reg, xn, Nxn)
            products += 1
            dNd = 0.0
            dd = 0.0
            for k in range(n3):
                dk = xn[k] - y[k]
                dNd += dk * (Nxn[k] - Ny[k])
                dd += dk * dk
            if dNd <= L * dd or L > 1e300:
                break
            L *= 2.0
        for k in range(n3):
            u[k] = Nxn[k] + r[k]  # u: the gradient at xn
        res, gap = ccp_measures(m, kind, mu, eta, xn, u)
        if res < best_res:
            best_res = res
            best_gap = gap
            xb[:] = xn
            gb[:] = u[:n3]
        if res <= tol:
            break
        theta_n = 0.5 * (-theta * theta + theta * math.sqrt(theta * theta + 4.0))
        beta = theta * (1.0 - theta) / (theta * theta + theta_n)
        uphill = 0.0
        for k in range(n3):
            uphill += gy[k] * (xn[k] - x_prev[k])
        if uphill > 0.0:
            beta = 0.0
            theta_n = 1.0
        for k in range(n3):
            y[k] = xn[k] + beta * (xn[k] - x_prev[k])
            Ny[k] = Nxn[k] + beta * (Nxn[k] - Nx_prev[k])
        x_prev, xn = xn, x_prev
        Nx_prev, Nxn = Nxn, Nx_prev
        theta = theta_n
        L *= 0.9
    gamma[:n3] = xb
    u[:n3] = gb
    return it, products, best_res, best_gap


@jit
def bb(m, kind, mu, eta, r, gamma, u, tol, max_iter, c_body, c_D, N, fac, work, memory, sigma, reg):
    """Spectral projected gradient with Barzilai-Borwein steps and the non-monotone line search of
    Grippo-Lampariello-Lucidi over the last ``memory`` objective values (Birgin, Martínez & Raydan 2000); the
    quadratic objective makes the line search exact (one product per iteration). Returns (iterations,
    products, residual, gap); γ holds the last iterate and ``u = Nγ + r``."""
    n3 = 3 * m
    Ng = np.empty(n3)
    delassus_reg_apply(m, c_body, c_D, N, fac, work, reg, gamma, Ng)
    products = 1
    g = Ng + r
    res, gap = ccp_measures(m, kind, mu, eta, gamma, g)
    if res <= tol:
        u[:n3] = g
        return 0, products, res, gap
    f = 0.0
    for k in range(n3):
        f += 0.5 * gamma[k] * Ng[k] + r[k] * gamma[k]
    hist = np.empty(memory)
    hist[0] = f
    n_hist = 1
    h_next = 1 % memory
    alpha = 1.0 / max(np.max(eta), 1e-300)
    trial = np.empty(n3)
    d = np.empty(n3)
    Nd = np.empty(n3)
    Nt = np.empty(n3)
    it = 0
    while it < max_iter:
        it += 1
        for k in range(n3):
            trial[k] = gamma[k] - alpha * g[k]
        project_cones(m, kind, mu, trial, trial)
        delassus_reg_apply(m, c_body, c_D, N, fac, work, reg, trial, Nt)
        products += 1
        gd = 0.0
        dNd = 0.0
        for k in range(n3):
            d[k] = trial[k] - gamma[k]
            Nd[k] = Nt[k] - Ng[k]
            gd += g[k] * d[k]
            dNd += d[k] * Nd[k]
        fmax = hist[0]
        for k in range(1, n_hist):
            fmax = max(fmax, hist[k])
        lam = 1.0
        # the exact line minimum when the non-monotone test fails; d is a descent direction (gd < 0) in exact
        # arithmetic, and with gd >= 0 from round-off near the solution the full step is taken (a zero step
        # would repeat itself for ever)
        if f + gd + 0.5 * dNd > fmax + sigma * gd and dNd > 0.0 and gd < 0.0:
            lam = min(1.0, -gd / dNd)
        f = f + lam * gd + 0.5 * lam * lam * dNd
        hist[h_next] = f
        h_next = (h_next + 1) % memory
        n_hist = min(n_hist + 1, memory)
        ss = 0.0
        sy = 0.0
        for k in range(n3):
            if lam == 1.0:  # the full step: γ and Nγ exactly the trial's (no drift of Nγ from the updates)
                gamma[k] = trial[k]
                Ng[k] = Nt[k]
            else:
                gamma[k] += lam * d[k]
                Ng[k] += lam * Nd[k]
            s_k = lam * d[k]
            y_k = Ng[k] + r[k] - g[k]
            ss += s_k * s_k
            sy += s_k * y_k
            g[k] = Ng[k] + r[k]
        alpha = ss / sy if sy > 0.0 else 1.0 / max(np.min(eta), 1e-300)
        alpha = min(max(alpha, 1e-30), 1e30)
        res, gap = ccp_measures(m, kind, mu, eta, gamma, g)
        if res <= tol:
            break
    u[:n3] = g
    return it, products, res, gap
