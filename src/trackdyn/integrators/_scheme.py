"""Plumbing shared by the schemes of this package (all but the linearized Euler of ``euler.py``).

:class:`Scheme` adds to :class:`~trackdyn.integrators.base.Integrator`:

- the saddle-point solver, built from a name and its options, with the
  linear-solver iterations added to the counters when it is iterative;
- wall-time laps (``self._lap(stage)``) for the timing split of the base class;
- the index-1 solve ``[[M, Jᵀ], [J, −δI]] [v̇; λ] = [f; γ]`` used for
  consistent initial accelerations and by the explicit schemes;
- the velocity-equivalent Newton test shared by the implicit schemes.

Nothing here knows a particular scheme.
"""

from __future__ import annotations

import inspect

import numpy as np

from ..linsolve import SOLVERS, make_solver
from .base import Integrator, StepFailed

__all__ = ["Scheme", "check_positive", "check_int", "STAGNATION_WINDOW"]

#: a Newton iteration whose increment is within this many tolerances and no longer shrinking
#: has reached the round-off floor of the linear solves (κ(K)·eps): it is accepted
STAGNATION_WINDOW = 10.0


def check_positive(owner: str, name: str, value, allow_zero: bool = False) -> float:
    """``float(value)`` if finite and positive (or zero when allowed), else ``ValueError`` naming it."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{owner}: {name} must be a number, got {value!r}") from None
    if not np.isfinite(x) or x < 0 or (x == 0 and not allow_zero):
        raise ValueError(f"{owner}: {name} must be {'non-negative' if allow_zero else 'positive'}, got {value!r}")
    return x


def check_int(owner: str, name: str, value, lo: int, hi: int | None = None) -> int:
    """``int(value)`` if an integer in ``[lo, hi]``, else ``ValueError`` naming it."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        if not (isinstance(value, float) and value.is_integer()):
            raise ValueError(f"{owner}: {name} must be an integer, got {value!r}")
    k = int(value)
    if k < lo or (hi is not None and k > hi):
        rng = f">= {lo}" if hi is None else f"in [{lo}, {hi}]"
        raise ValueError(f"{owner}: {name} must be {rng}, got {value!r}")
    return k


