"""The stepper of the recursive formulation: classical RK4 in joint coordinates with closure projection.

The generic schemes of this package (``rk4``, ``ab3``, ``abm``, the implicit
Eulers, HHT) step an absolute system: body poses ``(nb, 7)``, chart
increments on the group, the saddle-point matrix of the body coordinates.
A system in relative joint coordinates has none of these: its state is
``(q, q̇)`` (one number per tree joint) and its accelerations come from the
O(n m) recursive pass, not from a KKT factorisation. :class:`RecursiveRK4`
therefore integrates the index-1 ODE ``q̇, q̈(q, q̇, t)`` of such a system
(:class:`trackdyn.formulations.recursive.RecursiveSystem`, planar, or
:class:`trackdyn.formulations.recursive_spatial.RecursiveSpatialSystem`,
spatial; used through their methods ``accelerations``, ``project`` and
``state`` only) with the
classical RK4 tableau, then puts the end point back on the closure
manifold: Newton on ``Φ(q) = 0`` with the least-norm correction and the
velocity projection ``Φ_q q̇ = 0`` (no Baumgarte parameter). The correction
is of the size of the step's local error, so the order is kept; the cut
joints hold to ``closure_tol`` after every step. A system with
rotation-vector coordinates (the spatial one) then re-charts those past
half a turn (``system.rechart``: the same state in new coordinates; the ABM
history is restarted when it does).

A system without force elements (``compiled_rk4``) runs the three later
stages and the update in one compiled call (``rk4_advance``); otherwise the
stages are combined here in NumPy. Both compute the same tableau.

The state's ``extra`` carries the joint coordinates (``recursive.q``,
``recursive.qd``) and the accelerations at the state (``recursive.qdd``,
reused as the next step's first stage); its ``q``, ``v``, ``acc`` are the
absolute body states, so recorders read it as any other state.
"""

from __future__ import annotations

import numpy as np

from ..mbs.model import State
from ._scheme import check_int, check_positive
from .abm import adams_march, adams_weights, initial_step
from .base import Integrator, StepFailed

__all__ = ["RecursiveABM", "RecursiveRK4"]


def _check_recursive(name, system, solver, closure_tol, closure_max_iter) -> tuple[float, int]:
    """The options every recursive stepper shares, checked: (closure_tol, closure_max_iter)."""
    owner = f"integrator {name!r}"
    if solver != "direct":
        raise ValueError(f"{owner}: solves its m × m cut-joint system directly; solver must be 'direct', "
                         f"got {solver!r}")
    tol = check_positive(owner, "closure_tol", closure_tol)
    it = check_int(owner, "closure_max_iter", closure_max_iter, 1)
    if not hasattr(system, "accelerations") or not hasattr(system, "project"):
        raise ValueError(f"{owner}: steps a system in joint coordinates (RecursiveSystem, RecursiveSpatialSystem), "
                         f"not a {type(system).__name__}")
    return tol, it


def _rechart(system, q, v) -> bool:
    """Let a system with rotation-vector coordinates re-chart them (in place) past half a turn; whether it did."""
    rechart = getattr(system, "rechart", None)
    return bool(rechart(q, v)) if rechart is not None else False


def _joint_coordinates(name, extra):
    """(q, q̇) of a recursive system's state, or ValueError saying where to start from."""
    try:
        return extra["recursive.q"], extra["recursive.qd"]
    except KeyError:
        raise ValueError(f"integrator {name!r}: the state carries no joint coordinates "
                         "(extra['recursive.q']); start from system.initial_state()") from None


