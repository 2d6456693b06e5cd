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

import inspect

import numba as nb
import numpy as np

from .._compiled import bound_call, entry_point
from ..linsolve import SOLVERS, make_solver
from ..linsolve._ldl_kernels import sym_upper_matvec
from ..mbs import _kernels as MK
from ..mbs.model import State
from ._kernels import euler_rhs, mass_times
from .base import Integrator, StepFailed

__all__ = ["EulerImplicitLinearized", "ThetaLinearized"]


# Two small compiled kernels replace about fifteen NumPy calls and five temporaries per step (the
# per-step Python cost matters at chain64's 0.2 ms); the arithmetic is the same operation by
# operation, so results are bit-identical to the NumPy expressions they replace.
@nb.njit(cache=True, _nrt=False)
def _add_left_out(rhs, hh, Kxv):
    """rhs[:6 nb] += hh * Kxv (the Jacobian terms left out of the matrix, times v)."""
    nb_ = Kxv.shape[0]
    for b in range(nb_):
        for k in range(6):
            rhs[6 * b + k] += hh * Kxv[b, k]


@nb.njit(cache=True, _nrt=False)
def _finish_step(x, v_old, q_old, h, phi, v_new, lam, q_new, acc):
    """Unpack the solution: v_new, λ = y/h, q_new = q ⊕ h v_new, acc = (v_new - v)/h; returns max |C|."""
    nb_ = v_old.shape[0]
    nd = 6 * nb_
    for b in range(nb_):
        for k in range(6):
            v_new[b, k] = x[6 * b + k]
    for r in range(lam.shape[0]):
        lam[r] = x[nd + r] / h
    MK.advance_positions(q_old, v_new, h, q_new)
    for b in range(nb_):
        for k in range(6):
            acc[b, k] = (v_new[b, k] - v_old[b, k]) / h
    m = 0.0
    for r in range(phi.shape[0]):
        a = abs(phi[r])
        if a > m or a != a:  # NaN propagates as np.max does
            m = a
    return m


