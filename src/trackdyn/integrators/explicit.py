"""Explicit schemes on the index-1 form: classical Runge-Kutta (``rk4``) and 3-step Adams-Bashforth (``ab3``).

Both integrate ``ẋ = L(x) v``, ``v̇ = a(q, v, t)`` in the chart centred at the
step's start ``q_n`` (``q = q_n ⊕ x``, see :mod:`._chart_kernels`), where
``a`` solves the index-1 system ``[[M, Jᵀ], [J, −δI]] [a; λ] = [f; γ]`` (one
factorisation per evaluation). Mapping back with the exponential map keeps
quaternions unit and the chart is exact, so the schemes keep their order on
the group. The constraints are kept by coordinate partitioning (default) or
Baumgarte stabilisation (:mod:`._constraints`). Every step ends with an
evaluation at the new state, so ``state.acc`` and ``state.lam`` are the exact
accelerations and multipliers there (and RK4 reuses it as its first stage).
"""

from __future__ import annotations

import numpy as np

from ..mbs.model import State
from ._chart_kernels import chart_log, chart_rate
from ._constraints import Baumgarte, CoordinatePartitioning, PartitionFailed
from ._scheme import Scheme, check_int, check_positive
from .base import StepFailed

__all__ = ["ChartScheme", "RK4", "AB3"]

CONSTRAINT_TREATMENTS = ("partitioning", "baumgarte")


