"""The saddle-point (KKT) matrix of a multibody step: fixed pattern, ordering, direct solve.

Every implicit step of the absolute-coordinate formulation solves

.. math::

    \\begin{bmatrix} H & J^T \\\\ J & -\\delta I \\end{bmatrix}
    \\begin{bmatrix} x \\\\ y \\end{bmatrix} =
    \\begin{bmatrix} a \\\\ b \\end{bmatrix}

with ``H`` the (symmetrised) Newton matrix of the bodies, ``J`` the constraint
Jacobian w.r.t. ``(r, π̄)`` and a tiny ``δ`` that keeps the matrix
quasi-definite. For a fixed topology the pattern never changes, so it is built
once here together with an ordering and the symbolic factorisation; each step
only refills the values (``data``) through precomputed slot maps and refactors.

Ordering. Unknowns are grouped in units: the 6 velocities of a body, the rows
of a joint. A minimum-degree ordering runs on the unit graph with one rule:
a joint's rows are eliminated only after every body they touch. The pivots of
body units are then positive (Schur complements of the SPD ``H``) and those
of joint units negative and well scaled (``-J H⁻¹ Jᵀ``), so the factorisation
without pivoting is stable; ``-δ`` is never a pivot on its own.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field

import numba as nb
import numpy as np

from . import _ldl_kernels as K

__all__ = ["KKTPattern", "DirectSolver", "unit_ordering"]


def unit_ordering(unit_size, unit_adj, unit_after):
    """Minimum-degree elimination order of units.

    Parameters
    ----------
    unit_size : sequence of int
        Number of scalar unknowns of each unit.
    unit_adj : list of set
        Neighbours of each unit in the matrix graph.
    unit_after : list of set
        For each unit, the units that must be eliminated before it may be.

    Returns
    -------
    list of int
        Units in elimination order.
    """
    n = len(unit_size)
    adj = [set(a) for a in unit_adj]
    waiting = [set(a) for a in unit_after]
    blocked_by = [set() for _ in range(n)]
    for u, w in enumerate(waiting):
        for v in w:
            blocked_by[v].add(u)
    eliminated = np.zeros(n, dtype=bool)

    def degree(u):
        return sum(unit_size[v] for v in adj[u])

    # heap entries: (degree, is_body(0 for constraint preferred), u)
    heap = []
    kind = [0 if unit_after[u] else 1 for u in range(n)]
    stamp = [0] * n
    for u in range(n):
        if not waiting[u]:
            heapq.heappush(heap, (degree(u), kind[u], u, 0))
    order = []
    while heap:
        d, _, u, s = heapq.heappop(heap)
        if eliminated[u] or s != stamp[u]:
            continue
        eliminated[u] = True
        order.append(u)
        nbrs = adj[u]
        for v in nbrs:
            adj[v].discard(u)
        nl = list(nbrs)
        for a in nl:
            adj[a].update(x for x in nl if x != a)
        touched = set(nl)
        for v in blocked_by[u]:
            waiting[v].discard(u)
            if not waiting[v]:
                touched.add(v)
        for v in touched:
            if not eliminated[v] and not waiting[v]:
                stamp[v] += 1
                heapq.heappush(heap, (degree(v), kind[v], v, stamp[v]))
        adj[u] = set()
    if len(order) != n:
        missing = [u for u in range(n) if not eliminated[u]]
        raise RuntimeError(f"ordering left units {missing[:5]} uneliminated")
    return order


@dataclass
class KKTPattern:
    """Fixed pattern of the KKT matrix of one topology, with slot maps.

    Parameters
    ----------
    n_body : int
        Number of bodies (6 unknowns each, velocities ``(ṙ, ω̄)``).
    pair_blocks : array (n_pair, 2)
        Body pairs ``(i, j)`` whose 6x6 coupling block of ``H`` is stored.
    row_body : array (n_row, 2)
        The two bodies of each constraint row (-1 = ground).
    row_unit : array (n_row,)
        Joint id of each row; rows of one joint form one unit.
    """

    n_body: int
    pair_blocks: np.ndarray
    row_body: np.ndarray
    row_unit: np.ndarray
    n: int = field(init=False)
    perm: np.ndarray = field(init=False)
    Ap: np.ndarray = field(init=False)
    Ai: np.ndarray = field(init=False)
    body_slot: np.ndarray = field(init=False)
    pair_slot: np.ndarray = field(init=False)
    row_slot: np.ndarray = field(init=False)
    reg_slot: np.ndarray = field(init=False)

    def __post_init__(self):
        nb_, nd = self.n_body, 6 * self.n_body
        pairs = np.asarray(self.pair_blocks, dtype=np.int64).reshape(-1, 2)
        row_body = np.asarray(self.row_body, dtype=np.int64).reshape(-1, 2)
        row_unit = np.asarray(self.row_unit, dtype=np.int64)
        nc = row_body.shape[0]
        self.n = n = nd + nc
        # --- units and their graph
        joint_ids, row_to_junit = np.unique(row_unit, return_inverse=True)
        n_junit = len(joint_ids)
        unit_size = [6] * nb_ + [0] * n_junit
        unit_rows = [[] for _ in range(n_junit)]
        for r in range(nc):
            unit_rows[row_to_junit[r]].append(r)
        for ju in range(n_junit):
            unit_size[nb_ + ju] = len(unit_rows[ju])
        adj = [set() for _ in range(nb_ + n_junit)]
        after = [set() for _ in range(nb_ + n_junit)]
        for i, j in pairs:
            if i >= 0 and j >= 0 and i != j:
                adj[i].add(j)
                adj[j].add(i)
        for r in range(nc):
            ju = nb_ + row_to_junit[r]
            for b in row_body[r]:
                if b >= 0:
                    adj[ju].add(b)
                    adj[b].add(ju)
                    after[ju].add(b)
        order = unit_ordering(unit_size, adj, after)
        # units in elimination order: sizes and first permuted index (block solvers use them)
        self.unit_sizes = np.array([unit_size[u] for u in order], dtype=np.int64)
        self.unit_starts = np.concatenate([[0], np.cumsum(self.unit_sizes)[:-1]]).astype(np.int64)
        perm = []
        for u in order:
            if u < nb_:
                perm.extend(range(6 * u, 6 * u + 6))
            else:
                perm.extend(nd + r for r in unit_rows[u - nb_])
        self.perm = np.asarray(perm, dtype=np.int64)
        inv = np.empty(n, dtype=np.int64)
        inv[self.perm] = np.arange(n)
        self._inv = inv
        # --- collect (old_a, old_b) entries of the pattern
        ent_a, ent_b = [], []
        loc = np.arange(6)
        ia, ib = np.meshgrid(loc, loc, indexing="ij")
        for b in range(nb_):
            ent_a.append(6 * b + ia.ravel())
            ent_b.append(6 * b + ib.ravel())
        for i, j in pairs:
            if i >= 0 and j >= 0 and i != j:
                ent_a.append(6 * i + ia.ravel())
                ent_b.append(6 * j + ib.ravel())
        for r in range(nc):
            for side in range(2):
                b = row_body[r, side]
                if b >= 0:
                    ent_a.append(np.full(6, nd + r))
                    ent_b.append(6 * b + loc)
        ent_a.append(nd + np.arange(nc))
        ent_b.append(nd + np.arange(nc))
        a = np.concatenate(ent_a) if ent_a else np.zeros(0, np.int64)
        b = np.concatenate(ent_b) if ent_b else np.zeros(0, np.int64)
        pa, pb = inv[a], inv[b]
        row = np.minimum(pa, pb)
        col = np.maximum(pa, pb)
        key = np.unique(col * n + row)
        self._keys = key
        cols = key // n
        rows = key % n
        self.Ai = rows.astype(np.int64)
        self.Ap = np.zeros(n + 1, dtype=np.int64)
        np.add.at(self.Ap, cols + 1, 1)
        self.Ap = np.cumsum(self.Ap)
        # --- slot maps
        self.body_slot = self.slots(
            6 * np.arange(nb_)[:, None, None] + ia[None], 6 * np.arange(nb_)[:, None, None] + ib[None]
        )
        if len(pairs):
            self.pair_slot = self.slots(
                6 * pairs[:, 0][:, None, None] + ia[None], 6 * pairs[:, 1][:, None, None] + ib[None]
            )
        else:
            self.pair_slot = np.zeros((0, 6, 6), dtype=np.int64)
        rs = np.full((nc, 12), -1, dtype=np.int64)
        for side in range(2):
            bb = row_body[:, side]
            ok = bb >= 0
            if ok.any():
                rr = np.nonzero(ok)[0]
                rs[rr, 6 * side: 6 * side + 6] = self.slots(
                    (nd + rr)[:, None] + 0 * loc[None], 6 * bb[rr][:, None] + loc[None]
                )
        self.row_slot = rs
        self.reg_slot = self.slots(nd + np.arange(nc), nd + np.arange(nc))

    @property
    def nnz(self) -> int:
        return int(self.Ap[-1])

    def slots(self, a, b):
        """Data index of the stored entry for original indices (a, b), any shape."""
        a = np.asarray(a, dtype=np.int64)
        b = np.asarray(b, dtype=np.int64)
        pa, pb = self._inv[a], self._inv[b]
        key = np.maximum(pa, pb) * self.n + np.minimum(pa, pb)
        idx = np.searchsorted(self._keys, key)
        if np.any(idx >= len(self._keys)) or np.any(self._keys[np.minimum(idx, len(self._keys) - 1)] != key):
            raise KeyError("entry not in the KKT pattern")
        return idx

    def element_slots(self, bodies):
        """Slot map (12, 12) of a two-body element's upper-triangular entries.

        Entries with ``a > b`` (element-local) and those touching the ground are -1.
        Both bodies' diagonal blocks must exist; their coupling block must have
        been declared in ``pair_blocks`` unless one of them is the ground.
        """
        out = np.full((12, 12), -1, dtype=np.int64)
        gl = []
        for side, b in enumerate(bodies):
            for k in range(6):
                gl.append(6 * b + k if b >= 0 else -1)
        for a in range(12):
            for c in range(a, 12):
                if gl[a] >= 0 and gl[c] >= 0:
                    out[a, c] = self.slots(gl[a], gl[c])
        return out


class DirectSolver:
    """Sparse LDLᵀ of a :class:`KKTPattern` matrix, symbolic analysis done once.

    ``factor(data)`` refactors numerically; ``solve(rhs, out)`` solves with
    ``refine`` steps of iterative refinement. Work counters: ``n_factor``,
    ``n_solve``.
    """

    name = "direct"

    def __init__(self, pattern: KKTPattern, refine: int = 1):
        self.pattern = pattern
        n = pattern.n
        self.n = n
        self.refine = int(refine)
        self.Parent = np.empty(n, dtype=np.int64)
        self.Lnz = np.empty(n, dtype=np.int64)
        self.Lp = np.empty(n + 1, dtype=np.int64)
        self.Flag = np.empty(n, dtype=np.int64)
        K.ldl_symbolic(n, pattern.Ap, pattern.Ai, self.Parent, self.Lnz, self.Lp, self.Flag)
        lnz = int(self.Lp[-1])
        self.Li = np.empty(lnz, dtype=np.int64)
        self.Lx = np.empty(lnz, dtype=np.float64)
        self.D = np.empty(n, dtype=np.float64)
        self.Y = np.empty(n, dtype=np.float64)
        self.Pattern = np.empty(n, dtype=np.int64)
        self.work = np.empty(n, dtype=np.float64)
        self.work2 = np.empty(n, dtype=np.float64)
        self.resid = np.empty(n, dtype=np.float64)
        self.data = None
        self.n_factor = 0
        self.n_solve = 0
        self.last_residual = float("nan")

    @property
    def nnz_L(self) -> int:
        return int(self.Lp[-1])

    def factor(self, data):
        p = self.pattern
        bad = K.ldl_numeric(
            self.n, p.Ap, p.Ai, data, self.Lp, self.Parent, self.Lnz, self.Li, self.Lx,
            self.D, self.Y, self.Pattern, self.Flag,
        )
        self.data = data
        self.n_factor += 1
        if bad >= 0:
            old = int(p.perm[bad])
            raise np.linalg.LinAlgError(f"zero or non-finite pivot at unknown {old} of the KKT matrix")

    def solve(self, rhs, out):
        p = self.pattern
        _solve_refined(
            self.n, p.Ap, p.Ai, self.data, self.Lp, self.Li, self.Lx, self.D, p.perm,
            rhs, out, self.work, self.work2, self.resid, self.refine,
        )
        self.n_solve += 1
        return out


@nb.njit(cache=True)
def _solve_refined(n, Ap, Ai, data, Lp, Li, Lx, Dg, perm, rhs, out, work, work2, resid, refine):
    # permuted right-hand side
    for k in range(n):
        work[k] = rhs[perm[k]]
    for k in range(n):
        work2[k] = work[k]
    K.ldl_solve_inplace(n, Lp, Li, Lx, Dg, work2)
    for _ in range(refine):
        K.sym_upper_matvec(n, Ap, Ai, data, work2, resid)
        for k in range(n):
            resid[k] = work[k] - resid[k]
        K.ldl_solve_inplace(n, Lp, Li, Lx, Dg, resid)
        for k in range(n):
            work2[k] += resid[k]
    for k in range(n):
        out[perm[k]] = work2[k]


@nb.njit(cache=True)
def _residual(n, Ap, Ai, data, perm, x, rhs, xp, kx, r):
    """r = rhs - K x for vectors in the original order (K stored permuted, upper CSC)."""
    for k in range(n):
        xp[k] = x[perm[k]]
    K.sym_upper_matvec(n, Ap, Ai, data, xp, kx)
    for k in range(n):
        r[perm[k]] = rhs[perm[k]] - kx[k]


def _solve_refined_generic(solver, rhs, out):
    """out = K⁻¹ rhs with ``solver.refine`` steps of iterative refinement.

    ``solver`` provides ``_apply_inverse(b, out)``, ``data``, ``pattern`` and
    work vectors ``work``, ``resid``, ``xtmp``, ``y`` of length n.
    """
    solver._apply_inverse(rhs, out)
    p = solver.pattern
    for _ in range(solver.refine):
        _residual(p.n, p.Ap, p.Ai, solver.data, p.perm, out, rhs, solver.xtmp, solver.work, solver.resid)
        solver._apply_inverse(solver.resid, solver.xtmp)
        out += solver.xtmp
