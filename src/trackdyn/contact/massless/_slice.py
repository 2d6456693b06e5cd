"""Numba kernels: slices of a terrain by a plane (agapov-kovalev-pogorelov §3.3, step 2) and their gradients.

A slice is a set of segments ``a -> b`` in the plane (world points), each with
its unit direction ``t``, length ``L``, outward normal ``ν = t × n`` (out of
the ground, in the plane; ``n`` is the plane normal) and friction ``μ``. Every
endpoint is where the plane cuts a straight line fixed in the world (an
*edge line* ``e0 + λ d``: the lateral line through a profile vertex, a mesh
edge), so its derivative with respect to the plane (point ``o``, normal ``n``)
is closed-form:

    a = e0 + λ d,   λ = (o - e0)·n / (d·n),   ∂a = d (nᵀ ∂o + (o - a)ᵀ ∂n) / (d·n).

Neighbouring segments that share an endpoint are linked (``prev``/``next``);
at a convex corner the bisector slope ``k = (1 + t_p·t)/((t_p × t)·n)``
(``cot`` of half the turn) limits the area a segment owns (:mod:`._area`).

Terrain parts (packed by :mod:`trackdyn.contact.massless.slicing`):

- profile terrains, faceted: vertices ``(s, z)`` along the path, lateral
  edge lines along ``w`` (a convex arc is sampled into chords);
- planes (flat ground, inclines): one segment per plane whose edge lines are
  chosen each evaluation across the window (their choice moves the endpoints
  along the slice only, which no force depends on);
- triangle meshes and height fields: every face that the plane crosses gives
  one segment; candidate faces come from the bounding-volume hierarchy
  (:func:`trackdyn.terrain.kernels.bvh_query`).
"""

from __future__ import annotations

import math
from collections import namedtuple

import numba as nb
import numpy as np

from ...terrain.kernels import bvh_query

jit = nb.njit(cache=True, _nrt=False)

TerrainPack = namedtuple(
    "TerrainPack",
    "pr_O pr_u pr_w pr_ptr pv_s pv_z pv_mu pr_ztop "
    "pl_n pl_p pl_mu "
    "me_root mV mF mFN mE mFE mEF mF_mu bvh_min bvh_max bvh_left bvh_right bvh_start bvh_count bvh_faces",
)

SliceBuf = namedtuple(
    "SliceBuf",
    "n a b t nu L mu e0a da e0b db prev next ka kb ga gb gt gnu gL gka gkb kind edge_a edge_b done "
    "cand stack qmin qmax edge_seg",
)

NO_LIMIT = -1.0
K_MAX = 1.0e3  # bisector slopes above this are treated as no limit (the corner is nearly straight)


def new_slice_buffer(capacity: int, n_edges: int, stack: int) -> SliceBuf:
    c = int(capacity)
    return SliceBuf(
        np.zeros(1, np.int64), np.zeros((c, 3)), np.zeros((c, 3)), np.zeros((c, 3)), np.zeros((c, 3)),
        np.zeros(c), np.zeros(c), np.zeros((c, 3)), np.zeros((c, 3)), np.zeros((c, 3)), np.zeros((c, 3)),
        np.full(c, -1, np.int64), np.full(c, -1, np.int64), np.zeros(c), np.zeros(c),
        np.zeros((c, 3, 6)), np.zeros((c, 3, 6)), np.zeros((c, 3, 6)), np.zeros((c, 3, 6)), np.zeros((c, 6)),
        np.zeros((c, 6)), np.zeros((c, 6)), np.zeros(c, np.int64), np.full(c, -1, np.int64),
        np.full(c, -1, np.int64), np.zeros(c, np.int64), np.zeros(4096, np.int64), np.zeros(max(int(stack), 8), np.int64), np.zeros(3),
        np.zeros(3), np.full(max(int(n_edges), 1), -1, np.int64),
    )


# --------------------------------------------------------------------------- small vectors
@jit
def _dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@jit
def _cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


