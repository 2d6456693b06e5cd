"""The stepper of the recursive formulation: classical RK4 in joint coordinates with closure projection.

The generic schemes of this package (``rk4``, ``ab3``, ``abm``, the implicit
Eulers, HHT) step an absolute system: body poses ``(nb, 7)``, chart
increments on the group, the saddle-point matrix of the body coordinates.
A system in relative joint coordinates has none of these: its state is
``(q, q̇)`` (one number per tree joint) and its accelerations come from the
O(n m) recursive pass, not from a KKT factorisation. :class:`RecursiveRK4`
therefore integrates the index-1 ODE ``q̇, q̈(q, q̇, t)`` of such a system
(:class:`trackdyn.formulations.recursive.RecursiveSystem`, used through its
methods ``accelerations``, ``project`` and ``state`` only) with the
classical RK4 tableau, then puts the end point back on the closure
manifold: Newton on ``Φ(q) = 0`` with the least-norm correction and the
velocity projection ``Φ_q q̇ = 0`` (no Baumgarte parameter). The correction
is of the size of the step's local error, so the order is kept; the cut
joints hold to ``closure_tol`` after every step.

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
from .base import Integrator, StepFailed

__all__ = ["RecursiveRK4"]


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
        owner = f"integrator {self.name!r}"
        if solver != "direct":
            raise ValueError(f"{owner}: solves its m × m cut-joint system directly; solver must be 'direct', "
                             f"got {solver!r}")
        tol = check_positive(owner, "closure_tol", closure_tol)
        it = check_int(owner, "closure_max_iter", closure_max_iter, 1)
        if not hasattr(system, "accelerations") or not hasattr(system, "project"):
            raise ValueError(f"{owner}: steps a system in joint coordinates (RecursiveSystem), "
                             f"not a {type(system).__name__}")
        super().__init__(system, step, closure_tol=tol, closure_max_iter=it)
        self.closure_tol = tol
        self.closure_max_iter = it
        self.counters["projection_iterations"] = 0

    def _step_impl(self, state: State) -> State:
        s = self.system
        h = self.h
        t = state.t
        ex = state.extra
        try:
            q0 = ex["recursive.q"]
            v0 = ex["recursive.qd"]
        except KeyError:
            raise ValueError(f"integrator {self.name!r}: the state carries no joint coordinates "
                             "(extra['recursive.q']); start from system.initial_state()") from None
        clock = self._clock
        t_a = clock()
        tag = ex.get("recursive.t")
        if tag is not None and float(tag[0]) == t and "recursive.qdd" in ex:
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
