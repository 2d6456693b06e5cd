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
a joint's rows are eliminated only after every body they touch, or after one
of them that still has room for them: a body's 6 velocities carry the pivot
block ``-J_b H_b⁻¹ J_bᵀ`` of one 5-row joint (its Jacobian block has full row
rank), not of a second one. The pivots of body units are then positive (Schur
complements of the SPD ``H``) and those of joint units negative and well
scaled, so the factorisation without pivoting is stable; ``-δ`` is never a
pivot on its own. Waiting for *every* body (the only rule before stop 15) kept
the joints of the chassis out of the elimination until the chassis went: a
dense final block of 93 columns on the M113, 28 % of the factorisation's flops.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field

import numba as nb
import numpy as np

from .._compiled import bound_call
from . import _ldl_kernels as K

__all__ = ["KKTPattern", "DirectSolver", "ScalarDirectSolver", "unit_ordering"]


def unit_ordering(unit_size, unit_adj, unit_after, unit_capacity=None):
    """Minimum-degree elimination order of units.

    Parameters
    ----------
    unit_size : sequence of int
        Number of scalar unknowns of each unit.
    unit_adj : list of set
        Neighbours of each unit in the matrix graph.
    unit_after : list of set
        For each unit, the units that must be eliminated before it may be.
    unit_capacity : sequence of int, optional
        Without it a unit waits for every unit of its ``unit_after`` set. With
        it a unit may also go once *one* eliminated unit of that set still has
        ``unit_capacity`` left for its size, which it then uses up: a body's 6
        velocities carry the pivot block ``-J_b H_b⁻¹ J_bᵀ`` of one 5-row
        joint, not of two (the second would see a projected inverse of rank 1
        and leave pivots of size ``δ``).

    Returns
    -------
    list of int
        Units in elimination order.
    """
    n = len(unit_size)
    adj = [set(a) for a in unit_adj]
    after = [set(a) for a in unit_after]
    blocked_by = [set() for _ in range(n)]
    for u, w in enumerate(after):
        for v in w:
            blocked_by[v].add(u)
    eliminated = np.zeros(n, dtype=bool)
    cap = None if unit_capacity is None else [int(c) for c in unit_capacity]

    def degree(u):
        return sum(unit_size[v] for v in adj[u])

    def carrier(u):
        """-1: u may go (nothing to wait for, or all of it gone); a unit with room for u; or None: u waits."""
        done = [b for b in after[u] if eliminated[b]]
        if len(done) == len(after[u]):
            return -1
        if cap is None or not done:
            return None
        b = max(done, key=lambda x: cap[x])
        return b if cap[b] >= unit_size[u] else None

    # heap entries: (degree, is_body(0 for constraint preferred), u)
    heap = []
    kind = [0 if unit_after[u] else 1 for u in range(n)]
    stamp = [0] * n
    for u in range(n):
        if not after[u]:
            heapq.heappush(heap, (degree(u), kind[u], u, 0))
    order = []
    while heap:
        d, _, u, s = heapq.heappop(heap)
        if eliminated[u] or s != stamp[u]:
            continue
        b = carrier(u)
        if b is None:  # its carrier's room went to another unit: wait for its other units
            continue
        if b >= 0:
            cap[b] -= unit_size[u]
        elif cap is not None and after[u]:
            c = max(after[u], key=lambda x: cap[x])
            cap[c] = max(0, cap[c] - unit_size[u])
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
            touched.add(v)
        for v in touched:
            if not eliminated[v] and carrier(v) is not None:
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
        order = unit_ordering(unit_size, adj, after, unit_capacity=[6] * nb_ + [0] * n_junit)
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
        gl = np.array([6 * b + k if b >= 0 else -1 for b in bodies for k in range(6)], dtype=np.int64)
        # one vectorised look-up for the whole upper triangle (the model build calls this per element and row)
        a, c = _TRIU12
        ok = (gl[a] >= 0) & (gl[c] >= 0)
        if ok.any():
            out[a[ok], c[ok]] = self.slots(gl[a[ok]], gl[c[ok]])
        return out