@jit
def _push(buf, a, b, e0a, da, e0b, db, mu, n, kind, edge_a, edge_b, N):
    """Append segment a -> b oriented so that t × n points along N (out of the ground); returns its index."""
    k = buf.n[0]
    if k >= buf.a.shape[0]:
        buf.n[0] = k + 1  # counted: the caller grows the buffer
        return -1
    t = (b[0] - a[0], b[1] - a[1], b[2] - a[2])
    L = math.sqrt(_dot(t, t))
    if L < 1e-12:
        return -1
    t = (t[0] / L, t[1] / L, t[2] / L)
    nu = _cross(t, n)
    swap = _dot(nu, N) < 0.0
    for i in range(3):
        if swap:
            buf.a[k, i] = b[i]
            buf.b[k, i] = a[i]
            buf.t[k, i] = -t[i]
            buf.nu[k, i] = -nu[i]
            buf.e0a[k, i] = e0b[i]
            buf.da[k, i] = db[i]
            buf.e0b[k, i] = e0a[i]
            buf.db[k, i] = da[i]
        else:
            buf.a[k, i] = a[i]
            buf.b[k, i] = b[i]
            buf.t[k, i] = t[i]
            buf.nu[k, i] = nu[i]
            buf.e0a[k, i] = e0a[i]
            buf.da[k, i] = da[i]
            buf.e0b[k, i] = e0b[i]
            buf.db[k, i] = db[i]
    buf.L[k] = L
    buf.mu[k] = mu
    buf.kind[k] = kind
    buf.edge_a[k] = edge_b if swap else edge_a
    buf.edge_b[k] = edge_a if swap else edge_b
    buf.prev[k] = -1
    buf.next[k] = -1
    buf.n[0] = k + 1
    return k


@jit
def _edge_point(e0, d, o, n):
    """Where the plane (o, n) cuts the line e0 + λ d; (point, ok)."""
    dn = _dot(d, n)
    if abs(dn) < 1e-12:
        return (0.0, 0.0, 0.0), False
    lam = ((o[0] - e0[0]) * n[0] + (o[1] - e0[1]) * n[1] + (o[2] - e0[2]) * n[2]) / dn
    return (e0[0] + lam * d[0], e0[1] + lam * d[1], e0[2] + lam * d[2]), True


# --------------------------------------------------------------------------- slicing
@jit
def slice_profiles(T, o, n, win, buf, min_dn):
    """Slice every profile terrain in the world window ``win`` (4 corners (4, 3)); returns False if degenerate.

    Profile vertices beyond the window are replaced by points at its edge
    (the profile's far flat ends reach 100 km).
    """
    ok = True
    for p in range(T.pr_ptr.shape[0] - 1):
        O = (T.pr_O[p, 0], T.pr_O[p, 1], T.pr_O[p, 2])
        u = (T.pr_u[p, 0], T.pr_u[p, 1], T.pr_u[p, 2])
        w = (T.pr_w[p, 0], T.pr_w[p, 1], T.pr_w[p, 2])
        if abs(_dot(w, n)) < min_dn:
            ok = False
            continue
        smin = 1e300
        smax = -1e300
        for c in range(win.shape[0]):
            s = (win[c, 0] - O[0]) * u[0] + (win[c, 1] - O[1]) * u[1] + (win[c, 2] - O[2]) * u[2]
            smin = min(smin, s)
            smax = max(smax, s)
        k0 = T.pr_ptr[p]
        k1 = T.pr_ptr[p + 1]
        # first vertex with s >= smin (the segment before it reaches into the window)
        lo = k0
        hi = k1 - 1
        while lo < hi:
            mid = (lo + hi) // 2
            if T.pv_s[mid] < smin:
                lo = mid + 1
            else:
                hi = mid
        first = max(k0, lo - 1)
        last_seg = -1
        last_k = -10
        for k in range(first, k1 - 1):
            s0 = T.pv_s[k]
            s1 = T.pv_s[k + 1]
            if s0 > smax:
                break
            z0 = T.pv_z[k]
            z1 = T.pv_z[k + 1]
            # clip the strip to the window's s-range (edge lines stay world-fixed)
            if s1 > s0:
                if s0 < smin:
                    z0 = z0 + (z1 - z0) * (smin - s0) / (s1 - s0)
                    s0 = smin
                if s1 > smax:
                    z1 = T.pv_z[k] + (z1 - T.pv_z[k]) * (smax - T.pv_s[k]) / (s1 - T.pv_s[k])
                    s1 = smax
                if s1 <= s0:
                    continue
            elif s0 < smin or s0 > smax:
                continue
            E0 = (O[0] + s0 * u[0], O[1] + s0 * u[1], O[2] + z0)
            E1 = (O[0] + s1 * u[0], O[1] + s1 * u[1], O[2] + z1)
            a, oka = _edge_point(E0, w, o, n)
            b, okb = _edge_point(E1, w, o, n)
            if not (oka and okb):
                continue
            ds = s1 - s0
            dz = z1 - z0
            ln = math.sqrt(ds * ds + dz * dz)
            if ln < 1e-12:
                continue
            N = ((-dz * u[0]) / ln, (-dz * u[1]) / ln, ds / ln)
            j = _push(buf, a, b, E0, w, E1, w, T.pv_mu[k], n, 0, -1, -1, N)
            if j < 0:
                continue
            # consecutive strips share the lateral line through their common vertex
            if last_seg >= 0 and k == last_k + 1:
                _link(buf, last_seg, j)
            last_seg = j
            last_k = k
    return ok


