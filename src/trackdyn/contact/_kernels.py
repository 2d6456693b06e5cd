"""Numba kernels of the contact force stage: geometry, laws, history, assembly.

Every active contact is a record (see :class:`~trackdyn.contact._buffers.ContactBuffer`)
written by the narrow phase: two sides ``A`` and ``B`` (body indices, ``-1`` =
ground), a *witness point* ``c`` on side A and a *target* on side B, all
given in body frames, so that the force is a function of the state alone and
its derivatives are exact. Witness points (``pmode``):

- ``PM_FIXED``: a body-fixed point of A;
- ``PM_LINE``: a body-fixed line of one side cut by a body-fixed plane of the
  other (a shoe pin cut by a sprocket gear plane, a terrain edge cut by a
  station plane of a box).

Kinds of target (the contact normal ``n`` is the direction in which B is pushed):

- ``K_PP`` point with radius (sphere–sphere, vertex, gear arc as a circle);
- ``K_PL`` line with radius (cylinder axis, edge, half-round axis, gear arc axis);
- ``K_PN`` plane (face, terrain plane, segment);
- ``K_DN`` plane touched by a disc of A (wheel rim on a face).

``conc = -1`` marks an internal contact (A inside a concave circle or cylinder of B).

Laws (thesis eq. 2.16-2.19 with Chrono's SMC conventions; han-sander-mao eq. 28;
Winkler, han-sander-mao §5) are listed at :data:`LAW_NAMES`. Columns of
Jacobians are ``(r_A, π̄_A, r_B, π̄_B)`` for positions and ``(ṙ_A, ω̄_A, ṙ_B,
ω̄_B)`` for velocities; ``π̄`` is the body-frame virtual rotation, so
``∂(A ū)/∂π̄_m = A (e_m × ū)``.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from ._vec import mat_tvec, mat_vec, vcross, vdot, vnorm, vscale, vsub

SIDE_A = np.int64(0)
SIDE_B = np.int64(1)
# kinds of target
K_PP = np.int64(0)
K_PL = np.int64(1)
K_PN = np.int64(2)
K_DN = np.int64(3)
# witness point modes
PM_FIXED = np.int64(0)
PM_LINE = np.int64(1)
# laws
L_HERTZ = np.int64(0)
L_HERTZ_GIVEN = np.int64(1)
L_HOOKE = np.int64(2)
L_HOOKE_GIVEN = np.int64(3)
L_KV = np.int64(4)
L_WINKLER = np.int64(5)
LAW_NAMES = ("hertz", "hertz-given", "hooke", "hooke-given", "kelvin-voigt", "winkler")
# Winkler geometry of a record
W_POINT = np.int64(0)
W_DISC = np.int64(1)
W_SPHERE = np.int64(2)
# columns of the pair parameter table
P_MU = 0
P_E = 1
P_G = 2
P_CDAMP = 3
P_KN = 4
P_KT = 5
P_GN = 6
P_GT = 7
P_VSLIP = 8
P_VCHAR = 9
P_RAMP = 10
N_PAR = 11

# Kernels that do not allocate run without reference counting (``_nrt=False``): a call passing the
# record buffers would otherwise count references of each of their arrays (~0.5 µs per call).
jit = nb.njit(cache=True, _nrt=False, error_model="numpy")
jit_inline = nb.njit(cache=True, _nrt=False, inline="always", error_model="numpy")
jit_alloc = nb.njit(cache=True, error_model="numpy")


# --------------------------------------------------------------------------- small helpers
@jit_inline
def _e(m):
    return (1.0 if m == 0 else 0.0, 1.0 if m == 1 else 0.0, 1.0 if m == 2 else 0.0)


@jit_inline
def _col(M, c):
    return (M[0, c], M[1, c], M[2, c])


@jit_inline
def _setcol(M, c, a):
    M[0, c] = a[0]
    M[1, c] = a[1]
    M[2, c] = a[2]


@jit_inline
def _addcol(M, c, a):
    M[0, c] += a[0]
    M[1, c] += a[1]
    M[2, c] += a[2]


@jit_inline
def _zero(M):
    for a in range(M.shape[0]):
        for b in range(M.shape[1]):
            M[a, b] = 0.0


@jit_inline
def _zero_used(M, bA, bB):
    """Zero what the records of bodies (bA, bB) write into a 12 x 12 element: its 6 x 6 diagonal block when one
    side is the ground (a shoe on the terrain: 36 of 144 entries), all of it otherwise."""
    if bA >= 0 and bB >= 0:
        _zero(M)
        return
    o = 0 if bA >= 0 else 6
    for a in range(o, o + 6):
        for b in range(o, o + 6):
            M[a, b] = 0.0


@jit_inline
def _row(M, i):
    return (M[i, 0], M[i, 1], M[i, 2])


@jit_inline
def point_jac(M, side, R, b, sbar):
    """M[:, side block] += ∂(r_b + R_b s̄)/∂(r_b, π̄_b) (nothing for the ground)."""
    if b < 0:
        return
    o = 6 * side
    for k in range(3):
        M[k, o + k] += 1.0
    for m in range(3):
        _addcol(M, o + 3 + m, mat_vec(R, b, vcross(_e(m), sbar)))


@jit_inline
def dir_jac(M, side, R, b, ebar):
    """M[:, side block] += ∂(R_b ē)/∂π̄_b."""
    if b < 0:
        return
    o = 6 * side
    for m in range(3):
        _addcol(M, o + 3 + m, mat_vec(R, b, vcross(_e(m), ebar)))


@jit_inline
def _bpoint(pos, R, b, sbar):
    w = mat_vec(R, b, sbar)
    return (pos[b, 0] + w[0], pos[b, 1] + w[1], pos[b, 2] + w[2])


# --------------------------------------------------------------------------- witness point
@jit_inline
def witness_point(pmode, bA, bB, lside, pa, da, sp, sn, pos, R, cx, t1, t2, de, dm, c0, c1, jac):
    """World witness point c of side A and, with ``jac``, ∂c/∂x into cx (3, 12); t1, t2, de, dm scratch (3, 12)."""
    if pmode == PM_FIXED:
        if jac:
            _zero(cx)
            point_jac(cx, SIDE_A, R, bA, pa)
        return _bpoint(pos, R, bA, pa)
    # line on side `lside`, plane on the other side
    bl = bA if lside == 0 else bB
    bp = bB if lside == 0 else bA
    ps = 1 - lside
    a = _bpoint(pos, R, bl, pa)
    e = mat_vec(R, bl, da)
    S = _bpoint(pos, R, bp, sp)
    m = mat_vec(R, bp, sn)
    me = vdot(m, e)
    w = vsub(S, a)
    t = vdot(m, w) / me
    if not jac:
        return (a[0] + t * e[0], a[1] + t * e[1], a[2] + t * e[2])
    _zero(cx)
    # t1 = ∂a/∂x, t2 = ∂S/∂x ; dt = [dm·(S-a) + m·(dS - da) - t (dm·e + m·de)] / (m·e)
    _zero(t1)
    _zero(t2)
    point_jac(t1, lside, R, bl, pa)
    point_jac(t2, ps, R, bp, sp)
    _zero(de)
    _zero(dm)
    dir_jac(de, lside, R, bl, da)
    dir_jac(dm, ps, R, bp, sn)
    for c in range(c0, c1):
        dmc = _col(dm, c)
        dec = _col(de, c)
        dt = (vdot(dmc, w) + vdot(m, vsub(_col(t2, c), _col(t1, c))) - t * (vdot(dmc, e) + vdot(m, dec))) / me
        for k in range(3):
            cx[k, c] = t1[k, c] + e[k] * dt + t * dec[k]
    return (a[0] + t * e[0], a[1] + t * e[1], a[2] + t * e[2])


# --------------------------------------------------------------------------- kinds
@jit
def contact_geometry(kind, conc, bA, bB, c, cx, ra, rb, tb, te, da, pos, R,
                     dx, nx, px, t1, t2, t3, c0, c1, jac):
    """Penetration δ, normal n (B pushed along n), contact point p and, with ``jac``, their x-derivatives.

    Returns (δ, n, p); fills dx (12,), nx (3, 12), px (3, 12) (untouched without ``jac``). t1..t3 scratch
    (3, 12).
    """
    if jac:
        for k in range(12):
            dx[k] = 0.0
        _zero(nx)
        _zero(px)
    else:
        c1 = c0  # no columns
    if kind == K_PP:
        cB = _bpoint(pos, R, bB, tb)
        if jac:
            _zero(t1)
            point_jac(t1, SIDE_B, R, bB, tb)  # ∂cB
        d = vsub(cB, c)
        L = vnorm(d)
        u = vscale(1.0 / L, d)
        # t2 = ∂d ; t3 = ∂u
        for col in range(c0, c1):
            dd = vsub(_col(t1, col), _col(cx, col))
            _setcol(t2, col, dd)
            ud = vdot(u, dd)
            _setcol(t3, col, vscale(1.0 / L, vsub(dd, vscale(ud, u))))
        if conc > 0:
            delta = ra + rb - L
            n = u
            sgn = 1.0
            sa = 1.0
        else:
            delta = L + ra - rb
            n = vscale(-1.0, u)
            sgn = -1.0
            sa = -1.0
        wA = (c[0] + sa * ra * u[0], c[1] + sa * ra * u[1], c[2] + sa * ra * u[2])
        wB = (cB[0] - rb * u[0], cB[1] - rb * u[1], cB[2] - rb * u[2])
        p = (0.5 * (wA[0] + wB[0]), 0.5 * (wA[1] + wB[1]), 0.5 * (wA[2] + wB[2]))
        f = 0.5 * (sa * ra - rb)
        for col in range(c0, c1):
            dx[col] = -sgn * vdot(u, _col(t2, col))
            for k in range(3):
                nx[k, col] = sgn * t3[k, col]
                px[k, col] = 0.5 * (cx[k, col] + t1[k, col]) + f * t3[k, col]
        return delta, n, p
    if kind == K_PL:
        a = _bpoint(pos, R, bB, tb)
        e = mat_vec(R, bB, te)
        if jac:
            _zero(t1)
            _zero(t2)
            point_jac(t1, SIDE_B, R, bB, tb)  # ∂a
            dir_jac(t2, SIDE_B, R, bB, te)  # ∂e
        w = vsub(c, a)
        s = vdot(w, e)
        f = (a[0] + s * e[0], a[1] + s * e[1], a[2] + s * e[2])
        d = vsub(c, f)
        L = vnorm(d)
        u = vscale(1.0 / L, d)
        if conc > 0:
            delta = ra + rb - L
            n = vscale(-1.0, u)
            sgn = -1.0
            sa = 1.0
        else:
            delta = L + ra - rb
            n = u
            sgn = 1.0
            sa = -1.0
        g = 0.5 * (rb - sa * ra)
        p = (0.5 * (c[0] + f[0]) + g * u[0], 0.5 * (c[1] + f[1]) + g * u[1], 0.5 * (c[2] + f[2]) + g * u[2])
        for col in range(c0, c1):
            wc = vsub(_col(cx, col), _col(t1, col))
            ec = _col(t2, col)
            sc = vdot(wc, e) + vdot(w, ec)
            fc = (t1[0, col] + e[0] * sc + s * ec[0], t1[1, col] + e[1] * sc + s * ec[1],
                  t1[2, col] + e[2] * sc + s * ec[2])
            dd = vsub(_col(cx, col), fc)
            ud = vdot(u, dd)
            uc = vscale(1.0 / L, vsub(dd, vscale(ud, u)))
            dx[col] = -ud if conc > 0 else ud
            for k in range(3):
                nx[k, col] = sgn * uc[k]
                px[k, col] = 0.5 * (cx[k, col] + fc[k]) + g * uc[k]
        return delta, n, p
    # planes: PN and DN
    P = _bpoint(pos, R, bB, tb)
    nB = mat_vec(R, bB, te)
    if jac:
        _zero(t1)
        _zero(t2)
        point_jac(t1, SIDE_B, R, bB, tb)  # ∂P
        dir_jac(t2, SIDE_B, R, bB, te)  # ∂nB
    cp = vsub(c, P)
    n = vscale(-1.0, nB)
    if kind == K_PN:
        dist = vdot(nB, cp)
        delta = ra - dist
        h = 0.5 * (ra + dist)
        p = (c[0] - h * nB[0], c[1] - h * nB[1], c[2] - h * nB[2])
        for col in range(c0, c1):
            nc = _col(t2, col)
            distc = vdot(nB, vsub(_col(cx, col), _col(t1, col))) + vdot(cp, nc)
            dx[col] = -distc
            for k in range(3):
                nx[k, col] = -nc[k]
                px[k, col] = cx[k, col] - 0.5 * distc * nB[k] - h * nc[k]
        return delta, n, p
    # K_DN: disc of A (centre c, axis R_A da, radius ra) on the plane of B
    ax = mat_vec(R, bA, da)
    if jac:
        _zero(t3)
        dir_jac(t3, SIDE_A, R, bA, da)  # ∂a
    kk = vdot(nB, ax)
    wv = (nB[0] - kk * ax[0], nB[1] - kk * ax[1], nB[2] - kk * ax[2])
    W = vnorm(wv)
    wh = vscale(1.0 / W, wv)
    s = (c[0] - ra * wh[0], c[1] - ra * wh[1], c[2] - ra * wh[2])
    dist = vdot(nB, cp) - ra * W
    delta = -dist
    p = (s[0] + 0.5 * delta * nB[0], s[1] + 0.5 * delta * nB[1], s[2] + 0.5 * delta * nB[2])
    for col in range(c0, c1):
        nc = _col(t2, col)
        ac = _col(t3, col)
        kc = vdot(ax, nc) + vdot(nB, ac)
        Wc = -kk * kc / W
        distc = vdot(nB, vsub(_col(cx, col), _col(t1, col))) + vdot(cp, nc) - ra * Wc
        wvc = (nc[0] - kc * ax[0] - kk * ac[0], nc[1] - kc * ax[1] - kk * ac[1], nc[2] - kc * ax[2] - kk * ac[2])
        whd = vdot(wh, wvc)
        dx[col] = -distc
        for k in range(3):
            whc = (wvc[k] - whd * wh[k]) / W
            sc = cx[k, col] - ra * whc
            nx[k, col] = -nc[k]
            px[k, col] = sc - 0.5 * distc * nB[k] + 0.5 * delta * nc[k]
    return delta, n, p


# --------------------------------------------------------------------------- relative velocity
@jit_inline
def _body_w(v, b):
    if b < 0:
        return (0.0, 0.0, 0.0)
    return (v[b, 3], v[b, 4], v[b, 5])


@jit_inline
def relative_velocity(bA, bB, p, px, pos, R, vel, omega_w, v, vx, vv, c0, c1, jac):
    """Velocity of B's material point at p relative to A's; ∂/∂v into vv (3, 12), with ``jac`` ∂/∂x into vx.

    Only the columns of the sides that are bodies are written (a ground side's are never read: the callers
    loop over columns c0..c1); zeroing all of vv first was a ``memset`` call per record.
    """
    wA = (omega_w[bA, 0], omega_w[bA, 1], omega_w[bA, 2])
    wB = (omega_w[bB, 0], omega_w[bB, 1], omega_w[bB, 2])
    rA = vsub(p, (pos[bA, 0], pos[bA, 1], pos[bA, 2]))
    rB = vsub(p, (pos[bB, 0], pos[bB, 1], pos[bB, 2]))
    vA = vsub((vel[bA, 0], vel[bA, 1], vel[bA, 2]), vcross(rA, wA))
    vB = vsub((vel[bB, 0], vel[bB, 1], vel[bB, 2]), vcross(rB, wB))
    vr = vsub(vB, vA)
    if jac:
        _zero(vx)
        dw = vsub(wB, wA)
        for col in range(c0, c1):
            _setcol(vx, col, vcross(dw, _col(px, col)))
    for side in range(2):
        b = bA if side == 0 else bB
        if b < 0:
            continue
        sg = -1.0 if side == 0 else 1.0
        o = 6 * side
        w = wA if side == 0 else wB
        rr = rA if side == 0 else rB
        wb = _body_w(v, b)
        for k in range(3):
            if jac:
                _addcol(vx, o + k, vscale(-sg, vcross(w, _e(k))))
                _addcol(vx, o + 3 + k, vscale(sg, vcross(mat_vec(R, b, vcross(_e(k), wb)), rr)))
            for m in range(3):
                vv[m, o + k] = sg if m == k else 0.0
            _setcol(vv, o + 3 + k, vscale(sg, vcross(mat_vec(R, b, _e(k)), rr)))
    return vr


# --------------------------------------------------------------------------- laws
@jit
def normal_law(law, par, delta, ddot, reff, meff, w, area, wtype, rad):
    """Normal force magnitude and the tangential coefficients of one contact.

    Returns ``(Fn, Fn_δ, Fn_δ̇, kt, kt_δ, gt, gt_δ)`` before the clamp at zero;
    ``w`` scales the whole contact (slices of a line contact).
    """
    if law == L_HERTZ:
        E = par[P_E]
        G = par[P_G]
        cd = par[P_CDAMP]
        sR = math.sqrt(reff)
        sd = math.sqrt(delta)
        el = w * (4.0 / 3.0) * E * sR * delta * sd
        el_d = w * 2.0 * E * sR * sd
        q, q_d = _damping_shape(delta, par[P_RAMP], 0.25)
        cn = w * cd * math.sqrt(2.0 * E * sR * meff)
        ct = w * cd * math.sqrt(8.0 * G * sR * meff)
        kt = w * 8.0 * G * sR * sd
        return el + cn * q * ddot, el_d + cn * q_d * ddot, cn * q, kt, 0.5 * kt / delta, ct * q, ct * q_d
    if law == L_HERTZ_GIVEN:
        # thesis eq. 2.16: F_n = √(R δ) (k_n δ + γ_n m δ̇), F_t from k_t, γ_t likewise
        sR = math.sqrt(reff)
        phi = sR * math.sqrt(delta)
        q, q_d = _damping_shape(delta, par[P_RAMP], 0.5)
        kn = par[P_KN]
        gnc = par[P_GN] * meff * sR
        Fn = w * (phi * kn * delta + gnc * q * ddot)
        Fn_d = w * (1.5 * phi * kn + gnc * q_d * ddot)
        kt = w * phi * par[P_KT]
        gtc = w * par[P_GT] * meff * sR
        return Fn, Fn_d, w * gnc * q, kt, kt * 0.5 / delta, gtc * q, gtc * q_d
    if law == L_HOOKE:
        E = par[P_E]
        v2 = par[P_VCHAR] * par[P_VCHAR]
        tk = (16.0 / 15.0) * math.sqrt(reff) * E
        kn = tk * (meff * v2 / tk) ** 0.2
        gn = par[P_CDAMP] * math.sqrt(meff * kn)
        return w * (kn * delta + gn * ddot), w * kn, w * gn, w * kn, 0.0, w * gn, 0.0
    if law == L_HOOKE_GIVEN:
        kn = par[P_KN]
        gn = par[P_GN] * meff
        return w * (kn * delta + gn * ddot), w * kn, w * gn, w * par[P_KT], 0.0, w * par[P_GT] * meff, 0.0
    if law == L_KV:
        kn = par[P_KN]
        cn = par[P_GN]
        return w * (kn * delta + cn * ddot), w * kn, w * cn, 0.0, 0.0, 0.0, 0.0
    # Winkler: F = k_w G(δ) + c_w G'(δ) δ̇ with G the penetrated volume
    kw = par[P_KN]
    cw = par[P_GN]
    if wtype == W_POINT:
        G0 = area * delta
        G1 = area
        G2 = 0.0
    elif wtype == W_DISC:
        d = min(delta, 2.0 * rad)
        hh = max(2.0 * rad * d - d * d, 1e-300)
        sq = math.sqrt(hh)
        G0 = area * (rad * rad * math.acos(max(-1.0, min(1.0, (rad - d) / rad))) - (rad - d) * sq)
        G1 = area * 2.0 * sq
        G2 = area * 2.0 * (rad - d) / sq
        ramp = par[P_RAMP]
        if d < ramp:
            # the damping's chord below the ramp depth: bounded slope at first touch
            hr = 2.0 * rad * ramp - ramp * ramp
            G1 = area * 2.0 * math.sqrt(hr) * d / ramp
            G2 = area * 2.0 * math.sqrt(hr) / ramp
            return kw * G0 + cw * G1 * ddot, kw * area * 2.0 * sq + cw * G2 * ddot, cw * G1, 0.0, 0.0, 0.0, 0.0
    else:
        d = min(delta, 2.0 * rad)
        G0 = math.pi * d * d * (rad - d / 3.0)
        G1 = math.pi * (2.0 * rad * d - d * d)
        G2 = 2.0 * math.pi * (rad - d)
    return kw * G0 + cw * G1 * ddot, kw * G1 + cw * G2 * ddot, cw * G1, 0.0, 0.0, 0.0, 0.0


@jit
def _damping_shape(delta, ramp, p):
    """``δ^p`` and its derivative, replaced below ``ramp`` by the chord from 0 (bounded slope).

    Hertz damping grows like ``δ^(1/4)``, whose slope is infinite at first
    touch; a linearized implicit step would then stop an approaching body dead.
    """
    if delta < ramp:
        c = _pow_p(ramp, p) / ramp
        return c * delta, c
    q = _pow_p(delta, p)
    return q, p * q / delta


@jit_inline
def _pow_p(x, p):
    """``x ** p`` with square roots for the exponents the laws use (1/4, 1/2): libm's pow was 2 % of a step."""
    if p == 0.25:
        return math.sqrt(math.sqrt(x))
    if p == 0.5:
        return math.sqrt(x)
    return x ** p


