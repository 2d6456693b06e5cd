"""Terrains packed for slicing by the track planes (agapov-kovalev-pogorelov §3.2-3.3).

:func:`pack_terrain` turns any :mod:`trackdyn.terrain` terrain into the flat
arrays of :class:`~trackdyn.contact.massless._slice.TerrainPack`:

- planes (``Flat``, ``Plane.incline``): normal, point, friction;
- profile terrains (obstacles, stairs, road profiles): the exact chain of the
  profile as a polyline of vertices ``(s, z)`` along the path; convex arcs
  (half-rounds) are cut into chords whose sagitta is at most
  ``arc_tolerance`` (the slice of a plane is a polyline, §3.3);
- triangle meshes and height fields: vertices, faces, normals, edge adjacency
  and the bounding-volume hierarchy of :mod:`trackdyn.terrain.mesh`, node
  indices kept local to each mesh.

:func:`slice_terrain` slices a packed terrain by one plane (for drawings,
tests and users who want to see what a track plane sees).
"""

from __future__ import annotations

import math

import numpy as np

from ...terrain.base import Plane, ProfileTerrain
from ...terrain.mesh import TriangleMesh
from ...terrain.profile import PRIM_ARC, PRIM_SEG
from . import _slice as SL

__all__ = ["pack_terrain", "slice_terrain", "profile_polyline"]


def profile_polyline(part: ProfileTerrain, arc_tolerance: float = 5e-4):
    """Vertices ``(s, z)`` (n, 2) of a profile terrain's chain and the friction of each segment (n-1,)."""
    ch = part.chain
    mats = part.materials
    pts: list[tuple[float, float]] = []
    mus: list[float] = []

    def add(p, mu):
        if pts and abs(pts[-1][0] - p[0]) < 1e-12 and abs(pts[-1][1] - p[1]) < 1e-12:
            return
        if pts:
            mus.append(mu)
        pts.append((float(p[0]), float(p[1])))

    for k in range(len(ch.prim_type)):
        mu = float(mats[int(ch.prim_mat[k])].friction)
        a = ch.prim_a[k]
        if ch.prim_type[k] == PRIM_SEG:
            add((a[0], a[1]), mu)
            add((a[2], a[3]), mu)
        elif ch.prim_type[k] == PRIM_ARC:
            cs, cz, r = a[0], a[1], a[2]
            a0 = math.atan2(ch.prim_n[k, 1], ch.prim_n[k, 0])
            a1 = math.atan2(ch.prim_n[k, 3], ch.prim_n[k, 2])
            dth = 2.0 * math.acos(max(-1.0, 1.0 - arc_tolerance / r)) if arc_tolerance < r else math.pi / 4
            m = max(2, int(math.ceil(abs(a0 - a1) / dth)))
            for ang in np.linspace(a0, a1, m + 1):
                add((cs + r * math.cos(ang), cz + r * math.sin(ang)), mu)
        # PRIM_VERTEX: the neighbouring segments meet there already
    return np.array(pts, float).reshape(-1, 2), np.array(mus, float)


