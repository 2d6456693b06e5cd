"""Numba kernels of terrain queries: bounding-volume hierarchy traversal, heights of meshes.

Public to the package: contact detection (:mod:`trackdyn.contact._detect`)
calls :func:`bvh_query` on the terrain's mesh trees from its own kernels.

The hierarchy is an axis-aligned box tree (agapov-kovalev-pogorelov §3.2):
nodes ``bvh_min``/``bvh_max`` (n, 3), children ``bvh_left``/``bvh_right``
(-1 at leaves), leaves own ``bvh_count`` faces from ``bvh_start`` in
``bvh_faces``.
"""

from __future__ import annotations

import numba as nb
import numpy as np

__all__ = ["bvh_query", "mesh_heights"]


@nb.njit(cache=True)
def bvh_query(bvh_min, bvh_max, bvh_left, bvh_right, bvh_start, bvh_count, bvh_faces, qmin, qmax, out, stack,
              root=0):
    """Faces whose leaf box overlaps the box [qmin, qmax]; written to ``out``, count returned.

    ``root`` is the node the traversal starts from (several meshes' trees can
    share the arrays: contact detection passes each mesh's root). ``stack``
    is scratch of length >= tree depth + 1. Candidates beyond ``out``'s
    length are counted but not written.
    """
    n = 0
    if bvh_min.shape[0] == 0:
        return 0
    stack[0] = root
    top = 1
    while top > 0:
        top -= 1
        k = stack[top]
        if (bvh_min[k, 0] > qmax[0] or bvh_max[k, 0] < qmin[0] or bvh_min[k, 1] > qmax[1]
                or bvh_max[k, 1] < qmin[1] or bvh_min[k, 2] > qmax[2] or bvh_max[k, 2] < qmin[2]):
            continue
        if bvh_left[k] < 0:
            for i in range(bvh_start[k], bvh_start[k] + bvh_count[k]):
                if n < out.shape[0]:
                    out[n] = bvh_faces[i]
                n += 1
        else:
            stack[top] = bvh_left[k]
            stack[top + 1] = bvh_right[k]
            top += 2
    return n


@nb.njit(cache=True)
def mesh_heights(vertices, faces, bvh_min, bvh_max, bvh_left, bvh_right, bvh_start, bvh_count, bvh_faces,
                 x, y, out):
    """Highest intersection of vertical lines at (x, y) with the mesh (-inf where none)."""
    cand = np.empty(4096, dtype=np.int64)
    stack = np.empty(256, dtype=np.int64)
    qmin = np.empty(3)
    qmax = np.empty(3)
    for i in range(x.shape[0]):
        qmin[0] = x[i]
        qmax[0] = x[i]
        qmin[1] = y[i]
        qmax[1] = y[i]
        qmin[2] = -1e300
        qmax[2] = 1e300
        m = bvh_query(bvh_min, bvh_max, bvh_left, bvh_right, bvh_start, bvh_count, bvh_faces, qmin, qmax, cand,
                      stack)
        best = -np.inf
        for c in range(min(m, cand.shape[0])):
            f = cand[c]
            a = faces[f, 0]
            b = faces[f, 1]
            cc = faces[f, 2]
            x0, y0, z0 = vertices[a, 0], vertices[a, 1], vertices[a, 2]
            x1, y1, z1 = vertices[b, 0], vertices[b, 1], vertices[b, 2]
            x2, y2, z2 = vertices[cc, 0], vertices[cc, 1], vertices[cc, 2]
            det = (y1 - y2) * (x0 - x2) + (x2 - x1) * (y0 - y2)
            if abs(det) < 1e-300:
                continue
            l0 = ((y1 - y2) * (x[i] - x2) + (x2 - x1) * (y[i] - y2)) / det
            l1 = ((y2 - y0) * (x[i] - x2) + (x0 - x2) * (y[i] - y2)) / det
            l2 = 1.0 - l0 - l1
            tol = -1e-12
            if l0 >= tol and l1 >= tol and l2 >= tol:
                z = l0 * z0 + l1 * z1 + l2 * z2
                if z > best:
                    best = z
        out[i] = best