@jit_inline
def _tanh_over(s, vs):
    """φ(s) = tanh(s/vs)/s and φ'(s)/s (finite at s = 0)."""
    x = s / vs
    if x < 1e-3:
        # tanh x = x - x³/3 + 2x⁵/15
        phi = (1.0 - x * x / 3.0 + 2.0 * x ** 4 / 15.0) / vs
        dphi_over_s = (-2.0 / 3.0 + 8.0 * x * x / 15.0) / (vs * vs * vs)
        return phi, dphi_over_s
    th = math.tanh(x)
    sech2 = 1.0 - th * th
    phi = th / s
    dphi = (sech2 / vs * s - th) / (s * s)
    return phi, dphi / s


# --------------------------------------------------------------------------- force stage
@jit
def _find_history(hist_key, k0, k1):
    """Index of key (k0, k1) in the sorted history keys, or -1."""
    n_hist = hist_key.shape[0]
    lo = 0
    hi = n_hist
    while lo < hi:
        mid = (lo + hi) // 2
        if hist_key[mid, 0] < k0 or (hist_key[mid, 0] == k0 and hist_key[mid, 1] < k1):
            lo = mid + 1
        else:
            hi = mid
    if lo < n_hist and hist_key[lo, 0] == k0 and hist_key[lo, 1] == k1:
        return lo
    return -1