class ChartScheme(Scheme):
    """Base of the explicit schemes: constraint treatment, stage evaluation, RK4 step.

    Options
    -------
    solver : str
        Saddle-point solver of the index-1 system; other keyword options go to it.
    constraints : {"partitioning", "baumgarte"}
        Constraint treatment (default ``"partitioning"``).
    constraint_tol : float
        Partitioning: target ``max|C|`` of the dependent solve (default 1e-12).
    constraint_max_iter : int
        Partitioning: chord iterations before re-partitioning (default 12).
    baumgarte_frequency, baumgarte_damping : float
        Baumgarte: ω (1/s, default 10) and ξ (default 1).
    """

    def __init__(self, system, step, solver="direct", solver_options=None, constraints="partitioning",
                 constraint_tol=1e-12, constraint_max_iter=12, baumgarte_frequency=10.0, baumgarte_damping=1.0,
                 **options):
        owner = f"integrator {self.name!r}"
        if constraints not in CONSTRAINT_TREATMENTS:
            raise ValueError(f"{owner}: constraints must be one of {CONSTRAINT_TREATMENTS}, got {constraints!r}")
        ctol = check_positive(owner, "constraint_tol", constraint_tol)
        cmax = check_int(owner, "constraint_max_iter", constraint_max_iter, 1)
        bf = check_positive(owner, "baumgarte_frequency", baumgarte_frequency, allow_zero=True)
        bd = check_positive(owner, "baumgarte_damping", baumgarte_damping, allow_zero=True)
        treat_opts = {"constraints": constraints}
        if constraints == "partitioning":
            treat_opts.update(constraint_tol=ctol, constraint_max_iter=cmax)
        else:
            treat_opts.update(baumgarte_frequency=bf, baumgarte_damping=bd)
        super().__init__(system, step, solver, solver_options, **treat_opts, **options)
        if constraints == "partitioning":
            self.treat = CoordinatePartitioning(self, ctol, cmax)
        else:
            self.treat = Baumgarte(self, bf, bd)
        self._acc_key = f"index1.{self.treat.name}.t"
        self._q = np.zeros((system.nb, 7))

    # ------------------------------------------------------------------ evaluation
    def _evaluate(self, t, q_ref, x, v, dx, a, state):
        """Make (x, v) consistent in place, then dx = L(x) v and a; returns (λ, q)."""
        self.treat.make_consistent(t, q_ref, x, v, self._q)
        lam = self._accelerations(t, self._q, v, state, a, gamma_shift=self.treat.gamma_shift)
        chart_rate(x, v, dx)
        self._lap("update")
        return lam, self._q.copy()

    def _start_point(self, state):
        """(q, v, a, λ) at the start of a step, made consistent and evaluated if the state does not carry them."""
        tag = state.extra.get(self._acc_key)
        if tag is not None and float(tag[0]) == state.t:
            return state.q, state.v, state.acc, state.lam
        nb_ = self.system.nb
        x = np.zeros((nb_, 6))
        v = state.v.copy()
        a = np.zeros((nb_, 6))
        dx = np.zeros((nb_, 6))
        self.treat.begin_step(state.t, state.q, state.v)
        lam, q = self._evaluate(state.t, state.q, x, v, dx, a, state)
        return q, v, a, lam

    def _finish(self, state, t1, q, v, a, lam, extra) -> State:
        s = self.system
        extra[self._acc_key] = np.array([t1])
        self.last["pos_violation"] = float(np.max(np.abs(s.phi))) if s.nc else 0.0
        new = State(t1, q, v, lam, a, extra)
        s.commit(new)
        return new

    def _retrying(self, step_fn, state):
        """Run ``step_fn(state)``; when a dependent solve fails, refactor J_D at the step's start and
        retry, then re-choose the split and retry once more."""
        for attempt in range(3):
            try:
                return step_fn(state)
            except PartitionFailed as err:
                if not isinstance(self.treat, CoordinatePartitioning) or attempt == 2:
                    raise StepFailed(f"t = {state.t:.6g} s: {err}") from None
                q0, v0, _, _ = self._start_point(state)
                self.treat.refactor_at(state.t, q0, v0, repartition=attempt == 1)

    # ------------------------------------------------------------------ RK4
    def _rk4(self, state):
        """One classical RK4 step in the chart at the start; returns (t1, q, v, a, λ)."""
        h = self.h
        t = state.t
        q0, v0, a1, _ = self._start_point(state)
        self.treat.begin_step(t, q0, v0)
        nb_ = self.system.nb
        dx1 = v0  # L(0) v = v
        dx = [np.zeros((nb_, 6)) for _ in range(3)]
        aa = [np.zeros((nb_, 6)) for _ in range(3)]
        x = np.zeros((nb_, 6))
        v = np.zeros((nb_, 6))
        prev_dx, prev_a = dx1, a1
        for k, (c, tc) in enumerate(((0.5, t + 0.5 * h), (0.5, t + 0.5 * h), (1.0, t + h))):
            x[:] = (c * h) * prev_dx
            v[:] = v0 + (c * h) * prev_a
            self._evaluate(tc, q0, x, v, dx[k], aa[k], state)
            prev_dx, prev_a = dx[k], aa[k]
        dx4, a4 = dx[2], aa[2]
        x[:] = (h / 6.0) * (dx1 + 2.0 * dx[0] + 2.0 * dx[1] + dx4)
        v[:] = v0 + (h / 6.0) * (a1 + 2.0 * aa[0] + 2.0 * aa[1] + a4)
        a = np.zeros((nb_, 6))
        lam, q = self._evaluate(t + h, q0, x, v, np.zeros((nb_, 6)), a, state)
        return t + h, q, v.copy(), a, lam


class RK4(ChartScheme):
    """Classical 4-stage Runge-Kutta (order 4) on the index-1 form in the chart at the step's start.

    Four index-1 solves per step (the first is the previous step's last
    evaluation). Explicit: stable for ``h`` below about 2.8 over the largest
    frequency of the model. Options: see :class:`ChartScheme`.
    """

    name = "rk4"

    def __init__(self, system, step, solver="direct", constraints="partitioning", constraint_tol=1e-12,
                 constraint_max_iter=12, baumgarte_frequency=10.0, baumgarte_damping=1.0, **solver_options):
        super().__init__(system, step, solver, solver_options, constraints, constraint_tol, constraint_max_iter,
                         baumgarte_frequency, baumgarte_damping)

    def _step_impl(self, state: State) -> State:
        t1, q, v, a, lam = self._retrying(self._rk4, state)
        self.counters["iterations"] += 1
        self.last["iterations"] = 1
        new = self._finish(state, t1, q, v, a, lam, dict(state.extra))
        self._lap("update")
        return new


