"""How the explicit schemes keep the index-1 solution on the constraint manifold.

The explicit and multistep schemes (``rk4``, ``ab3``, ``abm``) integrate the
index-1 form ``[[M, Jᵀ], [J, 0]] [v̇; λ] = [f; γ]`` in the chart centred at the
step's start ``q_ref`` (``q = q_ref ⊕ x``). Two treatments of the constraints:

:class:`CoordinatePartitioning` (default; wallin-shabana-2013 §4.1, kim-2012,
han-sander-mao §3.6). The ``6 nb`` chart coordinates are split once into
``nc`` dependent and ``6 nb − nc`` independent ones by a QR factorisation with
column pivoting of ``J`` (the dependent block ``J_D`` is then the best
conditioned choice). At every stage the scheme's values of the independent
coordinates ``(x_I, v_I)`` are kept and the dependent ones solved from the
constraints: ``C(q_ref ⊕ x, t) = 0`` for ``x_D`` by a chord Newton iteration
with ``J_D`` factored at ``q_ref``, then ``J v = −∂C/∂t`` for ``v_D``. The
constraints hold to ``constraint_tol`` at every stage, with no parameter to
tune; the scheme's order is that of the ODE in the independent coordinates.

That order holds only while the split stays well conditioned: near a fold of
the constraint manifold in the independent coordinates (a rocker at its
extreme angle, a pendulum's x at the horizontal) the dependent coordinates
become a square-root function of the independent ones, the derivatives of the
ODE in ``(x_I, v_I)`` grow without bound and so does the scheme's error
constant, while the residuals the solves leave are amplified by ``J_D⁻¹``.
So whenever ``J_D`` is refactored the sensitivity ``S = J_D⁻¹ J_I``
(``∂x_D/∂x_I``) is checked, and while an entry ``|S_ij|`` exceeds
``max_sensitivity`` the dependent coordinate ``i`` and the independent one
``j`` are swapped; each swap multiplies ``|det J_D|`` by ``|S_ij|`` (Cramer's
rule), so the swaps end, on a split whose ``|S_ij| ≤ max_sensitivity``
(a quasi-maximal-volume ``J_D``, as in the maxvol algorithm of Goreinov et
al. 2010). The split is re-chosen from scratch (QR with column pivoting) when
a solve fails twice.

:class:`Baumgarte`. All coordinates are integrated; the acceleration
constraint is replaced by ``C̈ + 2ξω Ċ + ω² C = 0``, i.e. γ by
``γ − 2ξω (J v + ∂C/∂t) − ω² C``. Cheaper per stage, but the constraints drift
by the scheme's local error, damped at the rate ω.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from threadpoolctl import threadpool_limits

from ..mbs import _kernels as MK
from ._chart_kernels import j_times
from .base import StepFailed

__all__ = ["CoordinatePartitioning", "Baumgarte", "PartitionFailed"]


class PartitionFailed(StepFailed):
    """The dependent coordinates could not be solved with the current split.

    A :class:`StepFailed`, so that one escaping the integrator's retries stops
    the run with its diagnostic instead of crashing it.
    """


class Baumgarte:
    """Baumgarte stabilisation of the acceleration constraint (see the module docstring).

    Parameters
    ----------
    scheme : Scheme
        The integrator (for its system and counters).
    frequency : float
        ω, 1/s (default 10).
    damping : float
        ξ (default 1, critical).
    """

    name = "baumgarte"

    def __init__(self, scheme, frequency=10.0, damping=1.0):
        self.scheme = scheme
        self.system = scheme.system
        self.omega = float(frequency)
        self.xi = float(damping)
        self.independent = np.arange(6 * self.system.nb)
        self._cv = np.zeros(self.system.nc)

    def begin_step(self, t, q_ref, v_ref):
        pass

    def make_consistent(self, t, q_ref, x, v, q_out):
        MK.advance_positions_dq(q_ref, x, q_out)

    def gamma_shift(self, v):
        s = self.system
        j_times(s.J, s.row_body, v, self._cv)
        return -2.0 * self.xi * self.omega * (self._cv + s.phi_t) - self.omega**2 * s.phi


class CoordinatePartitioning:
    """Generalized coordinate partitioning in the chart at the step's start (see the module docstring).

    The chord matrix ``J_D`` is refactored only when needed: at the first step,
    when a solve took more than ``refactor_after`` iterations (the chart origin
    has moved away from where ``J_D`` was factored), and on a failed solve
    (then the integrator retries the step after refactoring at its start, and
    once more after re-choosing the split).

    Parameters
    ----------
    scheme : Scheme
        The integrator (for its system, counters and timing laps).
    tol : float
        Target ``max|C|`` of the dependent-coordinate solve (m for distance
        rows, 1 for direction rows) and of ``max|J v + ∂C/∂t|/(1 + max|v|)``.
    max_iter : int
        Chord iterations per solve before the solve is declared failed.
    refactor_after : int
        Iterations of a solve above which ``J_D`` is refactored at the next step.
    max_sensitivity : float
        Largest ``|(J_D⁻¹ J_I)_ij|`` (``∂x_D/∂x_I``, in the coordinates' units) a split may show when ``J_D``
        is refactored before two coordinates are swapped (> 1; default 1.2).
    """

    name = "partitioning"

    def __init__(self, scheme, tol=1e-12, max_iter=12, refactor_after=3, max_sensitivity=1.2):
        self.scheme = scheme
        self.system = s = scheme.system
        self.tol = float(tol)
        self.max_iter = int(max_iter)
        self.refactor_after = int(refactor_after)
        self.max_sensitivity = float(max_sensitivity)
        if not self.max_sensitivity > 1.0:
            raise ValueError(f"coordinate partitioning: max_sensitivity must be > 1, got {max_sensitivity!r}")
        nb_, nc = s.nb, s.nc
        self.nd, self.nc = 6 * nb_, nc
        if nc > 6 * nb_:
            raise ValueError(f"coordinate partitioning: {nc} independent constraint rows for {6 * nb_} "
                             "coordinates; the model is over-constrained")
        self.dependent = np.zeros(0, dtype=np.int64)
        self.independent = np.arange(self.nd)
        self.lu = None
        self.stale = True
        # (row, local column) of every stored Jacobian entry and its global column
        rr, kk, cc = [], [], []
        for r in range(nc):
            for side in range(2):
                b = s.row_body[r, side]
                if b >= 0:
                    for k in range(6):
                        rr.append(r)
                        kk.append(6 * side + k)
                        cc.append(6 * b + k)
        self._ent_row = np.array(rr, dtype=np.int64)
        self._ent_flat = np.array(rr, dtype=np.int64) * 12 + np.array(kk, dtype=np.int64)
        self._ent_col = np.array(cc, dtype=np.int64)
        self._cv = np.zeros(nc)
        self.n_partitions = 0
        counters = scheme.counters
        for key in ("partitions", "partition_swaps", "partition_factorizations", "partition_iterations"):
            counters[key] = 0

    # ------------------------------------------------------------------ split
    def _dense_jacobian(self):
        Jd = np.zeros((self.nc, self.nd))
        np.add.at(Jd, (self._ent_row, self._ent_col), self.system.J.ravel()[self._ent_flat])
        return Jd

    def choose(self, dependent=None):
        """Choose dependent columns from the current ``system.J`` (QR with column pivoting), or take ``dependent``."""
        nc = self.nc
        if dependent is None:
            _, piv = sla.qr(self._dense_jacobian(), mode="r", pivoting=True)
            dependent = piv[:nc]
        dependent = np.sort(np.asarray(dependent, dtype=np.int64))
        if len(dependent) != nc or len(np.unique(dependent)) != nc or dependent.min() < 0 or dependent.max() >= self.nd:
            raise ValueError(f"coordinate partitioning: need {nc} distinct dependent columns in [0, {self.nd}), "
                             f"got {dependent.tolist()}")
        self.dependent = dependent
        self.independent = np.setdiff1d(np.arange(self.nd), dependent).astype(np.int64)
        dpos = np.full(self.nd, -1, dtype=np.int64)
        dpos[self.dependent] = np.arange(nc)
        keep = dpos[self._ent_col] >= 0
        flat = self._ent_flat[keep]
        # fixed CSC structure of J_D: entries sorted by (column, row)
        rows, cols = self._ent_row[keep], dpos[self._ent_col[keep]]
        order = np.lexsort((rows, cols))
        self._d_flat = flat[order]
        self._d_indices = rows[order].astype(np.int32)
        self._d_indptr = np.searchsorted(cols[order], np.arange(nc + 1)).astype(np.int32)
        self.n_partitions += 1
        self.scheme.counters["partitions"] = self.n_partitions

    def _factor(self):
        """splu of J_D at the current ``system.J``; PartitionFailed if it is singular."""
        nc = self.nc
        JD = sp.csc_matrix((self.system.J.ravel()[self._d_flat], self._d_indices, self._d_indptr), shape=(nc, nc))
        try:
            self.lu = spla.splu(JD)
        except RuntimeError as err:  # exactly singular
            raise PartitionFailed(str(err)) from None
        self.scheme.counters["partition_factorizations"] += 1
        self.stale = False
        d = np.abs(self.lu.U.diagonal())
        if not (np.all(np.isfinite(d)) and d.min() > 0.0):
            raise PartitionFailed("the dependent block is singular")

    def sensitivity(self):
        """``S = J_D⁻¹ J_I`` (nc, n_independent) from ``system.J`` and the current factorisation of J_D:
        ``∂x_D/∂x_I`` of the split, rows in ``dependent`` order, columns in ``independent`` order."""
        Jd = self._dense_jacobian()
        # one BLAS thread: the many-column solve is small and threaded BLAS spins on it (the sprung hull's 130
        # columns: 3.3 ms on one thread, 22-48 ms threaded, which made its steps 2.3-2.8 times dearer in CPU)
        with threadpool_limits(limits=1):
            return self.lu.solve(np.ascontiguousarray(Jd[:, self.independent]))

    def _improve_split(self):
        """Swap the dependent and the independent coordinate of the largest ``|S_ij|`` while it exceeds
        ``max_sensitivity`` (each swap multiplies ``|det J_D|`` by it, so the loop ends)."""
        if len(self.independent) == 0:
            return
        for _ in range(self.nd * self.nc + 1):
            S = self.sensitivity()
            i, j = divmod(int(np.argmax(np.abs(S))), S.shape[1])
            if not abs(S[i, j]) > self.max_sensitivity:
                return
            dependent = self.dependent.copy()
            dependent[i] = self.independent[j]
            self.choose(dependent)
            self._factor()
            self.scheme.counters["partition_swaps"] += 1
        raise PartitionFailed("the coordinate swaps did not end")  # |det J_D| grows at every swap: unreachable

    def refactor_at(self, t, q_ref, v_ref, repartition=False):
        """Evaluate J at (t, q_ref) and factor J_D, re-choosing the split by QR when asked, at the first call
        or when J_D is singular; then swap coordinates until the split's sensitivity is at most
        ``max_sensitivity``."""
        s = self.system
        s.update_kinematics(q_ref, v_ref)
        s.update_drivers(t)
        s.eval_constraints(want_gamma=False)
        if not repartition and self.lu is not None:
            try:
                self._factor()
            except PartitionFailed:
                repartition = True
        if repartition or self.lu is None:
            self.choose()
            try:
                self._factor()
            except PartitionFailed:
                raise PartitionFailed("the dependent block is singular after choosing the split") from None
        self._improve_split()

    def use_split(self, dependent, t, q, v):
        """Impose a split (column indices ``6 body + k`` of the dependent coordinates) at the pose (t, q).

        For experiments and tests; the split is still improved at the next refactorisation of J_D.
        """
        s = self.system
        s.update_kinematics(q, v)
        s.update_drivers(t)
        s.eval_constraints(want_gamma=False)
        self.choose(dependent)
        self._factor()

    def begin_step(self, t, q_ref, v_ref):
        """Factor J_D at the step's start when there is none or the last solves converged slowly."""
        if self.nc and self.stale:
            self.refactor_at(t, q_ref, v_ref)
            self.scheme._lap("factorization")

    # ------------------------------------------------------------------ solves
    def make_consistent(self, t, q_ref, x, v, q_out):
        """Solve x_D, v_D in place for the given x_I, v_I; q_out = q_ref ⊕ x. Leaves J at q_out."""
        s = self.system
        MK.advance_positions_dq(q_ref, x, q_out)
        if self.nc == 0:
            return
        sc = self.scheme
        xf = x.reshape(-1)
        vf = v.reshape(-1)
        dep = self.dependent
        s.update_drivers(t)
        prev = np.inf
        for it in range(self.max_iter + 1):
            s.update_kinematics(q_out, v)
            s.eval_constraints(want_gamma=False)
            viol = float(np.max(np.abs(s.phi)))
            sc._lap("constraints")
            if viol <= self.tol:
                break
            if it == self.max_iter or viol > 0.9 * prev:
                self.stale = True
                raise PartitionFailed(f"dependent positions: |C| = {viol:.3g} after {it} chord iterations")
            prev = viol
            xf[dep] -= self.lu.solve(s.phi)
            MK.advance_positions_dq(q_ref, x, q_out)
            sc.counters["partition_iterations"] += 1
            sc._lap("solve")
        if it > self.refactor_after:
            self.stale = True
        # velocities: J(q) v = -∂C/∂t for v_D
        prev = np.inf
        for it in range(self.max_iter + 1):
            j_times(s.J, s.row_body, v, self._cv)
            res = -(self._cv + s.phi_t)
            viol = float(np.max(np.abs(res)))
            lim = self.tol * (1.0 + float(np.max(np.abs(vf))))
            if viol <= lim:
                break
            if it == self.max_iter or viol > 0.9 * prev:
                self.stale = True
                raise PartitionFailed(f"dependent velocities: |J v + C_t| = {viol:.3g} after {it} iterations")
            prev = viol
            vf[dep] += self.lu.solve(res)
        if it > self.refactor_after:
            self.stale = True
        sc._lap("solve")

    def gamma_shift(self, v):
        return None
