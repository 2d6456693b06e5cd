"""Euler implicit with full Newton (thesis eq. 2.12) and Euler implicit projected (eq. 2.14-2.15).

Both are Chrono's steppers of the same names (``ChTimestepperEulerImplicit``,
``ChTimestepperEulerImplicitProjected``) written on the stage functions of
:class:`~trackdyn.formulations.absolute.AbsoluteSystem`. Positions advance on
the group, ``q⁺ = q ⊕ h v⁺`` (eq. 2.9).
"""

from __future__ import annotations

import numpy as np

from ..mbs import _kernels as MK
from ..mbs.model import State
from ._chart_kernels import j_times, jt_times
from ._kernels import euler_rhs, mass_times
from ._scheme import Scheme, check_int, check_positive
from .base import StepFailed

__all__ = ["EulerImplicit", "EulerImplicitProjected"]


class EulerImplicit(Scheme):
    """Backward Euler solved by Newton's method to a tolerance (thesis eq. 2.12).

    Unknowns ``v⁺`` and ``λ⁺``; with ``q⁺ = q ⊕ h v⁺`` the residuals are

    .. math::

        G_v = M (v^+ - v) - h f(q^+, v^+, t^+) + h J(q^+)^T λ^+, \\qquad
        G_c = C(q^+, t^+) / h,

    and each Newton iteration solves

    .. math::

        \\begin{bmatrix} M - h^2 (K + K_λ) - h D & J^T \\\\ J & -δI \\end{bmatrix}
        \\begin{bmatrix} Δv \\\\ h Δλ \\end{bmatrix} = -\\begin{bmatrix} G_v \\\\ G_c \\end{bmatrix}

    with ``K = ∂f/∂q``, ``D = ∂f/∂v``, ``K_λ = ∂(−Jᵀλ)/∂q`` at the current
    iterate (symmetric parts; eq. 2.11's ``Δq ≈ h Δv``). The iteration stops
    when ``max|Δv| ≤ newton_atol + newton_rtol·max|v⁺|`` and
    ``max|Δλ| ≤ newton_rtol·max|λ⁺| + newton_atol·m̄/h`` (m̄ the mean body
    mass); ``last["residual"]`` is the larger of the two ratios. An iteration
    whose ratio is within ``STAGNATION_WINDOW`` (10) and no longer shrinks
    (≥ 0.9 of the previous one) has reached the round-off floor of the linear
    solves and is accepted too (counted in ``newton_stagnations``). If
    ``newton_max_iter`` iterations do not get there the step fails
    (``StepFailed``).

    Options
    -------
    solver : str
        Saddle-point solver (``"direct"``, ``"minres"``, ``"psor"``, ``"bb"``); other
        keyword options go to it.
    newton_rtol, newton_atol : float
        Newton tolerance, relative and absolute (m/s, rad/s; for λ scaled by
        m̄/h); defaults 1e-8, 1e-10.
    newton_max_iter : int
        Iteration limit per step (default 20).
    modified_newton : bool
        Factor the matrix only at the first iteration of a step (default False).
    constraint_stiffness : bool
        Include ``K_λ`` in the matrix (default True); without it convergence is linear.
    """

    name = "euler-implicit"
    warm_start_default = False

    def __init__(self, system, step, solver="direct", newton_rtol=1e-8, newton_atol=1e-10, newton_max_iter=20,
                 modified_newton=False, constraint_stiffness=True, **solver_options):
        owner = f"integrator {self.name!r}"
        self.rtol = check_positive(owner, "newton_rtol", newton_rtol, allow_zero=True)
        self.atol = check_positive(owner, "newton_atol", newton_atol)
        self.max_iter = check_int(owner, "newton_max_iter", newton_max_iter, 1)
        self.modified = bool(modified_newton)
        self.constraint_stiffness = bool(constraint_stiffness)
        super().__init__(system, step, solver, solver_options,
                         newton_rtol=self.rtol, newton_atol=self.atol, newton_max_iter=self.max_iter,
                         modified_newton=self.modified, constraint_stiffness=self.constraint_stiffness)
        nb_ = system.nb
        self.Mv = np.zeros((nb_, 6))
        self.Mv0 = np.zeros((nb_, 6))
        self.JTl = np.zeros((nb_, 6))
        self.scratch = np.zeros(system.pattern.nnz)
        self.cv = np.zeros(system.nc)
        self.counters["newton_stagnations"] = 0

    def _step_impl(self, state: State) -> State:
        s = self.system
        h = self.h
        t1 = state.t + h
        nd, nb_ = self.nd, s.nb
        # explicit predictor from the last step's mean acceleration
        v = state.v + h * state.acc
        lam = state.lam.copy()
        q = np.empty_like(state.q)
        mass_times(s.mass, s.inertia, state.v, self.Mv0)
        self._lap("update")
        converged = False
        it = 0
        prev = np.inf
        for it in range(1, self.max_iter + 1):
            refactor = it == 1 or not self.modified
            MK.advance_positions(state.q, v, h, q)
            s.update_kinematics(q, v)
            data = s.data if refactor else self.scratch
            data[:] = s.base_data
            s.eval_forces(t1, v, h * h, h, data, state, h)
            self.counters["residual_evals"] += 1
            self._lap("forces")
            s.update_drivers(t1)
            if self.constraint_stiffness and refactor:
                s.add_constraint_stiffness(lam, h * h, data)
            s.eval_constraints(want_gamma=False)
            self._lap("constraints")
            if refactor:
                s.fill_jacobian(data)
                self.counters["jacobian_evals"] += 1
            jt_times(s.J, s.row_body, lam, self.JTl)
            mass_times(s.mass, s.inertia, v, self.Mv)
            self.rhs[:nd] = (-(self.Mv - self.Mv0) + h * s.f - h * self.JTl).ravel()
            self.rhs[nd:] = -s.phi / h
            self._lap("assembly")
            if refactor:
                self._factor(s.data, state.t)
            x = self._solve()
            dv = x[:nd].reshape(nb_, 6)
            v += dv
            lam += x[nd:] / h
            self.counters["iterations"] += 1
            tol = self.atol + self.rtol * float(np.max(np.abs(v))) if nb_ else self.atol
            err_v = float(np.max(np.abs(dv))) / tol if nb_ else 0.0
            err_l = self._lambda_error(x[nd:] / h, lam, self.rtol, self.atol)
            self.last["residual"] = max(err_v, err_l)
            self._lap("update")
            err = max(err_v, err_l)
            if self._newton_done(err, prev):
                converged = True
                break
            prev = err
        if not converged:
            raise StepFailed(f"t = {state.t:.6g} s: euler-implicit Newton did not converge in {self.max_iter} "
                             f"iterations (last increment {self.last['residual']:.3g} × tolerance)")
        MK.advance_positions(state.q, v, h, q)
        self.last["iterations"] = it
        self.last["pos_violation"] = float(np.max(np.abs(s.phi))) if s.nc else 0.0
        new = State(t1, q, v, lam, (v - state.v) / h, dict(state.extra))
        s.commit(new)
        self._lap("update")
        return new