_TRIU12 = np.triu_indices(12)


def unit_elimination(lower):
    """Symbolic elimination over units: ``lower[u]`` the set of later units coupled to unit u.

    Returns ``(struct, children, parent)``: the units each unit's column reaches after elimination
    (its fill included), the elimination tree's children lists and parents (-1: a root).
    """
    nu = len(lower)
    struct = [None] * nu
    children = [[] for _ in range(nu)]
    parent = np.full(nu, -1, dtype=np.int64)
    for u in range(nu):
        st = set(lower[u])
        for c in children[u]:
            st |= struct[c]
        st.discard(u)
        struct[u] = st
        if st:
            parent[u] = min(st)
            children[parent[u]].append(u)
    return struct, children, parent


def _relax(width):
    """Largest fraction of stored zeros accepted in a supernode of ``width`` columns (relaxed amalgamation,
    thresholds after CHOLMOD's: a few zeros buy dense kernels, many zeros are wasted flops)."""
    return 0.8 if width <= 16 else (0.1 if width <= 48 else 0.05)


def _zero_fraction(first, last, struct, sizes):
    """Fraction of the entries of a supernode of units ``first..last`` (stored as a dense trapezoid whose
    rows below are ``struct[last]``) that are zero in the exact symbolic factor."""
    below = sum(int(sizes[k]) for k in struct[last] if k > last)
    stored = true = 0
    rows_after = sum(int(sizes[k]) for k in range(first, last + 1))
    for c in range(first, last + 1):
        sc = int(sizes[c])
        rows_after -= sc
        tri = sc * (sc + 1) // 2
        stored += tri + sc * (rows_after + below)
        true += tri + sc * sum(int(sizes[k]) for k in struct[c])
    return (stored - true) / stored


