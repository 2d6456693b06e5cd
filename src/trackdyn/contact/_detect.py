"""Numba kernels of collision detection: shape poses, broad phase, narrow phase.

The narrow phase writes contact records (:mod:`trackdyn.contact._buffers`)
whose geometry is given in body frames (ground: world), so that the force
stage (:mod:`trackdyn.contact._kernels`) evaluates the force and its exact
Jacobian from the state. Features are chosen by Voronoi regions (a sphere
near a box edge touches the edge, not the faces), so neighbouring features
hand a contact over continuously.

Broad phase: body pairs by sweep and prune of the shapes' axis-aligned boxes
along x; shapes against terrain by the path interval of profiles and the
bounding-volume tree of meshes; planes are tested directly.

Keys (persistent contact identities for the tangential history):
``key[0] = probe_shape << 16 | probe_feature`` and
``key[1] = target_id << 32 | target_feature`` with ``target_id`` a shape index
or ``n_shapes + terrain part``.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from ..terrain.kernels import bvh_query
from ._vec import mat_tvec, mat_vec, vadd, vcross, vdot, vnorm, vscale, vsub
from ._kernels import K_DN, K_PL, K_PN, K_PP, L_WINKLER, PM_FIXED, PM_LINE, W_DISC, W_POINT, W_SPHERE

# No kernel below allocates, so they run without reference counting (``_nrt=False``): each call
# would otherwise count references of every array of the record buffers (~0.5 µs per call).
jit = nb.njit(cache=True, _nrt=False, error_model="numpy")
jit_inline = jit
# inlined by Numba itself (LLVM leaves larger callees as calls): small helpers called per candidate pair
jit_inline_ir = nb.njit(cache=True, _nrt=False, error_model="numpy", inline="always")

# integer constants as np.int64 so that Numba does not specialise callees on literal values
S_SPHERE = np.int64(0)
S_BOX = np.int64(1)
S_CYLINDER = np.int64(2)
S_CAPSULE = np.int64(3)
S_SEGMENT = np.int64(4)
S_SPROCKET = np.int64(5)
S_POLY = np.int64(6)
S_TOOTH = np.int64(7)
GROUND = np.int64(-1)
CONVEX = np.int64(1)
CONCAVE = np.int64(-1)
NO = np.bool_(False)
YES = np.bool_(True)

INV_SQRT3 = 1.0 / math.sqrt(3.0)
SQRT06 = math.sqrt(0.6)
# slack of the necessary-condition tests of the narrow phase (m): wider than their round-off
_TOL = 1e-9
PRIM_SEG = np.int64(0)
PRIM_ARC = np.int64(1)
PRIM_VERTEX = np.int64(2)


# --------------------------------------------------------------------------- small helpers
@jit_inline
def _norm2(a, b):
    """√(a² + b²): lengths in metres need no overflow guard, and libm's hypot cost 2.4 % of an M113 step."""
    return math.sqrt(a * a + b * b)


@jit_inline
def _r3(a, i):
    return (a[i, 0], a[i, 1], a[i, 2])


@jit_inline
def _m3(M, s, x):
    """M[s] @ x for a stack of 3x3."""
    return (M[s, 0, 0] * x[0] + M[s, 0, 1] * x[1] + M[s, 0, 2] * x[2],
            M[s, 1, 0] * x[0] + M[s, 1, 1] * x[1] + M[s, 1, 2] * x[2],
            M[s, 2, 0] * x[0] + M[s, 2, 1] * x[1] + M[s, 2, 2] * x[2])


@jit_inline
def _m3t(M, s, x):
    return (M[s, 0, 0] * x[0] + M[s, 1, 0] * x[1] + M[s, 2, 0] * x[2],
            M[s, 0, 1] * x[0] + M[s, 1, 1] * x[1] + M[s, 2, 1] * x[2],
            M[s, 0, 2] * x[0] + M[s, 1, 2] * x[1] + M[s, 2, 2] * x[2])


@jit_inline
def _col3(M, s, j):
    return (M[s, 0, j], M[s, 1, j], M[s, 2, j])


@jit_inline
def _e(m):
    return (1.0 if m == 0 else 0.0, 1.0 if m == 1 else 0.0, 1.0 if m == 2 else 0.0)


@jit_inline
def _cross2(a0, a1, b0, b1):
    return a0 * b1 - a1 * b0


@jit
def _clamp(x, h):
    """x clamped to [-h, h] and 1 if it was outside."""
    if x > h:
        return h, 1
    if x < -h:
        return -h, 1
    return x, 0


@jit
def _set2(i1, v1, i2, v2):
    """The 3-vector with v1 at index i1, v2 at i2 and 0 elsewhere."""
    a = v1 if i1 == 0 else (v2 if i2 == 0 else 0.0)
    b = v1 if i1 == 1 else (v2 if i2 == 1 else 0.0)
    c = v1 if i1 == 2 else (v2 if i2 == 2 else 0.0)
    return (a, b, c)


@jit_inline
def _reff(r1, r2, default):
    """Effective radius from two radii of curvature (<= 0 or inf: flat or sharp, no curvature)."""
    c = 0.0
    if r1 > 0.0 and r1 < 1e30:
        c += 1.0 / r1
    if r2 > 0.0 and r2 < 1e30:
        c += 1.0 / r2
    return 1.0 / c if c > 0.0 else default


# --------------------------------------------------------------------------- record writer
@jit
def _emit(rec, n, kind, pmode, bA, bB, pa, da, sp, sn, tb, te, ra, rb, conc, pair, reff, w, area, wtype, k0, k1,
          pidx):
    """Write one record (line cuts: the line is on side A) if there is room; returns n + 1."""
    if n < rec.kind.shape[0]:
        rec.kind[n] = kind
        rec.pmode[n] = pmode
        rec.body[n, 0] = bA
        rec.body[n, 1] = bB
        rec.lside[n] = 0
        for k in range(3):
            rec.pa[n, k] = pa[k]
            rec.da[n, k] = da[k]
            rec.sp[n, k] = sp[k]
            rec.sn[n, k] = sn[k]
            rec.tb[n, k] = tb[k]
            rec.te[n, k] = te[k]
        rec.ra[n] = ra
        rec.rb[n] = rb
        rec.conc[n] = conc
        rec.pair[n] = pair
        rec.reff[n] = reff
        rec.weight[n] = w
        rec.area[n] = area
        rec.wtype[n] = wtype
        rec.key[n, 0] = k0
        rec.key[n, 1] = k1
        if bA >= 0 and bB >= 0:
            rec.pslot[n] = pidx[bA, bB]
            rec.ptrans[n] = 1 if bA > bB else 0
        else:
            rec.pslot[n] = -1
            rec.ptrans[n] = 0
    return n + 1


Z3 = (0.0, 0.0, 0.0)


@jit_inline
def _key0(s, sub):
    return (np.int64(s) << 16) | np.int64(sub)


@jit_inline
def _key1(tid, feat):
    return (np.int64(tid) << 32) | np.int64(feat)


# --------------------------------------------------------------------------- shape poses and boxes
@jit
def shape_poses(s_type, s_body, s_pos, s_rot, s_rid, s_par, pos, R, margin, sw_c, sw_R, bb_min, bb_max, pv):
    """World centre and rotation of every shape and its axis-aligned bounding box (+ margin).

    ``s_rid``: the shape's rotation in its body is the identity (most are), its world rotation the body's.
    ``pv``: the vertices of the polyhedra (their boxes are those of their vertices).
    """
    for s in range(s_body.shape[0]):
        b = s_body[s]
        c = vadd(_r3(pos, b), mat_vec(R, b, _r3(s_pos, s)))
        for i in range(3):
            sw_c[s, i] = c[i]
        if s_rid[s]:
            for i in range(3):
                for j in range(3):
                    sw_R[s, i, j] = R[b, i, j]
        else:
            for i in range(3):
                for j in range(3):
                    acc = 0.0
                    for k in range(3):
                        acc += R[b, i, k] * s_rot[s, k, j]
                    sw_R[s, i, j] = acc
        t = s_type[s]
        if t == S_POLY:
            v0 = int(s_par[s, 0])
            for i in range(3):
                lo = 0.0
                hi = 0.0
                for k in range(v0, v0 + int(s_par[s, 1])):
                    x = sw_R[s, i, 0] * pv[k, 0] + sw_R[s, i, 1] * pv[k, 1] + sw_R[s, i, 2] * pv[k, 2]
                    lo = min(lo, x)
                    hi = max(hi, x)
                bb_min[s, i] = c[i] + lo - margin
                bb_max[s, i] = c[i] + hi + margin
            continue
        for i in range(3):
            hh = _support(t, s_par, s, sw_R[s, i, 0], sw_R[s, i, 1], sw_R[s, i, 2])
            bb_min[s, i] = c[i] - hh - margin
            bb_max[s, i] = c[i] + hh + margin


@jit_inline_ir
def _support(t, s_par, s, a0, a1, a2):
    """Half extent of shape s (type t) along a unit direction d, given d's components a_j = d . (world axis j
    of the shape): the support distance max over the shape of d . (x - centre)."""
    if t == S_SPHERE:
        return s_par[s, 0]
    if t == S_BOX:
        return abs(a0) * s_par[s, 0] + abs(a1) * s_par[s, 1] + abs(a2) * s_par[s, 2]
    if t == S_CYLINDER or t == S_SPROCKET:
        r = s_par[s, 0] if t == S_CYLINDER else s_par[s, 1]
        hw = s_par[s, 1] if t == S_CYLINDER else s_par[s, 4]
        return r * math.sqrt(max(0.0, 1.0 - a1 * a1)) + hw * abs(a1)
    if t == S_CAPSULE:
        return s_par[s, 0] + s_par[s, 1] * abs(a1)
    if t == S_TOOTH:
        return s_par[s, 3] * math.sqrt(max(0.0, 1.0 - a1 * a1)) + s_par[s, 7] * abs(a1)
    if t == S_POLY:
        return s_par[s, 4]  # its bounding radius: an upper bound (shape_poses boxes it by its vertices)
    return s_par[s, 0] * abs(a0) + s_par[s, 1] * abs(a1)


@jit_inline
def _to_body(s_pos, s_rot, s, x):
    """Shape-frame point -> body frame."""
    return vadd(_r3(s_pos, s), _m3(s_rot, s, x))


@jit_inline
def _dir_body(s_rot, s, x):
    return _m3(s_rot, s, x)


@jit_inline
def _world_to_body(pos, R, b, x):
    return mat_tvec(R, b, vsub(x, _r3(pos, b)))


# --------------------------------------------------------------------------- closest points
@jit
def closest_on_triangle(p, a, b, c):
    """Closest point of triangle abc to p and its region: 0 face, 1/2/3 edges ab/bc/ca, 4/5/6 vertices a/b/c."""
    ab = vsub(b, a)
    ac = vsub(c, a)
    ap = vsub(p, a)
    d1 = vdot(ab, ap)
    d2 = vdot(ac, ap)
    if d1 <= 0.0 and d2 <= 0.0:
        return a, 4
    bp = vsub(p, b)
    d3 = vdot(ab, bp)
    d4 = vdot(ac, bp)
    if d3 >= 0.0 and d4 <= d3:
        return b, 5
    vc = d1 * d4 - d3 * d2
    if vc <= 0.0 and d1 >= 0.0 and d3 <= 0.0:
        v = d1 / (d1 - d3)
        return vadd(a, vscale(v, ab)), 1
    cp = vsub(p, c)
    d5 = vdot(ab, cp)
    d6 = vdot(ac, cp)
    if d6 >= 0.0 and d5 <= d6:
        return c, 6
    vb = d5 * d2 - d1 * d6
    if vb <= 0.0 and d2 >= 0.0 and d6 <= 0.0:
        w = d2 / (d2 - d6)
        return vadd(a, vscale(w, ac)), 3
    va = d3 * d6 - d5 * d4
    if va <= 0.0 and (d4 - d3) >= 0.0 and (d5 - d6) >= 0.0:
        w = (d4 - d3) / ((d4 - d3) + (d5 - d6))
        return vadd(b, vscale(w, vsub(c, b))), 2
    denom = 1.0 / (va + vb + vc)
    v = vb * denom
    w = vc * denom
    return vadd(a, vadd(vscale(v, ab), vscale(w, ac))), 0


