"""Block (supernodal) LDLᵀ of the KKT matrix on the body/joint units of its ordering.

The units of :class:`~trackdyn.linsolve.kkt.KKTPattern` (6 velocities of a
body, the rows of a joint) become dense blocks; the symbolic block
factorisation (block elimination tree and fill) and every index of the
numeric pass (where each CSC value lands, which block pairs update which
block) are computed once. Each step gathers the CSC values into the block
layout and runs a right-looking block factorisation with dense ≤ 6 x 6 kernels
(:mod:`trackdyn.linsolve._block_kernels`). Same ordering, so the same
stability argument as the scalar solver: no pivoting is needed.
"""

from __future__ import annotations

import numpy as np

from . import _block_kernels as BK
from .kkt import KKTPattern, _solve_refined_generic, unit_elimination

__all__ = ["BlockSolver"]


class BlockSolver:
    """Direct KKT solver on dense unit blocks (default ``direct`` solver).

    ``factor(data)`` with ``data`` in the pattern's CSC order, ``solve(rhs, out)``
    with ``refine`` steps of iterative refinement. Counters ``n_factor``, ``n_solve``.
    """

    name = "direct"

    def __init__(self, pattern: KKTPattern, refine: int = 1):
        self.pattern = pattern
        self.refine = int(refine)
        sizes = pattern.unit_sizes
        starts = pattern.unit_starts
        nu = len(sizes)
        n = pattern.n
        unit_of = np.repeat(np.arange(nu), sizes)
        local = np.arange(n) - starts[unit_of]
        # ----- block adjacency of A (lower, elimination order)
        cols = np.repeat(np.arange(n), np.diff(pattern.Ap))
        rows = pattern.Ai
        ur, uc = unit_of[rows], unit_of[cols]
        lower = [set() for _ in range(nu)]
        for a, b in zip(np.minimum(ur, uc), np.maximum(ur, uc)):
            if a != b:
                lower[a].add(int(b))
        # ----- symbolic block factorisation
        struct, children, parent = unit_elimination(lower)
        # ----- storage layout
        diag_off = np.zeros(nu, dtype=np.int64)
        dvec_off = np.zeros(nu, dtype=np.int64)
        col_ptr = np.zeros(nu + 1, dtype=np.int64)
        col_unit, col_off, col_woff = [], [], []
        off = 0
        doff = 0
        block_pos = {}
        max_w = 0
        for u in range(nu):
            s = int(sizes[u])
            diag_off[u] = off
            dvec_off[u] = doff
            off += s * s
            doff += s
            w = 0
            for v in sorted(struct[u]):
                col_unit.append(v)
                col_off.append(off)
                col_woff.append(w)
                block_pos[(v, u)] = off
                off += int(sizes[v]) * s
                w += int(sizes[v]) * s
            col_ptr[u + 1] = len(col_unit)
            max_w = max(max_w, w)
        self.size = off
        col_unit = np.array(col_unit, dtype=np.int64)
        col_off = np.array(col_off, dtype=np.int64)
        col_woff = np.array(col_woff, dtype=np.int64)
        # ----- update map: for each u, pairs (a <= b) of its column entries -> destination block
        upd_ptr = np.zeros(nu + 1, dtype=np.int64)
        ua, ub, ud = [], [], []
        for u in range(nu):
            c0, c1 = col_ptr[u], col_ptr[u + 1]
            for a in range(c0, c1):
                v1 = col_unit[a]
                for b in range(a, c1):
                    v2 = col_unit[b]
                    ua.append(a)
                    ub.append(b)
                    ud.append(diag_off[v1] if a == b else block_pos[(v2, v1)])
            upd_ptr[u + 1] = len(ua)
        # ----- gather map: CSC value k -> position in the block layout
        src, dst = [], []
        for k in range(len(rows)):
            i, j = rows[k], cols[k]
            a, b = unit_of[i], unit_of[j]
            li, lj = local[i], local[j]
            if a == b:
                s = sizes[a]
                hi_, lo_ = max(li, lj), min(li, lj)
                dst.append(diag_off[a] + hi_ * s + lo_)
            else:
                # i <= j in permuted order, so unit a precedes b: block L_{b,a}
                u, v, lu, lv = (a, b, li, lj) if a < b else (b, a, lj, li)
                dst.append(block_pos[(v, u)] + lv * sizes[u] + lu)
            src.append(k)
        self.gather_src = np.array(src, dtype=np.int64)
        self.gather_dst = np.array(dst, dtype=np.int64)
        self.arrays = dict(
            n_units=nu, unit_size=sizes.astype(np.int64), unit_start=starts.astype(np.int64),
            diag_off=diag_off, dvec_off=dvec_off, col_ptr=col_ptr, col_unit=col_unit, col_off=col_off,
            col_woff=col_woff, upd_ptr=upd_ptr, upd_a=np.array(ua, dtype=np.int64),
            upd_b=np.array(ub, dtype=np.int64), upd_dst=np.array(ud, dtype=np.int64),
        )
        self.X = np.zeros(off)
        self.dvec = np.zeros(doff)
        self.W = np.zeros(max(max_w, 1))
        self.y = np.zeros(n)
        self.work = np.zeros(n)
        self.resid = np.zeros(n)
        self.xtmp = np.zeros(n)
        self.n_blocks = len(col_unit)
        self.n_updates = len(ua)
        self.data = None
        self.n_factor = 0
        self.n_solve = 0

    @property
    def nnz_L(self) -> int:
        return int(self.size)

    @property
    def D(self) -> np.ndarray:
        """Pivots (diagonal of D) in elimination order."""
        return self.dvec

    def factor(self, data):
        a = self.arrays
        bad = BK.block_factor(self.X, data, self.gather_src, self.gather_dst, a["n_units"], a["unit_size"],
                              a["diag_off"], a["dvec_off"], self.dvec, a["col_ptr"], a["col_unit"], a["col_off"],
                              a["col_woff"], a["upd_ptr"], a["upd_a"], a["upd_b"], a["upd_dst"], self.W)
        self.data = data
        self.n_factor += 1
        if bad >= 0:
            raise np.linalg.LinAlgError(f"zero or non-finite pivot in unit {bad} of the KKT matrix")

    def _apply_inverse(self, b, out):
        a = self.arrays
        BK.block_solve(self.X, a["n_units"], a["unit_size"], a["unit_start"], a["diag_off"], a["dvec_off"],
                       self.dvec, a["col_ptr"], a["col_unit"], a["col_off"], self.pattern.perm, b, out, self.y)

    def solve(self, rhs, out):
        _solve_refined_generic(self, rhs, out)
        self.n_solve += 1
        return out
