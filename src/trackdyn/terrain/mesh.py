"""Triangle-mesh and height-field terrains, queried through a bounding-volume hierarchy.

A :class:`TriangleMesh` holds vertices and faces (counter-clockwise seen from
outside, so face normals point out of the ground), the edge and vertex
adjacency used to give each edge or vertex contact to one owner face, and an
axis-aligned box tree (agapov-kovalev-pogorelov §3.2: boxes split until a
leaf holds a few faces). A :class:`HeightField` is a regular grid triangulated
into such a mesh. Meshes load from files through ``trimesh`` (optional
dependency); arrays work without it.
"""

from __future__ import annotations

import numpy as np

from .base import Terrain, _material
from .kernels import mesh_heights

__all__ = ["TriangleMesh", "HeightField", "build_bvh"]


def build_bvh(lo, hi, leaf_size: int = 4):
    """Top-down median split of boxes [lo, hi] (n, 3) along the widest axis of their centres.

    Returns dict of arrays ``bvh_min, bvh_max, bvh_left, bvh_right, bvh_start,
    bvh_count, bvh_faces`` and the tree ``depth``.
    """
    n = lo.shape[0]
    cen = 0.5 * (lo + hi)
    order = np.arange(n)
    nodes_min, nodes_max, left, right, start, count = [], [], [], [], [], []
    depth = 0
    # iterative build: (node index, begin, end, level)
    nodes_min.append(None)
    nodes_max.append(None)
    left.append(-1)
    right.append(-1)
    start.append(0)
    count.append(0)
    todo = [(0, 0, n, 1)] if n else []
    while todo:
        k, b, e, lvl = todo.pop()
        depth = max(depth, lvl)
        idx = order[b:e]
        nodes_min[k] = lo[idx].min(axis=0)
        nodes_max[k] = hi[idx].max(axis=0)
        if e - b <= leaf_size:
            start[k] = b
            count[k] = e - b
            continue
        c = cen[idx]
        ax = int(np.argmax(c.max(axis=0) - c.min(axis=0)))
        srt = idx[np.argsort(c[:, ax], kind="stable")]
        order[b:e] = srt
        mid = (b + e) // 2
        for child_range in ((b, mid), (mid, e)):
            nodes_min.append(None)
            nodes_max.append(None)
            left.append(-1)
            right.append(-1)
            start.append(0)
            count.append(0)
        kl = len(left) - 2
        kr = len(left) - 1
        left[k] = kl
        right[k] = kr
        todo.append((kl, b, mid, lvl + 1))
        todo.append((kr, mid, e, lvl + 1))
    if n == 0:
        return dict(bvh_min=np.zeros((0, 3)), bvh_max=np.zeros((0, 3)), bvh_left=np.zeros(0, np.int64),
                    bvh_right=np.zeros(0, np.int64), bvh_start=np.zeros(0, np.int64),
                    bvh_count=np.zeros(0, np.int64), bvh_faces=np.zeros(0, np.int64)), 0
    return dict(bvh_min=np.array(nodes_min, float), bvh_max=np.array(nodes_max, float),
                bvh_left=np.array(left, np.int64), bvh_right=np.array(right, np.int64),
                bvh_start=np.array(start, np.int64), bvh_count=np.array(count, np.int64),
                bvh_faces=order.astype(np.int64)), depth