@jit
def _link(buf, i, j):
    """Segments i and j share an endpoint: link b_i -> a_j (either orientation)."""
    da = abs(buf.b[i, 0] - buf.a[j, 0]) + abs(buf.b[i, 1] - buf.a[j, 1]) + abs(buf.b[i, 2] - buf.a[j, 2])
    if da < 1e-9:
        buf.next[i] = j
        buf.prev[j] = i
        return
    db = abs(buf.a[i, 0] - buf.b[j, 0]) + abs(buf.a[i, 1] - buf.b[j, 1]) + abs(buf.a[i, 2] - buf.b[j, 2])
    if db < 1e-9:
        buf.prev[i] = j
        buf.next[j] = i


@jit
def slice_planes(T, o, n, ex, half, buf):
    """Slice every infinite plane terrain: one segment of length ~2 ``half`` centred under ``o``."""
    for p in range(T.pl_n.shape[0]):
        N = (T.pl_n[p, 0], T.pl_n[p, 1], T.pl_n[p, 2])
        P0 = (T.pl_p[p, 0], T.pl_p[p, 1], T.pl_p[p, 2])
        # edge lines: in the terrain plane, across the slice (n projected onto the plane)
        nn = _dot(n, N)
        d = (n[0] - nn * N[0], n[1] - nn * N[1], n[2] - nn * N[2])
        dl = math.sqrt(_dot(d, d))
        if dl < 1e-6:
            continue  # the track plane is parallel to the ground (vehicle on its side)
        d = (d[0] / dl, d[1] / dl, d[2] / dl)
        # slice direction, and the foot of o on the slice line
        t = _cross(n, N)
        tl = math.sqrt(_dot(t, t))
        t = (t[0] / tl, t[1] / tl, t[2] / tl)
        # a point of the terrain plane near o: o moved along N
        h = _dot((o[0] - P0[0], o[1] - P0[1], o[2] - P0[2]), N)
        q = (o[0] - h * N[0], o[1] - h * N[1], o[2] - h * N[2])
        s = 1.0 if _dot(t, ex) >= 0.0 else -1.0
        E0 = (q[0] - s * half * t[0], q[1] - s * half * t[1], q[2] - s * half * t[2])
        E1 = (q[0] + s * half * t[0], q[1] + s * half * t[1], q[2] + s * half * t[2])
        a, oka = _edge_point(E0, d, o, n)
        b, okb = _edge_point(E1, d, o, n)
        if oka and okb:
            _push(buf, a, b, E0, d, E1, d, T.pl_mu[p], n, 1, -1, -1, N)