@jit
def _record_force(r, rec, out, pair_law, pair_par, mass, hist_key, hist_disp, pos, R, vel, omega_w, v, h,
                  want_jac, exact, f, Kx, Kv, S):
    """Force of record r into f; with ``want_jac`` its element Jacobians added to Kx, Kv (12, 12).

    ``S`` is scratch (10, 3, 12). Returns True when the record carries a force.
    With ``exact`` the Jacobians are those of the force; without, the terms by
    which the friction force follows the normal force or the penetration are
    left out (:func:`contact_forces` explains why).
    Tangential history (thesis §2.4.3; Chrono's multi-step model): the stored
    displacement ``H`` of a persistent contact is projected on the current
    contact plane, ``δ_t = P H + h v_t`` (so the implicit step sees the shear
    spring), ``F_t = -k_t δ_t - g_t v_t`` capped at ``μ F_n``. The staged
    values (``out.s_*``) let :func:`commit_history` store ``P H + h v_t(v_new)``.
    """
    cx = S[0]
    t1 = S[1]
    t2 = S[2]
    t3 = S[3]
    nx = S[4]
    px = S[5]
    vx = S[6]
    vv = S[7]
    dx = S[8, 0]
    bA = rec.body[r, 0]
    bB = rec.body[r, 1]
    # columns of the ground side stay zero: skip them
    c0 = 6 if bA < 0 else 0
    c1 = 6 if bB < 0 else 12
    pa = rec.pa
    da = rec.da
    c = witness_point(rec.pmode[r], bA, bB, rec.lside[r], (pa[r, 0], pa[r, 1], pa[r, 2]),
                      (da[r, 0], da[r, 1], da[r, 2]), (rec.sp[r, 0], rec.sp[r, 1], rec.sp[r, 2]),
                      (rec.sn[r, 0], rec.sn[r, 1], rec.sn[r, 2]), pos, R, cx, t1, t2, t3, vx, c0, c1, want_jac)
    delta, n, p = contact_geometry(rec.kind[r], rec.conc[r], bA, bB, c, cx, rec.ra[r], rec.rb[r],
                                   (rec.tb[r, 0], rec.tb[r, 1], rec.tb[r, 2]),
                                   (rec.te[r, 0], rec.te[r, 1], rec.te[r, 2]),
                                   (da[r, 0], da[r, 1], da[r, 2]), pos, R, dx, nx, px, t1, t2, t3, c0, c1,
                                   want_jac)
    vr = relative_velocity(bA, bB, p, px, pos, R, vel, omega_w, v, vx, vv, c0, c1, want_jac)
    out.delta[r] = delta
    for k in range(3):
        out.normal[r, k] = n[k]
        out.point[r, k] = p[k]
        out.vrel[r, k] = vr[k]
        out.ft[r, k] = 0.0
        out.s_d0[r, k] = 0.0
    out.fn[r] = 0.0
    out.s_kt[r] = 0.0
    out.s_cap[r] = 0.0
    out.s_hist[r] = False
    if delta <= 0.0:
        return False
    pr = rec.pair[r]
    law = pair_law[pr]
    par = pair_par[pr]
    mA = mass[bA] if bA >= 0 else np.inf
    mB = mass[bB] if bB >= 0 else np.inf
    meff = mB if bA < 0 else (mA if bB < 0 else mA * mB / (mA + mB))
    vn = vdot(n, vr)
    ddot = -vn
    Fn, Fn_d, Fn_dd, kt, kt_d, gt, gt_d = normal_law(law, par, delta, ddot, rec.reff[r], meff, rec.weight[r],
                                                      rec.area[r], rec.wtype[r], rec.ra[r])
    if Fn <= 0.0:
        return False
    mu = par[P_MU]
    cross = 1.0 if exact else 0.0
    vt = (vr[0] - vn * n[0], vr[1] - vn * n[1], vr[2] - vn * n[2])
    # what does not depend on the column: the friction force and the coefficients of its derivatives
    kv_law = law == L_KV or law == L_WINKLER
    phi = 0.0
    dphis = 0.0
    Hv = (0.0, 0.0, 0.0)
    Hn = 0.0
    d0 = (0.0, 0.0, 0.0)
    dt = (0.0, 0.0, 0.0)
    kk = 0.0
    stick = True
    uh = (0.0, 0.0, 0.0)
    g = 0.0
    cap = mu * Fn
    if kv_law:
        s = vnorm(vt)
        phi, dphis = _tanh_over(s, par[P_VSLIP])
        ft = vscale(-mu * Fn * phi, vt)
    else:
        kh = _find_history(hist_key, rec.key[r, 0], rec.key[r, 1])
        if kh >= 0:
            Hv = (hist_disp[kh, 0], hist_disp[kh, 1], hist_disp[kh, 2])
        Hn = vdot(Hv, n)
        d0 = (Hv[0] - Hn * n[0], Hv[1] - Hn * n[1], Hv[2] - Hn * n[2])
        dt = (d0[0] + h * vt[0], d0[1] + h * vt[1], d0[2] + h * vt[2])
        kk = kt * h + gt
        T = (-kt * dt[0] - gt * vt[0], -kt * dt[1] - gt * vt[1], -kt * dt[2] - gt * vt[2])
        Tn = vnorm(T)
        stick = Tn <= cap
        if stick:
            ft = T
        else:
            uh = vscale(1.0 / Tn, T)
            ft = vscale(cap, uh)
            g = cap / Tn
        out.s_hist[r] = True
        out.s_kt[r] = kt
        out.s_cap[r] = cap
        for k in range(3):
            out.s_d0[r, k] = d0[k]
    F = (Fn * n[0] + ft[0], Fn * n[1] + ft[1], Fn * n[2] + ft[2])
    out.fn[r] = Fn
    for k in range(3):
        out.ft[r, k] = ft[k]
    # where F acts on each side, and the force on the bodies
    rA = (0.0, 0.0, 0.0)
    rB = (0.0, 0.0, 0.0)
    tA = (0.0, 0.0, 0.0)
    tB = (0.0, 0.0, 0.0)
    if bA >= 0:
        rA = vsub(p, (pos[bA, 0], pos[bA, 1], pos[bA, 2]))
        tA = mat_tvec(R, bA, vcross(rA, F))
        for k in range(3):
            f[bA, k] -= F[k]
            f[bA, 3 + k] -= tA[k]
    if bB >= 0:
        rB = vsub(p, (pos[bB, 0], pos[bB, 1], pos[bB, 2]))
        tB = mat_tvec(R, bB, vcross(rB, F))
        for k in range(3):
            f[bB, k] += F[k]
            f[bB, 3 + k] += tB[k]
    if not kv_law:
        # the shear history's step needs ∂v_t/∂v (commit_history)
        for col in range(c0, c1):
            vvc = _col(vv, col)
            vnv = vdot(n, vvc)
            for k in range(3):
                out.s_Tv[r, k, col] = vvc[k] - n[k] * vnv
    if not want_jac:
        return True
    # ∂F/∂x and ∂F/∂v are linear in a column's geometry (∂v_r, ∂n, ∂δ for x; ∂v_r for v): build the maps once,
    #     ∂F/∂x_c = Ax ∂v_r,c + An ∂n_c + ad ∂δ_c,    ∂F/∂v_c = Ax ∂v_r,c
    # (F depends on v through v_r only: the same partial ∂F/∂v_r in both), in M[:, :7] = [Ax | An | ad]; then
    # every column costs two small products
    M = S[9]
    _force_maps(M, n, vr, vn, vt, Fn, Fn_d, Fn_dd, mu, cross, kv_law, phi, dphis, Hv, Hn, dt, kt, kt_d, gt_d, kk,
                stick, uh, g)
    for col in range(c0, c1):
        vxc = _col(vx, col)
        nxc = _col(nx, col)
        vvc = _col(vv, col)
        dxc = dx[col]
        fx = (M[0, 0] * vxc[0] + M[0, 1] * vxc[1] + M[0, 2] * vxc[2] + M[0, 3] * nxc[0] + M[0, 4] * nxc[1]
              + M[0, 5] * nxc[2] + M[0, 6] * dxc,
              M[1, 0] * vxc[0] + M[1, 1] * vxc[1] + M[1, 2] * vxc[2] + M[1, 3] * nxc[0] + M[1, 4] * nxc[1]
              + M[1, 5] * nxc[2] + M[1, 6] * dxc,
              M[2, 0] * vxc[0] + M[2, 1] * vxc[1] + M[2, 2] * vxc[2] + M[2, 3] * nxc[0] + M[2, 4] * nxc[1]
              + M[2, 5] * nxc[2] + M[2, 6] * dxc)
        fv = (M[0, 0] * vvc[0] + M[0, 1] * vvc[1] + M[0, 2] * vvc[2],
              M[1, 0] * vvc[0] + M[1, 1] * vvc[1] + M[1, 2] * vvc[2],
              M[2, 0] * vvc[0] + M[2, 1] * vvc[1] + M[2, 2] * vvc[2])
        pc = _col(px, col)
        if bA >= 0:
            _apply_column(0, -1.0, col, bA, rA, fx, fv, pc, F, R, Kx, Kv)
        if bB >= 0:
            _apply_column(6, 1.0, col, bB, rB, fx, fv, pc, F, R, Kx, Kv)
    # ∂(Rᵀ τ)/∂π̄ of the torque in body axes
    if bA >= 0:
        _apply_frame(0, -1.0, tA, Kx)
    if bB >= 0:
        _apply_frame(6, 1.0, tB, Kx)
    return True