class TriangleMesh(Terrain):
    """Rigid ground given as a triangle mesh.

    Parameters
    ----------
    vertices : array (nv, 3)
        World coordinates, m.
    faces : array (nf, 3) of int
        Vertex indices, counter-clockwise seen from above/outside.
    material : Material, optional
    leaf_size : int
        Faces per leaf of the bounding-volume hierarchy.
    """

    def __init__(self, vertices, faces, material=None, leaf_size: int = 4):
        V = np.asarray(vertices, float)
        F = np.asarray(faces)
        if V.ndim != 2 or V.shape[1] != 3 or not np.all(np.isfinite(V)):
            raise ValueError(f"TriangleMesh: vertices must be a finite (n, 3) array, got shape {V.shape}")
        if F.ndim != 2 or F.shape[1] != 3 or F.shape[0] == 0:
            raise ValueError(f"TriangleMesh: faces must be a non-empty (m, 3) array, got shape {F.shape}")
        if not np.issubdtype(F.dtype, np.integer):
            raise ValueError("TriangleMesh: faces must be integer vertex indices")
        F = F.astype(np.int64)
        if F.min() < 0 or F.max() >= len(V):
            raise ValueError(f"TriangleMesh: face indices must be in [0, {len(V) - 1}], got [{F.min()}, {F.max()}]")
        a, b, c = V[F[:, 0]], V[F[:, 1]], V[F[:, 2]]
        cr = np.cross(b - a, c - a)
        area2 = np.linalg.norm(cr, axis=1)
        bad = np.nonzero(area2 <= 1e-14 * max(1.0, np.abs(V).max()) ** 2)[0]
        if len(bad):
            raise ValueError(f"TriangleMesh: {len(bad)} degenerate face(s) (zero area), first: face {bad[0]}")
        self.vertices = V
        self.faces = F
        self.material = _material(material, "TriangleMesh")
        self.face_normal = cr / area2[:, None]
        # edges and their faces
        e = np.sort(np.stack([F[:, [0, 1]], F[:, [1, 2]], F[:, [2, 0]]], axis=1).reshape(-1, 2), axis=1)
        edges, inv = np.unique(e, axis=0, return_inverse=True)
        inv = inv.reshape(-1)
        self.edges = edges
        self.face_edges = inv.reshape(-1, 3)
        ef = np.full((len(edges), 2), -1, np.int64)
        for k, ed in enumerate(inv):
            f = k // 3
            if ef[ed, 0] < 0:
                ef[ed, 0] = f
            elif ef[ed, 1] < 0:
                ef[ed, 1] = f
        self.edge_faces = ef
        # convex edges: the other face's far vertex lies below this face's plane
        conv = np.ones(len(edges), bool)
        for ed in np.nonzero(ef[:, 1] >= 0)[0]:
            f1, f2 = ef[ed]
            far = [v for v in F[f2] if v not in edges[ed]][0]
            d = self.face_normal[f1] @ (V[far] - V[edges[ed, 0]])
            conv[ed] = d < -1e-12 * max(1.0, np.linalg.norm(V[far] - V[edges[ed, 0]]))
        self.edge_convex = conv
        # vertex -> faces (CSR) and owners
        vf = [[] for _ in range(len(V))]
        for f in range(len(F)):
            for v in F[f]:
                vf[v].append(f)
        self.vertex_face_ptr = np.concatenate([[0], np.cumsum([len(x) for x in vf])]).astype(np.int64)
        self.vertex_faces = np.array([f for x in vf for f in x], np.int64)
        lo = np.minimum(np.minimum(a, b), c)
        hi = np.maximum(np.maximum(a, b), c)
        self.bvh, self.bvh_depth = build_bvh(lo, hi, leaf_size)

    @classmethod
    def from_file(cls, path, material=None, **kwargs):
        """Load a mesh file (STL, OBJ, PLY, ...) through ``trimesh`` (``pip install trimesh``)."""
        try:
            import trimesh
        except ImportError:  # pragma: no cover - depends on the environment
            raise ImportError("TriangleMesh.from_file needs the optional dependency trimesh "
                              "(pip install 'trackdyn[mesh]')") from None
        m = trimesh.load(str(path), force="mesh")
        return cls(np.asarray(m.vertices), np.asarray(m.faces), material, **kwargs)

    def height(self, x, y=0.0):
        x = np.asarray(x, float)
        y = np.broadcast_to(np.asarray(y, float), x.shape)
        xf = np.ascontiguousarray(x.ravel())
        yf = np.ascontiguousarray(y.ravel())
        out = np.empty(xf.shape)
        b = self.bvh
        mesh_heights(self.vertices, self.faces, b["bvh_min"], b["bvh_max"], b["bvh_left"], b["bvh_right"],
                     b["bvh_start"], b["bvh_count"], b["bvh_faces"], xf, yf, out)
        return out.reshape(x.shape)


class HeightField(TriangleMesh):
    """Ground heights ``z[i, j]`` at grid points ``(x[i], y[j])`` (m), triangulated along cell diagonals.

    Heights between grid points are those of the triangles, so the contact
    and the drawing see the same surface.
    """

    def __init__(self, x, y, z, material=None, leaf_size: int = 4):
        x = np.asarray(x, float)
        y = np.asarray(y, float)
        z = np.asarray(z, float)
        if x.ndim != 1 or y.ndim != 1 or len(x) < 2 or len(y) < 2:
            raise ValueError("HeightField: x and y must be 1-D with at least 2 points each")
        if np.any(np.diff(x) <= 0) or np.any(np.diff(y) <= 0):
            raise ValueError("HeightField: x and y must increase strictly")
        if z.shape != (len(x), len(y)) or not np.all(np.isfinite(z)):
            raise ValueError(f"HeightField: z must be finite with shape ({len(x)}, {len(y)}), got {z.shape}")
        self.x, self.y, self.z = x, y, z
        nx, ny = len(x), len(y)
        X, Y = np.meshgrid(x, y, indexing="ij")
        V = np.column_stack([X.ravel(), Y.ravel(), z.ravel()])
        idx = np.arange(nx * ny).reshape(nx, ny)
        v00 = idx[:-1, :-1].ravel()
        v10 = idx[1:, :-1].ravel()
        v11 = idx[1:, 1:].ravel()
        v01 = idx[:-1, 1:].ravel()
        F = np.concatenate([np.column_stack([v00, v10, v11]), np.column_stack([v00, v11, v01])])
        super().__init__(V, F, material, leaf_size)

    def height(self, x, y=0.0):
        x = np.asarray(x, float)
        y = np.broadcast_to(np.asarray(y, float), x.shape)
        i = np.clip(np.searchsorted(self.x, x, side="right") - 1, 0, len(self.x) - 2)
        j = np.clip(np.searchsorted(self.y, y, side="right") - 1, 0, len(self.y) - 2)
        fx = (x - self.x[i]) / (self.x[i + 1] - self.x[i])
        fy = (y - self.y[j]) / (self.y[j + 1] - self.y[j])
        z = self.z
        z00, z10, z11, z01 = z[i, j], z[i + 1, j], z[i + 1, j + 1], z[i, j + 1]
        lower = fx >= fy
        out = np.where(lower, z00 + fx * (z10 - z00) + fy * (z11 - z10), z00 + fy * (z01 - z00) + fx * (z11 - z01))
        inside = (x >= self.x[0]) & (x <= self.x[-1]) & (y >= self.y[0]) & (y <= self.y[-1])
        return np.where(inside, out, -np.inf)