@jit
def slice_meshes(T, o, n, lo, hi, buf):
    """Slice the triangle meshes inside the world box [lo, hi]: one segment per face crossing the plane.

    Node arrays of each mesh's hierarchy are stored with child indices local
    to the mesh (root 0), so views of them go to
    :func:`trackdyn.terrain.kernels.bvh_query` unchanged.
    """
    if T.mF.shape[0] == 0:
        return
    for i in range(3):
        buf.qmin[i] = lo[i]
        buf.qmax[i] = hi[i]
    start = buf.n[0]
    for r in range(T.me_root.shape[0] - 1):
        root = T.me_root[r]
        end = T.me_root[r + 1]
        m = bvh_query(T.bvh_min[root:end], T.bvh_max[root:end], T.bvh_left[root:end], T.bvh_right[root:end],
                      T.bvh_start[root:end], T.bvh_count[root:end], T.bvh_faces, buf.qmin, buf.qmax, buf.cand,
                      buf.stack)
        for c in range(min(m, buf.cand.shape[0])):
            f = buf.cand[c]
            v0 = T.mF[f, 0]
            v1 = T.mF[f, 1]
            v2 = T.mF[f, 2]
            s0 = (T.mV[v0, 0] - o[0]) * n[0] + (T.mV[v0, 1] - o[1]) * n[1] + (T.mV[v0, 2] - o[2]) * n[2]
            s1 = (T.mV[v1, 0] - o[0]) * n[0] + (T.mV[v1, 1] - o[1]) * n[1] + (T.mV[v1, 2] - o[2]) * n[2]
            s2 = (T.mV[v2, 0] - o[0]) * n[0] + (T.mV[v2, 1] - o[1]) * n[1] + (T.mV[v2, 2] - o[2]) * n[2]
            p0 = s0 >= 0.0
            p1 = s1 >= 0.0
            p2 = s2 >= 0.0
            if p0 == p1 and p1 == p2:
                continue
            # the two edges whose ends lie on opposite sides (k -> k+1)
            if p0 != p1:
                ka, kb = 0, (1 if p1 != p2 else 2)
            else:
                ka, kb = 1, 2
            ia0, ia1 = T.mF[f, ka], T.mF[f, (ka + 1) % 3]
            ib0, ib1 = T.mF[f, kb], T.mF[f, (kb + 1) % 3]
            e0a = (T.mV[ia0, 0], T.mV[ia0, 1], T.mV[ia0, 2])
            da = (T.mV[ia1, 0] - e0a[0], T.mV[ia1, 1] - e0a[1], T.mV[ia1, 2] - e0a[2])
            e0b = (T.mV[ib0, 0], T.mV[ib0, 1], T.mV[ib0, 2])
            db = (T.mV[ib1, 0] - e0b[0], T.mV[ib1, 1] - e0b[1], T.mV[ib1, 2] - e0b[2])
            a, oka = _edge_point(e0a, da, o, n)
            b, okb = _edge_point(e0b, db, o, n)
            if not (oka and okb):
                continue
            N = (T.mFN[f, 0], T.mFN[f, 1], T.mFN[f, 2])
            _push(buf, a, b, e0a, da, e0b, db, T.mF_mu[f], n, 2, T.mFE[f, ka], T.mFE[f, kb], N)
    # link segments through shared mesh edges
    nseg = min(buf.n[0], buf.a.shape[0])
    for j in range(start, nseg):
        for end in range(2):
            e = buf.edge_a[j] if end == 0 else buf.edge_b[j]
            if e < 0:
                continue
            other = buf.edge_seg[e]
            if other < 0:
                buf.edge_seg[e] = j
            else:
                _link(buf, other, j)
    for j in range(start, nseg):
        for end in range(2):
            e = buf.edge_a[j] if end == 0 else buf.edge_b[j]
            if e >= 0:
                buf.edge_seg[e] = -1


# --------------------------------------------------------------------------- gradients
@jit
def _endpoint_grad(e0, d, a, o, n, Go, Gn, out):
    """∂a/∂(chassis) (3, 6) for a = plane ∩ (e0 + λ d)."""
    dn = d[0] * n[0] + d[1] * n[1] + d[2] * n[2]
    oa = (o[0] - a[0], o[1] - a[1], o[2] - a[2])
    for c in range(6):
        g = (n[0] * Go[0, c] + n[1] * Go[1, c] + n[2] * Go[2, c]
             + oa[0] * Gn[0, c] + oa[1] * Gn[1, c] + oa[2] * Gn[2, c]) / dn
        for i in range(3):
            out[i, c] = d[i] * g