# =========================================================================== shape vs shape
@jit
def _sphere_feature_box(rec, n, cA_w, rho, bA, pA, sB, bB, s_pos, s_rot, sw_c, sw_R, half, pair, dflt, k0, k1,
                        pidx, faces_only):
    """A sphere (centre cA_w world, radius rho; point pA in body A frame) against box shape sB."""
    l = _m3t(sw_R, sB, vsub(cA_w, _r3(sw_c, sB)))
    q0, o0 = _clamp(l[0], half[0])
    q1, o1 = _clamp(l[1], half[1])
    q2, o2 = _clamp(l[2], half[2])
    q = (q0, q1, q2)
    out = o0 + o1 + o2
    free_axis = 2 if o2 == 0 else (1 if o1 == 0 else 0)
    if out == 0:
        # centre inside: the face of least depth
        best = 1e300
        bi = 0
        for i in range(3):
            d = half[i] - abs(l[i])
            if d < best:
                best = d
                bi = i
        sg = 1.0 if l[bi] >= 0.0 else -1.0
        nf = vscale(sg, _e(bi))
        fp = vscale(sg * half[bi], _e(bi))
        return _emit(rec, n, K_PN, PM_FIXED, bA, bB, pA, Z3, Z3, Z3, _to_body(s_pos, s_rot, sB, fp),
                     _dir_body(s_rot, sB, nf), rho, 0.0, CONVEX, pair, _reff(rho, 0.0, dflt), 1.0, 0.0, W_POINT,
                     k0, k1 | (bi * 2 + (1 if sg > 0 else 0)), pidx)
    d = vsub(l, q)
    dist = vnorm(d)
    if dist >= rho:
        return n
    if out == 1:
        for i in range(3):
            if abs(l[i]) > half[i]:
                sg = 1.0 if l[i] > 0.0 else -1.0
                nf = vscale(sg, _e(i))
                fp = vscale(sg * half[i], _e(i))
                return _emit(rec, n, K_PN, PM_FIXED, bA, bB, pA, Z3, Z3, Z3, _to_body(s_pos, s_rot, sB, fp),
                             _dir_body(s_rot, sB, nf), rho, 0.0, CONVEX, pair, _reff(rho, 0.0, dflt), 1.0, 0.0,
                             W_POINT, k0, k1 | (i * 2 + (1 if sg > 0 else 0)), pidx)
    if faces_only:
        return n
    if out == 2:
        ep = q
        return _emit(rec, n, K_PL, PM_FIXED, bA, bB, pA, Z3, Z3, Z3, _to_body(s_pos, s_rot, sB, ep),
                     _dir_body(s_rot, sB, _e(free_axis)), rho, 0.0, CONVEX, pair, _reff(rho, 0.0, dflt), 1.0, 0.0,
                     W_POINT, k0, k1 | (16 + int((q[0] > 0) * 1 + (q[1] > 0) * 2 + (q[2] > 0) * 4) * 4 + free_axis),
                     pidx)
    vp = q
    return _emit(rec, n, K_PP, PM_FIXED, bA, bB, pA, Z3, Z3, Z3, _to_body(s_pos, s_rot, sB, vp), Z3, rho, 0.0, CONVEX,
                 pair, _reff(rho, 0.0, dflt), 1.0, 0.0, W_POINT, k0,
                 k1 | (64 + int((q[0] > 0) * 1 + (q[1] > 0) * 2 + (q[2] > 0) * 4)), pidx)


@jit
def _sphere_feature_capsule(rec, n, cA_w, rho, bA, pA, sB, bB, s_pos, s_rot, sw_c, sw_R, rB, hl, pair, dflt,
                            k0, k1, pidx, interior_only):
    l = _m3t(sw_R, sB, vsub(cA_w, _r3(sw_c, sB)))
    t = l[1]
    if abs(t) <= hl:
        dist = _norm2(l[0], l[2])
        if dist >= rho + rB:
            return n
        return _emit(rec, n, K_PL, PM_FIXED, bA, bB, pA, Z3, Z3, Z3, _to_body(s_pos, s_rot, sB, Z3),
                     _dir_body(s_rot, sB, (0.0, 1.0, 0.0)), rho, rB, CONVEX, pair, _reff(rho, rB, dflt), 1.0, 0.0,
                     W_POINT, k0, k1, pidx)
    if interior_only:
        return n
    e = (0.0, hl if t > 0 else -hl, 0.0)
    if vnorm(vsub(l, e)) >= rho + rB:
        return n
    return _emit(rec, n, K_PP, PM_FIXED, bA, bB, pA, Z3, Z3, Z3, _to_body(s_pos, s_rot, sB, e), Z3, rho, rB, CONVEX,
                 pair, _reff(rho, rB, dflt), 1.0, 0.0, W_POINT, k0, k1 | (1 if t > 0 else 2), pidx)


@jit
def _sphere_feature_cylinder(rec, n, cA_w, rho, bA, pA, sB, bB, s_pos, s_rot, sw_c, sw_R, rC, hw, pair, dflt,
                             k0, k1, pidx):
    """Sphere against a cylinder: curved surface or flat side, whichever penetrates less near the rim."""
    l = _m3t(sw_R, sB, vsub(cA_w, _r3(sw_c, sB)))
    rad = _norm2(l[0], l[2])
    t = l[1]
    d_side = rad - rC - rho  # separation from the curved surface
    d_face = abs(t) - hw - rho  # from the flat side
    use_face = False
    if abs(t) <= hw and rad >= rC:
        use_face = False
    elif rad <= rC and abs(t) > hw:
        use_face = True
    else:
        use_face = d_face > d_side
    if use_face:
        if d_face >= 0.0:
            return n
        sg = 1.0 if t > 0 else -1.0
        return _emit(rec, n, K_PN, PM_FIXED, bA, bB, pA, Z3, Z3, Z3, _to_body(s_pos, s_rot, sB, (0.0, sg * hw, 0.0)),
                     _dir_body(s_rot, sB, (0.0, sg, 0.0)), rho, 0.0, CONVEX, pair, _reff(rho, 0.0, dflt), 1.0, 0.0,
                     W_POINT, k0, k1 | (1 if t > 0 else 2), pidx)
    if d_side >= 0.0:
        return n
    return _emit(rec, n, K_PL, PM_FIXED, bA, bB, pA, Z3, Z3, Z3, _to_body(s_pos, s_rot, sB, Z3),
                 _dir_body(s_rot, sB, (0.0, 1.0, 0.0)), rho, rC, CONVEX, pair, _reff(rho, rC, dflt), 1.0, 0.0, W_POINT,
                 k0, k1, pidx)


@jit
def _circle_feature_segment(rec, n, c_w, rho, bA, pA, disc, axA, sB, bB, s_pos, s_rot, sw_c, sw_R, par, pair, dflt,
                            k0, k1, pidx, w, max_pen):
    """A sphere or a disc (axis axA in A's frame) against a one-sided segment shape sB."""
    hl = par[0]
    hw = par[1]
    ends = par[2] > 0.5
    l = _m3t(sw_R, sB, vsub(c_w, _r3(sw_c, sB)))
    if abs(l[1]) > hw:
        return n
    if l[2] <= -max_pen:
        return n
    if abs(l[0]) <= hl:
        if disc:
            return _emit(rec, n, K_DN, PM_FIXED, bA, bB, pA, axA, Z3, Z3, _to_body(s_pos, s_rot, sB, Z3),
                         _dir_body(s_rot, sB, (0.0, 0.0, 1.0)), rho, 0.0, CONVEX, pair, _reff(rho, 0.0, dflt), w, 0.0,
                         W_POINT, k0, k1, pidx) if l[2] - rho < 0.0 else n
        if l[2] - rho >= 0.0:
            return n
        return _emit(rec, n, K_PN, PM_FIXED, bA, bB, pA, Z3, Z3, Z3, _to_body(s_pos, s_rot, sB, Z3),
                     _dir_body(s_rot, sB, (0.0, 0.0, 1.0)), rho, 0.0, CONVEX, pair, _reff(rho, 0.0, dflt), w, 0.0,
                     W_POINT, k0, k1, pidx)
    if not ends:
        return n
    ex = hl if l[0] > 0 else -hl
    if _norm2(l[0] - ex, l[2]) >= rho:
        return n
    return _emit(rec, n, K_PL, PM_FIXED, bA, bB, pA, Z3, Z3, Z3, _to_body(s_pos, s_rot, sB, (ex, 0.0, 0.0)),
                 _dir_body(s_rot, sB, (0.0, 1.0, 0.0)), rho, 0.0, CONVEX, pair, _reff(rho, 0.0, dflt), w, 0.0, W_POINT,
                 k0, k1 | (1 if l[0] > 0 else 2), pidx)


@jit_inline
def _slice(k, ns, hw):
    """Station (shape-frame y) and weight of slice k of ns Gauss-Legendre slices over [-hw, hw]."""
    if ns == 1:
        return 0.0, 1.0
    if ns == 2:
        return (-1.0 if k == 0 else 1.0) * hw * INV_SQRT3, 0.5
    if k == 1:
        return 0.0, 8.0 / 18.0
    return (-1.0 if k == 0 else 1.0) * hw * SQRT06, 5.0 / 18.0


@jit_inline
def _axis_of(x):
    """Index of the largest |x_i| (the first one on ties)."""
    j = 0
    best = -1.0
    for i in range(3):
        if abs(x[i]) > best:
            best = abs(x[i])
            j = i
    return j


@jit_inline
def _corner_axial(tc, a, c):
    """Axial coordinate (wheel frame) of corner c of a box whose centre is at tc, a_i = hb_i (axis in box)_i."""
    return tc + (a[0] if c & 1 else -a[0]) + (a[1] if c & 2 else -a[1]) + (a[2] if c & 4 else -a[2])


@jit_inline_ir
def _wheel_box_filter(sA, sB, s_par, s_rbound, sw_c, sw_R, max_pen):
    """Necessary conditions of the wheel-box narrow phase: (rims, corners), may wheel sA's rims or box sB's corners
    give a record at all?

    Most candidates of a track are shoes and guide teeth beside the wheel or next to the one under it (227 of
    the cruising M113's 271 wheel-box candidates give no record). A rim record needs a slice centre inside the
    box's slab along j (the box axis nearest to the wheel axis) and within the radius of the box's cross-section
    (the distance to the nearest face or edge is < rC, with each slice centre at most ``|st| |axb_i|`` from the
    wheel centre along i). A corner record needs a corner within the radius of the axis (bounded by the box's
    circumradius, ``s_rbound``) and within max_pen inside a flat side (``hw - max_pen < |t| < hw``, t the corner's axial
    coordinate, exactly linear in the corner's signs). ``_TOL`` keeps the tests wider than the exact ones.
    """
    rC = s_par[sA, 0]
    hw = s_par[sA, 1]
    hb = (s_par[sB, 0], s_par[sB, 1], s_par[sB, 2])
    axw = _col3(sw_R, sA, 1)
    axb = _m3t(sw_R, sB, axw)  # the wheel axis in the box frame
    j = _axis_of(axb)
    i1 = (j + 1) % 3
    i2 = (j + 2) % 3
    dc = vsub(_r3(sw_c, sB), _r3(sw_c, sA))
    l0 = _m3t(sw_R, sB, dc)  # minus the wheel centre in the box frame
    st0 = abs(_slice(0, int(s_par[sA, 2]), hw)[0])
    reach = st0 * abs(axb[j])
    rims = -l0[j] - reach <= hb[j] + _TOL and -l0[j] + reach >= -hb[j] - _TOL
    if rims:
        e1 = max(abs(l0[i1]) - hb[i1] - st0 * abs(axb[i1]), 0.0)
        e2 = max(abs(l0[i2]) - hb[i2] - st0 * abs(axb[i2]), 0.0)
        rims = e1 * e1 + e2 * e2 < (rC + _TOL) * (rC + _TOL)
    tc = vdot(axw, dc)
    corners = False
    if math.sqrt(max(vdot(dc, dc) - tc * tc, 0.0)) - s_rbound[sB] < rC + _TOL:
        a = (hb[0] * axb[0], hb[1] * axb[1], hb[2] * axb[2])
        for c in range(8):
            t = abs(_corner_axial(tc, a, c))
            if hw - max_pen - _TOL < t < hw + _TOL:
                corners = True
                break
    return rims, corners