class EulerImplicitProjected(Scheme):
    """Linearized Euler without the ``C/h`` term, then a position projection (thesis eq. 2.14-2.15).

    Velocity step (eq. 2.14, with the joints' geometric stiffness as in
    ``euler-implicit-linearized`` and the exact time secant of drivers):

    .. math::

        \\begin{bmatrix} M - h^2 K - h D & J^T \\\\ J & -δI \\end{bmatrix}
        \\begin{bmatrix} v^+ \\\\ -hλ^+ \\end{bmatrix} =
        \\begin{bmatrix} M v + h f - h D v \\\\ -Δ_t C \\end{bmatrix},
        \\qquad \\tilde q = q ⊕ h v^+,

    then Newton steps of the projection (eq. 2.15) until ``max|C| ≤ projection_tol``
    or ``projection_max_iter`` steps:

    .. math::

        \\begin{bmatrix} M & J^T \\\\ J & -δI \\end{bmatrix}
        \\begin{bmatrix} Δq \\\\ μ \\end{bmatrix} = \\begin{bmatrix} 0 \\\\ -C(\\tilde q, t^+) \\end{bmatrix},
        \\qquad \\tilde q ← \\tilde q ⊕ Δq

    (the mass-weighted closest point on the constraint manifold). Velocities
    are not projected (as in Chrono and the thesis).

    Options
    -------
    solver : str
        Saddle-point solver; other keyword options go to it.
    projection_tol : float
        Target ``max|C|`` after projection (m for distances, 1 for direction
        rows), default 1e-10.
    projection_max_iter : int
        Projection Newton steps per time step (default 3; eq. 2.15 is one).
    constraint_stiffness : bool
        Joint geometric stiffness in the velocity step (default True).
    """

    name = "euler-implicit-projected"

    def __init__(self, system, step, solver="direct", projection_tol=1e-10, projection_max_iter=3,
                 constraint_stiffness=True, **solver_options):
        owner = f"integrator {self.name!r}"
        self.ptol = check_positive(owner, "projection_tol", projection_tol)
        self.pmax = check_int(owner, "projection_max_iter", projection_max_iter, 1)
        self.constraint_stiffness = bool(constraint_stiffness)
        super().__init__(system, step, solver, solver_options, projection_tol=self.ptol,
                         projection_max_iter=self.pmax, constraint_stiffness=self.constraint_stiffness)
        self.projector = self._make_solver()  # its own matrix [[M, Jᵀ], [J, -δ]] and warm start
        self.Mv = np.zeros((system.nb, 6))
        self.zero_phi = np.zeros(system.nc)
        self.counters["projections"] = 0
        self.cv = np.zeros(system.nc)

    def _step_impl(self, state: State) -> State:
        s = self.system
        h = self.h
        t1 = state.t + h
        nd, nb_ = self.nd, s.nb
        # ---- eq. 2.14: velocity step without the C/h stabilisation
        s.update_kinematics(state.q, state.v)
        data = s.data
        data[:] = s.base_data
        s.eval_forces(state.t, state.v, h * h, h, data, state, h)
        self.counters["residual_evals"] += 1
        self._lap("forces")
        s.update_drivers(state.t)
        if self.constraint_stiffness:
            s.add_constraint_stiffness(state.lam, h * h, data, state.v)
        s.eval_constraints(want_gamma=False)
        secant = (s.driver_phi_at(t1) - s.phi[s.driver_rows]) / h
        self._lap("constraints")
        s.fill_jacobian(data)
        mass_times(s.mass, s.inertia, state.v, self.Mv)
        euler_rhs(self.Mv, s.f, s.Dv, h, self.zero_phi, s.driver_rows, secant, 1.0, self.rhs)
        self.rhs[:6 * s.nb] += (h * h) * s.Kxv.ravel()  # left-out Jacobian terms (exact linearisation)
        self.counters["jacobian_evals"] += 1
        self._lap("assembly")
        self._factor(data, state.t)
        x = self._solve()
        v = x[:nd].reshape(nb_, 6).copy()
        lam = x[nd:] / h
        q = np.empty_like(state.q)
        MK.advance_positions(state.q, v, h, q)
        self.counters["iterations"] += 1
        self._lap("update")
        # ---- eq. 2.15: position projection at t⁺
        s.update_drivers(t1)
        dq = np.zeros((nb_, 6))
        q_try = np.empty_like(q)
        n_proj = 0
        while True:
            s.update_kinematics(q, v)
            s.eval_constraints(want_gamma=False)
            self._lap("constraints")
            viol = float(np.max(np.abs(s.phi))) if s.nc else 0.0
            if viol <= self.ptol or n_proj >= self.pmax:
                break
            data[:] = s.base_data
            s.fill_jacobian(data)
            self.rhs[:nd] = 0.0
            self.rhs[nd:] = -s.phi
            self._lap("assembly")
            self._factor(data, t1, self.projector)
            x = self._solve(self.projector)
            dq[:] = x[:nd].reshape(nb_, 6)
            MK.advance_positions_dq(q, dq, q_try)
            q, q_try = q_try, q
            n_proj += 1
            self.counters["projections"] += 1
            self._lap("update")
        self.last["iterations"] = 1 + n_proj
        self.last["pos_violation"] = viol
        self.last["residual"] = viol
        if s.nc:
            j_times(s.J, s.row_body, v, self.cv)
            self.last["vel_violation"] = float(np.max(np.abs(self.cv + s.phi_t)))
        new = State(t1, q, v, lam, (v - state.v) / h, dict(state.extra))
        s.commit(new)
        self._lap("update")
        return new