class Scheme(Integrator):
    """Base of the schemes of this package (see the module docstring).

    Parameters
    ----------
    system : AbsoluteSystem
    step : float
        Time step h, s.
    solver : str
        Saddle-point solver name (``"direct"``, ``"minres"``, ``"psor"``, ``"bb"``).
    solver_options : dict
        Options of the solver (e.g. ``tol``, ``max_iter``).
    **options
        The scheme's own options, recorded in :meth:`settings`.
    """

    #: whether an iterative solver should start from its last solution: right when the
    #: unknowns are multipliers (index-1 solves, linearized steps), wrong for Newton increments
    warm_start_default = True

    def __init__(self, system, step, solver="direct", solver_options=None, **options):
        solver_options = dict(solver_options or {})
        super().__init__(system, step, solver=solver, **options, **solver_options)
        self.solver_name = solver
        self.solver_options = solver_options
        self.solver = self._make_solver()
        self.iterative = hasattr(self.solver, "last_iterations")
        if self.iterative:
            self.counters["linear_iterations"] = 0
            self.last["linear_iterations"] = 0
            self.last["linear_residual"] = 0.0
        nb_, nc = system.nb, system.nc
        self.nd = 6 * nb_
        self.rhs = np.zeros(self.nd + nc)
        self.sol = np.zeros(self.nd + nc)
        self.inertia_inv = np.linalg.inv(system.inertia) if nb_ else np.zeros((0, 3, 3))
        self._w_nb6 = np.zeros((nb_, 6))
        self._w2_nb6 = np.zeros((nb_, 6))
        self._t_lap = 0.0
        self._mass_ref = float(np.mean(system.mass)) if nb_ else 1.0

    def _make_solver(self):
        """A new saddle-point solver with this integrator's solver name and options."""
        opts = dict(self.solver_options)
        cls = SOLVERS.get(self.solver_name, self.solver_name) if isinstance(self.solver_name, str) else self.solver_name
        if isinstance(cls, type) and "warm_start" in inspect.signature(cls).parameters:
            opts.setdefault("warm_start", self.warm_start_default)
        try:
            return make_solver(self.solver_name, self.system.pattern, **opts)
        except TypeError as err:
            raise ValueError(f"integrator {self.name!r}: invalid option for solver {self.solver_name!r}: {err}") \
                from None

    # ------------------------------------------------------------------ timing
    def step(self, state):
        """Start the wall-time laps, then the base class's step (bookkeeping, divergence check)."""
        self._start_laps()
        return super().step(state)

    def _start_laps(self):
        self._t_lap = self._clock()

    def _lap(self, stage: str):
        now = self._clock()
        self.timing[stage] += now - self._t_lap
        self._t_lap = now

    # ------------------------------------------------------------------ linear algebra
    def _factor(self, data, t: float, solver=None):
        try:
            (solver or self.solver).factor(data)
        except np.linalg.LinAlgError as err:
            raise StepFailed(f"t = {t:.6g} s: {err}") from None
        self.counters["factorizations"] += 1
        self._lap("factorization")

    def _solve(self, solver=None):
        solver = solver or self.solver
        solver.solve(self.rhs, self.sol)
        self.counters["solves"] += 1
        if self.iterative:
            self.counters["linear_iterations"] += int(solver.last_iterations)
            self.last["linear_iterations"] = int(solver.last_iterations)
            self.last["linear_residual"] = float(solver.last_residual)
            if not solver.last_converged:
                self.counters["linear_unconverged"] = self.counters.get("linear_unconverged", 0) + 1
        self._lap("solve")
        return self.sol

    def _accelerations(self, t: float, q, v, state, a_out, gamma_shift=None):
        """Index-1 solve at (t, q, v): accelerations into ``a_out`` (nb, 6); returns λ (a copy).

        ``gamma_shift(v)``, called once J, C and ∂C/∂t are evaluated, may return a
        term added to γ (Baumgarte stabilisation) or None.
        Leaves the system's kinematics, forces and constraints evaluated at (t, q, v).
        """
        s = self.system
        s.update_kinematics(q, v)
        data = s.data
        data[:] = s.base_data
        s.eval_forces(t, v, 0.0, 0.0, data, state, self.h)
        self.counters["residual_evals"] += 1
        self._lap("forces")
        s.update_drivers(t)
        s.eval_constraints(want_gamma=True)
        self._lap("constraints")
        s.fill_jacobian(data)
        nd = self.nd
        self.rhs[:nd] = s.f.ravel()
        if s.nc:
            self.rhs[nd:] = s.gamma
            if gamma_shift is not None:
                shift = gamma_shift(v)
                if shift is not None:
                    self.rhs[nd:] += shift
        self.counters["jacobian_evals"] += 1
        self._lap("assembly")
        self._factor(data, t)
        x = self._solve()
        a_out[:] = x[:nd].reshape(-1, 6)
        return x[nd:].copy()

    # ------------------------------------------------------------------ Newton test
    def _newton_done(self, err: float, prev: float) -> bool:
        """Newton's increment test: ``err`` (the increment over its tolerance) ≤ 1, or stagnation.

        Stagnation: the increments stopped shrinking (``err ≥ 0.9 prev``) within
        ``STAGNATION_WINDOW`` tolerances — the round-off floor; counted in
        ``counters["newton_stagnations"]``.
        """
        if err <= 1.0:
            return True
        if err <= STAGNATION_WINDOW and err >= 0.9 * prev:
            self.counters["newton_stagnations"] += 1
            return True
        return False

    def _lambda_error(self, dlam, lam, rtol: float, atol: float) -> float:
        """max|Δλ| over its tolerance ``rtol·max|λ| + atol·m̄/h`` (≤ 1: converged).

        The floor ``atol·m̄/h`` (m̄ the mean body mass) is the force that changes
        a body's velocity by ``atol`` in one step. A relative test is used because
        mapping Δλ to a velocity through M⁻¹ amplifies round-off when a body has
        a tiny inertia (a point mass on a pin).
        """
        if self.system.nc == 0:
            return 0.0
        floor = atol * self._mass_ref / self.h
        return float(np.max(np.abs(dlam))) / (rtol * float(np.max(np.abs(lam))) + floor)