@jit
def _cylinder_box(rec, n, sA, bA, sB, bB, s_pos, s_rot, s_par, sw_c, sw_R, pair, dflt, k1, pidx, max_pen,
                  rims, corners):
    """Wheel (cylinder sA) on a box sB: rims on faces and along edges; box corners on the flat sides.

    ``rims``, ``corners``: run that part (the callers pass ``_wheel_box_filter``'s necessary conditions; the
    records are the same with both on, which the tests check).
    """
    rC = s_par[sA, 0]
    hw = s_par[sA, 1]
    nsl = int(s_par[sA, 2])
    hb = (s_par[sB, 0], s_par[sB, 1], s_par[sB, 2])
    axw = _col3(sw_R, sA, 1)
    axb = _m3t(sw_R, sB, axw)  # cylinder axis in box frame
    j = _axis_of(axb)
    i1 = (j + 1) % 3
    i2 = (j + 2) % 3
    if not rims and not corners:
        return n
    axA = _dir_body(s_rot, sA, (0.0, 1.0, 0.0))
    for k in range(nsl if rims else 0):
        st, w = _slice(k, nsl, hw)
        cw = vadd(_r3(sw_c, sA), vscale(st, axw))
        l = _m3t(sw_R, sB, vsub(cw, _r3(sw_c, sB)))
        if abs(l[j]) > hb[j]:
            continue
        pA = _to_body(s_pos, s_rot, sA, (0.0, st, 0.0))
        o1 = abs(l[i1]) > hb[i1]
        o2 = abs(l[i2]) > hb[i2]
        k0 = (np.int64(sA) << 16) | np.int64(k)
        if o1 and o2:
            ep = _set2(i1, hb[i1] if l[i1] > 0 else -hb[i1], i2, hb[i2] if l[i2] > 0 else -hb[i2])
            dd = _norm2(l[i1] - ep[i1], l[i2] - ep[i2])
            if dd >= rC:
                continue
            code = 8 + (1 if l[i1] > 0 else 0) + (2 if l[i2] > 0 else 0)
            n = _emit(rec, n, K_PL, PM_FIXED, bA, bB, pA, Z3, Z3, Z3,
                      _to_body(s_pos, s_rot, sB, ep), _dir_body(s_rot, sB, _e(j)), rC, 0.0, CONVEX,
                      pair, _reff(rC, 0.0, dflt), w, 0.0, W_POINT, k0, k1 | code, pidx)
            continue
        if o1 or o2:
            fi = i1 if o1 else i2
        else:
            fi = i1 if hb[i1] - abs(l[i1]) < hb[i2] - abs(l[i2]) else i2
        sg = 1.0 if l[fi] > 0 else -1.0
        nf = vscale(sg, _e(fi))
        nfw = _m3(sw_R, sB, nf)
        kk = vdot(nfw, axw)
        W = math.sqrt(max(1.0 - kk * kk, 0.0))
        dist = sg * l[fi] - hb[fi] - rC * W
        if dist >= 0.0 or dist <= -max_pen - rC or W < 1e-6:
            continue
        n = _emit(rec, n, K_DN, PM_FIXED, bA, bB, pA, axA, Z3, Z3, _to_body(s_pos, s_rot, sB, vscale(hb[fi], nf)),
                  _dir_body(s_rot, sB, nf), rC, 0.0, CONVEX, pair, _reff(rC, 0.0, dflt), w, 0.0, W_POINT, k0,
                  k1 | (fi * 2 + (1 if sg > 0 else 0)), pidx)
    # box corners against the flat sides of the wheel (lateral guidance); the axial test first, from tc
    tc = vdot(axw, vsub(_r3(sw_c, sB), _r3(sw_c, sA)))
    a = (hb[0] * axb[0], hb[1] * axb[1], hb[2] * axb[2])
    for c in range(8 if corners else 0):
        ta = abs(_corner_axial(tc, a, c))
        if not hw - max_pen - _TOL < ta < hw + _TOL:
            continue
        cl = ((hb[0] if c & 1 else -hb[0]), (hb[1] if c & 2 else -hb[1]), (hb[2] if c & 4 else -hb[2]))
        cw = vadd(_r3(sw_c, sB), _m3(sw_R, sB, cl))
        lc = _m3t(sw_R, sA, vsub(cw, _r3(sw_c, sA)))
        rad = _norm2(lc[0], lc[2])
        t = lc[1]
        if rad >= rC or abs(t) >= hw:
            continue
        d_face = hw - abs(t)
        if d_face >= rC - rad or d_face >= max_pen:
            continue
        sg = 1.0 if t > 0 else -1.0
        n = _emit(rec, n, K_PN, PM_FIXED, bB, bA, _to_body(s_pos, s_rot, sB, cl), Z3, Z3, Z3,
                  _to_body(s_pos, s_rot, sA, (0.0, sg * hw, 0.0)), _dir_body(s_rot, sA, (0.0, sg, 0.0)), 0.0, 0.0,
                  CONVEX,
                  pair, dflt, 1.0, 0.0, W_POINT, (np.int64(sB) << 16) | np.int64(32 + c),
                  (np.int64(sA) << 32) | np.int64(1 if sg > 0 else 2), pidx)
    return n


@jit_inline
def _box_axis(sA, sB, s_par, sw_c, sw_R):
    """Face axis of box sB along which boxes sA and sB overlap least, and that overlap (<= 0: apart).

    The overlap along a unit axis u is ``r_A(u) + r_B(u) - |u·(c_A - c_B)|`` (the separating-axis test
    restricted to sB's face normals)."""
    d = vsub(_r3(sw_c, sA), _r3(sw_c, sB))
    best = 1e300
    bi = 0
    for i in range(3):
        u = _col3(sw_R, sB, i)
        r = s_par[sB, i]
        for k in range(3):
            r += s_par[sA, k] * abs(vdot(u, _col3(sw_R, sA, k)))
        o = r - abs(vdot(u, d))
        if o < best:
            best = o
            bi = i
    return bi, best


@jit
def _corners_in_box(rec, n, sA, bA, sB, bB, s_pos, s_rot, s_par, sw_c, sw_R, pair, dflt, pidx, max_pen, ax,
                    skip_shared):
    """Corners of box sA within box sB, pushed out through sB's face normal to axis ``ax``.

    ``ax`` is the face axis of least overlap of the pair (``_box_axis``), not each corner's nearest face: a
    corner of a box resting on an equal box lies on the lower box's side faces, nearest to them at depth 0,
    and would be pushed sideways with no force. Corners on the side faces (within a rounding tolerance)
    count as within; with ``skip_shared`` (the second box of the pair) a corner on two side faces, which
    coincides with a corner of the first box already written, is skipped."""
    hA = (s_par[sA, 0], s_par[sA, 1], s_par[sA, 2])
    hB = (s_par[sB, 0], s_par[sB, 1], s_par[sB, 2])
    tol = 1e-9 * (hB[0] + hB[1] + hB[2])
    for c in range(8):
        cl = ((hA[0] if c & 1 else -hA[0]), (hA[1] if c & 2 else -hA[1]), (hA[2] if c & 4 else -hA[2]))
        cw = vadd(_r3(sw_c, sA), _m3(sw_R, sA, cl))
        l = _m3t(sw_R, sB, vsub(cw, _r3(sw_c, sB)))
        depth = hB[ax] - abs(l[ax])
        if depth <= 0.0 or depth >= max_pen:
            continue
        inside = True
        edges = 0
        for i in range(3):
            if i != ax:
                if abs(l[i]) > hB[i] + tol:
                    inside = False
                elif abs(l[i]) >= hB[i] - tol:
                    edges += 1
        if not inside or (skip_shared and edges == 2):
            continue
        sg = 1.0 if l[ax] > 0 else -1.0
        nf = vscale(sg, _e(ax))
        n = _emit(rec, n, K_PN, PM_FIXED, bA, bB, _to_body(s_pos, s_rot, sA, cl), Z3, Z3, Z3,
                  _to_body(s_pos, s_rot, sB, vscale(hB[ax], nf)), _dir_body(s_rot, sB, nf), 0.0, 0.0, CONVEX, pair,
                  dflt,
                  1.0, 0.0, W_POINT, (np.int64(sA) << 16) | np.int64(c),
                  (np.int64(sB) << 32) | np.int64(ax * 2 + (1 if sg > 0 else 0)), pidx)
    return n


@jit
def _edges_through_box(rec, n, sA, bA, sB, bB, s_pos, s_rot, s_par, sw_c, sw_R, pair, dflt, pidx, max_pen, ax):
    """Edges of box sA crossing the side planes of sB's face normal to ``ax``, below that face.

    The corners of the overlap of two faces that are neither box's corner (two equal boxes turned about
    the face normal: an octagon). The witness is the edge (a body-fixed line of A) cut by the side plane
    (a body-fixed plane of B), pushed out through the face. Crossings at an edge's end or on the face's
    other side planes (within a rounding tolerance) are corners, written by ``_corners_in_box``."""
    hA = (s_par[sA, 0], s_par[sA, 1], s_par[sA, 2])
    hB = (s_par[sB, 0], s_par[sB, 1], s_par[sB, 2])
    tol = 1e-9 * (hB[0] + hB[1] + hB[2])
    cB = _r3(sw_c, sB)
    for k in range(3):
        eA = _col3(sw_R, sA, k)
        el = _m3t(sw_R, sB, eA)
        for c in range(8):
            if c & (1 << k):
                continue  # each edge once, from its corner at -h along k
            cl = ((hA[0] if c & 1 else -hA[0]), (hA[1] if c & 2 else -hA[1]), (hA[2] if c & 4 else -hA[2]))
            l0 = _m3t(sw_R, sB, vsub(vadd(_r3(sw_c, sA), _m3(sw_R, sA, cl)), cB))
            for j in range(3):
                if j == ax or abs(el[j]) < 1e-9:
                    continue
                o = 3 - ax - j
                for sj in range(2):
                    pj = hB[j] if sj == 1 else -hB[j]
                    t = (pj - l0[j]) / el[j]
                    if t <= tol or t >= 2.0 * hA[k] - tol:
                        continue
                    lo = l0[o] + t * el[o]
                    if abs(lo) >= hB[o] - tol:
                        continue
                    la = l0[ax] + t * el[ax]
                    depth = hB[ax] - abs(la)
                    if depth <= 0.0 or depth >= max_pen:
                        continue
                    sg = 1.0 if la > 0 else -1.0
                    nf = vscale(sg, _e(ax))
                    sn = _e(j)
                    n = _emit(rec, n, K_PN, PM_LINE, bA, bB, _to_body(s_pos, s_rot, sA, cl),
                              _dir_body(s_rot, sA, _e(k)), _to_body(s_pos, s_rot, sB, vscale(pj, sn)),
                              _dir_body(s_rot, sB, sn), _to_body(s_pos, s_rot, sB, vscale(hB[ax], nf)),
                              _dir_body(s_rot, sB, nf), 0.0, 0.0, CONVEX, pair, dflt, 1.0, 0.0, W_POINT,
                              (np.int64(sA) << 16) | np.int64(8 + 3 * c + k),
                              (np.int64(sB) << 32) | np.int64(8 + 2 * j + sj), pidx)
    return n


@jit_inline
def _pin_in_gear(sA, sB, sw_c, sw_R, reach, hl):
    """A pin sA (axis = its local y, half-length hl) in the frame of gear pair sB: its centre ``cl`` and axis
    ``el`` there, and whether it may reach the gear (axis within 72.5° of the gear's and its centre within
    ``reach`` plus the half-length's sweep of the gear's axis): the broad test shared by the sprocket shapes."""
    cA = _r3(sw_c, sA)
    eA = _col3(sw_R, sA, 1)
    cl = _m3t(sw_R, sB, vsub(cA, _r3(sw_c, sB)))
    el = _m3t(sw_R, sB, eA)
    near = abs(el[1]) >= 0.3 and _norm2(cl[0], cl[2]) <= reach + 2.0 * hl * math.sqrt(max(1.0 - el[1] * el[1], 0.0))
    return near, cl, el


@jit_inline
def _gear_crossing(g, hs, hl, cl, el):
    """Where the pin's axis crosses gear plane g (0: y = -hs, 1: y = +hs) of the pair: (within the pin's
    length, the plane's y, the crossing's x and z in the gear frame)."""
    yg = -hs if g == 0 else hs
    t = (yg - cl[1]) / el[1]
    return abs(t) <= hl, yg, cl[0] + t * el[0], cl[2] + t * el[2]