class RecursiveRK4(Integrator):
    """Classical RK4 on a recursive system's joint coordinates, projected on the cut-joint closure.

    Options
    -------
    closure_tol : float
        Largest cut-joint separation after a step, m (default 1e-12).
    closure_max_iter : int
        Newton iterations of the projection before the step fails (default 10).
    solver : str
        Only ``"direct"`` (accepted so that :class:`~trackdyn.sim.simulation.Simulation`, which passes its
        ``solver``, can run this stepper).

    Counters add ``projection_iterations``; ``last["pos_violation"]`` is
    the largest cut-joint separation after the step.
    """

    name = "recursive-rk4"

    def __init__(self, system, step, closure_tol=1e-12, closure_max_iter=10, solver="direct"):
        tol, it = _check_recursive(self.name, system, solver, closure_tol, closure_max_iter)
        super().__init__(system, step, closure_tol=tol, closure_max_iter=it)
        self.closure_tol = tol
        self.closure_max_iter = it
        self.counters["projection_iterations"] = 0
        self.counters["recharts"] = 0

    def _step_impl(self, state: State) -> State:
        s = self.system
        h = self.h
        t = state.t
        ex = state.extra
        q0, v0 = _joint_coordinates(self.name, ex)
        clock = self._clock
        t_a = clock()
        begin = getattr(s, "begin_step", None)
        if begin is not None:
            begin(state, h)
        tag = ex.get("recursive.t")
        # forces that depend on the step's state (contact history, a driver's decision) change with it: the end
        # point's accelerations, evaluated with the previous step's, are not this step's first stage
        if (tag is not None and float(tag[0]) == t and "recursive.qdd" in ex
                and not getattr(s, "stateful_forces", False)):
            a1 = ex["recursive.qdd"]
        else:
            a1 = s.accelerations(t, q0, v0)[0].copy()
            self.counters["residual_evals"] += 1
        if getattr(s, "compiled_rk4", False):
            q, v = s.rk4_advance(h, q0, v0, a1, t)
            self.counters["residual_evals"] += 3
        else:
            k_q = [v0]
            k_v = [a1]
            for c in (0.5, 0.5, 1.0):
                q = q0 + (c * h) * k_q[-1]
                v = v0 + (c * h) * k_v[-1]
                a = s.accelerations(t + c * h, q, v)[0].copy()
                self.counters["residual_evals"] += 1
                k_q.append(v)
                k_v.append(a)
            q = q0 + (h / 6.0) * (k_q[0] + 2.0 * k_q[1] + 2.0 * k_q[2] + k_q[3])
            v = v0 + (h / 6.0) * (k_v[0] + 2.0 * k_v[1] + 2.0 * k_v[2] + k_v[3])
        t_b = clock()
        self.timing["forces"] += t_b - t_a
        try:
            iters = s.project(q, v, tol=self.closure_tol, max_iter=self.closure_max_iter, t=t + h)
        except ValueError as err:
            raise StepFailed(f"t = {t:.6g} s: {err}") from None
        self.counters["projection_iterations"] += iters
        if _rechart(s, q, v):
            self.counters["recharts"] += 1
        t_c = clock()
        self.timing["constraints"] += t_c - t_b
        qdd, lam = s.accelerations(t + h, q, v)
        self.counters["residual_evals"] += 1
        new = s.state(t + h, q, v, qdd, lam, {k: x for k, x in ex.items() if not k.startswith("recursive.")},
                      evaluated=True)
        s.commit(new)
        self.timing["update"] += clock() - t_c
        self.counters["iterations"] += 1
        self.last["iterations"] = 1
        self.last["pos_violation"] = float(np.max(np.abs(s.phi))) if s.nc else 0.0
        return new


