r"""HHT-α on the body group: Newton on accelerations and multipliers (kim-2012 eq. 14-20).

With ``a`` the accelerations ``v̇ = (r̈, ω̄̇)`` and the Newmark formulas
(kim-2012 eq. 16-17) written on the group,

.. math::

    v_{n+1} = v_n + h[(1-γ) a_n + γ a_{n+1}], \qquad
    q_{n+1} = q_n ⊕ \big(h v_n + h^2 [(\tfrac12 - β) a_n + β a_{n+1}]\big),

the unknowns ``a_{n+1}``, ``λ_{n+1}`` solve (eq. 14 and the position constraints)

.. math::

    Ψ = M a_{n+1} + (1+α) (J^Tλ - f)_{n+1} - α (J^Tλ - f)_n = 0, \qquad Φ(q_{n+1}, t_{n+1}) = 0

with ``α ∈ [−1/3, 0]``, ``γ = (1 − 2α)/2``, ``β = (1 − α)²/4`` (eq. 15). Each
Newton iteration solves the symmetric system of eq. 18-20, the constraint rows
scaled by ``1/(βh²)``:

.. math::

    \begin{bmatrix} \frac{M}{1+α} - βh^2 (K + K_λ) - γh D & J^T \\ J & -δI \end{bmatrix}
    \begin{bmatrix} Δa \\ Δλ \end{bmatrix} =
    \begin{bmatrix} -Ψ/(1+α) \\ -Φ/(βh^2) \end{bmatrix}

(``K = ∂f/∂q``, ``D = ∂f/∂v``, ``K_λ = ∂(−Jᵀλ)/∂q``, symmetric parts). The
increment ``h v + h²(…)`` is a body-frame rotation vector for the orientation
part, so the update stays on the unit quaternions and the scheme keeps its
second order (the rotation vector of a step is ``h ω̄ + h²/2 ω̄̇ + O(h³)``).
The first step starts from consistent accelerations of the index-1 system.
``α = 0`` is the trapezoidal rule (no numerical damping); ``α = −1/3`` damps
most.

Velocity projection (index-2 stabilisation, option ``velocity_projection``,
default on). On index-3 constraints the trapezoidal rule (α = 0) is only
weakly stable (Cardona & Géradin 1989): a mode in which accelerations and
multipliers alternate in sign from step to step is undamped, and with
nonlinear constraints it grows (measured: 0.4 % per step for a double
pendulum at h = 1e-3, which blows up after 5.8 s). After Newton converges the
velocities are therefore projected onto ``J v + ∂C/∂t = 0`` in the metric of
the factored Newton matrix, one extra solve per step:

.. math::

    \begin{bmatrix} H & J^T \\ J & -δI \end{bmatrix}
    \begin{bmatrix} Δv \\ μ \end{bmatrix} =
    \begin{bmatrix} 0 \\ -(J v_{n+1} + ∂C/∂t) \end{bmatrix}, \qquad v_{n+1} ← v_{n+1} + Δv.

The correction is of the size of the scheme's velocity-constraint error
(O(h³) per step), so the order stays two; ``velocity_projection=False``
gives kim-2012's scheme exactly.
"""

from __future__ import annotations

import numpy as np

from ..mbs import _kernels as MK
from ..mbs.model import State
from ._chart_kernels import j_times, jt_times
from ._kernels import mass_times
from ._scheme import Scheme, check_int, check_positive
from .base import StepFailed

__all__ = ["HHT"]