class AB3(ChartScheme):
    """3-step Adams-Bashforth (order 3), one index-1 solve per step; RK4 for the first two steps.

    ``x_{n+1} = h/12 (23 ẋ_n − 16 ẋ_{n−1} + 5 ẋ_{n−2})`` and the same for ``v``,
    where the past points are mapped exactly into the chart at ``q_n``
    (``x_j = q_n ⊖ q_j``, ``ẋ_j = L(x_j) v_j``). The history (the last three
    states' q, v, a) travels in ``state.extra["ab3.*"]``; a state without a
    matching history (first step, other step size) restarts with RK4.
    Explicit: stable for ``h`` below about 0.72 over the largest frequency.
    Options: see :class:`ChartScheme`.
    """

    name = "ab3"
    COEF = np.array([23.0, -16.0, 5.0]) / 12.0

    def __init__(self, system, step, solver="direct", constraints="partitioning", constraint_tol=1e-12,
                 constraint_max_iter=12, baumgarte_frequency=10.0, baumgarte_damping=1.0, **solver_options):
        super().__init__(system, step, solver, solver_options, constraints, constraint_tol, constraint_max_iter,
                         baumgarte_frequency, baumgarte_damping)
        self.counters["startup_steps"] = 0

    def _history(self, state):
        """(t, q, v, a) of the stored past points, newest first, if they belong to this state and step."""
        ex = state.extra
        ht = ex.get("ab3.t")
        if ht is None or float(ht[0]) != state.t or not np.array_equal(ex["ab3.q"][0], state.q):
            return None
        if len(ht) > 1 and not np.allclose(np.diff(ht), -self.h, rtol=1e-9, atol=0.0):
            return None
        return ht, ex["ab3.q"], ex["ab3.v"], ex["ab3.a"]

    def _ab3(self, state):
        h = self.h
        t = state.t
        ht, hq, hv, ha = self._history(state)
        q0, v0 = state.q, state.v
        self.treat.begin_step(t, q0, v0)
        nb_ = self.system.nb
        xj = np.zeros((nb_, 6))
        dxj = np.zeros((nb_, 6))
        x = self.COEF[0] * h * v0
        v = v0 + self.COEF[0] * h * ha[0]
        for j in (1, 2):
            chart_log(q0, hq[j], xj)
            chart_rate(xj, hv[j], dxj)
            x += self.COEF[j] * h * dxj
            v += self.COEF[j] * h * ha[j]
        self._lap("update")
        a = np.zeros((nb_, 6))
        lam, q = self._evaluate(t + h, q0, x, v, np.zeros((nb_, 6)), a, state)
        return t + h, q, v, a, lam

    def _step_impl(self, state: State) -> State:
        hist = self._history(state)
        if hist is None or len(hist[0]) < 3:
            if hist is None:
                q0, v0, a0, _ = self._start_point(state)
                hist = (np.array([state.t]), q0[None], v0[None], a0[None])
            t1, q, v, a, lam = self._retrying(self._rk4, state)
            self.counters["startup_steps"] += 1
        else:
            t1, q, v, a, lam = self._retrying(self._ab3, state)
        ht, hq, hv, ha = hist
        extra = dict(state.extra)
        extra["ab3.t"] = np.concatenate([[t1], ht[:2]])
        extra["ab3.q"] = np.concatenate([q[None], hq[:2]])
        extra["ab3.v"] = np.concatenate([v[None], hv[:2]])
        extra["ab3.a"] = np.concatenate([a[None], ha[:2]])
        self.counters["iterations"] += 1
        self.last["iterations"] = 1
        new = self._finish(state, t1, q, v, a, lam, extra)
        self._lap("update")
        return new