@jit
def _pin_sprocket(rec, n, sA, bA, sB, bB, s_pos, s_rot, s_par, sw_c, sw_R, pair, dflt, pidx):
    """Pin (cylinder or capsule sA, axis = its local y) against the gear pair of sprocket sB."""
    rp = s_par[sA, 0]
    hl = s_par[sA, 1]
    nt = int(s_par[sB, 0])
    RO = s_par[sB, 1]
    RC = s_par[sB, 2]
    Rg = s_par[sB, 3]
    hs = s_par[sB, 4]
    phase = s_par[sB, 5]
    alpha = s_par[sB, 7]
    pitch = 2.0 * math.pi / nt
    near, cl, el = _pin_in_gear(sA, sB, sw_c, sw_R, RC + Rg + rp, hl)
    if not near:
        return n
    pa = _to_body(s_pos, s_rot, sA, Z3)
    da = _dir_body(s_rot, sA, (0.0, 1.0, 0.0))
    sn = _dir_body(s_rot, sB, (0.0, 1.0, 0.0))
    for g in range(2):
        on_pin, yg, qx, qz = _gear_crossing(g, hs, hl, cl, el)
        if not on_pin:
            continue
        rq = _norm2(qx, qz)
        if rq > RO + rp:
            continue
        sp = _to_body(s_pos, s_rot, sB, (0.0, yg, 0.0))
        k0 = (np.int64(sA) << 16) | np.int64(g)
        th = math.atan2(qx, -qz)
        kc = int(math.floor((th - phase) / pitch + 0.5))
        for jj in range(kc - 1, kc + 2):
            j = jj % nt
            phi = phase + pitch * j
            Ax = RC * math.sin(phi)
            Az = -RC * math.cos(phi)
            dx_ = qx - Ax
            dz_ = qz - Az
            L = _norm2(dx_, dz_)
            base = (np.int64(sB) << 32) | np.int64(4 * j)
            # concave gap arc
            if L > 1e-12:
                px_ = Ax + Rg * dx_ / L
                pz_ = Az + Rg * dz_ / L
                if L < Rg and px_ * px_ + pz_ * pz_ <= RO * RO and L + rp - Rg > 0.0:
                    n = _emit(rec, n, K_PL, PM_LINE, bA, bB, pa, da, sp, sn,
                              _to_body(s_pos, s_rot, sB, (Ax, 0.0, Az)), sn, rp, Rg, CONCAVE, pair,
                              rp * Rg / (Rg - rp) if Rg > rp else dflt, 1.0, 0.0, W_POINT, k0, base, pidx)
            # corners of this gap
            for side in range(2):
                ang = phi - alpha if side == 0 else phi + alpha
                Cx = RO * math.sin(ang)
                Cz = -RO * math.cos(ang)
                ntx, ntz = Cx / RO, Cz / RO
                ngx, ngz = (Ax - Cx) / Rg, (Az - Cz) / Rg
                ddx = qx - Cx
                ddz = qz - Cz
                sgn = 1.0 if _cross2(ntx, ntz, ngx, ngz) > 0 else -1.0
                if sgn * _cross2(ntx, ntz, ddx, ddz) >= 0.0 and sgn * _cross2(ddx, ddz, ngx, ngz) >= 0.0:
                    if _norm2(ddx, ddz) < rp:
                        n = _emit(rec, n, K_PL, PM_LINE, bA, bB, pa, da, sp, sn,
                                  _to_body(s_pos, s_rot, sB, (Cx, 0.0, Cz)), sn, rp, 0.0, CONVEX, pair, rp, 1.0, 0.0,
                                  W_POINT, k0, base | (1 + side), pidx)
            # tip after this gap
            a0 = phi + alpha
            a1 = phi + pitch - alpha
            rel = (th - a0) % (2.0 * math.pi)
            if rel <= a1 - a0 and rq > 1e-12 and RO + rp - rq > 0.0:
                n = _emit(rec, n, K_PL, PM_LINE, bA, bB, pa, da, sp, sn, _to_body(s_pos, s_rot, sB, Z3), sn, rp,
                          RO, CONVEX, pair, rp * RO / (rp + RO), 1.0, 0.0, W_POINT, k0, base | 3, pidx)
    return n


@jit_inline
def _vp(c, s_, sg, U, V):
    """Mirrored valley coordinates (sg U, V) of the valley with centre direction (s_, -c) -> gear plane (x, z)."""
    u = sg * U
    return u * c + V * s_, u * s_ - V * c


@jit
def _pin_tooth(rec, n, sA, bA, sB, bB, s_pos, s_rot, s_par, sw_c, sw_R, pair, dflt, pidx):
    """Pin (cylinder or capsule sA, axis = its local y) against the gear pair of tooth sprocket sB
    (han-sander-mao Fig. 7, :func:`~trackdyn.contact.shapes.tooth_points`).

    Each piece of the tangent-continuous valley profile is written as a record of an existing kind, so the
    force kernels' exact Jacobians hold: the flat and the faces as planes (``K_PN``), the seating curves as
    concave and the rounds and the tip as convex cylinder axes (``K_PL``), each cut by the gear plane
    (``PM_LINE``). A piece touches when the pin's centre lies in its normal region (the strip of a line, the
    wedge of an arc) and the pin overlaps it by less than its radius (deeper: the other side of the material).
    """
    rp = s_par[sA, 0]
    hl = s_par[sA, 1]
    nt = int(s_par[sB, 0])
    th = s_par[sB, 1]
    r1 = s_par[sB, 2]
    r2 = s_par[sB, 3]
    r3 = s_par[sB, 4]
    r4 = s_par[sB, 5]
    hw = 0.5 * s_par[sB, 6]
    hs = s_par[sB, 7]
    pitch = 2.0 * math.pi / nt
    # the valley's control points (shapes.tooth_points), right half, valley frame (u, v)
    dU = math.sin(th)
    dV = math.cos(th)
    mU = math.cos(th)
    mV = -math.sin(th)
    p1U = hw + r4 * mU
    p1V = r1 + r4 + r4 * mV
    b0U = p1U + r3 * mU
    b0V = p1V + r3 * mV
    Bq = 2.0 * (b0U * dU + b0V * dV)
    Cq = b0U * b0U + b0V * b0V - (r2 - r3) * (r2 - r3)
    face = 0.5 * (-Bq + math.sqrt(max(Bq * Bq - 4.0 * Cq, 0.0)))
    c3U = b0U + face * dU
    c3V = b0V + face * dV
    c3L = _norm2(c3U, c3V)
    e3U = c3U / c3L
    e3V = c3V / c3L
    tip_half = math.atan2(e3U, e3V)
    near, cl, el = _pin_in_gear(sA, sB, sw_c, sw_R, r2 + rp, hl)
    if not near:
        return n
    pa = _to_body(s_pos, s_rot, sA, Z3)
    da = _dir_body(s_rot, sA, (0.0, 1.0, 0.0))
    sn = _dir_body(s_rot, sB, (0.0, 1.0, 0.0))
    for g in range(2):
        on_pin, yg, qx, qz = _gear_crossing(g, hs, hl, cl, el)
        if not on_pin:
            continue
        rq = _norm2(qx, qz)
        if rq > r2 + rp:
            continue
        sp = _to_body(s_pos, s_rot, sB, (0.0, yg, 0.0))
        k0 = (np.int64(sA) << 16) | np.int64(g)
        ang = math.atan2(qx, -qz)
        kc = int(math.floor(ang / pitch + 0.5))
        for jj in range(kc - 1, kc + 2):
            j = jj % nt
            phi = pitch * j
            c = math.cos(phi)
            s_ = math.sin(phi)
            u = qx * c + qz * s_
            v = qx * s_ - qz * c
            base = (np.int64(sB) << 32) | np.int64(8 * j)
            # the flat between the seating curves
            if hw > 0.0 and abs(u) <= hw and r1 - rp < v < r1 + rp:
                px_, pz_ = _vp(c, s_, 1.0, 0.0, r1)
                n = _emit(rec, n, K_PN, PM_LINE, bA, bB, pa, da, sp, sn, _to_body(s_pos, s_rot, sB, (px_, yg, pz_)),
                          _dir_body(s_rot, sB, (s_, 0.0, -c)), rp, 0.0, CONVEX, pair, rp, 1.0, 0.0, W_POINT, k0,
                          base, pidx)
            for side in range(2):
                sg = 1.0 if side == 0 else -1.0
                U = sg * u
                # seating curve: concave arc r4 about (hw, r1 + r4), wedge from (0, -1) to m
                xU = U - hw
                xV = v - r1 - r4
                if xU >= 0.0 and xU * mV - xV * mU >= 0.0:
                    L = _norm2(xU, xV)
                    if L + rp - r4 > 0.0 and L < r4 + rp and r4 > rp:
                        ax_, az_ = _vp(c, s_, sg, hw, r1 + r4)
                        n = _emit(rec, n, K_PL, PM_LINE, bA, bB, pa, da, sp, sn,
                                  _to_body(s_pos, s_rot, sB, (ax_, 0.0, az_)), sn, rp, r4, CONCAVE, pair,
                                  rp * r4 / (r4 - rp), 1.0, 0.0, W_POINT, k0, base | np.int64(1 + side), pidx)
                # tooth face: from P1 along d for `face`; its gap-side normal is -m
                wU = U - p1U
                wV = v - p1V
                sf = wU * dU + wV * dV
                if 0.0 <= sf <= face:
                    dist = -(wU * mU + wV * mV)
                    if -rp < dist < rp:
                        px_, pz_ = _vp(c, s_, sg, p1U, p1V)
                        nx_, nz_ = _vp(c, s_, sg, -mU, -mV)
                        n = _emit(rec, n, K_PN, PM_LINE, bA, bB, pa, da, sp, sn,
                                  _to_body(s_pos, s_rot, sB, (px_, yg, pz_)), _dir_body(s_rot, sB, (nx_, 0.0, nz_)),
                                  rp, 0.0, CONVEX, pair, rp, 1.0, 0.0, W_POINT, k0, base | np.int64(3 + side), pidx)
                # round at the top of the tooth: convex arc r3 about C3, wedge from C3/|C3| to -m
                yU = U - c3U
                yV = v - c3V
                if e3U * yV - e3V * yU >= 0.0 and yU * mV - yV * mU <= 0.0:
                    L = _norm2(yU, yV)
                    if r3 + rp - L > 0.0 and L > r3 - rp:
                        ax_, az_ = _vp(c, s_, sg, c3U, c3V)
                        n = _emit(rec, n, K_PL, PM_LINE, bA, bB, pa, da, sp, sn,
                                  _to_body(s_pos, s_rot, sB, (ax_, 0.0, az_)), sn, rp, r3, CONVEX, pair,
                                  rp * r3 / (rp + r3), 1.0, 0.0, W_POINT, k0, base | np.int64(5 + side), pidx)
            # the tip circle after this valley (towards the next one)
            rel = (ang - phi) % (2.0 * math.pi)
            if tip_half <= rel <= pitch - tip_half and r2 + rp - rq > 0.0 and rq > r2 - rp:
                n = _emit(rec, n, K_PL, PM_LINE, bA, bB, pa, da, sp, sn, _to_body(s_pos, s_rot, sB, Z3), sn, rp,
                          r2, CONVEX, pair, rp * r2 / (rp + r2), 1.0, 0.0, W_POINT, k0, base | np.int64(7), pidx)
    return n


@jit
def _guide_sprocket(rec, n, sA, bA, sB, bB, s_pos, s_rot, s_par, sw_c, sw_R, pair, dflt, pidx):
    """Guide sphere sA between the gears of sprocket sB: lateral contact beyond the clearance."""
    clr = s_par[sB, 6]
    if clr < 0.0:
        return n
    rho = s_par[sA, 0]
    l = _m3t(sw_R, sB, vsub(_r3(sw_c, sA), _r3(sw_c, sB)))
    if _norm2(l[0], l[2]) > s_par[sB, 1]:
        return n
    y = l[1]
    if abs(y) + rho - clr <= 0.0:
        return n
    sg = 1.0 if y > 0 else -1.0
    return _emit(rec, n, K_PN, PM_FIXED, bA, bB, _to_body(s_pos, s_rot, sA, Z3), Z3, Z3, Z3,
                 _to_body(s_pos, s_rot, sB, (0.0, sg * clr, 0.0)), _dir_body(s_rot, sB, (0.0, -sg, 0.0)), rho, 0.0,
                 CONVEX,
                 pair, _reff(rho, 0.0, dflt), 1.0, 0.0, W_POINT, (np.int64(sA) << 16),
                 (np.int64(sB) << 32) | np.int64(1000 + (1 if sg > 0 else 0)), pidx)