class _Supernodes:
    """Symbolic supernodal structure of a :class:`KKTPattern` (computed once per pattern).

    The units of the pattern (a body's 6 velocities, a joint's rows) are the
    atoms: the block elimination tree is built on them and consecutive units
    with nested structure (``struct(u) \\ {u+1} ⊆ struct(u+1)``, e.g. a shoe
    and the pin eliminated right after it) are merged into supernodes while
    the merged block stays mostly non-zero (:func:`_relax`: a band of shoes
    would otherwise become one dense block); the entries of such a column
    outside its own structure are stored, exact zeros. A
    supernode J of width ``w`` (its columns, contiguous in the permuted order)
    stores one dense row-major block of ``w + m`` rows and ``w`` columns: its
    diagonal block (lower triangle) followed by its *row units* (the units of
    its structure below it, ``m`` rows in all). Every index the numeric pass
    needs is precomputed here: where each CSC value lands (``g_*``), and for
    every pair of row units (i <= k) of a supernode D the block of the
    supernode owning i that ``L_k D L_iᵀ`` updates (``u_*``, grouped by the
    updating supernode D for the right-looking numeric pass).
    """

    def __init__(self, pattern: "KKTPattern", max_width: int = 96):
        sizes = np.asarray(pattern.unit_sizes, dtype=np.int64)
        starts = np.asarray(pattern.unit_starts, dtype=np.int64)
        nu = len(sizes)
        n = pattern.n
        unit_of = np.repeat(np.arange(nu), sizes)
        cols = np.repeat(np.arange(n), np.diff(pattern.Ap))
        rows = pattern.Ai
        ur, uc = unit_of[rows], unit_of[cols]
        lower = [set() for _ in range(nu)]
        for a, b in zip(np.minimum(ur, uc).tolist(), np.maximum(ur, uc).tolist()):
            if a != b:
                lower[a].add(b)
        struct, children, _ = unit_elimination(lower)
        # ----- supernodes: runs of units with nested structure, while the merged block stays mostly non-zero
        sn_units = []
        u = 0
        while u < nu:
            first = u
            width = int(sizes[u])
            while (u + 1 < nu and (u + 1) in struct[u] and (struct[u] - {u + 1}) <= struct[u + 1]
                   and width + int(sizes[u + 1]) <= max_width
                   and _zero_fraction(first, u + 1, struct, sizes) <= _relax(width + int(sizes[u + 1]))):
                u += 1
                width += int(sizes[u])
            sn_units.append((first, u))
            u += 1
        ns = len(sn_units)
        sn_of_unit = np.empty(nu, dtype=np.int64)
        col_in = np.empty(nu, dtype=np.int64)  # local column (= row) of a unit within its supernode
        sn_w = np.empty(ns, dtype=np.int64)
        sn_start = np.empty(ns, dtype=np.int64)
        for J, (a, b) in enumerate(sn_units):
            sn_start[J] = starts[a]
            w = 0
            for uu in range(a, b + 1):
                sn_of_unit[uu] = J
                col_in[uu] = w
                w += int(sizes[uu])
            sn_w[J] = w
        # ----- row units below each supernode and the storage layout (column-major per supernode)
        e_ptr = np.zeros(ns + 1, dtype=np.int64)
        e_unit, e_size, e_gstart, e_row = [], [], [], []
        sn_off = np.zeros(ns + 1, dtype=np.int64)
        sn_nr = np.zeros(ns, dtype=np.int64)
        entry_of = [dict() for _ in range(ns)]
        for J, (a, b) in enumerate(sn_units):
            w = int(sn_w[J])
            r = w
            for k in sorted(struct[b]):
                entry_of[J][k] = len(e_unit)
                e_unit.append(k)
                e_size.append(int(sizes[k]))
                e_gstart.append(int(starts[k]))
                e_row.append(r)
                r += int(sizes[k])
            e_ptr[J + 1] = len(e_unit)
            sn_nr[J] = r
            sn_off[J + 1] = sn_off[J] + r * w
        n_e = len(e_unit)
        # ----- gather map: CSC value -> storage position, grouped by supernode, diagonal block first,
        # then by row unit (whose values decide whether it is non-zero this step)
        g_dst = np.empty(len(rows), dtype=np.int64)
        g_key = np.empty(len(rows), dtype=np.int64)
        for p_, (i, j) in enumerate(zip(rows.tolist(), cols.tolist())):
            if i > j:
                i, j = j, i
            ui, uj = unit_of[i], unit_of[j]
            J = int(sn_of_unit[ui])
            c = i - int(sn_start[J])
            if sn_of_unit[uj] == J:
                r = j - int(sn_start[J])
                g_key[p_] = J + e_ptr[J]  # the diagonal block sorts before the row units of J
            else:
                e = entry_of[J][uj]
                r = e_row[e] + (j - int(starts[uj]))
                g_key[p_] = J + e + 1
            g_dst[p_] = sn_off[J] + c * int(sn_nr[J]) + r
        order = np.lexsort((g_dst, g_key))
        keys = g_key[order]
        self.g_src = order.astype(np.int64)
        self.g_dst = g_dst[order]
        self.gd_ptr = np.searchsorted(keys, np.arange(ns) + e_ptr[:-1]).astype(np.int64)
        self.gd_end = np.searchsorted(keys, np.arange(ns) + e_ptr[:-1] + 1).astype(np.int64)
        e_key = np.array([int(np.searchsorted(e_ptr, e, side="right")) - 1 for e in range(n_e)], dtype=np.int64)
        self.ge_ptr = np.searchsorted(keys, e_key + np.arange(n_e) + 1).astype(np.int64)
        self.ge_end = np.searchsorted(keys, e_key + np.arange(n_e) + 2).astype(np.int64)
        # ----- update map: each pair (i <= k) of row units of a supernode D -> block of the supernode owning i
        pp = np.zeros(max(n_e, 1), dtype=np.int64)
        u_dst, u_nr, u_dflag = [], [], []
        for D in range(ns):
            es = list(range(e_ptr[D], e_ptr[D + 1]))
            for x, ei in enumerate(es):
                pp[ei] = len(u_dst)
                i = e_unit[ei]
                P = int(sn_of_unit[i])
                nrP = int(sn_nr[P])
                c0 = int(col_in[i])
                for ek in es[x:]:
                    k = e_unit[ek]
                    if sn_of_unit[k] == P:
                        r0 = int(col_in[k])
                        df = -1
                    else:
                        df = entry_of[P][k]
                        r0 = e_row[df]
                    u_dst.append(int(sn_off[P]) + c0 * nrP + r0)
                    u_nr.append(nrP)
                    u_dflag.append(df)
        self.pp = pp
        self.u_dst = np.array(u_dst, dtype=np.int64)
        self.u_nr = np.array(u_nr, dtype=np.int64)
        self.u_dflag = np.array(u_dflag, dtype=np.int64)
        self.n_sn = ns
        self.n_units = nu
        self.sn_w = sn_w
        self.sn_nr = sn_nr
        self.sn_start = sn_start
        self.sn_off = sn_off
        self.e_ptr = e_ptr
        self.e_size = np.array(e_size, dtype=np.int64)
        self.e_gstart = np.array(e_gstart, dtype=np.int64)
        self.e_row = np.array(e_row, dtype=np.int64)
        self.size = int(sn_off[-1])
        self.max_rows = int(sn_nr.max()) if ns else 0
        self.max_unit = int(sizes.max()) if nu else 0  # widest row unit (a joint may have more than 6 rows)
        self.nnz_L = int(sum(int(sn_w[J]) * (int(sn_w[J]) - 1) // 2 + int(self.e_size[e_ptr[J]:e_ptr[J + 1]].sum())
                             * int(sn_w[J]) for J in range(ns)))
        # the kernels index with unsigned integers (see trackdyn.linsolve._ldl_kernels); updates of
        # diagonal blocks flag the spare last slot
        self.u_dflag[self.u_dflag < 0] = n_e
        self.n_flags = n_e + 1
        for name in ("sn_w", "sn_nr", "sn_start", "sn_off", "e_ptr", "e_size", "e_gstart", "e_row", "gd_ptr",
                     "gd_end", "ge_ptr", "ge_end", "g_src", "g_dst", "pp", "u_dst", "u_nr", "u_dflag"):
            setattr(self, name, getattr(self, name).astype(np.uint64))
        self.n_sn_u = np.uint64(ns)