class RecursiveABM(Integrator):
    """Variable-step Adams-Bashforth-Moulton PECE on a recursive system's joint coordinates (han-sander-mao §3.6:
    the paper integrates its recursive track with ABM at relative tolerance 1e-9).

    The scheme is the one of :mod:`trackdyn.integrators.abm` (the same :func:`~trackdyn.integrators.abm.adams_weights`
    on the non-uniform grid, order growing by one per accepted step up to ``order``, the corrector accepted as the
    new value, the error estimate ``y^c - y^p`` in the max norm scaled by ``atol + rtol |y|``, the next step
    ``H min(2, max(0.2, 0.9 err^(-1/(m+1))))``), here on the vector ``(q, q̇)`` of joint coordinates and rates, so
    there is no chart and no coordinate partitioning. After an accepted step the point is projected on the cut-joint
    closure as in :class:`RecursiveRK4` (the correction is of the local error's size). ``step`` is the interval at
    which a state is returned; inside it the scheme takes the internal steps its error control asks for, the last
    ones stretched equally to land on the interval's end.

    Options
    -------
    rtol, atol : float
        Local error tolerances (defaults 1e-6, 1e-8; han-sander-mao used rtol 1e-9); atol in the coordinates' units
        (rad, m; rad/s, m/s).
    order : int
        Largest predictor order (1-8, default 4; corrector one more).
    first_step, max_step : float, optional
        First internal step (default: from the initial derivatives) and the largest (default ``step``), s.
    closure_tol, closure_max_iter, solver : as :class:`RecursiveRK4`.

    Counters add ``substeps`` (accepted internal steps), ``rejected`` and ``projection_iterations``;
    ``last["step_size"]`` is the step the control proposes next, and :attr:`step_history` holds the time and size
    of every accepted internal step (``(n, 2)`` array, s).
    """

    name = "recursive-abm"

    def __init__(self, system, step, rtol=1e-6, atol=1e-8, order=4, first_step=None, max_step=None,
                 closure_tol=1e-12, closure_max_iter=10, solver="direct"):
        tol, it = _check_recursive(self.name, system, solver, closure_tol, closure_max_iter)
        owner = f"integrator {self.name!r}"
        rtol = check_positive(owner, "rtol", rtol, allow_zero=True)
        atol = check_positive(owner, "atol", atol)
        order = check_int(owner, "order", order, 1, 8)
        first_step = None if first_step is None else check_positive(owner, "first_step", first_step)
        max_step = float(step) if max_step is None else check_positive(owner, "max_step", max_step)
        super().__init__(system, step, rtol=rtol, atol=atol, order=order, first_step=first_step, max_step=max_step,
                         closure_tol=tol, closure_max_iter=it)
        self.rtol, self.atol, self.order = rtol, atol, order
        self.first_step, self.max_step = first_step, max_step
        self.closure_tol, self.closure_max_iter = tol, it
        self.counters.update(substeps=0, rejected=0, projection_iterations=0, recharts=0)
        self._hist_t, self._hist_h = [], []

    @property
    def step_history(self) -> np.ndarray:
        """``(n, 2)``: end time and size (s) of every accepted internal step so far."""
        return np.column_stack([self._hist_t, self._hist_h]) if self._hist_t else np.zeros((0, 2))

    def _acc(self, t, q, v):
        self.counters["residual_evals"] += 1
        qdd, lam = self.system.accelerations(t, q, v)
        return qdd.copy(), np.array(lam, copy=True)

    def _norm(self, eq, ev, q0, q1, v0, v1) -> float:
        sq = self.atol + self.rtol * np.maximum(np.abs(q0), np.abs(q1))
        sv = self.atol + self.rtol * np.maximum(np.abs(v0), np.abs(v1))
        return float(max(np.max(np.abs(eq) / sq, initial=0.0), np.max(np.abs(ev) / sv, initial=0.0)))

    def _initial_step(self, t, q0, v0, a0) -> float:
        """:func:`~trackdyn.integrators.abm.initial_step` on y = (q, q̇)."""
        def d2_at(h0):
            a1, _ = self._acc(t + h0, q0 + h0 * v0, v0 + h0 * a0)
            return self._norm(h0 * a0, a1 - a0, q0, q0, v0, v0) / h0

        return initial_step(self._norm(q0, v0, q0, q0, v0, v0), self._norm(v0, a0, q0, q0, v0, v0), d2_at,
                            self.max_step)

    def _attempt(self, hist, H):
        ht, hq, hv, ha = hist
        t, q0, v0 = ht[0], hq[0], hv[0]
        m = min(self.order, len(ht))
        nodes = (ht[:m] - t) / H
        wp = adams_weights(nodes)
        wc = adams_weights(np.concatenate([[1.0], nodes]))
        qp = q0 + H * (wp @ hv[:m])
        vp = v0 + H * (wp @ ha[:m])
        ap, _ = self._acc(t + H, qp, vp)
        qc = q0 + H * (wc[0] * vp + wc[1:] @ hv[:m])
        vc = v0 + H * (wc[0] * ap + wc[1:] @ ha[:m])
        err = self._norm(qc - qp, vc - vp, q0, qc, v0, vc)
        if err > 1.0:
            return err, m, None
        try:
            iters = self.system.project(qc, vc, tol=self.closure_tol, max_iter=self.closure_max_iter, t=t + H)
        except ValueError as e:
            raise StepFailed(f"t = {t + H:.6g} s: {e}") from None
        self.counters["projection_iterations"] += iters
        a1, lam = self._acc(t + H, qc, vc)
        return err, m, (t + H, qc, vc, a1, lam)

    def _step_impl(self, state: State) -> State:
        s = self.system
        ex = state.extra
        q0, v0 = (np.array(x, dtype=float) for x in _joint_coordinates(self.name, ex))
        clock = self._clock
        t_a = clock()
        t_end = state.t + self.h
        begin = getattr(s, "begin_step", None)
        if begin is not None:  # force providers advance their history once per returned step
            begin(state, self.h)
        ht = ex.get("rabm.t")
        if ht is not None and float(ht[0]) == state.t and np.array_equal(ex["rabm.q"][0], q0):
            hist = (ht, ex["rabm.q"], ex["rabm.v"], ex["rabm.a"])
            hc = float(ex["rabm.h"][0])
            lam = ex["rabm.lam"]
        else:
            a0, lam = self._acc(state.t, q0, v0)
            hist = (np.array([state.t]), q0[None], v0[None], a0[None])
            hc = self.first_step if self.first_step is not None else self._initial_step(state.t, q0, v0, a0)
        hist, hc, lam, accepted, rejected = adams_march(hist, hc, t_end, self.order, self.max_step, self._attempt,
                                                        lam, name=self.name)
        n_sub = len(accepted)
        self.counters["rejected"] += rejected
        for t1, H in accepted:
            self._hist_t.append(t1)
            self._hist_h.append(H)
        self.counters["substeps"] += n_sub
        self.counters["iterations"] += n_sub
        self.last["iterations"] = n_sub
        self.last["step_size"] = float(hc)
        t_b = clock()
        self.timing["forces"] += t_b - t_a
        keep = {k: x for k, x in ex.items() if not k.startswith(("recursive.", "rabm."))}
        q1, v1, a1 = hist[1][0].copy(), hist[2][0].copy(), hist[3][0].copy()
        if _rechart(s, q1, v1):
            # new coordinates for the same state: the Adams history in the old ones is dropped (the next step
            # restarts at order 1 from its own first step)
            self.counters["recharts"] += 1
            a1, lam = self._acc(t_end, q1, v1)
        else:
            keep["rabm.t"], keep["rabm.q"], keep["rabm.v"], keep["rabm.a"] = hist
            keep["rabm.h"] = np.array([hc])
            keep["rabm.lam"] = lam
        new = s.state(t_end, q1, v1, a1, lam, keep, evaluated=True)
        s.commit(new)
        self.timing["update"] += clock() - t_b
        self.last["pos_violation"] = float(np.max(np.abs(s.phi))) if s.nc else 0.0
        return new