class HHT(Scheme):
    """Hilber-Hughes-Taylor α, second order, with tunable numerical damping (see the module docstring).

    Options
    -------
    alpha : float
        α in [−1/3, 0] (default −0.2, Chrono's default); γ and β follow eq. 15.
    solver : str
        Saddle-point solver; other keyword options go to it.
    newton_rtol, newton_atol : float
        Newton stops when ``γh max|Δa| ≤ newton_atol + newton_rtol·max|v|``
        (the velocity change) and ``max|Δλ| ≤ newton_rtol·max|λ| +
        newton_atol·m̄/h`` (m̄ the mean body mass); defaults 1e-8, 1e-10 m/s.
        Increments that stop shrinking within 10 tolerances (the round-off
        floor) are accepted and counted in ``newton_stagnations``.
    newton_max_iter : int
        Iteration limit per step (default 20); exceeding it fails the step.
    modified_newton : bool
        Factor only at the first iteration of a step (default False).
    constraint_stiffness : bool
        Include ``K_λ`` in the Newton matrix (default True).
    velocity_projection : bool
        Project velocities onto the velocity constraints after each step
        (default True; see the module docstring).

    The integrator's history (``a_n``, ``(Jᵀλ − f)_n``) travels in the state:
    ``state.acc`` holds ``a_n`` and ``state.extra["hht.F"]`` the force term, so
    a copied state restarts exactly.
    """

    name = "hht"
    warm_start_default = False

    def __init__(self, system, step, solver="direct", alpha=-0.2, newton_rtol=1e-8, newton_atol=1e-10,
                 newton_max_iter=20, modified_newton=False, constraint_stiffness=True, velocity_projection=True,
                 **solver_options):
        owner = f"integrator {self.name!r}"
        try:
            a = float(alpha)
        except (TypeError, ValueError):
            raise ValueError(f"{owner}: alpha must be a number in [-1/3, 0], got {alpha!r}") from None
        if not (-1.0 / 3.0 - 1e-12 <= a <= 0.0):
            raise ValueError(f"{owner}: alpha must be in [-1/3, 0] (kim-2012 eq. 15), got {alpha!r}")
        self.alpha = a
        self.gamma = (1.0 - 2.0 * a) / 2.0
        self.beta = (1.0 - a) ** 2 / 4.0
        self.rtol = check_positive(owner, "newton_rtol", newton_rtol, allow_zero=True)
        self.atol = check_positive(owner, "newton_atol", newton_atol)
        self.max_iter = check_int(owner, "newton_max_iter", newton_max_iter, 1)
        self.modified = bool(modified_newton)
        self.constraint_stiffness = bool(constraint_stiffness)
        self.velocity_projection = bool(velocity_projection)
        super().__init__(system, step, solver, solver_options, alpha=a, newton_rtol=self.rtol,
                         newton_atol=self.atol, newton_max_iter=self.max_iter, modified_newton=self.modified,
                         constraint_stiffness=self.constraint_stiffness,
                         velocity_projection=self.velocity_projection)
        nb_ = system.nb
        # M/(1+α) in the mass slots; -δ unchanged
        self.base = system.base_data.copy()
        slots = np.unique(system.pattern.body_slot)
        self.base[slots] /= 1.0 + a
        self.Ma = np.zeros((nb_, 6))
        self.JTl = np.zeros((nb_, 6))
        self.scratch = np.zeros(system.pattern.nnz)
        self._cv = np.zeros(system.nc)
        self.counters["newton_stagnations"] = 0
        if self.velocity_projection:
            self.counters["projections"] = 0

    def _start(self, state: State):
        """Consistent a_0, λ_0 and (Jᵀλ − f)_0 = −M a_0 from the index-1 system."""
        a0 = np.zeros((self.system.nb, 6))
        lam0 = self._accelerations(state.t, state.q, state.v, state, a0)
        F0 = np.zeros_like(a0)
        mass_times(self.system.mass, self.system.inertia, a0, F0)
        return a0, lam0, -F0

    def _step_impl(self, state: State) -> State:
        s = self.system
        h, al, be, ga = self.h, self.alpha, self.beta, self.gamma
        t1 = state.t + h
        nd, nb_ = self.nd, s.nb
        tag = state.extra.get("hht.t")
        if tag is not None and float(tag[0]) == state.t and "hht.F" in state.extra:
            a_n, lam_n, F_n = state.acc, state.lam, state.extra["hht.F"]
        else:
            a_n, lam_n, F_n = self._start(state)
        a = a_n.copy()
        lam = lam_n.copy()
        x_base = h * state.v + h * h * (0.5 - be) * a_n
        v_base = state.v + h * (1.0 - ga) * a_n
        cK, cD = be * h * h, ga * h
        q = np.empty_like(state.q)
        self._lap("update")
        converged = False
        it = 0
        prev = np.inf
        for it in range(1, self.max_iter + 1):
            refactor = it == 1 or not self.modified
            v = v_base + ga * h * a
            MK.advance_positions_dq(state.q, x_base + cK * a, q)
            s.update_kinematics(q, v)
            data = s.data if refactor else self.scratch
            data[:] = self.base
            s.eval_forces(t1, v, cK, cD, data, state, h)
            self.counters["residual_evals"] += 1
            self._lap("forces")
            s.update_drivers(t1)
            if self.constraint_stiffness and refactor:
                s.add_constraint_stiffness(lam, cK, data)
            s.eval_constraints(want_gamma=False)
            self._lap("constraints")
            if refactor:
                s.fill_jacobian(data)
                self.counters["jacobian_evals"] += 1
            jt_times(s.J, s.row_body, lam, self.JTl)
            mass_times(s.mass, s.inertia, a, self.Ma)
            psi = self.Ma / (1.0 + al) + self.JTl - s.f - (al / (1.0 + al)) * F_n
            self.rhs[:nd] = -psi.ravel()
            self.rhs[nd:] = -s.phi / cK
            self._lap("assembly")
            if refactor:
                self._factor(s.data, state.t)
            x = self._solve()
            da = x[:nd].reshape(nb_, 6)
            a += da
            lam += x[nd:]
            self.counters["iterations"] += 1
            v_now = v_base + ga * h * a
            tol = self.atol + self.rtol * float(np.max(np.abs(v_now))) if nb_ else self.atol
            err_a = ga * h * float(np.max(np.abs(da))) / tol if nb_ else 0.0
            err_l = self._lambda_error(x[nd:], lam, self.rtol, self.atol)
            self.last["residual"] = max(err_a, err_l)
            self._lap("update")
            err = max(err_a, err_l)
            if self._newton_done(err, prev):
                converged = True
                break
            prev = err
        if not converged:
            raise StepFailed(f"t = {state.t:.6g} s: hht Newton did not converge in {self.max_iter} iterations "
                             f"(last increment {self.last['residual']:.3g} × tolerance)")
        v = v_base + ga * h * a
        MK.advance_positions_dq(state.q, x_base + cK * a, q)
        if self.velocity_projection and s.nc:
            # index-2 stabilisation with the factored Newton matrix as the metric
            s.update_kinematics(q, v)
            s.eval_constraints(want_gamma=False)
            self._lap("constraints")
            j_times(s.J, s.row_body, v, self._cv)
            self.rhs[:nd] = 0.0
            self.rhs[nd:] = -(self._cv + s.phi_t)
            self._lap("assembly")
            x = self._solve()
            v = v + x[:nd].reshape(nb_, 6)
            self.counters["projections"] += 1
        # the force term of the new step from eq. 14 itself, so the recursion is exact
        mass_times(s.mass, s.inertia, a, self.Ma)
        F1 = -(self.Ma - al * F_n) / (1.0 + al)
        extra = dict(state.extra)
        extra["hht.t"] = np.array([t1])
        extra["hht.F"] = F1
        self.last["iterations"] = it
        self.last["pos_violation"] = float(np.max(np.abs(s.phi))) if s.nc else 0.0
        new = State(t1, q, v, lam, a, extra)
        s.commit(new)
        self._lap("update")
        return new
