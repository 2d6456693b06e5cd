"""Euler implicit linearized (thesis eq. 2.13; Chrono's ChTimestepperEulerImplicitLinearized).

One linear solve per step of

.. math::

    \\begin{bmatrix} M - h^2 K - h D & J^T \\\\ J & -\\delta I \\end{bmatrix}
    \\begin{bmatrix} v^{l+1} \\\\ -h\\lambda^{l+1} \\end{bmatrix} =
    \\begin{bmatrix} M v^l + h f^l - h D v^l \\\\ -\\mathrm{clip}(C^l/h) - \\Delta_t C \\end{bmatrix},
    \\qquad q^{l+1} = q^l \\oplus h v^{l+1}

with ``K = ∂f/∂q``, ``D = ∂f/∂v`` (their symmetric parts, so the matrix stays
symmetric quasi-definite), ``⊕`` the exponential map (eq. 2.9), the
stabilisation term ``C/h`` clipped at ``max_recovery_speed`` and ``Δ_t C`` the
exact time secant ``(C(q^l, t^{l+1}) - C(q^l, t^l))/h`` of the drivers. The
``- h D v^l`` term is the consistent linearisation of ``f^{l+1}`` (Chrono
keeps it; eq. 2.13 as printed drops it). When coupling blocks are left out
of the matrix ("diagonal" coupling, ``K̃``), the left-out position terms still
act on ``v^l`` (``h² (K - K̃) v^l``), so only the matrix is approximated and
the step stays Galilean invariant.
"""

from __future__ import annotations

import numpy as np

from ..linsolve import make_solver
from ..mbs import _kernels as MK
from ..mbs.model import State
from ._kernels import euler_rhs, mass_times
from .base import Integrator, StepFailed

__all__ = ["EulerImplicitLinearized"]


class EulerImplicitLinearized(Integrator):
    """First-order, one linear solve per step; the thesis's and Chrono's default.

    Options
    -------
    solver : str
        Saddle-point solver (``"direct"``).
    max_recovery_speed : float
        Cap of the constraint stabilisation speed ``|C/h|`` (m/s or rad/s), default 1.
    constraint_stiffness : bool
        Add the geometric stiffness of the joint forces, ``∂(∇_q Cᵀ λ)/∂q``
        at the last multipliers, to the Newton matrix (default). Eq. 2.13 as
        printed omits it; then the step is explicit in the constraint
        directions and a pendulum's or a chain's energy oscillates with
        amplitude O(h) instead of decaying (see docs/formulation.md).
    """

    name = "euler-implicit-linearized"

    def __init__(self, system, step, solver="direct", max_recovery_speed=1.0, constraint_stiffness=True,
                 **solver_options):
        super().__init__(system, step, solver=solver, max_recovery_speed=max_recovery_speed,
                         constraint_stiffness=constraint_stiffness)
        self.constraint_stiffness = bool(constraint_stiffness)
        self.vmax = float(max_recovery_speed)
        if not self.vmax > 0:
            raise ValueError(f"max_recovery_speed must be positive, got {max_recovery_speed!r}")
        self.solver = make_solver(solver, system.pattern, **solver_options)
        nb_, nc = system.nb, system.nc
        self.nd = 6 * nb_
        self.rhs = np.zeros(self.nd + nc)
        self.x = np.zeros(self.nd + nc)
        self.Mv = np.zeros((nb_, 6))

    def _step_impl(self, state: State) -> State:
        s = self.system
        h = self.h
        clk = self._clock
        tm = self.timing
        t0 = clk()
        s.update_kinematics(state.q, state.v)
        data = s.data
        data[:] = s.base_data
        p0 = s.provider_time
        s.eval_forces(state.t, state.v, h * h, h, data, state, h)
        t1 = clk()
        contact = s.provider_time - p0
        s.update_drivers(state.t)
        if self.constraint_stiffness:
            s.add_constraint_stiffness(state.lam, h * h, data, state.v)
        s.eval_constraints(want_gamma=False)
        secant = (s.driver_phi_at(state.t + h) - s.phi[s.driver_rows]) / h
        t2 = clk()
        s.fill_jacobian(data)
        mass_times(s.mass, s.inertia, state.v, self.Mv)
        euler_rhs(self.Mv, s.f, s.Dv, h, s.phi, s.driver_rows, secant, self.vmax, self.rhs)
        # Jacobian terms left out of the matrix still act on the known velocity (exact linearisation)
        self.rhs[:self.nd] += (h * h) * s.Kxv.ravel()
        t3 = clk()
        try:
            self.solver.factor(data)
        except np.linalg.LinAlgError as err:
            raise StepFailed(f"t = {state.t:.6g} s: {err}") from None
        t4 = clk()
        self.solver.solve(self.rhs, self.x)
        if hasattr(self.solver, "last_iterations"):
            self.counters["linear_iterations"] = self.counters.get("linear_iterations", 0) + self.solver.last_iterations
        t5 = clk()
        nd = self.nd
        v_new = self.x[:nd].reshape(s.nb, 6).copy()
        lam = self.x[nd:] / h
        q_new = np.empty_like(state.q)
        MK.advance_positions(state.q, v_new, h, q_new)
        acc = (v_new - state.v) / h
        t6 = clk()
        tm["forces"] += t1 - t0 - contact
        tm["contact"] = tm.get("contact", 0.0) + contact
        tm["constraints"] += t2 - t1
        tm["assembly"] += t3 - t2
        tm["factorization"] += t4 - t3
        tm["solve"] += t5 - t4
        tm["update"] += t6 - t5
        c = self.counters
        c["residual_evals"] += 1
        c["jacobian_evals"] += 1
        c["factorizations"] += 1
        c["solves"] += 1
        c["iterations"] += 1
        self.last["pos_violation"] = float(np.max(np.abs(s.phi))) if s.nc else 0.0
        self.last["iterations"] = 1
        new = State(state.t + h, q_new, v_new, lam, acc, dict(state.extra))
        s.commit(new)
        return new