@jit
def shape_pair(rec, n, sA, sB, s_type, s_body, s_pos, s_rot, s_par, s_rbound, sw_c, sw_R, pair, dflt, pidx,
               max_pen):
    """Narrow phase of one candidate shape pair (any order); returns the new record count.

    ``detect`` filters the wheel-box pairs itself (``_wheel_box_filter``) and calls ``_cylinder_box`` only
    for those that may give a record: the call of this large function cost as much as the filter."""
    ta = s_type[sA]
    tb = s_type[sB]
    if ta > tb:
        sA, sB = sB, sA
        ta, tb = tb, ta
    bA = s_body[sA]
    bB = s_body[sB]
    k1B = np.int64(sB) << 32
    if ta == S_SPHERE:
        cA = _r3(sw_c, sA)
        rho = s_par[sA, 0]
        pA = _to_body(s_pos, s_rot, sA, Z3)
        k0 = np.int64(sA) << 16
        if tb == S_SPHERE:
            rB = s_par[sB, 0]
            if vnorm(vsub(_r3(sw_c, sB), cA)) >= rho + rB:
                return n
            return _emit(rec, n, K_PP, PM_FIXED, bA, bB, pA, Z3, Z3, Z3, _to_body(s_pos, s_rot, sB, Z3), Z3,
                         rho, rB, CONVEX, pair, _reff(rho, rB, dflt), 1.0, 0.0, W_POINT, k0, k1B, pidx)
        if tb == S_BOX:
            return _sphere_feature_box(rec, n, cA, rho, bA, pA, sB, bB, s_pos, s_rot, sw_c, sw_R,
                                       (s_par[sB, 0], s_par[sB, 1], s_par[sB, 2]), pair, dflt, k0, k1B, pidx, NO)
        if tb == S_CYLINDER:
            return _sphere_feature_cylinder(rec, n, cA, rho, bA, pA, sB, bB, s_pos, s_rot, sw_c, sw_R, s_par[sB, 0],
                                            s_par[sB, 1], pair, dflt, k0, k1B, pidx)
        if tb == S_CAPSULE:
            return _sphere_feature_capsule(rec, n, cA, rho, bA, pA, sB, bB, s_pos, s_rot, sw_c, sw_R, s_par[sB, 0],
                                           s_par[sB, 1], pair, dflt, k0, k1B, pidx, NO)
        if tb == S_SEGMENT:
            return _circle_feature_segment(rec, n, cA, rho, bA, pA, NO, Z3, sB, bB, s_pos, s_rot, sw_c, sw_R,
                                           s_par[sB], pair, dflt, k0, k1B, pidx, 1.0, max_pen)
        if tb == S_SPROCKET:
            return _guide_sprocket(rec, n, sA, bA, sB, bB, s_pos, s_rot, s_par, sw_c, sw_R, pair, dflt, pidx)
        return n
    if ta == S_BOX:
        if tb == S_BOX:
            axB, oB = _box_axis(sA, sB, s_par, sw_c, sw_R)
            axA, oA = _box_axis(sB, sA, s_par, sw_c, sw_R)
            if oA <= 0.0 or oB <= 0.0:
                return n
            n = _corners_in_box(rec, n, sA, bA, sB, bB, s_pos, s_rot, s_par, sw_c, sw_R, pair, dflt, pidx, max_pen,
                                axB, False)
            n = _edges_through_box(rec, n, sA, bA, sB, bB, s_pos, s_rot, s_par, sw_c, sw_R, pair, dflt, pidx,
                                   max_pen, axB)
            return _corners_in_box(rec, n, sB, bB, sA, bA, s_pos, s_rot, s_par, sw_c, sw_R, pair, dflt, pidx,
                                   max_pen, axA, True)
        if tb == S_CYLINDER:
            rims, corners = _wheel_box_filter(sB, sA, s_par, s_rbound, sw_c, sw_R, max_pen)
            return _cylinder_box(rec, n, sB, bB, sA, bA, s_pos, s_rot, s_par, sw_c, sw_R, pair, dflt,
                                 np.int64(sA) << 32, pidx, max_pen, rims, corners)
        if tb == S_CAPSULE:
            hl = s_par[sB, 1]
            rho = s_par[sB, 0]
            for e in range(2):
                y = hl if e == 0 else -hl
                cw = vadd(_r3(sw_c, sB), vscale(y, _col3(sw_R, sB, 1)))
                n = _sphere_feature_box(rec, n, cw, rho, bB, _to_body(s_pos, s_rot, sB, (0.0, y, 0.0)), sA, bA,
                                        s_pos, s_rot, sw_c, sw_R, (s_par[sA, 0], s_par[sA, 1], s_par[sA, 2]), pair,
                                        dflt, (np.int64(sB) << 16) | np.int64(e), np.int64(sA) << 32, pidx, NO)
            return n
        if tb == S_SEGMENT:
            hA = (s_par[sA, 0], s_par[sA, 1], s_par[sA, 2])
            for c in range(8):
                cl = ((hA[0] if c & 1 else -hA[0]), (hA[1] if c & 2 else -hA[1]), (hA[2] if c & 4 else -hA[2]))
                cw = vadd(_r3(sw_c, sA), _m3(sw_R, sA, cl))
                n = _circle_feature_segment(rec, n, cw, 0.0, bA, _to_body(s_pos, s_rot, sA, cl), NO, Z3, sB, bB,
                                            s_pos, s_rot, sw_c, sw_R, s_par[sB], pair, dflt,
                                            (np.int64(sA) << 16) | np.int64(c), k1B, pidx, 1.0, max_pen)
            return n
        return n
    if ta == S_CYLINDER:
        if tb == S_SEGMENT:
            nsl = int(s_par[sA, 2])
            axw = _col3(sw_R, sA, 1)
            axA = _dir_body(s_rot, sA, (0.0, 1.0, 0.0))
            for k in range(nsl):
                st, w = _slice(k, nsl, s_par[sA, 1])
                cw = vadd(_r3(sw_c, sA), vscale(st, axw))
                n = _circle_feature_segment(rec, n, cw, s_par[sA, 0], bA, _to_body(s_pos, s_rot, sA, (0.0, st, 0.0)),
                                            YES, axA, sB, bB, s_pos, s_rot, sw_c, sw_R, s_par[sB], pair, dflt,
                                            (np.int64(sA) << 16) | np.int64(k), k1B, pidx, w, max_pen)
            return n
        if tb == S_SPROCKET:
            return _pin_sprocket(rec, n, sA, bA, sB, bB, s_pos, s_rot, s_par, sw_c, sw_R, pair, dflt, pidx)
        if tb == S_TOOTH:
            return _pin_tooth(rec, n, sA, bA, sB, bB, s_pos, s_rot, s_par, sw_c, sw_R, pair, dflt, pidx)
        if tb == S_CAPSULE:
            hl = s_par[sB, 1]
            rho = s_par[sB, 0]
            for e in range(2):
                y = hl if e == 0 else -hl
                cw = vadd(_r3(sw_c, sB), vscale(y, _col3(sw_R, sB, 1)))
                n = _sphere_feature_cylinder(rec, n, cw, rho, bB, _to_body(s_pos, s_rot, sB, (0.0, y, 0.0)), sA, bA,
                                             s_pos, s_rot, sw_c, sw_R, s_par[sA, 0], s_par[sA, 1], pair, dflt,
                                             (np.int64(sB) << 16) | np.int64(e), np.int64(sA) << 32, pidx)
            return n
        return n
    if ta == S_CAPSULE:
        if tb == S_CAPSULE or tb == S_SEGMENT:
            for side in range(2):
                sP = sA if side == 0 else sB
                sT = sB if side == 0 else sA
                if tb == S_SEGMENT and side == 1:
                    break
                hl = s_par[sP, 1]
                rho = s_par[sP, 0]
                for e in range(2):
                    y = hl if e == 0 else -hl
                    cw = vadd(_r3(sw_c, sP), vscale(y, _col3(sw_R, sP, 1)))
                    pP = _to_body(s_pos, s_rot, sP, (0.0, y, 0.0))
                    k0 = (np.int64(sP) << 16) | np.int64(e)
                    if tb == S_SEGMENT:
                        n = _circle_feature_segment(rec, n, cw, rho, s_body[sP], pP, NO, Z3, sT, s_body[sT], s_pos,
                                                    s_rot, sw_c, sw_R, s_par[sT], pair, dflt, k0,
                                                    np.int64(sT) << 32, pidx, 1.0, max_pen)
                    else:
                        n = _sphere_feature_capsule(rec, n, cw, rho, s_body[sP], pP, sT, s_body[sT], s_pos, s_rot,
                                                    sw_c, sw_R, s_par[sT, 0], s_par[sT, 1], pair, dflt, k0,
                                                    np.int64(sT) << 32, pidx, side == 1)
            return n
        if tb == S_SPROCKET:
            return _pin_sprocket(rec, n, sA, bA, sB, bB, s_pos, s_rot, s_par, sw_c, sw_R, pair, dflt, pidx)
        if tb == S_TOOTH:
            return _pin_tooth(rec, n, sA, bA, sB, bB, s_pos, s_rot, s_par, sw_c, sw_R, pair, dflt, pidx)
    return n


# =========================================================================== shapes vs terrain
@jit
def _point_plane(rec, n, c_w, rho, b, pb, nrm, P, pair, reff, w, area, wtype, k0, k1, pidx, max_pen):
    dist = vdot(nrm, vsub(c_w, P)) - rho
    if dist >= 0.0 or dist <= -max_pen - rho:
        return n
    return _emit(rec, n, K_PN, PM_FIXED, b, GROUND, pb, Z3, Z3, Z3, P, nrm, rho, 0.0, CONVEX, pair, reff, w, area,
    wtype,
                 k0, k1, pidx)


@jit
def _disc_plane(rec, n, c_w, ax_w, rho, b, pb, axb, nrm, P, pair, reff, w, area, wtype, k0, k1, pidx, max_pen):
    kk = vdot(nrm, ax_w)
    W = math.sqrt(max(1.0 - kk * kk, 0.0))
    dist = vdot(nrm, vsub(c_w, P)) - rho * W
    if dist >= 0.0 or dist <= -max_pen - rho:
        return n
    if W < 1e-6:
        return _emit(rec, n, K_PN, PM_FIXED, b, GROUND, pb, Z3, Z3, Z3, P, nrm, 0.0, 0.0, CONVEX, pair, reff, w, area,
                     wtype, k0, k1, pidx)
    return _emit(rec, n, K_DN, PM_FIXED, b, GROUND, pb, axb, Z3, Z3, P, nrm, rho, 0.0, CONVEX, pair, reff, w, area,
    wtype,
                 k0, k1, pidx)


@jit_inline
def _prof_point(O, u, s, z):
    return (O[0] + s * u[0], O[1] + s * u[1], z + O[2])


@jit_inline
def _prof_dir(u, ns, nz):
    return (ns * u[0], ns * u[1], nz)


@jit
def _profile_range(smax_cum, start, count, s_lo):
    """First primitive (index) of a profile whose cumulative extent reaches s_lo."""
    lo = start
    hi = start + count
    while lo < hi:
        mid = (lo + hi) // 2
        if smax_cum[mid] < s_lo:
            lo = mid + 1
        else:
            hi = mid
    return lo


@jit
def _circle_profile(rec, n, c_w, rho, disc, ax_w, b, pb, axb, O, u, w3, p0, pcount, ptype, pa, pn, psmin, psmax_cum,
                    pmat, mat_pair_row, tid, k0, w, area, wtype, dflt, pidx):
    """A sphere or disc (centre c_w, radius rho) against a profile: segments, convex vertices, arcs."""
    s_c = (c_w[0] - O[0]) * u[0] + (c_w[1] - O[1]) * u[1]
    z_c = c_w[2] - O[2]
    i = _profile_range(psmax_cum, p0, pcount, s_c - rho)
    while i < p0 + pcount and psmin[i] <= s_c + rho:
        t = ptype[i]
        pair = mat_pair_row[pmat[i]]
        if t == PRIM_SEG:
            ds = pa[i, 2] - pa[i, 0]
            dz = pa[i, 3] - pa[i, 1]
            L2 = ds * ds + dz * dz
            tt = ((s_c - pa[i, 0]) * ds + (z_c - pa[i, 1]) * dz) / L2
            h = pn[i, 0] * (s_c - pa[i, 0]) + pn[i, 1] * (z_c - pa[i, 1])
            if tt >= 0.0 and tt <= 1.0 and h > 0.0 and h < rho:
                P = _prof_point(O, u, pa[i, 0], pa[i, 1])
                nrm = _prof_dir(u, pn[i, 0], pn[i, 1])
                if disc:
                    n = _disc_plane(rec, n, c_w, ax_w, rho, b, pb, axb, nrm, P, pair, _reff(rho, 0.0, dflt), w, area,
                                    wtype, k0, _key1(tid, i), pidx, 1e300)
                else:
                    n = _point_plane(rec, n, c_w, rho, b, pb, nrm, P, pair, _reff(rho, 0.0, dflt), w, area, wtype,
                                     k0, _key1(tid, i), pidx, 1e300)
        elif t == PRIM_VERTEX:
            ds = s_c - pa[i, 0]
            dz = z_c - pa[i, 1]
            if (_cross2(pn[i, 2], pn[i, 3], ds, dz) >= 0.0 and _cross2(ds, dz, pn[i, 0], pn[i, 1]) >= 0.0
                    and ds * ds + dz * dz < rho * rho):
                n = _emit(rec, n, K_PL, PM_FIXED, b, GROUND, pb, Z3, Z3, Z3, _prof_point(O, u, pa[i, 0], pa[i, 1]), w3,
                          rho, 0.0, CONVEX, pair, _reff(rho, 0.0, dflt), w, area, wtype, k0, _key1(tid, i), pidx)
        else:
            ds = s_c - pa[i, 0]
            dz = z_c - pa[i, 1]
            r = pa[i, 2]
            if (_cross2(pn[i, 2], pn[i, 3], ds, dz) >= 0.0 and _cross2(ds, dz, pn[i, 0], pn[i, 1]) >= 0.0
                    and ds * ds + dz * dz < (rho + r) * (rho + r)):
                n = _emit(rec, n, K_PL, PM_FIXED, b, GROUND, pb, Z3, Z3, Z3, _prof_point(O, u, pa[i, 0], pa[i, 1]), w3,
                          rho, r, CONVEX, pair, _reff(rho, r, dflt), w, area, wtype, k0, _key1(tid, i), pidx)
        i += 1
    return n