def pack_terrain(terrain, arc_tolerance: float = 5e-4):
    """``(TerrainPack, n_edges, stack_depth)`` of a terrain (any part kinds, in any number)."""
    from ...terrain import as_terrain

    parts = as_terrain(terrain).parts()
    pr_O, pr_u, pr_w, pr_ptr, pv_s, pv_z, pv_mu = [], [], [], [0], [], [], []
    pl_n, pl_p, pl_mu = [], [], []
    meshes = []
    for part in parts:
        if isinstance(part, Plane):
            pl_n.append(part.normal)
            pl_p.append(part.point)
            pl_mu.append(float(part.material.friction))
        elif isinstance(part, ProfileTerrain):
            P, mu = profile_polyline(part, arc_tolerance)
            pr_O.append(part.origin)
            pr_u.append(part.u)
            pr_w.append(part.w)
            pv_s.append(P[:, 0])
            pv_z.append(P[:, 1] + part.origin[2])
            pv_mu.append(np.concatenate([mu, [mu[-1] if len(mu) else 0.0]]))
            pr_ptr.append(pr_ptr[-1] + len(P))
        elif isinstance(part, TriangleMesh):
            meshes.append(part)
        else:
            raise ValueError(f"massless track: unsupported terrain part {type(part).__name__}")
    f3 = lambda x: np.array(x, float).reshape(-1, 3)  # noqa: E731
    cat = lambda xs, dt=float: (np.concatenate(xs).astype(dt) if xs else np.zeros(0, dt))  # noqa: E731
    mV, mF, mFN, mE, mFE, mEF, mFmu = [], [], [], [], [], [], []
    bmin, bmax, bl, br, bs, bc, bf, roots = [], [], [], [], [], [], [], [0]
    nv = nf = ne = nfaces_bvh = 0
    depth = 1
    for m in meshes:
        mV.append(m.vertices)
        mF.append(m.faces + nv)
        mFN.append(m.face_normal)
        mE.append(m.edges + nv)
        mFE.append(m.face_edges + ne)
        ef = m.edge_faces.copy()
        ef[ef >= 0] += nf
        mEF.append(ef)
        mFmu.append(np.full(len(m.faces), float(m.material.friction)))
        bv = m.bvh
        bmin.append(bv["bvh_min"])
        bmax.append(bv["bvh_max"])
        bl.append(bv["bvh_left"])  # local to the mesh: a view of its rows is a tree rooted at 0
        br.append(bv["bvh_right"])
        bs.append(bv["bvh_start"] + nfaces_bvh)
        bc.append(bv["bvh_count"])
        bf.append(bv["bvh_faces"] + nf)
        roots.append(roots[-1] + len(bv["bvh_min"]))
        nfaces_bvh += len(bv["bvh_faces"])
        nv += len(m.vertices)
        nf += len(m.faces)
        ne += len(m.edges)
        depth = max(depth, m.bvh_depth)
    # world height of each profile's highest vertex (a hull box above all of them needs no slice)
    pr_ztop = np.array([O[2] + z.max() for O, z in zip(pr_O, pv_z)], float)
    pack = SL.TerrainPack(
        f3(pr_O), f3(pr_u), f3(pr_w), np.array(pr_ptr, np.int64), cat(pv_s), cat(pv_z), cat(pv_mu), pr_ztop,
        f3(pl_n), f3(pl_p), np.array(pl_mu, float),
        np.array(roots, np.int64), f3(mV) if mV else np.zeros((0, 3)),
        np.concatenate(mF).astype(np.int64) if mF else np.zeros((0, 3), np.int64),
        f3(mFN) if mFN else np.zeros((0, 3)),
        np.concatenate(mE).astype(np.int64) if mE else np.zeros((0, 2), np.int64),
        np.concatenate(mFE).astype(np.int64) if mFE else np.zeros((0, 3), np.int64),
        np.concatenate(mEF).astype(np.int64) if mEF else np.zeros((0, 2), np.int64),
        cat(mFmu), f3(bmin) if bmin else np.zeros((0, 3)), f3(bmax) if bmax else np.zeros((0, 3)),
        cat(bl, np.int64), cat(br, np.int64), cat(bs, np.int64), cat(bc, np.int64), cat(bf, np.int64),
    )
    return pack, ne, 2 * depth + 8


def slice_terrain(terrain, point, normal, window, capacity: int = 4096):
    """Segments ``(a, b)`` (n, 2, 3) where the plane through ``point`` with ``normal`` cuts ``terrain``.

    ``window`` (4, 3): world corners of the plane region of interest (its
    extent along the plane bounds the slice). Each segment runs so that the
    ground lies on its right seen along ``normal``; also returns the outward
    normals (n, 3).
    """
    pack, ne, stack = pack_terrain(terrain)
    buf = SL.new_slice_buffer(capacity, ne, stack)
    n = np.asarray(normal, float)
    n = n / np.linalg.norm(n)
    o = np.asarray(point, float)
    win = np.asarray(window, float).reshape(4, 3)
    ex = win[1] - win[0]
    ex /= np.linalg.norm(ex)
    half = 0.5 * float(np.linalg.norm(win[1] - win[0])) + 1.0
    SL.slice_profiles(pack, tuple(o), tuple(n), win, buf, 0.02)
    SL.slice_planes(pack, tuple(o), tuple(n), tuple(ex), half, buf)
    lo = tuple(win.min(axis=0) - 0.01)
    hi = tuple(win.max(axis=0) + 0.01)
    SL.slice_meshes(pack, tuple(o), tuple(n), lo, hi, buf)
    k = min(int(buf.n[0]), capacity)
    return np.stack([buf.a[:k], buf.b[:k]], axis=1).copy(), buf.nu[:k].copy()