@jit_inline
def _force_maps(M, n, vr, vn, vt, Fn, Fn_d, Fn_dd, mu, cross, kv_law, phi, dphis, Hv, Hn, dt, kt, kt_d, gt_d, kk,
                stick, uh, g):
    """The linear maps of :func:`_record_force`'s columns into M[:, :7] = [Ax | An | ad] (∂F/∂v_r, ∂F/∂n, ∂F/∂δ).

    With P = I - n nᵀ: ∂v_t = P ∂v_r + V ∂n, V = -(n v_rᵀ + v_n I); ∂F_n = F_n' ∂δ + gxᵀ ∂v_r + gnᵀ ∂n
    (gx = -F_n'' n, gn = -F_n'' v_r, F_n'' = ∂F_n/∂δ̇) and ∂F_n/∂v = -F_n'' nᵀ ∂v_r. Normal force n F_n:
    Ax = n gxᵀ, An = n gnᵀ + F_n I, ad = F_n' n. Friction, Kelvin-Voigt laws
    (F_t = -μ F_n φ(|v_t|) v_t): Q ∂v_t + c ∂F_n with Q = -μ F_n (φ I + φ' v_t v_tᵀ), c = -μ φ v_t (times
    ``cross``). Shear history (F_t = T = -k_t δ_t - g_t v_t when it sticks): ∂T = Tx ∂v_r + Tn ∂n + td ∂δ
    with Tx = -k P (k = k_t h + g_t), Tn = k_t (n Hᵀ + (H·n) I) - k V, td = -(k_t' δ_t + g_t' v_t) (times
    ``cross``); when it slips (F_t = μ F_n û, û = T/|T|): (cross μ û) ∂F_n + g (I - û ûᵀ) ∂T, g = μ F_n/|T|.
    """
    gx = vscale(-Fn_dd, n)
    gn = vscale(-Fn_dd, vr)
    for i in range(3):
        for j in range(3):
            M[i, j] = n[i] * gx[j]
            M[i, 3 + j] = n[i] * gn[j] + Fn * _kd(i, j)
        M[i, 6] = Fn_d * n[i]
    if kv_law:
        # c ∂F_n with c = -cross μ φ v_t; Q (P ∂v_r + V ∂n)
        for i in range(3):
            ci = -cross * mu * phi * vt[i]
            for j in range(3):
                qp = 0.0
                qv = 0.0
                for m in range(3):
                    qim = -mu * Fn * (phi * _kd(i, m) + dphis * vt[i] * vt[m])
                    qp += qim * _proj(n, m, j)
                    qv += qim * _vmap(n, vr, vn, m, j)
                M[i, j] += qp + ci * gx[j]
                M[i, 3 + j] += qv + ci * gn[j]
            M[i, 6] += ci * Fn_d
        return
    if stick:
        for i in range(3):
            for j in range(3):
                tx = -kk * _proj(n, i, j)
                M[i, j] += tx
                M[i, 3 + j] += _shear_n(n, Hv, Hn, vr, vn, kt, kk, i, j)
            M[i, 6] += -cross * (kt_d * dt[i] + gt_d * vt[i])
        return
    # slip: (cross μ û) ∂F_n + g (I - û ûᵀ) ∂T
    for i in range(3):
        cu = cross * mu * uh[i]
        for j in range(3):
            sx = 0.0
            sn = 0.0
            for m in range(3):
                sim = g * (_kd(i, m) - uh[i] * uh[m])
                sx += sim * (-kk * _proj(n, m, j))
                sn += sim * _shear_n(n, Hv, Hn, vr, vn, kt, kk, m, j)
            M[i, j] += sx + cu * gx[j]
            M[i, 3 + j] += sn + cu * gn[j]
        sd = 0.0
        for m in range(3):
            sd += g * (_kd(i, m) - uh[i] * uh[m]) * -cross * (kt_d * dt[m] + gt_d * vt[m])
        M[i, 6] += sd + cu * Fn_d