@jit
def _basic_gradients(buf, j, o, n, Go, Gn):
    """Gradients (w.r.t. the hull's (r, π̄)) of a, b, t, ν, L of segment j."""
    a = (buf.a[j, 0], buf.a[j, 1], buf.a[j, 2])
    b = (buf.b[j, 0], buf.b[j, 1], buf.b[j, 2])
    _endpoint_grad((buf.e0a[j, 0], buf.e0a[j, 1], buf.e0a[j, 2]), (buf.da[j, 0], buf.da[j, 1], buf.da[j, 2]),
                   a, o, n, Go, Gn, buf.ga[j])
    _endpoint_grad((buf.e0b[j, 0], buf.e0b[j, 1], buf.e0b[j, 2]), (buf.db[j, 0], buf.db[j, 1], buf.db[j, 2]),
                   b, o, n, Go, Gn, buf.gb[j])
    L = buf.L[j]
    t = (buf.t[j, 0], buf.t[j, 1], buf.t[j, 2])
    for c in range(6):
        dd = (buf.gb[j, 0, c] - buf.ga[j, 0, c], buf.gb[j, 1, c] - buf.ga[j, 1, c], buf.gb[j, 2, c] - buf.ga[j, 2, c])
        dl = t[0] * dd[0] + t[1] * dd[1] + t[2] * dd[2]
        buf.gL[j, c] = dl
        gt = ((dd[0] - t[0] * dl) / L, (dd[1] - t[1] * dl) / L, (dd[2] - t[2] * dl) / L)
        for i in range(3):
            buf.gt[j, i, c] = gt[i]
        # ν = t × n
        gn = (Gn[0, c], Gn[1, c], Gn[2, c])
        v1 = _cross(gt, n)
        v2 = _cross(t, gn)
        for i in range(3):
            buf.gnu[j, i, c] = v1[i] + v2[i]


@jit
def _slope_gradient(buf, j, k, n, Gn, out):
    """Gradient of the bisector slope at the corner where segment j ends and segment k starts."""
    tp = (buf.t[j, 0], buf.t[j, 1], buf.t[j, 2])
    t = (buf.t[k, 0], buf.t[k, 1], buf.t[k, 2])
    cr = _cross(tp, t)
    sn = _dot(cr, n)
    cs = _dot(tp, t)
    for c in range(6):
        gtp = (buf.gt[j, 0, c], buf.gt[j, 1, c], buf.gt[j, 2, c])
        gt = (buf.gt[k, 0, c], buf.gt[k, 1, c], buf.gt[k, 2, c])
        gcs = _dot(gtp, t) + _dot(tp, gt)
        a1 = _cross(gtp, t)
        a2 = _cross(tp, gt)
        gsn = _dot((a1[0] + a2[0], a1[1] + a2[1], a1[2] + a2[2]), n) + _dot(cr, (Gn[0, c], Gn[1, c], Gn[2, c]))
        out[c] = (gcs * sn - (1.0 + cs) * gsn) / (sn * sn)


@jit
def ensure_gradients(buf, j, o, n, Go, Gn):
    """Compute segment j's gradients once per slice (lazily: most segments never touch a wheel)."""
    if buf.done[j] & 2:
        return
    if not buf.done[j] & 1:
        _basic_gradients(buf, j, o, n, Go, Gn)
        buf.done[j] |= 1
    if buf.ka[j] >= 0.0:
        i = buf.prev[j]
        if not buf.done[i] & 1:
            _basic_gradients(buf, i, o, n, Go, Gn)
            buf.done[i] |= 1
        _slope_gradient(buf, i, j, n, Gn, buf.gka[j])
    if buf.kb[j] >= 0.0:
        k = buf.next[j]
        if not buf.done[k] & 1:
            _basic_gradients(buf, k, o, n, Go, Gn)
            buf.done[k] |= 1
        _slope_gradient(buf, j, k, n, Gn, buf.gkb[j])
    buf.done[j] |= 2


@jit
def corner_slopes(buf, n):
    """Bisector slopes at the convex corners of the slice (values; gradients in :func:`ensure_gradients`)."""
    nseg = min(buf.n[0], buf.a.shape[0])
    for j in range(nseg):
        buf.ka[j] = NO_LIMIT
        buf.kb[j] = NO_LIMIT
        buf.done[j] = 0
        for c in range(6):
            buf.gka[j, c] = 0.0
            buf.gkb[j, c] = 0.0
    for j in range(nseg):
        k = buf.next[j]
        if k < 0:
            continue
        tp = (buf.t[j, 0], buf.t[j, 1], buf.t[j, 2])
        t = (buf.t[k, 0], buf.t[k, 1], buf.t[k, 2])
        sn = _dot(_cross(tp, t), n)
        if sn <= 0.0:
            continue  # straight or concave: no limit
        kk = (1.0 + _dot(tp, t)) / sn
        if kk > K_MAX:
            continue
        buf.kb[j] = kk
        buf.ka[k] = kk