def _checked(a, n: int, name: str):
    """``a`` when it is a C-contiguous float64 vector of length n (what the bound kernels were typed for)."""
    if not (isinstance(a, np.ndarray) and a.dtype == np.float64 and a.ndim == 1 and a.flags.c_contiguous
            and a.shape[0] == n):
        raise ValueError(f"{name}: expected a C-contiguous float64 array of shape ({n},), got "
                         f"{getattr(a, 'dtype', type(a).__name__)} {getattr(a, 'shape', '')}")
    return a


def _init_solve_state(solver, n: int) -> None:
    """Refinement buffers (n,), no matrix yet, zeroed work counters: common to the direct solvers."""
    solver.work = np.empty(n, dtype=np.float64)
    solver.work2 = np.empty(n, dtype=np.float64)
    solver.resid = np.empty(n, dtype=np.float64)
    solver.data = None
    solver.n_factor = 0
    solver.n_solve = 0
    solver.last_residual = float("nan")


class DirectSolver:
    """Sparse LDLᵀ of a :class:`KKTPattern` matrix: supernodal, symbolic analysis done once.

    ``factor(data)`` refactors numerically; ``solve(rhs, out)`` solves with
    ``refine`` steps of iterative refinement (``euler-implicit-linearized``
    asks for none: its step error dwarfs the solve's round-off, and the
    refinement costs 0.03 ms per chain64 step, 0.15 ms per M113 step; the
    high-order explicit schemes need it — RK4's order on the pendulum falls
    from 4 to 1.3 without). Work counters: ``n_factor``, ``n_solve``.

    The numeric pass (:func:`trackdyn.linsolve._ldl_kernels.supernodal_factor`)
    is right-looking over the supernodes of :class:`_Supernodes` with dense
    kernels, and skips blocks that are zero in this step: a row unit of a
    supernode whose values and updates are all zero (a contact coupling
    block of bodies not touching now, and the fill it would cause) costs
    nothing, in the factorisation and in the solves.

    Same pivots as the scalar up-looking factorisation
    (:class:`ScalarDirectSolver`, ``"direct-scalar"``), in another summation
    order (results agree to round-off). On the settled M113's KKT matrix
    (1661 unknowns, 17.5k stored entries, 32k in L; 13k and 24k with explicit
    contact) a refactorisation takes 0.14 ms (0.12 ms) and a solve 0.04 ms,
    against 1.03 ms for the scalar one on an older, denser pattern
    (isolated timings, bench/README.md stop 21).
    """

    name = "direct"

    def __init__(self, pattern: KKTPattern, refine: int = 1):
        self.pattern = pattern
        n = pattern.n
        self.n = n
        self.refine = int(refine)
        self.sym = sym = _Supernodes(pattern)
        self.X = np.zeros(max(sym.size, 1))
        self.G = np.zeros(max(sym.max_rows * sym.max_unit, 1))  # one row unit's columns of L D Lᵀ
        self.Dg = np.zeros(n)
        self.flag = np.zeros(sym.n_flags, dtype=np.bool_)
        _init_solve_state(self, n)
        # the kernels' calls for the last data / (rhs, out) arrays seen (the keys), typed once (a step passes
        # the same arrays every time: no per-call dispatch nor gathering of 23 arguments)
        self._factor_call = self._solve_call = self._factor_key = None
        self._solve_key = (None, None, None)

    @property
    def nnz_L(self) -> int:
        return self.sym.nnz_L

    @property
    def D(self) -> np.ndarray:
        """Pivots (diagonal of D) in elimination order."""
        return self.Dg

    def factor(self, data):
        if self._factor_call is None or self._factor_key is not data:
            sm = self.sym
            self._factor_call = bound_call(
                K.supernodal_factor, _checked(data, self.pattern.nnz, "data"), self.X, self.Dg, self.G, self.flag,
                sm.n_sn_u, sm.sn_w, sm.sn_nr, sm.sn_start, sm.sn_off, sm.e_ptr, sm.e_size, sm.e_row, sm.gd_ptr,
                sm.gd_end, sm.ge_ptr, sm.ge_end, sm.g_src, sm.g_dst, sm.pp, sm.u_dst, sm.u_nr, sm.u_dflag,
            )
            self._factor_key = data
        bad = self._factor_call()
        self.data = data
        self.n_factor += 1
        if bad >= 0:
            old = int(self.pattern.perm[bad])
            raise np.linalg.LinAlgError(f"zero or non-finite pivot at unknown {old} of the KKT matrix")

    def solve(self, rhs, out):
        k = self._solve_key
        if self._solve_call is None or k[1] is not rhs or k[2] is not out or k[0] is not self.data:
            p = self.pattern
            sm = self.sym
            self._solve_call = bound_call(
                K.supernodal_solve_refined, self.n, p.Ap, p.Ai, self.data, self.X, self.Dg, self.flag, sm.n_sn_u,
                sm.sn_w, sm.sn_nr, sm.sn_start, sm.sn_off, sm.e_ptr, sm.e_size, sm.e_gstart, sm.e_row, p.perm,
                _checked(rhs, self.n, "rhs"), _checked(out, self.n, "out"), self.work, self.work2, self.resid,
                self.refine,
            )
            self._solve_key = (self.data, rhs, out)
        self._solve_call()
        self.n_solve += 1
        return out


class ScalarDirectSolver:
    """The scalar up-looking LDLᵀ (elimination tree, one column at a time) of a :class:`KKTPattern` matrix.

    Same interface as :class:`DirectSolver`; kept as an independent reference
    for tests of the supernodal factorisation.
    """

    name = "direct-scalar"

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
        _init_solve_state(self, n)

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