@nb.njit(cache=True, _nrt=False)
def _theta_terms(n, Ap, Ai, data, perm, v, xp, kx, hv):
    """hv (n,) = K [v; 0] in the original order: ``H v`` in the velocity rows, ``J v`` in the constraint rows
    (K the KKT matrix stored permuted as its upper triangle, v (nb, 6))."""
    nd = 6 * v.shape[0]
    for k in range(n):
        i = perm[k]
        xp[k] = v[i // 6, i % 6] if i < nd else 0.0
    sym_upper_matvec(n, Ap, Ai, data, xp, kx)
    for k in range(n):
        hv[perm[k]] = kx[k]


@nb.njit(cache=True, _nrt=False)
def _theta_rhs(rhs, Mv, hv, theta):
    """Turn the Euler right-hand side into the θ-scheme's (see :class:`ThetaLinearized`).

    On entry ``rhs = [M v + h f - h D v + θ h² K_lo v ; -clip(C/h) - secant]`` (Euler's, with the
    left-out terms weighted by θ); ``hv = K [v; 0] = [H v; J v]``. On exit
    ``[(M v - (1-θ) H v)/θ + h f - h D v + θ h² K_lo v ; (-clip(C/h) - secant - (1-θ) J v)/θ]``.
    """
    nb_ = Mv.shape[0]
    a = (1.0 - theta) / theta
    for b in range(nb_):
        for k in range(6):
            i = 6 * b + k
            rhs[i] += a * (Mv[b, k] - hv[i])
    for i in range(6 * nb_, rhs.shape[0]):
        rhs[i] = (rhs[i] - (1.0 - theta) * hv[i]) / theta


@nb.njit(cache=True, _nrt=False)
def _theta_mean(theta, v_old, v_new, vbar, q_old, h, q_new):
    """v̄ = θ v_new + (1-θ) v_old and q_new = q_old ⊕ h v̄."""
    for b in range(v_old.shape[0]):
        for k in range(6):
            vbar[b, k] = theta * v_new[b, k] + (1.0 - theta) * v_old[b, k]
    MK.advance_positions(q_old, vbar, h, q_new)


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
    theta = 1.0

    def __init__(self, system, step, solver="direct", max_recovery_speed=1.0, constraint_stiffness=True,
                 **solver_options):
        super().__init__(system, step, solver=solver, max_recovery_speed=max_recovery_speed,
                         constraint_stiffness=constraint_stiffness)
        self.constraint_stiffness = bool(constraint_stiffness)
        self.vmax = float(max_recovery_speed)
        if not self.vmax > 0:
            raise ValueError(f"max_recovery_speed must be positive, got {max_recovery_speed!r}")
        cls = SOLVERS.get(solver, solver) if isinstance(solver, str) else solver
        if isinstance(cls, type) and "refine" in inspect.signature(cls).parameters:
            # no refinement solve by default: the linearised step's O(h²) error dwarfs the direct solve's
            # round-off (residual 1e-16 either way on the chain and M113 matrices); -0.03 ms per chain64 step
            solver_options.setdefault("refine", 0)
        self.solver = make_solver(solver, system.pattern, **solver_options)
        self._iterative = hasattr(self.solver, "last_iterations")
        nb_, nc = system.nb, system.nc
        self.nd = 6 * nb_
        self.rhs = np.zeros(self.nd + nc)
        self.x = np.zeros(self.nd + nc)
        self.Mv = np.zeros((nb_, 6))
        self._no_secant = np.zeros(0)
        self._calls = self._bound_for = None  # the step's own kernels, bound at the first step (_bind)
        #: ``(data, rhs) -> None`` applied to the assembled step matrix and right-hand side before the
        #: factorisation (a partitioned stepper prescribes some velocities there, integrators/synthesis.py)
        self.prescribe = None
        #: commit the providers' history at the end of the step (a partitioned stepper commits once itself)
        self.commit_step = True

    def _bind(self):
        """Bind the system's step kernels (cK, cD of this θ and h) and this stepper's own to the step buffers."""
        s, h, th = self.system, self.h, self.theta
        self._bound_for = (h, th, self.vmax)
        s.bind_step(th * th * h * h, th * h, s.data)
        v = s.v_step
        rhs = None
        if not len(s.driver_rows):  # with drivers the secant is a new array each step: the general call
            rhs = bound_call(euler_rhs, self.Mv, s.f, s.Dv, h, s.phi, s.driver_rows, self._no_secant, self.vmax,
                             self.rhs)
        self._calls = (bound_call(mass_times, s.mass, s.inertia, v, self.Mv), rhs,
                       bound_call(_add_left_out, self.rhs, th * h * h, s.Kxv))
        # the new state's arrays are made here (np.empty, C-contiguous float64): typed once
        v_new, q_new = np.empty((s.nb, 6)), np.empty(s.q_step.shape)
        self._finish = entry_point(_finish_step, (self.x, v, s.q_step, h, s.phi, v_new, np.empty(s.nc), q_new,
                                                  np.empty((s.nb, 6))))
        self._theta_calls = None
        if th != 1.0:
            p = s.pattern
            self._theta_calls = (
                bound_call(_theta_terms, p.n, p.Ap, p.Ai, s.data, p.perm, v, self._xp, self._kx, self._hv),
                bound_call(_theta_rhs, self.rhs, self.Mv, self._hv, th),
                entry_point(_theta_mean, (th, v, v_new, self._vbar, s.q_step, h, q_new)))

    def _step_impl(self, state: State) -> State:
        s = self.system
        h = self.h
        clk = self._clock
        tm = self.timing
        t0 = clk()
        if self._calls is None or self._bound_for != (h, self.theta, self.vmax):
            self._bind()  # first step, or h, θ or the recovery speed changed
        mass_call, rhs_call, left_out_call = self._calls
        # the step works on the system's state buffers, to which its kernels are bound (state's arrays checked
        # and copied by NumPy here)
        q, v, lam = s.load_step(state)
        s.update_kinematics(q, v)
        data = s.data
        data[:] = s.base_data
        p0 = s.provider_time
        th = self.theta
        cK, cD = th * th * h * h, th * h
        s.eval_forces(state.t, v, cK, cD, data, state, h, th, linearized_step=True)
        t1 = clk()
        contact = s.provider_time - p0
        s.update_drivers(state.t)
        if self.constraint_stiffness:
            s.add_constraint_stiffness(lam, cK, data, v)
        s.eval_constraints(want_gamma=False)
        t2 = clk()
        s.fill_jacobian(data)
        mass_call()
        if rhs_call is None:
            secant = (s.driver_phi_at(state.t + h) - s.phi[s.driver_rows]) / h
            euler_rhs(self.Mv, s.f, s.Dv, h, s.phi, s.driver_rows, secant, self.vmax, self.rhs)
        else:
            rhs_call()
        # Jacobian terms left out of the matrix still act on the known velocity (exact linearisation; θ h² K_lo v
        # in the θ-method)
        left_out_call()
        if th != 1.0:
            theta_terms, theta_rhs, _ = self._theta_calls
            theta_terms()  # K [v; 0] from the assembled matrix
            theta_rhs()
        if self.prescribe is not None:
            self.prescribe(data, self.rhs)
        t3 = clk()
        try:
            self.solver.factor(data)
        except np.linalg.LinAlgError as err:
            raise StepFailed(f"t = {state.t:.6g} s: {err}") from None
        t4 = clk()
        self.solver.solve(self.rhs, self.x)
        if self._iterative:
            self.counters["linear_iterations"] = self.counters.get("linear_iterations", 0) + self.solver.last_iterations
        t5 = clk()
        v_new = np.empty((s.nb, 6))
        lam_new = np.empty(s.nc)
        q_new = np.empty(q.shape)
        acc = np.empty((s.nb, 6))
        viol = self._finish(self.x, v, q, h, s.phi, v_new, lam_new, q_new, acc)
        if th != 1.0:
            vbar = self._vbar  # only read by the providers' commit below
            self._theta_calls[2](th, v, v_new, vbar, q, h, q_new)
        t6 = clk()
        tm["forces"] += t1 - t0 - contact
        if "contact" in tm:
            tm["contact"] += contact
        else:
            tm["contact"] = contact
        tm["constraints"] += t2 - t1
        tm["assembly"] += t3 - t2
        tm["factorization"] += t4 - t3
        tm["solve"] += t5 - t4
        tm["update"] += t6 - t5
        self._count_linear_steps()
        self.last["pos_violation"] = float(viol) if s.nc else 0.0
        new = State(state.t + h, q_new, v_new, lam_new, acc, dict(state.extra))
        # providers' history (contact shear displacement) advances with the velocity that moved the positions
        if self.commit_step:
            s.commit(new if th == 1.0 else State(new.t, q_new, vbar, lam_new, acc, new.extra))
        return new


class ThetaLinearized(EulerImplicitLinearized):
    r"""The linearised θ-method: one linear solve per step, like ``euler-implicit-linearized``, with

    .. math::

        M (v^{l+1} - v^l) = h [θ f^{l+1} + (1-θ) f^l] + h J^T λ, \qquad
        q^{l+1} = q^l \oplus h \bar v, \quad \bar v = θ v^{l+1} + (1-θ) v^l,

    ``f^{l+1}`` linearised about the step's start (``f^l + K h \bar v + D (v^{l+1} - v^l)``), so the step
    matrix is ``M - θ^2 h^2 K - θ h D`` with the same pattern, and the constraint rows ask
    ``J \bar v = -\mathrm{clip}(C^l/h) - Δ_t C`` (the positions land on the constraints as in Euler).
    The right-hand side needs ``K v^l``: it is recovered from one product of the assembled matrix with
    ``[v^l; 0]`` (``H v^l = M v^l - θ^2 h^2 K v^l - θ h D v^l``), so no second matrix is stored.

    θ = 1 is ``euler-implicit-linearized`` (first order, strongly damped); θ = 1/2 the linearised trapezoidal
    rule (second order, no numerical damping: contact and joint modes faster than 1/h ring); in between
    the error constant of the first-order term is proportional to θ - 1/2 and modes far above 1/h are damped
    by the factor (1-θ)/θ per step. The contact shear history advances with ``\bar v`` and the shear spring
    looks ahead by θh (``ForceContext.hist_weight``), so its force is the θ-mean of the step's two ends.

    Options
    -------
    theta : float
        θ in [1/2, 1] (default 1/2: second order; raise it towards 1 if stiff modes ring).
    Other options as :class:`EulerImplicitLinearized`.
    """

    name = "theta-linearized"

    def __init__(self, system, step, theta=0.5, **options):
        try:
            th = float(theta)
        except (TypeError, ValueError):
            raise ValueError(f"integrator {self.name!r}: theta must be a number in [0.5, 1], got {theta!r}") from None
        if not 0.5 <= th <= 1.0:
            raise ValueError(f"integrator {self.name!r}: theta must be in [0.5, 1], got {theta!r}")
        super().__init__(system, step, **options)
        self.theta = th
        self.options["theta"] = th
        n = system.pattern.n
        self._xp, self._kx, self._hv = np.zeros(n), np.zeros(n), np.zeros(n)  # K [v; 0] and its permuted copies
        self._vbar = np.zeros((system.nb, 6))