@jit
def _point_profile(rec, n, c_w, b, pb, O, u, w3, p0, pcount, ptype, pa, pn, psmin, psmax_cum, pmat, mat_pair_row,
                   tid, k0, w, area, wtype, dflt, pidx, max_pen):
    """A point (box corner, Winkler probe) inside the profile's solid: out through the nearest surface."""
    s_c = (c_w[0] - O[0]) * u[0] + (c_w[1] - O[1]) * u[1]
    z_c = c_w[2] - O[2]
    i = _profile_range(psmax_cum, p0, pcount, s_c - max_pen)
    best = 1e300
    bi = -1
    while i < p0 + pcount and psmin[i] <= s_c + max_pen:
        t = ptype[i]
        if t == PRIM_SEG:
            ds = pa[i, 2] - pa[i, 0]
            dz = pa[i, 3] - pa[i, 1]
            L2 = ds * ds + dz * dz
            tt = ((s_c - pa[i, 0]) * ds + (z_c - pa[i, 1]) * dz) / L2
            h = pn[i, 0] * (s_c - pa[i, 0]) + pn[i, 1] * (z_c - pa[i, 1])
            if tt >= 0.0 and tt <= 1.0 and h < 0.0 and -h < max_pen and -h < best:
                best = -h
                bi = i
        elif t == PRIM_ARC:
            ds = s_c - pa[i, 0]
            dz = z_c - pa[i, 1]
            r = pa[i, 2]
            L = math.sqrt(ds * ds + dz * dz)
            if (L < r and r - L < max_pen and r - L < best and _cross2(pn[i, 2], pn[i, 3], ds, dz) >= 0.0
                    and _cross2(ds, dz, pn[i, 0], pn[i, 1]) >= 0.0):
                best = r - L
                bi = i
        i += 1
    if bi < 0:
        return n
    pair = mat_pair_row[pmat[bi]]
    if ptype[bi] == PRIM_SEG:
        return _emit(rec, n, K_PN, PM_FIXED, b, GROUND, pb, Z3, Z3, Z3, _prof_point(O, u, pa[bi, 0], pa[bi, 1]),
                     _prof_dir(u, pn[bi, 0], pn[bi, 1]), 0.0, 0.0, CONVEX, pair, dflt, w, area, wtype, k0,
                     _key1(tid, bi), pidx)
    return _emit(rec, n, K_PL, PM_FIXED, b, GROUND, pb, Z3, Z3, Z3, _prof_point(O, u, pa[bi, 0], pa[bi, 1]), w3, 0.0,
                 pa[bi, 2], CONVEX, pair, _reff(0.0, pa[bi, 2], dflt), w, area, wtype, k0, _key1(tid, bi), pidx)


@jit
def _box_solid_profile(rec, n, s, b, s_pos, s_rot, s_par, sw_c, sw_R, O, u, w3, p0, pcount, ptype, pa, pn, psmin,
                       psmax_cum, pmat, mat_pair_row, tid, dflt, pidx, s_lo, s_hi, cone_tol):
    """Convex profile edges and half-round tops against the faces of box s (two stations across the box).

    A face is pushed out by an edge if its push lies in the edge's normal cone, to ``cone_tol`` (the
    sine of the angle by which it may lie outside: ``detect``'s argument)."""
    hb = (s_par[s, 0], s_par[s, 1], s_par[s, 2])
    cb = _r3(sw_c, s)
    # station axis: the box axis closest to the lateral direction
    j = _axis_of(_m3t(sw_R, s, w3))
    i1 = (j + 1) % 3
    i2 = (j + 2) % 3
    sn_b = _dir_body(s_rot, s, _e(j))
    i = _profile_range(psmax_cum, p0, pcount, s_lo)
    while i < p0 + pcount and psmin[i] <= s_hi:
        t = ptype[i]
        if t == PRIM_SEG:
            i += 1
            continue
        r = pa[i, 2] if t == PRIM_ARC else 0.0
        a_w = _prof_point(O, u, pa[i, 0], pa[i, 1])
        # station points (box frame) where the line crosses the two station planes
        el = _m3t(sw_R, s, w3)
        al = _m3t(sw_R, s, vsub(a_w, cb))
        st0 = -hb[j] * INV_SQRT3
        t0_ = (st0 - al[j]) / el[j]
        t1_ = (-st0 - al[j]) / el[j]
        ls0 = (al[0] + t0_ * el[0], al[1] + t0_ * el[1], al[2] + t0_ * el[2])
        ls1 = (al[0] + t1_ * el[0], al[1] + t1_ * el[1], al[2] + t1_ * el[2])
        m = vscale(0.5, vadd(ls0, ls1))
        o1 = abs(m[i1]) > hb[i1]
        o2 = abs(m[i2]) > hb[i2]
        fi = -1
        if t == PRIM_VERTEX:
            if not (o1 or o2):
                fi = i1 if hb[i1] - abs(m[i1]) < hb[i2] - abs(m[i2]) else i2
        else:
            if o1 != o2:
                fi = i1 if o1 else i2
        if fi >= 0:
            sg = 1.0 if m[fi] > 0 else -1.0
            nf = vscale(sg, _e(fi))
            push = vscale(-1.0, _m3(sw_R, s, nf))  # direction the box is pushed
            ds = vdot(push, u)
            dz = push[2]
            ok = (_cross2(pn[i, 2], pn[i, 3], ds, dz) >= -cone_tol
                  and _cross2(ds, dz, pn[i, 0], pn[i, 1]) >= -cone_tol)
            if ok:
                fo = i2 if fi == i1 else i1
                for k in range(2):
                    lk = ls0 if k == 0 else ls1
                    dist = sg * lk[fi] - hb[fi] - r
                    if dist >= 0.0 or abs(lk[fo]) > hb[fo]:
                        continue
                    if t == PRIM_VERTEX and dist < -hb[fi]:
                        continue
                    st = (-1.0 if k == 0 else 1.0) * hb[j] * INV_SQRT3
                    pair = mat_pair_row[pmat[i]]
                    n = _emit(rec, n, K_PN, PM_LINE, GROUND, b, a_w, w3, _to_body(s_pos, s_rot, s, vscale(st, _e(j))),
                              sn_b, _to_body(s_pos, s_rot, s, vscale(hb[fi], nf)), _dir_body(s_rot, s, nf), r, 0.0,
                              CONVEX,
                              pair, _reff(r, 0.0, dflt), 0.5, 0.0, W_POINT,
                              (np.int64(s) << 16) | np.int64(40 + 8 * k + fi * 2 + (1 if sg > 0 else 0)),
                              _key1(tid, i), pidx)
        i += 1
    return n


@jit
def _sphere_mesh(rec, n, c_w, rho, disc, ax_w, b, pb, axb, mV, mF, mFN, mFE, mEF, mEC, mVP, mVF, cand, nc, pair,
                 tid, k0, w, area, wtype, dflt, pidx):
    """A sphere or disc against mesh faces, convex edges and vertices, each feature by its owner only."""
    for ci in range(nc):
        f = cand[ci]
        a = _r3(mV, mF[f, 0])
        bb = _r3(mV, mF[f, 1])
        cc = _r3(mV, mF[f, 2])
        q, reg = closest_on_triangle(c_w, a, bb, cc)
        d = vsub(c_w, q)
        dist = vnorm(d)
        if dist >= rho:
            continue
        nf = _r3(mFN, f)
        if reg == 0:
            h = vdot(nf, vsub(c_w, a))
            if h <= 0.0:
                continue
            if disc:
                n = _disc_plane(rec, n, c_w, ax_w, rho, b, pb, axb, nf, a, pair, _reff(rho, 0.0, dflt), w, area,
                                wtype, k0, _key1(tid, f * 8), pidx, 1e300)
            else:
                n = _point_plane(rec, n, c_w, rho, b, pb, nf, a, pair, _reff(rho, 0.0, dflt), w, area, wtype, k0,
                                 _key1(tid, f * 8), pidx, 1e300)
        elif reg <= 3:
            e = mFE[f, reg - 1]
            if mEF[e, 0] != f or not mEC[e]:
                continue
            if vdot(d, nf) <= 0.0:
                continue
            f2 = mEF[e, 1]
            if f2 >= 0:
                a2 = _r3(mV, mF[f2, 0])
                b2 = _r3(mV, mF[f2, 1])
                c2 = _r3(mV, mF[f2, 2])
                q2, reg2 = closest_on_triangle(c_w, a2, b2, c2)
                if reg2 == 0 or vnorm(vsub(q2, q)) > 1e-12 * (1.0 + vnorm(q)):
                    continue
            # edge endpoints of this face's edge reg-1
            v0 = mF[f, reg - 1]
            v1 = mF[f, reg % 3]
            pe = _r3(mV, v0)
            de = vsub(_r3(mV, v1), pe)
            de = vscale(1.0 / vnorm(de), de)
            n = _emit(rec, n, K_PL, PM_FIXED, b, GROUND, pb, Z3, Z3, Z3, pe, de, rho, 0.0, CONVEX, pair,
                      _reff(rho, 0.0, dflt), w, area, wtype, k0, _key1(tid, f * 8 + reg), pidx)
        else:
            v = mF[f, reg - 4]
            if mVF[mVP[v]] != f:
                continue
            ok = True
            for kk in range(mVP[v], mVP[v + 1]):
                g = mVF[kk]
                qg, rg = closest_on_triangle(c_w, _r3(mV, mF[g, 0]), _r3(mV, mF[g, 1]), _r3(mV, mF[g, 2]))
                if rg < 4:
                    ok = False
                    break
            if not ok or vdot(d, nf) <= 0.0:
                continue
            n = _emit(rec, n, K_PP, PM_FIXED, b, GROUND, pb, Z3, Z3, Z3, _r3(mV, v), Z3, rho, 0.0, CONVEX, pair,
                      _reff(rho, 0.0, dflt), w, area, wtype, k0, _key1(tid, f * 8 + reg), pidx)
    return n


@jit
def _point_mesh(rec, n, c_w, b, pb, mV, mF, mFN, cand, nc, pair, tid, k0, w, area, wtype, dflt, pidx, max_pen):
    """A point below mesh faces: pushed out through the nearest face whose prism holds it."""
    best = 1e300
    bf = -1
    for ci in range(nc):
        f = cand[ci]
        a = _r3(mV, mF[f, 0])
        nf = _r3(mFN, f)
        h = vdot(nf, vsub(c_w, a))
        if h >= 0.0 or -h >= max_pen or -h >= best:
            continue
        q, reg = closest_on_triangle(vsub(c_w, vscale(h, nf)), a, _r3(mV, mF[f, 1]), _r3(mV, mF[f, 2]))
        if reg != 0:
            continue
        best = -h
        bf = f
    if bf < 0:
        return n
    return _emit(rec, n, K_PN, PM_FIXED, b, GROUND, pb, Z3, Z3, Z3, _r3(mV, mF[bf, 0]), _r3(mFN, bf), 0.0, 0.0, CONVEX,
                 pair, dflt, w, area, wtype, k0, _key1(tid, bf * 8), pidx)