@jit_inline
def _kd(i, j):
    return 1.0 if i == j else 0.0


@jit_inline
def _proj(n, i, j):
    """Entry (i, j) of the tangent projector P = I - n nᵀ."""
    return _kd(i, j) - n[i] * n[j]


@jit_inline
def _vmap(n, vr, vn, i, j):
    """Entry (i, j) of V = -(n v_rᵀ + v_n I), the map of ∂n into ∂v_t."""
    return -(n[i] * vr[j] + vn * _kd(i, j))


@jit_inline
def _shear_n(n, Hv, Hn, vr, vn, kt, kk, i, j):
    """Entry (i, j) of Tn = k_t (n Hᵀ + (H·n) I) - k V, the map of ∂n into the sticking shear force."""
    return kt * (n[i] * Hv[j] + Hn * _kd(i, j)) - kk * _vmap(n, vr, vn, i, j)


@jit
def contact_forces(n_rec, rec, out, pair_law, pair_par, mass, hist_key, hist_disp, pos, R, vel, omega_w, v, h,
                   cK, cD, want_jac, body_slot, pair_slot, f, Dv, data, Kxv, S, Kx, Kv):
    """Forces of all records into f (nb, 6); with ``want_jac`` also ``-cK ∂f/∂q - cD ∂f/∂v``
    (symmetric part) into the KKT values ``data``, ``Kv_sym v`` into ``Dv`` and the
    position terms left out of the matrix times v into ``Kxv``.

    The step matrix is symmetric, so only the symmetric part of a Jacobian
    enters it. Friction makes the contact Jacobian unsymmetric: the friction
    force follows the normal force (``μ ∂F_n``) and the shear stiffness follows
    the penetration, while the normal force does not follow the sliding.
    Symmetrising those terms would invent a normal force proportional to the
    sliding speed (a block sliding down an incline lifts off), so they are
    left out of the matrix and act explicitly; everything else (normal
    stiffness and damping, shear spring and damping, slip direction,
    geometry) is implicit with its exact value.

    ``S`` (10, 3, 12), ``Kx``, ``Kv`` (12, 12): the caller's work space (nothing is allocated).
    """
    _zero(Kx)
    _zero(Kv)
    # consecutive records of the same body pair (the probes of a shoe on the ground, the slices of a wheel on a
    # shoe) add up their elements and are scattered once: 230 records of the M113 are 63 pairs
    gA = np.int64(-2)
    gB = np.int64(-2)
    gr = np.int64(-1)
    for r in range(n_rec):
        bA = rec.body[r, 0]
        bB = rec.body[r, 1]
        if gr >= 0 and (bA != gA or bB != gB):
            _scatter(gA, gB, Kx, Kv, rec.pslot[gr], rec.ptrans[gr], body_slot, pair_slot, cK, cD, v, data, Dv,
                     Kxv)
            _zero_used(Kx, gA, gB)
            _zero_used(Kv, gA, gB)
            gr = -1
        if _record_force(r, rec, out, pair_law, pair_par, mass, hist_key, hist_disp, pos, R, vel, omega_w, v,
                         h, want_jac, False, f, Kx, Kv, S) and want_jac:
            gA = bA
            gB = bB
            gr = r
    if gr >= 0:
        _scatter(gA, gB, Kx, Kv, rec.pslot[gr], rec.ptrans[gr], body_slot, pair_slot, cK, cD, v, data, Dv, Kxv)


