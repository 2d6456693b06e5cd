"""The contact stage as one compiled call: detection, forces and Jacobians, per-body summaries.

One entry point per evaluation keeps the Python overhead of a step small
(the system calls the compiled entry directly, without re-typing the
arguments every step). Nothing here allocates, so the kernels run without
reference counting (``_nrt=False``): with it, every array of the record,
shape and terrain tuples was wrapped and counted at each call.
"""

from __future__ import annotations

import numba as nb

# detect calls trackdyn.terrain.kernels.bvh_query (formerly terrain._kernels). Numba's cache of evaluate
# names the modules of the kernels it calls but is invalidated only when this file changes: when they
# move, change this file too, or a stale cache fails to load (ModuleNotFoundError). The same holds when they
# change: a cached evaluate keeps the detect it was compiled with (convex polyhedra came with a change here, and
# so did the seven-parameter tooth sprocket, shapes.ToothSprocket).
from ._detect import detect
from ._kernels import contact_forces


@nb.njit(cache=True, _nrt=False)
def summaries(n, body, fn, ft, normal, point, delta, pos, body_out, glob_out):
    """Per-body totals (force, torque about the COM, count, deepest penetration) and global figures."""
    for i in range(body_out.shape[0]):
        for k in range(8):
            body_out[i, k] = 0.0
    cnt = 0
    pmax = 0.0
    nbod = body_out.shape[0] - 1
    for r in range(n):
        if fn[r] <= 0.0:
            continue
        cnt += 1
        if delta[r] > pmax:
            pmax = delta[r]
        F = (fn[r] * normal[r, 0] + ft[r, 0], fn[r] * normal[r, 1] + ft[r, 1], fn[r] * normal[r, 2] + ft[r, 2])
        for side in range(2):
            b = body[r, side]
            sg = -1.0 if side == 0 else 1.0
            row = b if b >= 0 else nbod
            for k in range(3):
                body_out[row, k] += sg * F[k]
            if b >= 0:
                rx = point[r, 0] - pos[b, 0]
                ry = point[r, 1] - pos[b, 1]
                rz = point[r, 2] - pos[b, 2]
                body_out[row, 3] += sg * (ry * F[2] - rz * F[1])
                body_out[row, 4] += sg * (rz * F[0] - rx * F[2])
                body_out[row, 5] += sg * (rx * F[1] - ry * F[0])
            body_out[row, 6] += 1.0
            if delta[r] > body_out[row, 7]:
                body_out[row, 7] = delta[r]
    glob_out[0] = cnt
    glob_out[1] = pmax


@nb.njit(cache=True, _nrt=False)
def evaluate(rec, out, shp, sc, flt, ter, pair_par, mass, hist_key, hist_disp, pos, R, vel, omega_w, v, h, cK, cD,
             want_jac, body_slot, pair_slot, f, Dv, data, Kxv, margin, dflt, max_pen, wgrid, body_out, glob_out,
             n_detected):
    """Detect, then forces (and Jacobians when ``want_jac``) and summaries; returns the record count.

    ``n_detected >= 0``: ``rec`` already holds the records of these positions (no detection).
    A count above the buffers' capacity means nothing else was done: grow and call again.
    """
    if n_detected >= 0:
        n = n_detected
    else:
        n = detect(rec, shp, sc, flt, ter, pos, R, margin, dflt, max_pen, wgrid)
    if n > rec.kind.shape[0]:
        return n
    contact_forces(n, rec, out, flt.pair_law, pair_par, mass, hist_key, hist_disp, pos, R, vel, omega_w, v, h, cK,
                   cD, want_jac, body_slot, pair_slot, f, Dv, data, Kxv, sc.S, sc.Kx, sc.Kv)
    summaries(n, rec.body, out.fn, out.ft, out.normal, out.point, out.delta, pos, body_out, glob_out)
    return n
