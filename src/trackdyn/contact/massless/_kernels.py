"""Numba kernels of the massless track (agapov-kovalev-pogorelov §3.3-3.5): forces and their Jacobians.

One evaluation, for every track plane (a plane fixed in the hull frame, §3.3
step 1): slice the terrain (step 2, :mod:`._slice`), then (step 3)

- road wheels, sprocket and idler against every slice segment: normal force
  ``κ S (1 + α δ̇)`` along the segment normal, ``S`` the owned penetration
  area (eq. 1-3, :mod:`._area`), ``α`` Hunt-Crossley damping;
- factitious irregularities between adjacent wheels (Figs. 8-9): where the
  slice pierces the track line (the outer common tangent of the two wheels)
  above the chord of the two wheels' own sinkage, the depth ``D`` and position
  ``ξ̄`` are the depth-weighted means over the piercing points; each wheel gets
  ``κ w(ξ̄) S(D)`` (``w = (1-ξ)^p`` at wheel A, ``ξ^p`` at B: stiffest at the
  wheel, falling with the distance from it) along the line's normal;
- friction ``-μ N tanh(|s|/v0) ŝ`` at every contact, ``s`` the slip of the
  track's ground side (hull velocity at the contact point minus the track
  speed ``V_t = r_s (ω_sprocket - ω_hull)`` along the track, in the contact
  plane). It acts on the *track material point* whose velocity is
  ``m = v_hull(P) - V_t t``: on the hull at P, and through ``V_t`` as
  ``-r_s F_t`` on the sprocket (``+r_s F_t`` on the hull) — traction, braking
  and skid steering come from the tracks' speeds;
- hull planes: the hull's section in each hull plane is a convex polygon
  (a box's rectangle, a polyhedron's section); its corners in the ground and
  ground corners in it, pushed out through its nearest edge
  (``K δ^{3/2} (1 + α δ̇)`` and friction).

Jacobians are taken with respect to the coordinates of the bodies a force
depends on (hull C, wheel A, wheel B, sprocket S: the *roles* of an element)
through per-role bases ``T`` (3, nc), the velocity of the body's reference
point, and ``W`` (3, nc), its world angular velocity, per unit coordinate
rate:

- ``mode = ABSOLUTE``: nc = 24, role k owns columns 6k..6k+5, ``T = [I 0]``,
  ``W = [0 A]``;
- ``mode = REDUCED`` (depth-1 tree): nc = 9, hull columns 0..5 and one joint
  column per role, ``T``/``W`` from the tree.

``jac = FULL`` differentiates everything exactly (with ABSOLUTE: FD-checked,
for :class:`~trackdyn.contact.massless.track.MasslessTrack`). ``jac = STIFF`` keeps the
stiff terms only (paper §3.1): normal contact stiffness and damping through
the contact points, and the friction's velocity Jacobian, each a small
outer product — the same forces at a fraction of the cost (the real-time
stepper). A world force F at X on role k gives ``Jᵀ F`` with ``J = T - (X -
r)~ W``; a torque ``Wᵀ T``.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numba as nb
import numpy as np

from ._area import depth_area, segment_area_scratch
from ._slice import _cross, _dot, corner_slopes, ensure_gradients, slice_meshes, slice_planes, slice_profiles

jit = nb.njit(cache=True, _nrt=False)
# inlined into the caller at Numba IR level: a call of a function taking the work arrays passes them all by
# value (thousands of words per call), which cost more than the arithmetic of a wheel contact
jit_inline = nb.njit(cache=True, _nrt=False, inline="always")

ABSOLUTE = 0
REDUCED = 1
FULL = 0
STIFF = 1
NC_ABS = 24
NC_RED = 9

VehiclePack = namedtuple(
    "VehiclePack",
    "chassis side_sprocket side_rs "
    "plane_side plane_y plane_kappa "
    "wheel_body wheel_side wheel_R wheel_y wheel_elem "
    "pair_a pair_b pair_side pair_elem "
    "hplane_y hplane_kappa hplane_ptr hplane_dmax hplane_ctr hplane_reach hpoly_v hpoly_n hull_elem "
    "win_lo win_hi elem_roles",
)
Params = namedtuple("Params", "law alpha v0 p_exp mu_track mu_hull irregularities min_dn plane_half")
Work = namedtuple(
    "Work",
    "el_blk el_cols el_ncols el_T el_W el_done J J2 JP Gv Gn Go6 Gn6 Ga Gt Gnu GF VF GX "
    "G1 G2 G3 G4 G5 G6 G7 G8 G9 G10 "
    "s1 s2 s3 s4 s5 s6 s7 s8 s9 s10 s11 s12 s13 s14 s15 "
    "c_xi c_h c_mu c_Gxi c_Gh win o sdummy",
)

# outputs: wheel (NW, 6) normal force, largest penetration, contacts, N-weighted contact point sums (3);
# side (2, 8) traction, lateral, N-weighted slip, track speed, deepest irregularity, normal load, contacts,
# irregularities; hull (5 + 4 n,) force x y z, largest penetration, contacts, then per contact its point (3) and
# normal force; total (3,) ground force on the vehicle;
# flags (2,): [0] a profile was left out (plane parallel to it), [1] slice buffer overflow (segments needed)


def new_work(nc: int, elem_blk: np.ndarray, elem_cols: np.ndarray, elem_ncols: np.ndarray, capacity: int) -> Work:
    """Scratch of one evaluation.

    ``elem_blk`` (E, 4): column block of each role (roles on one body share
    the first one's); ``elem_cols`` (E, nc), ``elem_ncols`` (E,): the columns
    an element can touch (FULL Jacobians loop over these only).
    """
    z3 = lambda: np.zeros((3, nc))  # noqa: E731
    z1 = lambda: np.zeros(nc)  # noqa: E731
    c = 2 * int(capacity) + 4
    n_elem = elem_blk.shape[0]
    return Work(np.ascontiguousarray(elem_blk, dtype=np.int64), np.ascontiguousarray(elem_cols, dtype=np.int64),
                np.ascontiguousarray(elem_ncols, dtype=np.int64), np.zeros((n_elem, 4, 3, nc)),
                np.zeros((n_elem, 4, 3, nc)), np.zeros(n_elem, np.bool_),
                z3(), z3(), z3(), z3(), z3(), np.zeros((3, 6)), np.zeros((3, 6)), z3(), z3(), z3(), z3(), z3(), z3(),
                z3(), z3(), z3(), z3(), z3(), z3(), z3(), z3(), z3(), z3(),
                z1(), z1(), z1(), z1(), z1(), z1(), z1(), z1(), z1(), z1(), z1(), z1(), z1(), z1(), z1(),
                np.zeros(c), np.zeros(c), np.zeros(c), np.zeros((c, nc)), np.zeros((c, nc)), np.zeros((4, 3)),
                np.zeros(3), np.zeros((2, 8)))


# --------------------------------------------------------------------------- small vectors
@jit
def _row(M, i):
    return (M[i, 0], M[i, 1], M[i, 2])


@jit
def _col(G, c):
    return (G[0, c], G[1, c], G[2, c])


@jit
def _set_col(G, c, v):
    G[0, c] = v[0]
    G[1, c] = v[1]
    G[2, c] = v[2]


@jit
def _mat_vec(R, b, a):
    return (R[b, 0, 0] * a[0] + R[b, 0, 1] * a[1] + R[b, 0, 2] * a[2],
            R[b, 1, 0] * a[0] + R[b, 1, 1] * a[1] + R[b, 1, 2] * a[2],
            R[b, 2, 0] * a[0] + R[b, 2, 1] * a[1] + R[b, 2, 2] * a[2])


@jit
def _mat_tvec(R, b, a):
    return (R[b, 0, 0] * a[0] + R[b, 1, 0] * a[1] + R[b, 2, 0] * a[2],
            R[b, 0, 1] * a[0] + R[b, 1, 1] * a[1] + R[b, 2, 1] * a[2],
            R[b, 0, 2] * a[0] + R[b, 1, 2] * a[1] + R[b, 2, 2] * a[2])


@jit
def _embed6(G6, G, nc):
    """(3, 6) hull gradient -> (3, nc) (the hull's coordinates are columns 0..5 in both modes)."""
    for i in range(3):
        for c in range(6):
            G[i, c] = G6[i, c]
        for c in range(6, nc):
            G[i, c] = 0.0


@jit
def _tanh_over(v, v0):
    """φ(v) = tanh(v/v0)/v and ψ = φ'(v)/v (regularised Coulomb friction, smooth at v = 0)."""
    z = v / v0
    if z < 1e-3:
        return (1.0 - z * z / 3.0) / v0, -2.0 / (3.0 * v0 * v0 * v0)
    th = math.tanh(z)
    phi = th / v
    dphi = ((1.0 - th * th) / v0 * v - th) / (v * v)
    return phi, dphi / v


@jit
def _jt_vec(J, v, out, nc):
    """out = Jᵀ v (J (3, nc))."""
    for c in range(nc):
        out[c] = J[0, c] * v[0] + J[1, c] * v[1] + J[2, c] * v[2]


# --------------------------------------------------------------------------- bases and sinks
@jit
def _role_basis(mode, blk, b, R, body_T, body_W, T, W, nc):
    """Basis of a role on body b with column block ``blk`` (absolute) or joint slot ``blk`` (reduced)."""
    for i in range(3):
        for c in range(nc):
            T[i, c] = 0.0
            W[i, c] = 0.0
    if b < 0:
        return
    if mode == ABSOLUTE:
        for i in range(3):
            T[i, 6 * blk + i] = 1.0
            for j in range(3):
                W[i, 6 * blk + 3 + j] = R[b, i, j]
    else:
        for i in range(3):
            for c in range(6):
                T[i, c] = body_T[b, i, c]
                W[i, c] = body_W[b, i, c]
            if blk > 0:
                T[i, 5 + blk] = body_T[b, i, 6]
                W[i, 5 + blk] = body_W[b, i, 6]


@jit
def _basis(e, mode, elem_roles, el_blk, el_done, el_T, el_W, R, body_T, body_W, nc):
    """Role bases of element e (once per evaluation; the work arrays it fills are passed one by one: a call
    passing the whole work tuple copies thousands of words)."""
    if el_done[e]:
        return
    el_done[e] = True
    for k in range(4):
        _role_basis(mode, el_blk[e, k], elem_roles[e, k], R, body_T, body_W, el_T[e, k], el_W[e, k], nc)


@jit
def _ensure(e, Q, Kx, Kv, on, nc):
    """Clear element e's arrays at its first contribution of this evaluation."""
    if on[e]:
        return
    on[e] = True
    for a in range(nc):
        Q[e, a] = 0.0
        for c in range(nc):
            Kx[e, a, c] = 0.0
            Kv[e, a, c] = 0.0


@jit
def _point_jacobian(T, W, rho, J, nc):
    """J = T - ρ~ W (velocity of the body point at ρ from its reference point, per coordinate rate)."""
    for c in range(nc):
        x = _cross((W[0, c], W[1, c], W[2, c]), rho)
        J[0, c] = T[0, c] + x[0]
        J[1, c] = T[1, c] + x[1]
        J[2, c] = T[2, c] + x[2]


@jit
def _skew_add(Kx, e, o, xb, s):
    """Kx[e, o:o+3, o:o+3] += s xb~ (∂(Aᵀ x)/∂π̄ = (Aᵀ x)~: the geometric term of absolute coordinates)."""
    Kx[e, o + 0, o + 1] -= s * xb[2]
    Kx[e, o + 0, o + 2] += s * xb[1]
    Kx[e, o + 1, o + 0] += s * xb[2]
    Kx[e, o + 1, o + 2] -= s * xb[0]
    Kx[e, o + 2, o + 0] -= s * xb[1]
    Kx[e, o + 2, o + 1] += s * xb[0]


@jit
def _normal_force_grads(nu, N, GN, VN, Gnu, GF, VF, nc):
    """Gradients (3, nc) of the normal force ``F = N ν``: ``GF = ν GNᵀ + N Gν`` (position), ``VF = ν VNᵀ``."""
    for c in range(nc):
        for i in range(3):
            GF[i, c] = nu[i] * GN[c] + N * Gnu[i, c]
            VF[i, c] = nu[i] * VN[c]


@jit
def _emit_force(e, k, b, X, F, GF, VF, GX, work, pos, R, mode, Q, Kx, Kv, on, nc):
    """FULL: generalized force Jᵀ F of a world force F at X on role k (body b) with exact Jacobians.

    ``GF, VF`` (3, nc): ∂F/∂q, ∂F/∂v; ``GX`` (3, nc): ∂X/∂q (X need not be fixed on the body).
    """
    _ensure(e, Q, Kx, Kv, on, nc)
    T = work.el_T[e, k]
    W = work.el_W[e, k]
    rho = (X[0] - pos[b, 0], X[1] - pos[b, 1], X[2] - pos[b, 2])
    J = work.J2
    _point_jacobian(T, W, rho, J, nc)
    cols = work.el_cols[e]
    ncol = work.el_ncols[e]
    for ic in range(ncol):
        c = cols[ic]
        Q[e, c] += J[0, c] * F[0] + J[1, c] * F[1] + J[2, c] * F[2]
    for jd in range(ncol):
        d = cols[jd]
        fx = _cross(F, (GX[0, d] - T[0, d], GX[1, d] - T[1, d], GX[2, d] - T[2, d]))
        for ic in range(ncol):
            c = cols[ic]
            Kx[e, c, d] += (J[0, c] * GF[0, d] + J[1, c] * GF[1, d] + J[2, c] * GF[2, d]
                            - (W[0, c] * fx[0] + W[1, c] * fx[1] + W[2, c] * fx[2]))
            Kv[e, c, d] += J[0, c] * VF[0, d] + J[1, c] * VF[1, d] + J[2, c] * VF[2, d]
    if mode == ABSOLUTE:
        _skew_add(Kx, e, 6 * work.el_blk[e, k] + 3, _mat_tvec(R, b, _cross(rho, F)), 1.0)


@jit
def _emit_torque(e, k, b, Tq, GT, VT, sign, work, R, mode, Q, Kx, Kv, on, nc):
    """FULL: generalized force Wᵀ (sign Tq) of a world torque on role k (body b) of element e."""
    _ensure(e, Q, Kx, Kv, on, nc)
    W = work.el_W[e, k]
    cols = work.el_cols[e]
    ncol = work.el_ncols[e]
    for ic in range(ncol):
        c = cols[ic]
        Q[e, c] += sign * (W[0, c] * Tq[0] + W[1, c] * Tq[1] + W[2, c] * Tq[2])
        for jd in range(ncol):
            d = cols[jd]
            Kx[e, c, d] += sign * (W[0, c] * GT[0, d] + W[1, c] * GT[1, d] + W[2, c] * GT[2, d])
            Kv[e, c, d] += sign * (W[0, c] * VT[0, d] + W[1, c] * VT[1, d] + W[2, c] * VT[2, d])
    if mode == ABSOLUTE:
        _skew_add(Kx, e, 6 * work.el_blk[e, k] + 3, _mat_tvec(R, b, Tq), sign)


@jit
def _emit_stiff(e, g, N, kx, gx, kv, gv, Q, Kx, Kv, on, nc):
    """STIFF: ``Q += N g``, ``Kx += kx g gxᵀ``, ``Kv += kv g gvᵀ`` (a normal force N along g = Jᵀν)."""
    _ensure(e, Q, Kx, Kv, on, nc)
    for a in range(nc):
        ga = g[a]
        if ga == 0.0:
            continue
        Q[e, a] += N * ga
        for c in range(nc):
            Kx[e, a, c] += kx * ga * gx[c]
            Kv[e, a, c] += kv * ga * gv[c]


# --------------------------------------------------------------------------- friction
@jit
def _slip(P, C, S, track, rs, n, tc, nuc, pos, vel, omega, v0, mu, N):
    """Slip ``s`` of the track material point at P (velocity ``m = v_hull(P) - V_t t``, ``V_t`` only with
    ``track``: ``r_s (ω_S - ω_C)·n``) and its regularised Coulomb force ``F = -μ N tanh(|s|/v0) ŝ``."""
    wC = (omega[C, 0], omega[C, 1], omega[C, 2])
    rho = (P[0] - pos[C, 0], P[1] - pos[C, 1], P[2] - pos[C, 2])
    wxr = _cross(wC, rho)
    vh = (vel[C, 0] + wxr[0], vel[C, 1] + wxr[1], vel[C, 2] + wxr[2])
    Vt = 0.0
    dws = (0.0, 0.0, 0.0)
    wS = (0.0, 0.0, 0.0)
    if track:
        wS = (omega[S, 0], omega[S, 1], omega[S, 2])
        dws = (wS[0] - wC[0], wS[1] - wC[1], wS[2] - wC[2])
        Vt = rs * _dot(dws, n)
    m = (vh[0] - Vt * tc[0], vh[1] - Vt * tc[1], vh[2] - Vt * tc[2])
    nm = _dot(nuc, m)
    s = (m[0] - nuc[0] * nm, m[1] - nuc[1] * nm, m[2] - nuc[2] * nm)
    sn = math.sqrt(_dot(s, s))
    phi, psi = _tanh_over(sn, v0)
    F = (-mu * N * phi * s[0], -mu * N * phi * s[1], -mu * N * phi * s[2])
    return rho, wC, wS, dws, Vt, m, nm, s, phi, psi, F, _dot(F, tc)


@jit
def _friction_out(sout, side, track, F, Ft, N, s, n, tc):
    """A track contact's friction into the side outputs (traction, lateral force, N-weighted slip, load)."""
    if track:
        sout[side, 0] += Ft
        sout[side, 1] += _dot(F, n)
        sout[side, 2] += N * _dot(s, tc)
        sout[side, 5] += N


@jit
def _friction_stiff(e, N, nuc, tc, P, mu, track, side, n, C, S, rs, v0, TC, WC, WS, JP, Jm, g1, g2, pos, vel, omega,
                    Q, Kx, Kv, on, nc, sout):
    """Friction of :func:`_friction` with the STIFF Jacobian (its velocity Jacobian only); returns F.

    Takes the few arrays it writes instead of the work tuple (a call copies its
    arguments: thousands of words for the tuples). ``C, S``: hull and sprocket
    (S unused without ``track``), ``rs`` the sprocket's pitch radius, ``TC, WC,
    WS`` the element's hull and sprocket role bases, ``JP, Jm`` (3, nc) and
    ``g1, g2`` (nc,) scratch.
    """
    rho, wC, wS, dws, Vt, m, nm, s, phi, psi, F, Ft = _slip(P, C, S, track, rs, n, tc, nuc, pos, vel, omega, v0, mu,
                                                            N)
    _point_jacobian(TC, WC, rho, JP, nc)
    # J_m = J_P - t ⊗ ∂V_t/∂v; Q = J_mᵀ F; Kv = J_mᵀ (∂F/∂s) J_m on the contact plane (basis t, t × ν)
    for c in range(nc):
        vvt = rs * (_dot(n, _col(WS, c)) - _dot(n, _col(WC, c))) if track else 0.0
        for i in range(3):
            Jm[i, c] = JP[i, c] - tc[i] * vvt
    e2 = _cross(tc, nuc)
    _jt_vec(Jm, tc, g1, nc)
    _jt_vec(Jm, e2, g2, nc)
    s1 = _dot(s, tc)
    s2 = _dot(s, e2)
    c0 = -mu * N
    m11 = c0 * (phi + psi * s1 * s1)
    m12 = c0 * psi * s1 * s2
    m22 = c0 * (phi + psi * s2 * s2)
    _ensure(e, Q, Kx, Kv, on, nc)
    for a in range(nc):
        Q[e, a] += g1[a] * Ft + g2[a] * _dot(F, e2)
        for c in range(nc):
            Kv[e, a, c] += (g1[a] * (m11 * g1[c] + m12 * g2[c]) + g2[a] * (m12 * g1[c] + m22 * g2[c]))
    _friction_out(sout, side, track, F, Ft, N, s, n, tc)
    return F


@jit
def _friction(e, N, GN, VN, nuc, Gnuc, tc, Gtc, P, GP, mu, Gmu, has_gmu, track, side, n, V, P_, work, pos, R,
              vel, omega, mode, Q, Kx, Kv, on, nc, sout):
    """Regularised Coulomb friction ``-μ N tanh(|s|/v0) ŝ`` on the track material point at P, with the FULL
    Jacobian; returns F (:func:`_friction_stiff`: the STIFF one).

    The point's velocity is ``m = v_hull(P) - V_t t`` (``V_t`` only with
    ``track``): the force acts on the hull at P and, through ``V_t``, as
    ``-r_s F_t`` on the sprocket and ``+r_s F_t`` on the hull. Needs
    ``GN, VN`` (nc,), ``Gnuc, Gtc, GP`` (3, nc): gradients of the normal load,
    contact normal, track direction and contact point.
    """
    C = V.chassis
    S = V.side_sprocket[side] if track else -1
    rs = V.side_rs[side] if track else 0.0
    rho, wC, wS, dws, Vt, m, nm, s, phi, psi, F, Ft = _slip(P, C, S, track, rs, n, tc, nuc, pos, vel, omega, P_.v0,
                                                            mu, N)
    TC = work.el_T[e, 0]
    WC = work.el_W[e, 0]
    JP = work.JP
    _point_jacobian(TC, WC, rho, JP, nc)
    Gm = work.G5
    Vm = work.G6
    for c in range(nc):
        a1 = _cross(_cross(_col(WC, c), wC), rho)
        a2 = _cross(wC, (GP[0, c] - TC[0, c], GP[1, c] - TC[1, c], GP[2, c] - TC[2, c]))
        _set_col(Gm, c, (a1[0] + a2[0], a1[1] + a2[1], a1[2] + a2[2]))
        _set_col(Vm, c, _col(JP, c))
    if track:
        WS = work.el_W[e, 3]
        Gn = work.Gn
        for c in range(nc):
            gvt = rs * (_dot(dws, _col(Gn, c)) + _dot(n, _cross(_col(WS, c), wS))
                        - _dot(n, _cross(_col(WC, c), wC)))
            vvt = rs * (_dot(n, _col(WS, c)) - _dot(n, _col(WC, c)))
            for i in range(3):
                Gm[i, c] -= tc[i] * gvt + Vt * Gtc[i, c]
                Vm[i, c] -= tc[i] * vvt
    Gs = work.G7
    Vs = work.G8
    for c in range(nc):
        gnm = _dot(nuc, _col(Gm, c)) + _dot(m, _col(Gnuc, c))
        vnm = _dot(nuc, _col(Vm, c))
        for i in range(3):
            Gs[i, c] = Gm[i, c] - nuc[i] * gnm - nm * Gnuc[i, c]
            Vs[i, c] = Vm[i, c] - nuc[i] * vnm
    GF = work.GF
    VF = work.VF
    for c in range(nc):
        sgs = _dot(s, _col(Gs, c))
        svs = _dot(s, _col(Vs, c))
        for i in range(3):
            GF[i, c] = -mu * (phi * s[i] * GN[c] + N * phi * Gs[i, c] + N * psi * s[i] * sgs)
            VF[i, c] = -mu * (phi * s[i] * VN[c] + N * phi * Vs[i, c] + N * psi * s[i] * svs)
            if has_gmu:
                GF[i, c] -= Gmu[c] * N * phi * s[i]
    _emit_force(e, 0, C, P, F, GF, VF, GP, work, pos, R, mode, Q, Kx, Kv, on, nc)
    if track:
        Gn = work.Gn
        GT = work.G9
        VT = work.GX
        for c in range(nc):
            gft = _dot(tc, _col(GF, c)) + _dot(F, _col(Gtc, c))
            vft = _dot(tc, _col(VF, c))
            for i in range(3):
                GT[i, c] = -rs * (n[i] * gft + Ft * Gn[i, c])
                VT[i, c] = -rs * n[i] * vft
        Tq = (-rs * Ft * n[0], -rs * Ft * n[1], -rs * Ft * n[2])
        _emit_torque(e, 3, S, Tq, GT, VT, 1.0, work, R, mode, Q, Kx, Kv, on, nc)
        _emit_torque(e, 0, C, Tq, GT, VT, -1.0, work, R, mode, Q, Kx, Kv, on, nc)
    _friction_out(sout, side, track, F, Ft, N, s, n, tc)
    return F


# --------------------------------------------------------------------------- wheel on a segment
@jit_inline
def _wheel_segment(e, jac, side, wk, j, p, pd, kappa, buf, n, V, P_, work, pos, R, vel, omega, mode, Q, Kx, Kv,
                   on, nc, wout, sout, tout):
    """Wheel wk (point p, velocity pd; work.J, work.Gv ready) on segment j: normal force and friction."""
    Rw = V.wheel_R[wk]
    a = _row(buf.a, j)
    t = _row(buf.t, j)
    nu = _row(buf.nu, j)
    L = buf.L[j]
    w0 = (p[0] - a[0], p[1] - a[1], p[2] - a[2])
    d = _dot(w0, nu)
    x = _dot(w0, t)
    if d <= -Rw or d >= Rw or x < -Rw or x > L + Rw:
        return
    S, Sd, Sx, SL, Ska, Skb = segment_area_scratch(P_.law, Rw, d, x, L, buf.ka[j], buf.kb[j], work.s12, work.s13)
    if S <= 0.0:
        return
    ddot = -_dot(pd, nu)
    fac = 1.0 + P_.alpha * ddot
    if fac <= 0.0:
        return
    N = kappa * S * fac
    F = (N * nu[0], N * nu[1], N * nu[2])
    b = V.wheel_body[wk]
    J = work.J
    P = (a[0] + x * t[0], a[1] + x * t[1], a[2] + x * t[2])
    mu = min(buf.mu[j], P_.mu_track)
    if jac == STIFF:
        gn = work.s1
        gt = work.s2
        _jt_vec(J, nu, gn, nc)
        _jt_vec(J, t, gt, nc)
        # Kx = g (κ fac) (S_d gnᵀ + S_x gtᵀ): combine the two rank-1 terms through a shifted vector
        gk = work.s3
        for c in range(nc):
            gk[c] = Sd * gn[c] + Sx * gt[c]
        _emit_stiff(e, gn, N, kappa * fac, gk, -kappa * S * P_.alpha, gn, Q, Kx, Kv, on, nc)
        Ff = _friction_stiff(e, N, nu, t, P, mu, True, side, n, V.chassis, V.side_sprocket[side], V.side_rs[side],
                             P_.v0, work.el_T[e, 0], work.el_W[e, 0], work.el_W[e, 3], work.JP, work.G1, work.s14,
                             work.s15, pos, vel, omega, Q, Kx, Kv, on, nc, sout)
    else:
        ensure_gradients(buf, j, work.o, n, work.Go6, work.Gn6)
        Ga = work.Ga
        Gt = work.Gt
        Gnu = work.Gnu
        _embed6(buf.ga[j], Ga, nc)
        _embed6(buf.gt[j], Gt, nc)
        _embed6(buf.gnu[j], Gnu, nc)
        Gv = work.Gv
        gx = work.s2
        GN = work.s4
        VN = work.s5
        for c in range(nc):
            gd = ((J[0, c] - Ga[0, c]) * nu[0] + (J[1, c] - Ga[1, c]) * nu[1] + (J[2, c] - Ga[2, c]) * nu[2]
                  + w0[0] * Gnu[0, c] + w0[1] * Gnu[1, c] + w0[2] * Gnu[2, c])
            gx[c] = ((J[0, c] - Ga[0, c]) * t[0] + (J[1, c] - Ga[1, c]) * t[1] + (J[2, c] - Ga[2, c]) * t[2]
                     + w0[0] * Gt[0, c] + w0[1] * Gt[1, c] + w0[2] * Gt[2, c])
            gS = Sd * gd + Sx * gx[c]
            if c < 6:
                gS += SL * buf.gL[j, c] + Ska * buf.gka[j, c] + Skb * buf.gkb[j, c]
            gdd = -(Gv[0, c] * nu[0] + Gv[1, c] * nu[1] + Gv[2, c] * nu[2]
                    + pd[0] * Gnu[0, c] + pd[1] * Gnu[1, c] + pd[2] * Gnu[2, c])
            vdd = -(J[0, c] * nu[0] + J[1, c] * nu[1] + J[2, c] * nu[2])
            GN[c] = kappa * (fac * gS + S * P_.alpha * gdd)
            VN[c] = kappa * S * P_.alpha * vdd
        GF = work.GF
        VF = work.VF
        _normal_force_grads(nu, N, GN, VN, Gnu, GF, VF, nc)
        _emit_force(e, 1, b, p, F, GF, VF, J, work, pos, R, mode, Q, Kx, Kv, on, nc)
        GP = work.G2
        for c in range(nc):
            for i in range(3):
                GP[i, c] = Ga[i, c] + t[i] * gx[c] + x * Gt[i, c]
        Ff = _friction(e, N, GN, VN, nu, Gnu, t, Gt, P, GP, mu, gx, False, True, side, n, V, P_, work, pos,
                       R, vel, omega, mode, Q, Kx, Kv, on, nc, sout)
    wout[wk, 0] += N
    wout[wk, 1] = max(wout[wk, 1], Rw - d)
    wout[wk, 2] += 1.0
    for i in range(3):
        tout[i] += F[i] + Ff[i]
        wout[wk, 3 + i] += N * P[i]
    sout[side, 6] += 1.0


@jit
def _wheel_reach(p, Rw, buf, nseg):
    """Whether any segment may touch the wheel circle at p (cheap test before its Jacobians are built)."""
    for j in range(nseg):
        w0 = (p[0] - buf.a[j, 0], p[1] - buf.a[j, 1], p[2] - buf.a[j, 2])
        d = w0[0] * buf.nu[j, 0] + w0[1] * buf.nu[j, 1] + w0[2] * buf.nu[j, 2]
        if -Rw < d < Rw:
            x = w0[0] * buf.t[j, 0] + w0[1] * buf.t[j, 1] + w0[2] * buf.t[j, 2]
            if -Rw < x < buf.L[j] + Rw:
                return True
    return False


# --------------------------------------------------------------------------- factitious irregularity
@jit
def _irregularity_geometry(pa, yp, n, pair_a, pair_b, wheel_R, wheel_body, wheel_y, sa_, sb_, smu, nseg, pos, R):
    """Track line of pair pa in the plane at hull y ``yp`` and the depth sums of the slice's piercing points.

    Returns ``(found, W1, W2, X1, M1, L0, L, sa, ca, rA, rB, cA, cB, u, m, nuo, TA, tau)``, ``found`` when
    the slice pierces the line (the depth sums are positive). Split from :func:`_irregularity` so that the
    common case, no piercing point, costs no call passing the work arrays (thousands of words per call).
    """
    wa = pair_a[pa]
    wb = pair_b[pa]
    RA = wheel_R[wa]
    RB = wheel_R[wb]
    A = wheel_body[wa]
    B = wheel_body[wb]
    rA = _mat_vec(R, A, (0.0, yp - wheel_y[wa], 0.0))
    cA = (pos[A, 0] + rA[0], pos[A, 1] + rA[1], pos[A, 2] + rA[2])
    rB = _mat_vec(R, B, (0.0, yp - wheel_y[wb], 0.0))
    cB = (pos[B, 0] + rB[0], pos[B, 1] + rB[1], pos[B, 2] + rB[2])
    ev = (cB[0] - cA[0], cB[1] - cA[1], cB[2] - cA[2])
    L0 = math.sqrt(_dot(ev, ev))
    if L0 <= abs(RA - RB) + 1e-9:
        z = (0.0, 0.0, 0.0)
        return False, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, z, z, z, z, z, z, z, z, z
    u = (ev[0] / L0, ev[1] / L0, ev[2] / L0)
    m = _cross(n, u)
    sa = (RA - RB) / L0
    ca = math.sqrt(1.0 - sa * sa)
    nuo = (ca * m[0] + sa * u[0], ca * m[1] + sa * u[1], ca * m[2] + sa * u[2])
    TA = (cA[0] + RA * nuo[0], cA[1] + RA * nuo[1], cA[2] + RA * nuo[2])
    tau = (ca * u[0] - sa * m[0], ca * u[1] - sa * m[1], ca * u[2] - sa * m[2])
    L = L0 * ca
    # ---- values: heights over the line at both ends (the wheels' own sinkage) and at the piercing points
    HA = 0.0
    HB = 0.0
    for j in range(nseg):
        ra = (sa_[j, 0] - TA[0], sa_[j, 1] - TA[1], sa_[j, 2] - TA[2])
        rb = (sb_[j, 0] - TA[0], sb_[j, 1] - TA[1], sb_[j, 2] - TA[2])
        xa = _dot(ra, tau) / L
        xb = _dot(rb, tau) / L
        if (xa < 0.0 and xb < 0.0) or (xa > 1.0 and xb > 1.0) or xb == xa:
            continue
        ha = -_dot(ra, nuo)
        hb = -_dot(rb, nuo)
        for beta in (0.0, 1.0):
            if min(xa, xb) < beta < max(xa, xb):
                h = ha + (hb - ha) * (beta - xa) / (xb - xa)
                if beta == 0.0:
                    HA = max(HA, h)
                else:
                    HB = max(HB, h)
    W1 = 0.0
    W2 = 0.0
    X1 = 0.0
    M1 = 0.0
    for j in range(nseg):
        for end in range(2):
            X = _row(sa_, j) if end == 0 else _row(sb_, j)
            r = (X[0] - TA[0], X[1] - TA[1], X[2] - TA[2])
            xi = _dot(r, tau) / L
            if 0.0 <= xi <= 1.0:
                ev_ = -_dot(r, nuo) - (1.0 - xi) * HA - xi * HB
                if ev_ > 0.0:
                    W1 += ev_
                    W2 += ev_ * ev_
                    X1 += ev_ * xi
                    M1 += ev_ * smu[j]
    return W1 > 1e-15, W1, W2, X1, M1, L0, L, sa, ca, rA, rB, cA, cB, u, m, nuo, TA, tau


@jit
def _irregularity(e, jac, side, pa, geo, kappa, buf, nseg, n, V, P_, work, pos, R, body_T, body_W, vel, omega, mode,
                  Q, Kx, Kv, on, nc, wout, sout, tout):
    """Factitious irregularity between wheels A = pair_a[pa] and B = pair_b[pa] (Figs. 8-9); ``geo``: the
    pair's :func:`_irregularity_geometry` in this plane, with piercing points."""
    wa = V.pair_a[pa]
    wb = V.pair_b[pa]
    RA = V.wheel_R[wa]
    RB = V.wheel_R[wb]
    A = V.wheel_body[wa]
    B = V.wheel_body[wb]
    _, W1, W2, X1, M1, L0, L, sa, ca, rA, rB, cA, cB, u, m, nuo, TA, tau = geo
    D = W2 / W1
    xib = min(max(X1 / W1, 0.0), 1.0)
    mub = M1 / W1
    p = P_.p_exp
    wA = (1.0 - xib) ** p
    wB = xib ** p
    SA, dSA = depth_area(P_.law, RA, D)
    SB, dSB = depth_area(P_.law, RB, D)
    wAv = (omega[A, 0], omega[A, 1], omega[A, 2])
    wBv = (omega[B, 0], omega[B, 1], omega[B, 2])
    wrA = _cross(wAv, rA)
    wrB = _cross(wBv, rB)
    vA = (vel[A, 0] + wrA[0], vel[A, 1] + wrA[1], vel[A, 2] + wrA[2])
    vB = (vel[B, 0] + wrB[0], vel[B, 1] + wrB[1], vel[B, 2] + wrB[2])
    vl = ((1.0 - xib) * vA[0] + xib * vB[0], (1.0 - xib) * vA[1] + xib * vB[1], (1.0 - xib) * vA[2] + xib * vB[2])
    Dd = _dot(nuo, vl)
    fac = 1.0 + P_.alpha * Dd
    if fac <= 0.0:
        return
    NA = kappa * wA * SA * fac
    NB = kappa * wB * SB * fac
    _basis(e, mode, V.elem_roles, work.el_blk, work.el_done, work.el_T, work.el_W, R, body_T, body_W, nc)
    JA = work.G1
    JB = work.G2
    _point_jacobian(work.el_T[e, 1], work.el_W[e, 1], rA, JA, nc)
    _point_jacobian(work.el_T[e, 2], work.el_W[e, 2], rB, JB, nc)
    P = (TA[0] + xib * L * tau[0], TA[1] + xib * L * tau[1], TA[2] + xib * L * tau[2])
    nuc = (-nuo[0], -nuo[1], -nuo[2])
    tc = _cross(n, nuc)
    mu = min(mub, P_.mu_track)
    N = NA + NB
    FA = (-NA * nuo[0], -NA * nuo[1], -NA * nuo[2])
    FB = (-NB * nuo[0], -NB * nuo[1], -NB * nuo[2])
    if jac == STIFF:
        gA = work.s1
        gB = work.s2
        gD = work.s3
        _jt_vec(JA, nuo, gA, nc)
        _jt_vec(JB, nuo, gB, nc)
        for c in range(nc):
            gD[c] = (1.0 - xib) * gA[c] + xib * gB[c]
        _emit_stiff(e, gA, -NA, -kappa * wA * dSA * fac, gD, -kappa * wA * SA * P_.alpha, gD, Q, Kx, Kv, on, nc)
        _emit_stiff(e, gB, -NB, -kappa * wB * dSB * fac, gD, -kappa * wB * SB * P_.alpha, gD, Q, Kx, Kv, on, nc)
        Ff = _friction_stiff(e, N, nuc, tc, P, mu, True, side, n, V.chassis, V.side_sprocket[side], V.side_rs[side],
                             P_.v0, work.el_T[e, 0], work.el_W[e, 0], work.el_W[e, 3], work.JP, work.G1, work.s14,
                             work.s15, pos, vel, omega, Q, Kx, Kv, on, nc, sout)
    else:
        Ff = _irregularity_full(e, side, buf, nseg, n, V, P_, work, pos, R, vel, omega, mode, Q, Kx, Kv, on, nc,
                                sout, RA, RB, A, B, cA, cB, rA, rB, L0, u, m, sa, ca, nuo, TA, tau, L, xib, D, mub,
                                M1 / W1, wA, wB, SA, dSA, SB, dSB, vA, vB, vl, fac, NA, NB, FA, FB, P, nuc, tc, mu,
                                kappa)
    wout[wa, 0] += NA
    wout[wb, 0] += NB
    for i in range(3):
        tout[i] += FA[i] + FB[i] + Ff[i]
        wout[wa, 3 + i] += NA * P[i]
        wout[wb, 3 + i] += NB * P[i]
    sout[side, 4] = max(sout[side, 4], D)
    sout[side, 7] += 1.0


@jit
def _irregularity_full(e, side, buf, nseg, n, V, P_, work, pos, R, vel, omega, mode, Q, Kx, Kv, on, nc, sout,
                       RA, RB, A, B, cA, cB, rA, rB, L0, u, m, sa, ca, nuo, TA, tau, L, xib, D, mub, mub_raw, wA, wB,
                       SA, dSA, SB, dSB, vA, vB, vl, fac, NA, NB, FA, FB, P, nuc, tc, mu, kappa):
    """FULL Jacobians of a factitious irregularity (values from :func:`_irregularity`); returns the friction."""
    JA = work.G1
    JB = work.G2
    Gn = work.Gn
    Gu = work.G3
    Gm = work.G4
    Gnuo = work.Gnu
    GTA = work.Gt
    Gtau = work.Ga
    gsa = work.s2
    gca = work.s3
    gL = work.s13
    WAr = work.el_W[e, 1]
    WBr = work.el_W[e, 2]
    for c in range(nc):
        ge = (JB[0, c] - JA[0, c], JB[1, c] - JA[1, c], JB[2, c] - JA[2, c])
        gl0 = _dot(u, ge)
        gu = ((ge[0] - u[0] * gl0) / L0, (ge[1] - u[1] * gl0) / L0, (ge[2] - u[2] * gl0) / L0)
        _set_col(Gu, c, gu)
        m1 = _cross(_col(Gn, c), u)
        m2 = _cross(n, gu)
        gm = (m1[0] + m2[0], m1[1] + m2[1], m1[2] + m2[2])
        _set_col(Gm, c, gm)
        gs = -sa / L0 * gl0
        gsa[c] = gs
        gc = -sa / ca * gs
        gca[c] = gc
        for i in range(3):
            Gnuo[i, c] = m[i] * gc + ca * gm[i] + u[i] * gs + sa * gu[i]
            GTA[i, c] = JA[i, c] + RA * Gnuo[i, c]
            Gtau[i, c] = u[i] * gc + ca * gu[i] - m[i] * gs - sa * gm[i]
        gL[c] = ca * gl0 + L0 * gc
    # ---- candidates (piercing points) and end heights, with gradients
    cxi = work.c_xi
    ch = work.c_h
    cmu = work.c_mu
    cGxi = work.c_Gxi
    cGh = work.c_Gh
    GHA = work.s5
    GHB = work.s6
    for c in range(nc):
        GHA[c] = 0.0
        GHB[c] = 0.0
    HA = 0.0
    HB = 0.0
    ncand = 0
    Gx0 = work.s7
    Gh0 = work.s8
    Gx1 = work.s9
    Gh1 = work.s10
    Ga6 = work.G5
    Gb6 = work.G6
    for j in range(nseg):
        ra = (buf.a[j, 0] - TA[0], buf.a[j, 1] - TA[1], buf.a[j, 2] - TA[2])
        rb = (buf.b[j, 0] - TA[0], buf.b[j, 1] - TA[1], buf.b[j, 2] - TA[2])
        xa = _dot(ra, tau) / L
        xb = _dot(rb, tau) / L
        if (xa < 0.0 and xb < 0.0) or (xa > 1.0 and xb > 1.0):
            continue
        ha = -_dot(ra, nuo)
        hb = -_dot(rb, nuo)
        ensure_gradients(buf, j, work.o, n, work.Go6, work.Gn6)
        _embed6(buf.ga[j], Ga6, nc)
        _embed6(buf.gb[j], Gb6, nc)
        for c in range(nc):
            dA = (Ga6[0, c] - GTA[0, c], Ga6[1, c] - GTA[1, c], Ga6[2, c] - GTA[2, c])
            dB = (Gb6[0, c] - GTA[0, c], Gb6[1, c] - GTA[1, c], Gb6[2, c] - GTA[2, c])
            gt = _col(Gtau, c)
            gnu = _col(Gnuo, c)
            Gx0[c] = (_dot(dA, tau) + _dot(ra, gt)) / L - xa * gL[c] / L
            Gx1[c] = (_dot(dB, tau) + _dot(rb, gt)) / L - xb * gL[c] / L
            Gh0[c] = -(_dot(dA, nuo) + _dot(ra, gnu))
            Gh1[c] = -(_dot(dB, nuo) + _dot(rb, gnu))
        for end in range(2):
            xe = xa if end == 0 else xb
            if 0.0 <= xe <= 1.0:
                cxi[ncand] = xe
                ch[ncand] = ha if end == 0 else hb
                cmu[ncand] = buf.mu[j]
                for c in range(nc):
                    cGxi[ncand, c] = Gx0[c] if end == 0 else Gx1[c]
                    cGh[ncand, c] = Gh0[c] if end == 0 else Gh1[c]
                ncand += 1
        if xb != xa:
            for beta in (0.0, 1.0):
                if min(xa, xb) < beta < max(xa, xb):
                    lam = (beta - xa) / (xb - xa)
                    h = ha + (hb - ha) * lam
                    if (beta == 0.0 and h > HA) or (beta == 1.0 and h > HB):
                        G = GHA if beta == 0.0 else GHB
                        for c in range(nc):
                            gl = (-Gx0[c] * (xb - xa) - (beta - xa) * (Gx1[c] - Gx0[c])) / ((xb - xa) * (xb - xa))
                            G[c] = Gh0[c] + gl * (hb - ha) + lam * (Gh1[c] - Gh0[c])
                        if beta == 0.0:
                            HA = h
                        else:
                            HB = h
    # ---- depth-weighted means over the piercing points
    W1 = 0.0
    X1 = 0.0
    M1 = 0.0
    GW1 = work.s7
    GW2 = work.s8
    GX1 = work.s9
    GM1 = work.s10
    for c in range(nc):
        GW1[c] = 0.0
        GW2[c] = 0.0
        GX1[c] = 0.0
        GM1[c] = 0.0
    for q in range(ncand):
        xi = cxi[q]
        ev_ = ch[q] - (1.0 - xi) * HA - xi * HB
        if ev_ <= 0.0:
            continue
        W1 += ev_
        X1 += ev_ * xi
        M1 += ev_ * cmu[q]
        for c in range(nc):
            ge = cGh[q, c] - (1.0 - xi) * GHA[c] - xi * GHB[c] + (HA - HB) * cGxi[q, c]
            GW1[c] += ge
            GW2[c] += 2.0 * ev_ * ge
            GX1[c] += xi * ge + ev_ * cGxi[q, c]
            GM1[c] += cmu[q] * ge
    GD = work.s11
    Gxb = work.s12
    Gmu = work.s1
    x_in = 0.0 < X1 / W1 < 1.0
    for c in range(nc):
        GD[c] = (GW2[c] - D * GW1[c]) / W1
        Gxb[c] = (GX1[c] - (X1 / W1) * GW1[c]) / W1 if x_in else 0.0
        Gmu[c] = (GM1[c] - mub_raw * GW1[c]) / W1 if mub_raw < P_.mu_track else 0.0
    p = P_.p_exp
    dwA = -p * (1.0 - xib) ** (p - 1.0) if xib < 1.0 else 0.0
    dwB = p * xib ** (p - 1.0) if xib > 0.0 else 0.0
    GDd = work.s2
    VDd = work.s3
    WAr = work.el_W[e, 1]
    WBr = work.el_W[e, 2]
    wAv = (omega[A, 0], omega[A, 1], omega[A, 2])
    wBv = (omega[B, 0], omega[B, 1], omega[B, 2])
    wrA = _cross(wAv, rA)
    wrB = _cross(wBv, rB)
    for c in range(nc):
        gvA = _cross(_col(WAr, c), wrA)
        gvB = _cross(_col(WBr, c), wrB)
        gv = ((1.0 - xib) * gvA[0] + xib * gvB[0] + (vB[0] - vA[0]) * Gxb[c],
              (1.0 - xib) * gvA[1] + xib * gvB[1] + (vB[1] - vA[1]) * Gxb[c],
              (1.0 - xib) * gvA[2] + xib * gvB[2] + (vB[2] - vA[2]) * Gxb[c])
        GDd[c] = _dot(_col(Gnuo, c), vl) + _dot(nuo, gv)
        VDd[c] = _dot(nuo, ((1.0 - xib) * JA[0, c] + xib * JB[0, c], (1.0 - xib) * JA[1, c] + xib * JB[1, c],
                            (1.0 - xib) * JA[2, c] + xib * JB[2, c]))
    GNA = work.s4
    VNA = work.s5
    GNB = work.s6
    VNB = work.s7
    for c in range(nc):
        GNA[c] = kappa * (dwA * Gxb[c] * SA * fac + wA * dSA * GD[c] * fac + wA * SA * P_.alpha * GDd[c])
        VNA[c] = kappa * wA * SA * P_.alpha * VDd[c]
        GNB[c] = kappa * (dwB * Gxb[c] * SB * fac + wB * dSB * GD[c] * fac + wB * SB * P_.alpha * GDd[c])
        VNB[c] = kappa * wB * SB * P_.alpha * VDd[c]
    GF = work.GF
    VF = work.VF
    for role in range(2):
        Nf = NA if role == 0 else NB
        GNf = GNA if role == 0 else GNB
        VNf = VNA if role == 0 else VNB
        if Nf <= 0.0:
            continue
        for c in range(nc):
            for i in range(3):
                GF[i, c] = -(nuo[i] * GNf[c] + Nf * Gnuo[i, c])
                VF[i, c] = -nuo[i] * VNf[c]
        if role == 0:
            _emit_force(e, 1, A, cA, FA, GF, VF, JA, work, pos, R, mode, Q, Kx, Kv, on, nc)
        else:
            _emit_force(e, 2, B, cB, FB, GF, VF, JB, work, pos, R, mode, Q, Kx, Kv, on, nc)
    # friction at the irregularity: on the track line at ξ̄, normal load NA + NB
    GN = work.s8
    VN = work.s9
    for c in range(nc):
        GN[c] = GNA[c] + GNB[c]
        VN[c] = VNA[c] + VNB[c]
    GP = work.G1  # JA is no longer needed
    for c in range(nc):
        for i in range(3):
            GP[i, c] = GTA[i, c] + tau[i] * (L * Gxb[c] + xib * gL[c]) + xib * L * Gtau[i, c]
    Gnuc = work.G2  # JB is no longer needed
    Gtc = work.G3
    for c in range(nc):
        for i in range(3):
            Gnuc[i, c] = -Gnuo[i, c]
        t1 = _cross(_col(Gn, c), nuc)
        t2 = _cross(n, _col(Gnuc, c))
        _set_col(Gtc, c, (t1[0] + t2[0], t1[1] + t2[1], t1[2] + t2[2]))
    return _friction(e, NA + NB, GN, VN, nuc, Gnuc, tc, Gtc, P, GP, mu, Gmu, True, True, side, n, V, P_, work,
                     pos, R, vel, omega, mode, Q, Kx, Kv, on, nc, sout)


# --------------------------------------------------------------------------- hull
@jit
def _hull_contact(e, jac, C, X, nu, Gnu, delta, Gdelta, K, mu, tc, Gtc, GX, n, V, P_, work, pos, R, vel, omega,
                  mode, Q, Kx, Kv, on, nc, hout, tout):
    """Normal force ``K δ^{3/2} (1 + α δ̇)`` along ν on the hull at X (gradient GX, FULL) and friction."""
    WC = work.el_W[e, 0]
    TC = work.el_T[e, 0]
    wC = (omega[C, 0], omega[C, 1], omega[C, 2])
    rho = (X[0] - pos[C, 0], X[1] - pos[C, 1], X[2] - pos[C, 2])
    wxr = _cross(wC, rho)
    vX = (vel[C, 0] + wxr[0], vel[C, 1] + wxr[1], vel[C, 2] + wxr[2])
    ddot = -_dot(vX, nu)
    fac = 1.0 + P_.alpha * ddot
    if fac <= 0.0 or delta <= 0.0:
        return
    JX = work.J
    _point_jacobian(TC, WC, rho, JX, nc)
    d15 = delta ** 1.5
    N = K * d15 * fac
    F = (N * nu[0], N * nu[1], N * nu[2])
    if jac == STIFF:
        g = work.s14
        _jt_vec(JX, nu, g, nc)
        _emit_stiff(e, g, N, -K * 1.5 * math.sqrt(delta) * fac, g, -K * d15 * P_.alpha, g, Q, Kx, Kv, on, nc)
        Ff = _friction_stiff(e, N, nu, tc, X, mu, False, 0, n, V.chassis, -1, 0.0, P_.v0, work.el_T[e, 0],
                             work.el_W[e, 0], work.el_W[e, 3], work.JP, work.G1, work.s14, work.s15, pos, vel, omega,
                             Q, Kx, Kv, on, nc, work.sdummy)
    else:
        GN = work.s14
        VN = work.s15
        for c in range(nc):
            a1 = _cross(_cross(_col(WC, c), wC), rho)
            a2 = _cross(wC, (GX[0, c] - TC[0, c], GX[1, c] - TC[1, c], GX[2, c] - TC[2, c]))
            gv = (a1[0] + a2[0], a1[1] + a2[1], a1[2] + a2[2])
            gdd = -(_dot(gv, nu) + _dot(vX, _col(Gnu, c)))
            vdd = -_dot(_col(JX, c), nu)
            GN[c] = K * (1.5 * math.sqrt(delta) * Gdelta[c] * fac + d15 * P_.alpha * gdd)
            VN[c] = K * d15 * P_.alpha * vdd
        GF = work.GF
        VF = work.VF
        _normal_force_grads(nu, N, GN, VN, Gnu, GF, VF, nc)
        _emit_force(e, 0, C, X, F, GF, VF, GX, work, pos, R, mode, Q, Kx, Kv, on, nc)
        Ff = _friction(e, N, GN, VN, nu, Gnu, tc, Gtc, X, GX, mu, GN, False, False, 0, n, V, P_, work, pos, R,
                       vel, omega, mode, Q, Kx, Kv, on, nc, work.sdummy)
    for i in range(3):
        hout[i] += F[i] + Ff[i]
        tout[i] += F[i] + Ff[i]
    hout[3] = max(hout[3], delta)
    k = int(hout[4])
    if 5 + 4 * k + 3 < hout.shape[0]:
        hout[5 + 4 * k] = X[0]
        hout[6 + 4 * k] = X[1]
        hout[7 + 4 * k] = X[2]
        hout[8 + 4 * k] = N
    hout[4] += 1.0


@jit
def _hull_plane(e, jac, hp, buf, nseg, n, V, P_, work, pos, R, body_T, body_W, vel, omega, mode, Q, Kx, Kv, on, nc,
                hout, tout):
    """The hull's section in this plane (a convex polygon, hull frame x z: corners ``hpoly_v``, edge k from
    corner k to k+1 with outward normal and offset ``hpoly_n[k]``) against the slice: its corners in the
    ground, ground corners in it (pushed out through its nearest edge)."""
    C = V.chassis
    yb = V.hplane_y[hp]
    K = V.hplane_kappa[hp]
    k0 = V.hplane_ptr[hp]
    k1 = V.hplane_ptr[hp + 1]
    dmax = V.hplane_dmax[hp]
    Gn = work.Gn
    Gnu = work.Gnu
    Gt = work.Gt
    Ga = work.Ga
    GX = work.G4
    Gd = work.s13
    for corner in range(k0, k1):
        sb = (V.hpoly_v[corner, 0], yb, V.hpoly_v[corner, 1])
        rho = _mat_vec(R, C, sb)
        X = (pos[C, 0] + rho[0], pos[C, 1] + rho[1], pos[C, 2] + rho[2])
        for j in range(nseg):
            r = (X[0] - buf.a[j, 0], X[1] - buf.a[j, 1], X[2] - buf.a[j, 2])
            nu = _row(buf.nu, j)
            d = _dot(r, nu)
            if not (-dmax < d < 0.0):
                continue
            t = _row(buf.t, j)
            x = _dot(r, t)
            L = buf.L[j]
            if x < 0.0 or x > L:
                continue
            delta = -d
            if buf.ka[j] >= 0.0 and delta > buf.ka[j] * x:
                continue
            if buf.kb[j] >= 0.0 and delta > buf.kb[j] * (L - x):
                continue
            _basis(e, mode, V.elem_roles, work.el_blk, work.el_done, work.el_T, work.el_W, R, body_T, body_W, nc)
            if jac == FULL:
                ensure_gradients(buf, j, work.o, n, work.Go6, work.Gn6)
                _point_jacobian(work.el_T[e, 0], work.el_W[e, 0], rho, GX, nc)
                _embed6(buf.ga[j], Ga, nc)
                _embed6(buf.gnu[j], Gnu, nc)
                _embed6(buf.gt[j], Gt, nc)
                for c in range(nc):
                    Gd[c] = -(_dot((GX[0, c] - Ga[0, c], GX[1, c] - Ga[1, c], GX[2, c] - Ga[2, c]), nu)
                              + _dot(r, _col(Gnu, c)))
            _hull_contact(e, jac, C, X, nu, Gnu, delta, Gd, K, min(buf.mu[j], P_.mu_hull), t, Gt, GX, n, V, P_,
                          work, pos, R, vel, omega, mode, Q, Kx, Kv, on, nc, hout, tout)
    # ground corners inside the polygon: every segment's start, and the end of a chain's last segment
    ex = (R[C, 0, 0], R[C, 1, 0], R[C, 2, 0])
    ez = (R[C, 0, 2], R[C, 1, 2], R[C, 2, 2])
    Gnuc = work.G3
    Gtc = work.G10
    for j in range(nseg):
        for end in range(2):
            if end == 1 and buf.next[j] >= 0:
                continue
            Vp = _row(buf.a, j) if end == 0 else _row(buf.b, j)
            rho = (Vp[0] - pos[C, 0], Vp[1] - pos[C, 1], Vp[2] - pos[C, 2])
            xb = _dot(rho, ex)
            zb = _dot(rho, ez)
            # the nearest edge (depth inside it); outside any edge: not inside
            dep = 1e300
            kb = -1
            for k in range(k0, k1):
                dk = V.hpoly_n[k, 2] - V.hpoly_n[k, 0] * xb - V.hpoly_n[k, 1] * zb
                if dk <= 0.0:
                    kb = -1
                    break
                if dk < dep:
                    dep = dk
                    kb = k
            if kb < 0:
                continue
            ax = -V.hpoly_n[kb, 0]
            az = -V.hpoly_n[kb, 1]
            nu = (ax * ex[0] + az * ez[0], ax * ex[1] + az * ez[1], ax * ex[2] + az * ez[2])
            tc = _cross(n, nu)
            _basis(e, mode, V.elem_roles, work.el_blk, work.el_done, work.el_T, work.el_W, R, body_T, body_W, nc)
            if jac == FULL:
                ensure_gradients(buf, j, work.o, n, work.Go6, work.Gn6)
                TC = work.el_T[e, 0]
                WC = work.el_W[e, 0]
                _embed6(buf.ga[j] if end == 0 else buf.gb[j], GX, nc)
                for c in range(nc):
                    ge = _cross(_col(WC, c), nu)
                    _set_col(Gnuc, c, ge)
                    Gd[c] = (_dot((GX[0, c] - TC[0, c], GX[1, c] - TC[1, c], GX[2, c] - TC[2, c]), nu)
                             + _dot(rho, ge))
                    t1 = _cross(_col(Gn, c), nu)
                    t2 = _cross(n, _col(Gnuc, c))
                    _set_col(Gtc, c, (t1[0] + t2[0], t1[1] + t2[1], t1[2] + t2[2]))
            _hull_contact(e, jac, C, Vp, nu, Gnuc, dep, Gd, K, min(buf.mu[j], P_.mu_hull), tc, Gtc, GX, n, V, P_,
                          work, pos, R, vel, omega, mode, Q, Kx, Kv, on, nc, hout, tout)


@jit
def _section_clear(T, V, hp, y, pos, R, C, margin):
    """Whether the hull's section in plane hp (at hull y ``y``) lies above every terrain part.

    Above a plane: ``N·(X - P) > margin`` at every corner; above a profile: higher than its highest vertex;
    a mesh: outside its hierarchy's root box. Then the section can neither reach into the ground nor hold a
    ground point, and its plane needs no slice (the hull planes are 6 of the 10 slices of an M113 step).
    """
    k0 = V.hplane_ptr[hp]
    k1 = V.hplane_ptr[hp + 1]
    lo = (1e300, 1e300, 1e300)
    hi = (-1e300, -1e300, -1e300)
    for k in range(k0, k1):
        w = _mat_vec(R, C, (V.hpoly_v[k, 0], y, V.hpoly_v[k, 1]))
        X = (pos[C, 0] + w[0], pos[C, 1] + w[1], pos[C, 2] + w[2])
        for p in range(T.pl_n.shape[0]):
            if ((X[0] - T.pl_p[p, 0]) * T.pl_n[p, 0] + (X[1] - T.pl_p[p, 1]) * T.pl_n[p, 1]
                    + (X[2] - T.pl_p[p, 2]) * T.pl_n[p, 2]) <= margin:
                return False
        for p in range(T.pr_ztop.shape[0]):
            if X[2] <= T.pr_ztop[p] + margin:
                return False
        lo = (min(lo[0], X[0]), min(lo[1], X[1]), min(lo[2], X[2]))
        hi = (max(hi[0], X[0]), max(hi[1], X[1]), max(hi[2], X[2]))
    for r in range(T.me_root.shape[0] - 1):
        root = T.me_root[r]
        overlap = True
        for i in range(3):
            if hi[i] < T.bvh_min[root, i] - margin or lo[i] > T.bvh_max[root, i] + margin:
                overlap = False
        if overlap:
            return False
    return True


@jit
def _segments_near(X, r, a, t, L, nseg):
    """Whether any slice segment (start ``a``, unit direction ``t``, length ``L``) passes within ``r`` of X."""
    r2 = r * r
    for j in range(nseg):
        w = (X[0] - a[j, 0], X[1] - a[j, 1], X[2] - a[j, 2])
        x = min(max(w[0] * t[j, 0] + w[1] * t[j, 1] + w[2] * t[j, 2], 0.0), L[j])
        dx = w[0] - x * t[j, 0]
        dy = w[1] - x * t[j, 1]
        dz = w[2] - x * t[j, 2]
        if dx * dx + dy * dy + dz * dz <= r2:
            return True
    return False


# --------------------------------------------------------------------------- one evaluation
@jit
def evaluate(mode, jac, T, V, P_, pos, R, vel, omega, body_T, body_W, buf, work, Q, Kx, Kv, on, wout, sout, hout,
             tout, flags):
    """All track and hull forces of one state into the element arrays (see the module docstring).

    ``pos, R, vel, omega``: world kinematics of the bodies (``omega`` world
    frame); ``body_T, body_W`` (nb, 3, 7): reduced-coordinate bases (REDUCED
    only). Element e holds ``Q (nc,)``, ``Kx, Kv (nc, nc)`` where ``on[e]``.
    """
    nc = NC_ABS if mode == ABSOLUTE else NC_RED
    C = V.chassis
    for e in range(V.elem_roles.shape[0]):
        on[e] = False
        work.el_done[e] = False
    wout[:] = 0.0
    sout[:] = 0.0
    hout[:] = 0.0
    tout[:] = 0.0
    flags[:] = 0.0
    n = (R[C, 0, 1], R[C, 1, 1], R[C, 2, 1])
    ex = (R[C, 0, 0], R[C, 1, 0], R[C, 2, 0])
    Gn6 = work.Gn6
    Go6 = work.Go6
    for c in range(3):
        Gn6[0, c] = 0.0
        Gn6[1, c] = 0.0
        Gn6[2, c] = 0.0
        _set_col(Gn6, 3 + c, _cross((R[C, 0, c], R[C, 1, c], R[C, 2, c]), n))
    _embed6(Gn6, work.Gn, nc)
    npl = V.plane_y.shape[0]
    nhp = V.hplane_y.shape[0]
    for pl in range(npl + nhp):
        y = V.plane_y[pl] if pl < npl else V.hplane_y[pl - npl]
        oo = (R[C, 0, 1] * y, R[C, 1, 1] * y, R[C, 2, 1] * y)
        o = (pos[C, 0] + oo[0], pos[C, 1] + oo[1], pos[C, 2] + oo[2])
        for i in range(3):
            work.o[i] = o[i]
        for c in range(3):
            for i in range(3):
                Go6[i, c] = 1.0 if i == c else 0.0
            _set_col(Go6, 3 + c, _cross((R[C, 0, c], R[C, 1, c], R[C, 2, c]), oo))
        lo = (1e300, 1e300, 1e300)
        hi = (-1e300, -1e300, -1e300)
        for q in range(4):
            w = _mat_vec(R, C, (V.win_lo[0] if q % 2 == 0 else V.win_hi[0], y, V.win_lo[1] if q < 2 else V.win_hi[1]))
            for i in range(3):
                work.win[q, i] = pos[C, i] + w[i]
            lo = (min(lo[0], work.win[q, 0]), min(lo[1], work.win[q, 1]), min(lo[2], work.win[q, 2]))
            hi = (max(hi[0], work.win[q, 0]), max(hi[1], work.win[q, 1]), max(hi[2], work.win[q, 2]))
        if pl >= npl and _section_clear(T, V, pl - npl, y, pos, R, C, 1e-6):
            continue  # a hull section above the whole terrain touches nothing: no slice
        buf.n[0] = 0
        # only the terrain kinds present: each call passes the terrain and slice tuples (~450 words)
        if T.pr_ptr.shape[0] > 1 and not slice_profiles(T, o, n, work.win, buf, P_.min_dn):
            flags[0] = 1.0
        if T.pl_n.shape[0] > 0:
            slice_planes(T, o, n, ex, P_.plane_half, buf)
        if T.mF.shape[0] > 0:
            slice_meshes(T, o, n, (lo[0] - 0.01, lo[1] - 0.01, lo[2] - 0.01),
                         (hi[0] + 0.01, hi[1] + 0.01, hi[2] + 0.01), buf)
        nseg = buf.n[0]
        if nseg > buf.a.shape[0]:
            flags[1] = max(flags[1], float(nseg))
            nseg = buf.a.shape[0]
        corner_slopes(buf, n)
        if pl < npl:
            side = V.plane_side[pl]
            kappa = V.plane_kappa[pl]
            for wk in range(V.wheel_body.shape[0]):
                if V.wheel_side[wk] != side:
                    continue
                b = V.wheel_body[wk]
                rho = _mat_vec(R, b, (0.0, y - V.wheel_y[wk], 0.0))
                p = (pos[b, 0] + rho[0], pos[b, 1] + rho[1], pos[b, 2] + rho[2])
                if not _wheel_reach(p, V.wheel_R[wk], buf, nseg):
                    continue
                e = V.wheel_elem[wk]
                _basis(e, mode, V.elem_roles, work.el_blk, work.el_done, work.el_T, work.el_W, R, body_T, body_W, nc)
                w = (omega[b, 0], omega[b, 1], omega[b, 2])
                wr = _cross(w, rho)
                pd = (vel[b, 0] + wr[0], vel[b, 1] + wr[1], vel[b, 2] + wr[2])
                _point_jacobian(work.el_T[e, 1], work.el_W[e, 1], rho, work.J, nc)
                if jac == FULL:
                    W = work.el_W[e, 1]
                    for c in range(nc):
                        _set_col(work.Gv, c, _cross(_col(W, c), wr))
                Rw = V.wheel_R[wk]
                for j in range(nseg):
                    # the reach test of _wheel_segment before the call: a call passes every work array (a few
                    # thousand words), most segments of a long slice are out of reach
                    w0 = (p[0] - buf.a[j, 0], p[1] - buf.a[j, 1], p[2] - buf.a[j, 2])
                    d = w0[0] * buf.nu[j, 0] + w0[1] * buf.nu[j, 1] + w0[2] * buf.nu[j, 2]
                    x = w0[0] * buf.t[j, 0] + w0[1] * buf.t[j, 1] + w0[2] * buf.t[j, 2]
                    if d <= -Rw or d >= Rw or x < -Rw or x > buf.L[j] + Rw:
                        continue
                    _wheel_segment(e, jac, side, wk, j, p, pd, kappa, buf, n, V, P_, work, pos, R, vel, omega, mode,
                                   Q, Kx, Kv, on, nc, wout, sout, tout)
            if P_.irregularities:
                for pa in range(V.pair_a.shape[0]):
                    if V.pair_side[pa] != side:
                        continue
                    geo = _irregularity_geometry(pa, y, n, V.pair_a, V.pair_b, V.wheel_R, V.wheel_body, V.wheel_y,
                                                 buf.a, buf.b, buf.mu, nseg, pos, R)
                    if geo[0]:
                        _irregularity(V.pair_elem[pa], jac, side, pa, geo, kappa, buf, nseg, n, V, P_, work, pos, R,
                                      body_T, body_W, vel, omega, mode, Q, Kx, Kv, on, nc, wout, sout, tout)
        else:
            hp = pl - npl
            # every contact of the section lies within its farthest corner (+ the deepest corner depth) of its
            # centre
            ctr = _mat_vec(R, C, (V.hplane_ctr[hp, 0], y, V.hplane_ctr[hp, 1]))
            if _segments_near((pos[C, 0] + ctr[0], pos[C, 1] + ctr[1], pos[C, 2] + ctr[2]), V.hplane_reach[hp],
                              buf.a, buf.t, buf.L, nseg):
                _hull_plane(V.hull_elem, jac, hp, buf, nseg, n, V, P_, work, pos, R, body_T, body_W, vel, omega,
                            mode, Q, Kx, Kv, on, nc, hout, tout)
    for s_ in range(2):
        S = V.side_sprocket[s_]
        sout[s_, 3] = V.side_rs[s_] * ((omega[S, 0] - omega[C, 0]) * n[0] + (omega[S, 1] - omega[C, 1]) * n[1]
                                       + (omega[S, 2] - omega[C, 2]) * n[2])
        if sout[s_, 5] > 0.0:
            sout[s_, 2] /= sout[s_, 5]


# --------------------------------------------------------------------------- sinks
@jit
def scatter_absolute(roles, blk, Q, Kx, Kv, on, slot, cK, cD, v, f, data, Dv, Kxv, stepping):
    """Element forces into f (nb, 6); ``-cK Kx - cD Kv`` (symmetric part) into the KKT values.

    As :func:`trackdyn.mbs._force_kernels.scatter_elements`, for elements of
    up to four bodies (a role sharing another's body has no block of its
    own); coupling entries not in the pattern go to ``Kxv`` (position terms
    times v), so the step keeps the exact linearisation.
    """
    for e in range(roles.shape[0]):
        if not on[e]:
            continue
        for k in range(4):
            b = roles[e, k]
            if b < 0 or blk[e, k] != k:
                continue
            for i in range(6):
                f[b, i] += Q[e, 6 * k + i]
        if not stepping:
            continue
        for a in range(24):
            ka = a // 6
            ba = roles[e, ka]
            if ba < 0 or blk[e, ka] != ka:
                continue
            for c in range(a, 24):
                kc = c // 6
                bc = roles[e, kc]
                if bc < 0 or blk[e, kc] != kc:
                    continue
                # the entry of mbs._force_kernels.scatter_elements, written out on purpose (its docstring: a
                # shared helper made the scatter 7-11x slower)
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


@jit
def scatter_reduced(gmap, Q, Kx, Kv, on, Qu, Ku, Du):
    """Element forces and Jacobians in reduced coordinates into the global arrays (gmap (E, 9): -1 unused)."""
    for e in range(gmap.shape[0]):
        if not on[e]:
            continue
        for a in range(NC_RED):
            ga = gmap[e, a]
            if ga < 0:
                continue
            Qu[ga] += Q[e, a]
            for c in range(NC_RED):
                gc = gmap[e, c]
                if gc < 0:
                    continue
                Ku[ga, gc] += Kx[e, a, c]
                Du[ga, gc] += Kv[e, a, c]