@jit
def _box_solid_mesh(rec, n, s, b, s_pos, s_rot, s_par, sw_c, sw_R, mV, mF, mFN, mFE, mE, mEF, mEC, cand, nc, pair,
                    tid, dflt, pidx):
    """Convex mesh edges crossing box s: cut by the box's two station planes, against its faces."""
    hb = (s_par[s, 0], s_par[s, 1], s_par[s, 2])
    cb = _r3(sw_c, s)
    for ci in range(nc):
        f = cand[ci]
        for k3 in range(3):
            e = mFE[f, k3]
            if mEF[e, 0] != f or not mEC[e] or mEF[e, 1] < 0:
                continue
            p0 = _r3(mV, mE[e, 0])
            p1 = _r3(mV, mE[e, 1])
            de = vsub(p1, p0)
            Le = vnorm(de)
            de = vscale(1.0 / Le, de)
            el = _m3t(sw_R, s, de)  # the edge in the box frame; its largest component is the station axis
            j = _axis_of(el)
            i1 = (j + 1) % 3
            i2 = (j + 2) % 3
            al = _m3t(sw_R, s, vsub(p0, cb))
            st0 = -hb[j] * INV_SQRT3
            t0_ = (st0 - al[j]) / el[j]
            t1_ = (-st0 - al[j]) / el[j]
            ls0 = (al[0] + t0_ * el[0], al[1] + t0_ * el[1], al[2] + t0_ * el[2])
            ls1 = (al[0] + t1_ * el[0], al[1] + t1_ * el[1], al[2] + t1_ * el[2])
            m = vscale(0.5, vadd(ls0, ls1))
            if abs(m[i1]) > hb[i1] or abs(m[i2]) > hb[i2]:
                continue
            fi = i1 if hb[i1] - abs(m[i1]) < hb[i2] - abs(m[i2]) else i2
            sg = 1.0 if m[fi] > 0 else -1.0
            nf = vscale(sg, _e(fi))
            push = vscale(-1.0, _m3(sw_R, s, nf))
            n1 = _r3(mFN, mEF[e, 0])
            n2 = _r3(mFN, mEF[e, 1])
            sgn = 1.0 if vdot(vcross(n1, n2), de) > 0 else -1.0
            if sgn * vdot(vcross(n1, push), de) < -1e-12 or sgn * vdot(vcross(push, n2), de) < -1e-12:
                continue
            fo = i2 if fi == i1 else i1
            sn_b = _dir_body(s_rot, s, _e(j))
            for k in range(2):
                lk = ls0 if k == 0 else ls1
                tk = t0_ if k == 0 else t1_
                if tk < 0.0 or tk > Le:
                    continue
                dist = sg * lk[fi] - hb[fi]
                if dist >= 0.0 or abs(lk[fo]) > hb[fo]:
                    continue
                st = (-1.0 if k == 0 else 1.0) * hb[j] * INV_SQRT3
                n = _emit(rec, n, K_PN, PM_LINE, GROUND, b, p0, de, _to_body(s_pos, s_rot, s, vscale(st, _e(j))), sn_b,
                          _to_body(s_pos, s_rot, s, vscale(hb[fi], nf)), _dir_body(s_rot, s, nf), 0.0, 0.0, CONVEX,
                          pair,
                          dflt, 0.5, 0.0, W_POINT,
                          (np.int64(s) << 16) | np.int64(40 + 8 * k + fi * 2 + (1 if sg > 0 else 0)),
                          _key1(tid, f * 8 + 1 + k3), pidx)
    return n


# --------------------------------------------------------------------------- convex polyhedra vs terrain
POLY_LINE_KEY = 4096  # key features of a polyhedron: vertices 0.., terrain lines 4096 + 2 face + station


@jit
def _poly_line(rec, n, s, b, s_pos, s_rot, s_par, sw_c, sw_R, pf, f0, nf, a_w, de, tlo, thi, r, c1, c2, pair, dflt,
               k1, pidx, cone_tol):
    """A terrain line (point a_w, unit direction de, parameter in [tlo, thi]; radius r: a half-round's axis)
    against the faces of convex polyhedron s.

    As a box's edge contact (``_box_solid_profile``): the line is cut by two station planes fixed in the
    polyhedron, normal to its axis j closest to the line, at the Gauss points ``±half_j/√3`` of its extent;
    a station inside the polyhedron grown by r (its face planes pushed out by r) is pushed out through the
    face that is shallowest at the stations' middle, if that push ``-n_f`` lies in the line's normal cone
    (``c1 . push >= 0`` and ``c2 . push >= 0``; else the polyhedron's vertices in the terrain carry it) and
    the station's foot on the face's plane lies on the face (else the station faces an edge of the
    polyhedron, which the vertices carry).
    """
    cb = _r3(sw_c, s)
    el = _m3t(sw_R, s, de)  # the line in the polyhedron's frame; its largest component is the station axis
    j = _axis_of(el)
    al = _m3t(sw_R, s, vsub(a_w, cb))
    st0 = -s_par[s, 5 + j] * INV_SQRT3
    t0_ = (st0 - al[j]) / el[j]
    t1_ = (-st0 - al[j]) / el[j]
    ls0 = vadd(al, vscale(t0_, el))
    ls1 = vadd(al, vscale(t1_, el))
    m = vscale(0.5, vadd(ls0, ls1))
    best = -1e300
    fb = -1
    for f in range(f0, f0 + nf):
        sd = pf[f, 0] * m[0] + pf[f, 1] * m[1] + pf[f, 2] * m[2] - pf[f, 3] - r
        if sd > best:
            best = sd
            fb = f
    nrm = (pf[fb, 0], pf[fb, 1], pf[fb, 2])
    push = vscale(-1.0, _m3(sw_R, s, nrm))
    if vdot(c1, push) < -cone_tol or vdot(c2, push) < -cone_tol:
        return n
    sn_b = _dir_body(s_rot, s, _e(j))
    tb = _to_body(s_pos, s_rot, s, vscale(pf[fb, 3], nrm))
    te = _dir_body(s_rot, s, nrm)
    for k in range(2):
        lk = ls0 if k == 0 else ls1
        tk = t0_ if k == 0 else t1_
        if tk < tlo or tk > thi:
            continue
        inside = True
        for f in range(f0, f0 + nf):
            if pf[f, 0] * lk[0] + pf[f, 1] * lk[1] + pf[f, 2] * lk[2] - pf[f, 3] - r >= 0.0:
                inside = False
                break
        if not inside:
            continue
        # the face's own region only: the station's foot on face fb's plane must lie on the face (inside every
        # other face plane). Beyond the face's edge the nearest feature is that edge, farther than the plane by
        # up to r (the planes pushed out by r make a box-cornered solid, not the polyhedron grown by r), and the
        # polyhedron's vertices in the terrain solid carry the contact, as a box's corners do (_box_solid_profile)
        h = pf[fb, 0] * lk[0] + pf[fb, 1] * lk[1] + pf[fb, 2] * lk[2] - pf[fb, 3]
        foot = vsub(lk, vscale(h, nrm))
        for f in range(f0, f0 + nf):
            if f != fb and pf[f, 0] * foot[0] + pf[f, 1] * foot[1] + pf[f, 2] * foot[2] - pf[f, 3] > 1e-12:
                inside = False
                break
        if not inside:
            continue
        st = (-1.0 if k == 0 else 1.0) * s_par[s, 5 + j] * INV_SQRT3
        n = _emit(rec, n, K_PN, PM_LINE, GROUND, b, a_w, de, _to_body(s_pos, s_rot, s, vscale(st, _e(j))), sn_b,
                  tb, te, r, 0.0, CONVEX, pair, _reff(r, 0.0, dflt), 0.5, 0.0, W_POINT,
                  _key0(s, POLY_LINE_KEY + 2 * (fb - f0) + k), k1, pidx)
    return n


@jit
def _poly_solid_profile(rec, n, s, b, s_pos, s_rot, s_par, sw_c, sw_R, pf, O, u, w3, p0, pcount, ptype, pa, pn,
                        psmin, psmax_cum, pmat, mat_pair_row, tid, dflt, pidx, s_lo, s_hi, cone_tol):
    """Convex profile edges and half-round tops (lines along the profile's lateral w3) against polyhedron s."""
    f0 = int(s_par[s, 2])
    nf = int(s_par[s, 3])
    i = _profile_range(psmax_cum, p0, pcount, s_lo)
    while i < p0 + pcount and psmin[i] <= s_hi:
        t = ptype[i]
        if t == PRIM_SEG:
            i += 1
            continue
        r = pa[i, 2] if t == PRIM_ARC else 0.0
        # the normal cone of the primitive, between its two normals (pn[i, 0:2] and pn[i, 2:4], (s, z))
        c1 = (-pn[i, 3] * u[0], -pn[i, 3] * u[1], pn[i, 2])
        c2 = (pn[i, 1] * u[0], pn[i, 1] * u[1], -pn[i, 0])
        n = _poly_line(rec, n, s, b, s_pos, s_rot, s_par, sw_c, sw_R, pf, f0, nf,
                       _prof_point(O, u, pa[i, 0], pa[i, 1]), w3, -1e300, 1e300, r, c1, c2, mat_pair_row[pmat[i]],
                       dflt, _key1(tid, i), pidx, cone_tol)
        i += 1
    return n


@jit
def _poly_solid_mesh(rec, n, s, b, s_pos, s_rot, s_par, sw_c, sw_R, pf, mV, mF, mFN, mFE, mE, mEF, mEC, cand, nc,
                     pair, tid, dflt, pidx):
    """Convex mesh edges crossing polyhedron s, each by the first of its two faces."""
    f0 = int(s_par[s, 2])
    nf = int(s_par[s, 3])
    for ci in range(nc):
        f = cand[ci]
        for k3 in range(3):
            e = mFE[f, k3]
            if mEF[e, 0] != f or not mEC[e] or mEF[e, 1] < 0:
                continue
            p0 = _r3(mV, mE[e, 0])
            de = vsub(_r3(mV, mE[e, 1]), p0)
            Le = vnorm(de)
            de = vscale(1.0 / Le, de)
            n1 = _r3(mFN, mEF[e, 0])
            n2 = _r3(mFN, mEF[e, 1])
            sgn = 1.0 if vdot(vcross(n1, n2), de) > 0 else -1.0
            c1 = vscale(sgn, vcross(de, n1))
            c2 = vscale(sgn, vcross(n2, de))
            n = _poly_line(rec, n, s, b, s_pos, s_rot, s_par, sw_c, sw_R, pf, f0, nf, p0, de, 0.0, Le, 0.0, c1, c2,
                           pair, dflt, _key1(tid, f * 8 + 1 + k3), pidx, 1e-12)
    return n


# =========================================================================== driver
@jit
def _winkler_face(sw_R, s, hb, nrm):
    """Face of box s whose outward normal points most against ``nrm``: (axis, sign)."""
    best = 2.0
    bi = 2
    bs = -1.0
    for i in range(3):
        d = vdot(_col3(sw_R, s, i), nrm)
        if d < best:
            best = d
            bi = i
            bs = 1.0
        if -d < best:
            best = -d
            bi = i
            bs = -1.0
    return bi, bs