@jit_alloc
def record_element(r, rec, out, pair_law, pair_par, mass, hist_key, hist_disp, pos, R, vel, omega_w, v, h,
                   f, Kx, Kv, exact=True):
    """One record's generalized forces into f (nb, 6) and its Kx, Kv (12, 12) (exact, or as used in the step)."""
    S = np.empty((10, 3, 12))
    _zero(Kx)
    _zero(Kv)
    return _record_force(r, rec, out, pair_law, pair_par, mass, hist_key, hist_disp, pos, R, vel, omega_w, v, h,
                         True, exact, f, Kx, Kv, S)


@jit_inline
def _apply_column(o, sg, col, b, rr, fxc, fvc, pc, F, R, Kx, Kv):
    """Column col of ∂Q/∂x, ∂Q/∂v of the body b whose rows start at o (F on B at p, -F on A: sign sg).

    Q = (F, R_bᵀ (rr × F)) with rr = p - r_b; fxc, fvc the column of ∂F/∂x, ∂F/∂v, pc that of ∂p/∂x.
    """
    if col >= o and col < o + 3:
        pc = vsub(pc, _e(col - o))
    gx = mat_tvec(R, b, vadd3(vcross(rr, fxc), vcross(pc, F)))
    gv = mat_tvec(R, b, vcross(rr, fvc))
    for k in range(3):
        Kx[o + k, col] += sg * fxc[k]
        Kv[o + k, col] += sg * fvc[k]
        Kx[o + 3 + k, col] += sg * gx[k]
        Kv[o + 3 + k, col] += sg * gv[k]