@jit
def detect(rec, shp, sc, flt, ter, pos, R, margin, dflt, max_pen, wgrid, cone_tol=1e-12):
    """All contact records of the current pose; returns how many were found (may exceed the capacity).

    ``shp``: shape arrays, ``sc``: per-step scratch, ``flt``: filters and the
    material pair table, ``ter``: terrain arrays (see ``ContactSystem``). ``cone_tol``: how far (sine of
    the angle) a face's push may lie outside a profile edge's normal cone for the edge to act on the face
    (1e-12: round-off, SMC; NSC passes ``NscContact.CONE_TOL``: a face resting flat on an edge sits on the
    cone's boundary, and round-off alone must not take the contact away for a step).
    """
    ns = shp.s_type.shape[0]
    shape_poses(shp.s_type, shp.s_body, shp.s_pos, shp.s_rot, shp.s_rid, shp.s_par, pos, R, margin, sc.sw_c,
                sc.sw_R, sc.bb_min, sc.bb_max, shp.pv)
    sw_c = sc.sw_c
    sw_R = sc.sw_R
    s_pos = shp.s_pos
    s_rot = shp.s_rot
    s_par = shp.s_par
    pidx = flt.pidx
    n = np.int64(0)
    cand = sc.cand
    stack = sc.stack
    qmin = sc.qmin
    qmax = sc.qmax
    up = (0.0, 0.0, 1.0)
    # ------------------------------------------------------------- terrain
    for s in range(ns):
        if not shp.s_terrain[s]:
            continue
        t = shp.s_type[s]
        b = shp.s_body[s]
        row = flt.mat_pair[shp.s_mat[s]]
        c_w = _r3(sw_c, s)
        ax_w = _col3(sw_R, s, 1)
        axb = _dir_body(s_rot, s, (0.0, 1.0, 0.0))
        # probes of this shape: spheres (centre, radius, sub, weight), discs, corners
        for part in range(ter.part_kind.shape[0]):
            kind = ter.part_kind[part]
            k = ter.part_index[part]
            tid = ns + part
            pmat_base = ter.part_mat[part]
            pair0 = row[pmat_base]
            wk = pair0 >= 0 and flt.pair_law[pair0] == L_WINKLER
            nrm_t = up
            if kind == 0:
                nrm_t = _r3(ter.pl_n, k)
                # the whole shape above the plane (half of a track): no probe can touch it
                lowest = vdot(nrm_t, vsub(c_w, _r3(ter.pl_p, k))) - _support(
                    t, s_par, s, vdot(nrm_t, _col3(sw_R, s, 0)), vdot(nrm_t, ax_w), vdot(nrm_t, _col3(sw_R, s, 2)))
                if lowest > _TOL:
                    continue
            # ---- range and candidates
            s_lo = 0.0
            s_hi = 0.0
            nc = 0
            if kind == 1:
                O = _r3(ter.pr_O, k)
                u = _r3(ter.pr_u, k)
                # the box's extent along the path direction (u is horizontal)
                ex = 0.5 * (sc.bb_max[s, 0] - sc.bb_min[s, 0])
                ey = 0.5 * (sc.bb_max[s, 1] - sc.bb_min[s, 1])
                sc_ = (c_w[0] - O[0]) * u[0] + (c_w[1] - O[1]) * u[1]
                rr = ex * abs(u[0]) + ey * abs(u[1])
                s_lo = sc_ - rr
                s_hi = sc_ + rr
            elif kind == 2:
                for i in range(3):
                    qmin[i] = sc.bb_min[s, i]
                    qmax[i] = sc.bb_max[s, i]
                nc = bvh_query(ter.bvh_min, ter.bvh_max, ter.bvh_left, ter.bvh_right, ter.bvh_start,
                               ter.bvh_count, ter.bvh_faces, qmin, qmax, cand, stack, ter.me_root[k])
                nc = min(nc, cand.shape[0])
                if nc == 0:
                    continue
            # ---- probes
            if t == S_SPHERE or t == S_CAPSULE or t == S_CYLINDER:
                rho = s_par[s, 0]
                if t == S_SPHERE:
                    npr = 1
                elif t == S_CAPSULE:
                    npr = 2
                else:
                    npr = int(s_par[s, 2])
                for kp in range(npr):
                    disc = t == S_CYLINDER
                    w = 1.0
                    st = 0.0
                    if t == S_CAPSULE:
                        st = s_par[s, 1] if kp == 0 else -s_par[s, 1]
                    elif disc:
                        st, w = _slice(kp, npr, s_par[s, 1])
                    cp = vadd(c_w, vscale(st, ax_w))
                    pb = _to_body(s_pos, s_rot, s, (0.0, st, 0.0))
                    k0 = _key0(s, kp)
                    area = 0.0
                    wtype = W_POINT
                    if wk:
                        wtype = W_DISC if disc else W_SPHERE
                        area = 2.0 * s_par[s, 1] * w if disc else 0.0
                        w = 1.0
                    if kind == 0:
                        P = _r3(ter.pl_p, k)
                        if disc:
                            n = _disc_plane(rec, n, cp, ax_w, rho, b, pb, axb, nrm_t, P, pair0, _reff(rho, 0.0, dflt),
                                            w, area, wtype, k0, _key1(tid, np.int64(0)), pidx, max_pen)
                        else:
                            n = _point_plane(rec, n, cp, rho, b, pb, nrm_t, P, pair0, _reff(rho, 0.0, dflt), w, area,
                                             wtype, k0, _key1(tid, np.int64(0)), pidx, max_pen)
                    elif kind == 1:
                        n = _circle_profile(rec, n, cp, rho, disc, ax_w, b, pb, axb, _r3(ter.pr_O, k),
                                            _r3(ter.pr_u, k), _r3(ter.pr_w, k), ter.pr_start[k], ter.pr_count[k],
                                            ter.ptype, ter.pa, ter.pn, ter.psmin, ter.psmax_cum, ter.pmat, row, tid,
                                            k0, w, area, wtype, dflt, pidx)
                    else:
                        n = _sphere_mesh(rec, n, cp, rho, disc, ax_w, b, pb, axb, ter.mV, ter.mF, ter.mFN, ter.mFE,
                                         ter.mEF, ter.mEC, ter.mVP, ter.mVF, cand, nc, pair0, tid, k0, w, area, wtype,
                                         dflt, pidx)
            elif t == S_BOX:
                hb = (s_par[s, 0], s_par[s, 1], s_par[s, 2])
                if wk:
                    fi, fs = _winkler_face(sw_R, s, hb, nrm_t)
                    a1 = (fi + 1) % 3
                    a2 = (fi + 2) % 3
                    area = 4.0 * hb[a1] * hb[a2] / (wgrid * wgrid)
                    npr = wgrid * wgrid
                else:
                    npr = 8
                for kp in range(npr):
                    if wk:
                        g1 = kp // wgrid
                        g2 = kp % wgrid
                        cl = vadd(vscale(fs * hb[fi], _e(fi)),
                                  _set2(a1, hb[a1] * (-1.0 + (2.0 * g1 + 1.0) / wgrid),
                                        a2, hb[a2] * (-1.0 + (2.0 * g2 + 1.0) / wgrid)))
                        wtype = W_POINT
                        ar = area
                        k0 = _key0(s, 100 + kp)
                    else:
                        cl = ((hb[0] if kp & 1 else -hb[0]), (hb[1] if kp & 2 else -hb[1]),
                              (hb[2] if kp & 4 else -hb[2]))
                        wtype = W_POINT
                        ar = 0.0
                        k0 = _key0(s, kp)
                    cp = vadd(c_w, _m3(sw_R, s, cl))
                    pb = _to_body(s_pos, s_rot, s, cl)
                    if kind == 0:
                        n = _point_plane(rec, n, cp, 0.0, b, pb, nrm_t, _r3(ter.pl_p, k), pair0, dflt, 1.0, ar, wtype,
                                         k0, _key1(tid, np.int64(0)), pidx, max_pen)
                    elif kind == 1:
                        n = _point_profile(rec, n, cp, b, pb, _r3(ter.pr_O, k), _r3(ter.pr_u, k), _r3(ter.pr_w, k),
                                           ter.pr_start[k], ter.pr_count[k], ter.ptype, ter.pa, ter.pn, ter.psmin,
                                           ter.psmax_cum, ter.pmat, row, tid, k0, 1.0, ar, wtype, dflt, pidx, max_pen)
                    else:
                        n = _point_mesh(rec, n, cp, b, pb, ter.mV, ter.mF, ter.mFN, cand, nc, pair0, tid, k0, 1.0, ar,
                                        wtype, dflt, pidx, max_pen)
                if not wk:
                    if kind == 1:
                        n = _box_solid_profile(rec, n, s, b, s_pos, s_rot, s_par, sw_c, sw_R, _r3(ter.pr_O, k),
                                               _r3(ter.pr_u, k), _r3(ter.pr_w, k), ter.pr_start[k], ter.pr_count[k],
                                               ter.ptype, ter.pa, ter.pn, ter.psmin, ter.psmax_cum, ter.pmat, row,
                                               tid, dflt, pidx, s_lo, s_hi, cone_tol)
                    elif kind == 2:
                        n = _box_solid_mesh(rec, n, s, b, s_pos, s_rot, s_par, sw_c, sw_R, ter.mV, ter.mF, ter.mFN,
                                            ter.mFE, ter.mE, ter.mEF, ter.mEC, cand, nc, pair0, tid, dflt, pidx)
            elif t == S_POLY:
                f0 = int(s_par[s, 2])
                nfc = int(s_par[s, 3])
                if wk:
                    # Winkler probes of the face turned most against the ground's normal
                    fw = f0
                    lowest_dot = 2.0
                    for f in range(f0, f0 + nfc):
                        dd = vdot(_m3(sw_R, s, (shp.pf[f, 0], shp.pf[f, 1], shp.pf[f, 2])), nrm_t)
                        if dd < lowest_dot:
                            lowest_dot = dd
                            fw = f
                    q0 = int(shp.pf[fw, 4])
                    npr = int(shp.pf[fw, 5])
                    ar = shp.pf[fw, 6]
                else:
                    q0 = int(s_par[s, 0])
                    npr = int(s_par[s, 1])
                    ar = 0.0
                for kp in range(npr):
                    if wk:
                        cl = _r3(shp.pw, q0 + kp)
                        k0 = _key0(s, 2 * POLY_LINE_KEY + kp)
                    else:
                        cl = _r3(shp.pv, q0 + kp)
                        k0 = _key0(s, kp)
                    cp = vadd(c_w, _m3(sw_R, s, cl))
                    pb = _to_body(s_pos, s_rot, s, cl)
                    if kind == 0:
                        n = _point_plane(rec, n, cp, 0.0, b, pb, nrm_t, _r3(ter.pl_p, k), pair0, dflt, 1.0, ar,
                                         W_POINT, k0, _key1(tid, np.int64(0)), pidx, max_pen)
                    elif kind == 1:
                        n = _point_profile(rec, n, cp, b, pb, _r3(ter.pr_O, k), _r3(ter.pr_u, k), _r3(ter.pr_w, k),
                                           ter.pr_start[k], ter.pr_count[k], ter.ptype, ter.pa, ter.pn, ter.psmin,
                                           ter.psmax_cum, ter.pmat, row, tid, k0, 1.0, ar, W_POINT, dflt, pidx,
                                           max_pen)
                    else:
                        n = _point_mesh(rec, n, cp, b, pb, ter.mV, ter.mF, ter.mFN, cand, nc, pair0, tid, k0, 1.0, ar,
                                        W_POINT, dflt, pidx, max_pen)
                if not wk:
                    if kind == 1:
                        n = _poly_solid_profile(rec, n, s, b, s_pos, s_rot, s_par, sw_c, sw_R, shp.pf,
                                                _r3(ter.pr_O, k), _r3(ter.pr_u, k), _r3(ter.pr_w, k),
                                                ter.pr_start[k], ter.pr_count[k], ter.ptype, ter.pa, ter.pn,
                                                ter.psmin, ter.psmax_cum, ter.pmat, row, tid, dflt, pidx, s_lo, s_hi,
                                                cone_tol)
                    elif kind == 2:
                        n = _poly_solid_mesh(rec, n, s, b, s_pos, s_rot, s_par, sw_c, sw_R, shp.pf, ter.mV, ter.mF,
                                             ter.mFN, ter.mFE, ter.mE, ter.mEF, ter.mEC, cand, nc, pair0, tid, dflt,
                                             pidx)
    # ------------------------------------------------------------- shape pairs
    # sweep and prune of the bodies' boxes along x (bodies that may touch at all), then their shapes
    nbl = shp.b_list.shape[0]
    bmin = sc.b_min
    bmax = sc.b_max
    for ib in range(nbl):
        for i in range(3):
            bmin[ib, i] = 1e300
            bmax[ib, i] = -1e300
        for k in range(shp.b_ptr[ib], shp.b_ptr[ib + 1]):
            s = shp.b_shapes[k]
            for i in range(3):
                if sc.bb_min[s, i] < bmin[ib, i]:
                    bmin[ib, i] = sc.bb_min[s, i]
                if sc.bb_max[s, i] > bmax[ib, i]:
                    bmax[ib, i] = sc.bb_max[s, i]
    order = sc.order
    for i in range(1, nbl):
        x = order[i]
        key = bmin[x, 0]
        j = i - 1
        while j >= 0 and bmin[order[j], 0] > key:
            order[j + 1] = order[j]
            j -= 1
        order[j + 1] = x
    for ii in range(nbl):
        ia = order[ii]
        for jj in range(ii + 1, nbl):
            ib = order[jj]
            if bmin[ib, 0] > bmax[ia, 0]:
                break
            if not flt.may[ia, ib]:
                continue
            if (bmin[ib, 1] > bmax[ia, 1] or bmax[ib, 1] < bmin[ia, 1] or bmin[ib, 2] > bmax[ia, 2]
                    or bmax[ib, 2] < bmin[ia, 2]):
                continue
            for ka in range(shp.b_ptr[ia], shp.b_ptr[ia + 1]):
                a = shp.b_shapes[ka]
                fa = shp.s_fam[a]
                for kb in range(shp.b_ptr[ib], shp.b_ptr[ib + 1]):
                    bq = shp.b_shapes[kb]
                    if (sc.bb_min[bq, 0] > sc.bb_max[a, 0] or sc.bb_max[bq, 0] < sc.bb_min[a, 0]
                            or sc.bb_min[bq, 1] > sc.bb_max[a, 1] or sc.bb_max[bq, 1] < sc.bb_min[a, 1]
                            or sc.bb_min[bq, 2] > sc.bb_max[a, 2] or sc.bb_max[bq, 2] < sc.bb_min[a, 2]):
                        continue
                    if not flt.fam_ok[fa, shp.s_fam[bq]]:
                        continue
                    if not flt.type_ok[shp.s_type[a], shp.s_type[bq]]:
                        continue
                    pair = flt.mat_pair[shp.s_mat[a], shp.s_mat[bq]]
                    if pair < 0:
                        continue
                    ta = shp.s_type[a]
                    tq = shp.s_type[bq]
                    if (ta == S_BOX and tq == S_CYLINDER) or (ta == S_CYLINDER and tq == S_BOX):
                        # wheel on shoe, the bulk of a track's candidates: the necessary conditions here, without
                        # the calls of a pair that gives no record (as shape_pair would do it otherwise)
                        sw, sx = (bq, a) if ta == S_BOX else (a, bq)
                        rims, corners = _wheel_box_filter(sw, sx, s_par, shp.s_rbound, sw_c, sw_R, max_pen)
                        if rims or corners:
                            n = _cylinder_box(rec, n, sw, shp.s_body[sw], sx, shp.s_body[sx], s_pos, s_rot, s_par,
                                              sw_c, sw_R, pair, dflt, np.int64(sx) << 32, pidx, max_pen, rims,
                                              corners)
                        continue
                    n = shape_pair(rec, n, a, bq, shp.s_type, shp.s_body, s_pos, s_rot, s_par, shp.s_rbound, sw_c,
                                   sw_R, pair, dflt, pidx, max_pen)
    return n