@jit_inline
def _apply_frame(o, sg, tb, Kx):
    """The rotation of the body axes in which its torque tb is written: ∂(R_bᵀ τ)/∂π̄_b = tb~."""
    for m in range(3):
        gm = vcross(tb, _e(m))
        for k in range(3):
            Kx[o + 3 + k, o + 3 + m] += sg * gm[k]


@jit_inline
def vadd3(a, b):
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


@jit
def _scatter(bA, bB, Kx, Kv, pidx, ptrans, body_slot, pair_slot, cK, cD, v, data, Dv, Kxv):
    """``-cK Kx - cD Kv`` (symmetric part) into the KKT values and ``Kv_sym v`` into Dv.

    The coupling block of A and B is used only when the pattern has it
    (``pidx >= 0``); otherwise only the two diagonal blocks are kept and the
    left-out position terms go to ``Kxv += Kx_sym v`` so that the step's
    right-hand side keeps the exact linearisation (Galilean invariance: two
    bodies moving together feel no force from their contact's stiffness).
    Upper triangle of the 12 x 12 element, row by row (A's rows: A's block, then the coupling; then B's
    block), one loop per block so that no index is divided and no side tested inside.
    """
    if bA >= 0:
        for a in range(6):
            _scatter_diag_row(bA, 0, a, Kx, Kv, body_slot, cK, cD, v, data, Dv)
            if bB < 0:
                continue
            if pidx < 0:
                for c in range(6):
                    kx = 0.5 * (Kx[a, 6 + c] + Kx[6 + c, a])
                    if kx != 0.0:
                        Kxv[bA, a] += kx * v[bB, c]
                        Kxv[bB, c] += kx * v[bA, a]
                continue
            for c in range(6):
                sl = pair_slot[pidx, a, c] if ptrans == 0 else pair_slot[pidx, c, a]
                kx = 0.5 * (Kx[a, 6 + c] + Kx[6 + c, a])
                kv = 0.5 * (Kv[a, 6 + c] + Kv[6 + c, a])
                data[sl] -= cK * kx + cD * kv
                if kv != 0.0:
                    Dv[bA, a] += kv * v[bB, c]
                    Dv[bB, c] += kv * v[bA, a]
    if bB >= 0:
        for a in range(6):
            _scatter_diag_row(bB, 6, a, Kx, Kv, body_slot, cK, cD, v, data, Dv)


@jit_inline
def _scatter_diag_row(b, o, a, Kx, Kv, body_slot, cK, cD, v, data, Dv):
    """Row a of body b's diagonal block (element rows/columns from o), upper triangle."""
    for c in range(a, 6):
        kx = 0.5 * (Kx[o + a, o + c] + Kx[o + c, o + a])
        kv = 0.5 * (Kv[o + a, o + c] + Kv[o + c, o + a])
        data[body_slot[b, a, c]] -= cK * kx + cD * kv
        if kv != 0.0:
            Dv[b, a] += kv * v[b, c]
            if c != a:
                Dv[b, c] += kv * v[b, a]


# --------------------------------------------------------------------------- history
@jit_inline
def _key_less(key, a, b):
    """Record key a before record key b (lexicographic on the two words)."""
    return key[a, 0] < key[b, 0] or (key[a, 0] == key[b, 0] and key[a, 1] < key[b, 1])


@jit
def sort_keys(m, key, idx, runs):
    """Indices of ``key[:m]`` (m, 2) in lexicographic order, into ``idx[0, :m]``; nothing allocated.

    A natural merge sort: the records come out of detection in a few sorted runs (17-19 for the M113's
    ~220 history entries), which are merged pairwise. ``idx`` (2, >= m) and ``runs`` (>= m + 1) are work space.
    """
    nr = 0
    for i in range(m):
        idx[0, i] = i
        if i == 0 or _key_less(key, i, i - 1):
            runs[nr] = i
            nr += 1
    runs[nr] = m
    src = 0
    while nr > 1:
        dst = 1 - src
        k = 0
        for p in range(0, nr, 2):
            a = runs[p]
            mid = runs[p + 1]
            b = runs[p + 2] if p + 2 <= nr else mid  # an odd run out is copied as it is
            i = a
            j = mid
            o = a
            while i < mid and j < b:
                if _key_less(key, idx[src, j], idx[src, i]):
                    idx[dst, o] = idx[src, j]
                    j += 1
                else:
                    idx[dst, o] = idx[src, i]
                    i += 1
                o += 1
            while i < mid:
                idx[dst, o] = idx[src, i]
                i += 1
                o += 1
            while j < b:
                idx[dst, o] = idx[src, j]
                j += 1
                o += 1
            runs[k] = a
            k += 1
        runs[k] = m
        nr = k
        src = dst
    if src == 1:
        for i in range(m):
            idx[0, i] = idx[1, i]


@jit
def commit_history(n_rec, key, body, s_hist, s_d0, s_Tv, s_kt, s_cap, v_new, h, out_key, out_disp, tmp_key,
                   tmp_disp, idx, runs):
    """New tangential displacements ``P H + h v_t(v_new)`` capped by Coulomb, sorted by key.

    Returns the number of entries written to ``out_key`` (m, 2), ``out_disp`` (m, 3). ``tmp_key`` (>= n_rec, 2),
    ``tmp_disp`` (>= n_rec, 3), ``idx`` (2, >= n_rec), ``runs`` (>= n_rec + 1): work space (nothing allocated).
    """
    m = 0
    for r in range(n_rec):
        if not s_hist[r]:
            continue
        # scalar accumulators: a list here was a heap allocation per record (15 of the kernel's 19 µs)
        vt0 = 0.0
        vt1 = 0.0
        vt2 = 0.0
        for side in range(2):
            b = body[r, side]
            if b < 0:
                continue
            for c in range(6):
                vc = v_new[b, c]
                vt0 += s_Tv[r, 0, 6 * side + c] * vc
                vt1 += s_Tv[r, 1, 6 * side + c] * vc
                vt2 += s_Tv[r, 2, 6 * side + c] * vc
        d = (s_d0[r, 0] + h * vt0, s_d0[r, 1] + h * vt1, s_d0[r, 2] + h * vt2)
        dn = vnorm(d)
        if s_kt[r] * dn > s_cap[r]:
            sc = s_cap[r] / (s_kt[r] * dn) if dn > 0.0 else 0.0
            d = vscale(sc, d)
        tmp_key[m, 0] = key[r, 0]
        tmp_key[m, 1] = key[r, 1]
        tmp_disp[m, 0] = d[0]
        tmp_disp[m, 1] = d[1]
        tmp_disp[m, 2] = d[2]
        m += 1
    # the M113's ~220 entries: with argsort by the first key, an insertion pass by the second and three arrays
    # allocated per call the kernel took 8.1 µs; with this merge of the runs and no allocation 7.1 µs (isolated)
    sort_keys(m, tmp_key, idx, runs)
    for i in range(m):
        j = idx[0, i]
        out_key[i, 0] = tmp_key[j, 0]
        out_key[i, 1] = tmp_key[j, 1]
        out_disp[i, 0] = tmp_disp[j, 0]
        out_disp[i, 1] = tmp_disp[j, 1]
        out_disp[i, 2] = tmp_disp[j, 2]
    return m
