r"""Velocity-level time stepping with non-smooth contact (Anitescu/Tasora; Chrono's NSC stepper).

One step, with the linearised implicit Euler of :mod:`trackdyn.integrators.euler` for everything that is
not contact and the contact impulses ``γ`` of :class:`~trackdyn.contact.nsc.NscContact`:

.. math::

    \begin{bmatrix} H & J^T \\ J & -\delta I \end{bmatrix}
    \begin{bmatrix} v^{l+1} \\ -h\lambda \end{bmatrix} =
    \begin{bmatrix} M v^l + h f^l - h D v^l + D_c^T \gamma \\ -\mathrm{clip}(C/h) - \Delta_t C \end{bmatrix},
    \qquad q^{l+1} = q^l \oplus h v^{l+1},

``H = M - h^2 K - h D``, and the cone complementarity problem on γ with the contact velocities
``u = D_c v^{l+1} + b = N γ + r``:

- ``N = D_c G D_c^T``, ``G`` the velocity block of the saddle-point matrix's inverse: the joints stay
  exact (they are eliminated by the same sparse factorisation as in the smooth steppers) and the
  iterative solvers work on the contact unknowns only;
- ``r = D_c v_free + b``, ``v_free`` the step without contact, ``b_n = max(φ/h, -v_rec)`` (a gap closes
  within the step, a penetration is recovered at most at the recovery speed) or Newton's impact bias
  ``e u_n^-`` (:func:`trackdyn.contact._nsc_kernels.stabilisation`).

Given γ, one more solve with ``[D_c^T γ; 0]`` gives the velocity and multiplier increments. ``N`` is
formed densely (3m solves) for PSOR and when ``delassus="dense"``; otherwise each product ``N x`` is one
solve (``delassus="operator"``). ``"auto"``: dense up to 150 contacts, or for PSOR.

Options
-------
contact_solver : {"apgd", "bb", "psor", "newton"}
    CCP solver: the first-order ones of :mod:`trackdyn.contact.nsc_solvers`, or ``"newton"``, Newton's method
    on the step's primal in the velocities with proximal rounds to the same residual
    (:mod:`trackdyn.integrators._nsc_newton`; it needs ``solver="direct"``).
newton_regularization : float
    The Newton solver's proximal weight relative to each contact's inverse-mass scale (default 1e-3; it sets
    the cost, not the solution: docs/contact-nsc.md, "The Newton solver").
contact_tolerance : float
    Stop when the CCP residual (m/s) is at most this (default 1e-9).
contact_max_iterations : int
    Iteration cap of the CCP solver (default 1000); a step that hits it is kept and counted in
    ``counters["contact_unconverged"]``.
warm_start : bool
    Start from the previous step's impulses of the same contacts (default True).
psor_omega : float
    PSOR relaxation (default 1.0).
friction : {"coulomb", "anitescu"}
    ``"coulomb"`` (default): Coulomb's law by de Saxcé's fixed point, the CCP re-solved with the normal bias
    shifted by ``μ |u_t|`` until the slip estimate settles; ``"anitescu"``: the convex relaxation alone
    (a sliding contact then separates at ``μ |u_t|``). Rolling and spinning blocks' radii ``c_r γ_n``, ``c_s γ_n`` are settled
    in the same loop.
friction_iterations : int
    Cap of that fixed point's rounds (default 50); a step that hits it is kept and counted in
    ``counters["friction_unconverged"]`` (Painlevé's paradox does, docs/contact-nsc.md).
friction_forcing : float
    In [0, 1) (default 0.1): from the second round on, a round is solved only to ``friction_forcing`` times the
    previous round's slip change (never looser than the round before, never tighter than
    ``contact_tolerance``); the fixed point stops on a round solved to ``contact_tolerance``. 0: every round
    to ``contact_tolerance``.
warm_slip : bool
    With ``warm_start``, the fixed point's first slip estimate of a contact that stuck at the previous step's
    end (slip speed within 10 ``contact_tolerance``) is that slip speed (default True); otherwise ``|u_t|`` of
    the warm-started impulses.
delassus : {"auto", "dense", "operator"}
    How N is applied (above).
contact_compliance : float
    Compliance ``c`` (m/N) of every contact's normal, default 0 (rigid). The CCP is solved on ``N + (c/h²)``
    on the friction cones' normal rows: a contact at rest gives by ``c F``, as Chrono's NSC normal
    compliance. (Not on the tangential rows: with no position bias there it would be a creep
    ``u_t = -(c/h) F_t``.)
compliance_on : {"all", "terrain"}
    Which contacts get ``contact_compliance``: every contact (default) or only those with the terrain
    (the bodies' contacts with each other, a sprocket's teeth on the track's pins, stay rigid). It makes the CCP strongly convex: a jammed configuration (a track wedged between its
    sprocket and a step's edge) still has a solution, and it lifts N's smallest eigenvalues (the slow,
    collective modes that set APGD's iterations) to at least ``c/h²``.
solver, max_recovery_speed : as ``euler-implicit-linearized`` (the joints' saddle-point solver and
    their stabilisation cap).

Diagnostics: ``last`` adds ``contacts`` (blocks), ``contact_iterations``, ``contact_residual``,
``complementarity_gap``, ``friction_iterations``; ``counters`` add ``contact_iterations`` (sum; Newton iterations for ``"newton"``,
which also counts ``newton_iterations``, ``proximal_rounds`` and ``factorizations``),
``contact_products`` (products with N: APGD's backtracking adds some; PSOR: sweeps), ``contact_unconverged``
(steps whose last contact solve ended above ``contact_tolerance``), ``friction_iterations``,
``friction_unconverged``;
``timing`` adds ``contact_detection`` and ``contact_solve``.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from ..contact import _nsc_kernels as NK
from ..contact.nsc import NscContact
from ..contact.nsc_solvers import _NO_N, _NO_WORK, CCP_SOLVERS, CCPInfo, solve_ccp
from ..linsolve import DirectSolver, make_solver
from ..mbs.model import State
from ._kernels import euler_rhs, mass_times
from ._nsc_newton import PrimalNewton
from .base import Integrator, StepFailed
from .euler import _finish_step

#: the contact solvers of ``nsc-euler``: the first-order CCP solvers and the primal Newton solver
CONTACT_SOLVERS = (*CCP_SOLVERS, "newton")

__all__ = ["NscEuler"]


@nb.njit(cache=True, _nrt=False)
def _add_left_out(rhs, hh, Kxv):
    for b in range(Kxv.shape[0]):
        for k in range(6):
            rhs[6 * b + k] += hh * Kxv[b, k]


class NscEuler(Integrator):
    """Linearised implicit Euler with non-smooth contact (see the module docstring)."""

    name = "nsc-euler"

    def __init__(self, system, step, solver="direct", max_recovery_speed=1.0, contact_solver="apgd",
                 contact_tolerance=1e-9, contact_max_iterations=1000, warm_start=True, psor_omega=1.0,
                 delassus="auto", friction="coulomb", friction_iterations=50, friction_forcing=0.1,
                 warm_slip=True, contact_compliance=0.0, compliance_on="all", newton_regularization=1e-3,
                 **solver_options):
        super().__init__(system, step, solver=solver, max_recovery_speed=max_recovery_speed,
                         contact_solver=contact_solver, contact_tolerance=contact_tolerance,
                         contact_max_iterations=contact_max_iterations, warm_start=warm_start,
                         psor_omega=psor_omega, delassus=delassus, friction=friction,
                         friction_iterations=friction_iterations, friction_forcing=friction_forcing,
                         warm_slip=warm_slip, contact_compliance=contact_compliance, compliance_on=compliance_on,
                         newton_regularization=newton_regularization)
        if compliance_on not in ("all", "terrain"):
            raise ValueError(f"integrator {self.name!r}: compliance_on must be 'all' or 'terrain', got {compliance_on!r}")
        if not (isinstance(contact_compliance, (int, float)) and not isinstance(contact_compliance, bool)
                and np.isfinite(contact_compliance) and contact_compliance >= 0):
            raise ValueError(f"integrator {self.name!r}: contact_compliance must be a non-negative number (m/N), "
                             f"got {contact_compliance!r}")
        if friction not in ("coulomb", "anitescu"):
            raise ValueError(f"integrator {self.name!r}: friction must be 'coulomb' or 'anitescu', got {friction!r}")
        if not (isinstance(friction_iterations, (int, np.integer)) and friction_iterations >= 1):
            raise ValueError(f"integrator {self.name!r}: friction_iterations must be a positive integer, "
                             f"got {friction_iterations!r}")
        if not (isinstance(friction_forcing, (int, float)) and not isinstance(friction_forcing, bool)
                and 0.0 <= friction_forcing < 1.0):
            raise ValueError(f"integrator {self.name!r}: friction_forcing must be in [0, 1), got {friction_forcing!r}")
        if contact_solver not in CONTACT_SOLVERS:
            raise ValueError(f"integrator {self.name!r}: contact_solver must be one of {CONTACT_SOLVERS}, "
                             f"got {contact_solver!r}")
        if not (isinstance(newton_regularization, (int, float)) and not isinstance(newton_regularization, bool)
                and np.isfinite(newton_regularization) and newton_regularization > 0):
            raise ValueError(f"integrator {self.name!r}: newton_regularization must be a positive number, "
                             f"got {newton_regularization!r}")
        if contact_solver == "newton" and solver != "direct":
            raise ValueError(f"integrator {self.name!r}: contact_solver = 'newton' factorises the step matrix "
                             f"with the contacts' Hessian: it needs solver = 'direct', got {solver!r}")
        if delassus not in ("auto", "dense", "operator"):
            raise ValueError(f"integrator {self.name!r}: delassus must be 'auto', 'dense' or 'operator', "
                             f"got {delassus!r}")
        if contact_solver == "psor" and delassus == "operator":
            raise ValueError(f"integrator {self.name!r}: delassus = 'operator' with contact_solver = 'psor': "
                             f"PSOR needs the dense Delassus matrix")
        for what, val in (("contact_tolerance", contact_tolerance), ("max_recovery_speed", max_recovery_speed),
                          ("psor_omega", psor_omega)):
            if not (isinstance(val, (int, float)) and np.isfinite(val) and val > 0):
                raise ValueError(f"integrator {self.name!r}: {what} must be positive, got {val!r}")
        if not (isinstance(contact_max_iterations, (int, np.integer)) and contact_max_iterations >= 1):
            raise ValueError(f"integrator {self.name!r}: contact_max_iterations must be a positive integer, "
                             f"got {contact_max_iterations!r}")
        found = [p for p in getattr(system, "providers", ()) if isinstance(p, NscContact)]
        if len(found) != 1:
            raise ValueError(f"integrator {self.name!r}: needs exactly one NscContact among the simulation's "
                             f"providers, got {len(found)}")
        self.contact = found[0]
        self.contact.stepper = self
        self.method = contact_solver
        self.tol = float(contact_tolerance)
        self.max_iter = int(contact_max_iterations)
        self.warm = bool(warm_start)
        self.omega = float(psor_omega)
        self.delassus = delassus
        self.friction = friction
        self.friction_iterations = int(friction_iterations)
        self.forcing = float(friction_forcing)
        self.warm_slip = bool(warm_slip)
        self.compliance = float(contact_compliance)
        self.compliance_on = compliance_on
        self.vmax = float(max_recovery_speed)
        self.newton_regularization = float(newton_regularization)
        self._newton = None  # the primal Newton solver, built at its first step (it needs the bound contact)
        if solver == "direct":
            solver_options.setdefault("refine", 0)
        self.solver = make_solver(solver, system.pattern, **solver_options)
        nb_, nc = system.nb, system.nc
        self.nd = 6 * nb_
        self.rhs = np.zeros(self.nd + nc)
        self.x = np.zeros(self.nd + nc)
        self.x_c = np.zeros(self.nd + nc)  # the contact impulses' part of the solution
        self.crhs = np.zeros(self.nd + nc)
        self.Mv = np.zeros((nb_, 6))
        self._no_secant = np.zeros(0)
        self.counters["contact_iterations"] = 0
        self.counters["contact_products"] = 0
        self.counters["contact_unconverged"] = 0
        self.counters["friction_iterations"] = 0
        self.counters["friction_unconverged"] = 0
        self.timing["contact_detection"] = 0.0
        self.timing["contact_solve"] = 0.0
        self.last.update(contacts=0, contact_iterations=0, contact_residual=0.0, complementarity_gap=0.0,
                         friction_iterations=0)
        self._bound = False
        self._fac = self._factor_args()
        self._work = np.zeros(self.solver.n if self._fac is not None else 0)

    # ------------------------------------------------------------------ helpers
    def _solve(self):
        """x_c = K⁻¹ crhs: every solve of the step uses this one pair of arrays (the direct solver keeps its
        compiled call bound to the arrays it last saw)."""
        self.solver.solve(self.crhs, self.x_c)

    def _factor_args(self):
        """The direct solver's factor arrays, as :func:`~trackdyn.contact._nsc_kernels.delassus_apply` takes
        them (None for other solvers: N is then formed densely)."""
        sv = self.solver
        if not isinstance(sv, DirectSolver):
            return None
        sm = sv.sym
        iperm = np.empty(sv.n, np.int64)
        iperm[sv.pattern.perm] = np.arange(sv.n)
        return (iperm, sv.X, sv.Dg, sv.flag, sm.n_sn_u, sm.sn_w, sm.sn_nr, sm.sn_start, sm.sn_off, sm.e_ptr,
                sm.e_size, sm.e_gstart, sm.e_row)

    def _dense_N(self, m):
        cs = self.contact
        n3 = 3 * m
        N = np.empty((n3, n3))
        unit = np.zeros(n3)
        if self._fac is not None:
            NK.delassus_columns(m, cs.c_body, cs.c_D, self._fac, self._work, unit, N)
            return 0.5 * (N + N.T)
        col = np.empty(n3)
        for j in range(n3):
            self.crhs[:] = 0.0
            unit[j] = 1.0
            NK.scatter_Dt(j // 3, j // 3 + 1, cs.c_body, cs.c_D, NK.NO_PERM, unit, self.crhs)
            unit[j] = 0.0
            self._solve()
            NK.gather_D(m, cs.c_body, cs.c_D, NK.NO_PERM, self.x_c, col)
            N[:, j] = col
        return 0.5 * (N + N.T)

    #: Newton iterations of the first Coulomb round, whose slip bias moves inside Newton's loop; a step that
    #: has not settled by then goes on with rounds of a fixed bias (the first-order solvers' fixed point)
    NEWTON_MERGED_CAP = 60

    def _newton_solve(self, m, kind, mu, eta, r, reg, gamma, u, data, exact, tol, slip_mu=None, max_total=None):
        nw = self._newton
        c0 = dict(nw.counters)
        it, res, gap, prods = nw.solve(m, kind, mu, eta, r, reg, gamma, u, data, exact, tol, slip_mu=slip_mu,
                                       max_total=max_total)
        for k, val in nw.counters.items():
            self.counters[k] += val - c0[k]
        return CCPInfo(it, res, gap, res <= tol, prods)

    # ------------------------------------------------------------------ the step
    def _step_impl(self, state: State) -> State:
        s = self.system
        h = self.h
        clk = self._clock
        tm = self.timing
        t0 = clk()
        if not self._bound:
            s.bind_step(h * h, h, s.data)
            self._bound = True
        q, v, lam = s.load_step(state)
        s.update_kinematics(q, v)
        data = s.data
        data[:] = s.base_data
        p0 = s.provider_time
        s.eval_forces(state.t, v, h * h, h, data, state, h, 1.0)
        t1 = clk()
        contact_time = s.provider_time - p0
        s.update_drivers(state.t)
        s.add_constraint_stiffness(lam, h * h, data, v)
        s.eval_constraints(want_gamma=False)
        t2 = clk()
        s.fill_jacobian(data)
        mass_times(s.mass, s.inertia, v, self.Mv)
        secant = self._no_secant
        if len(s.driver_rows):
            secant = (s.driver_phi_at(state.t + h) - s.phi[s.driver_rows]) / h
        euler_rhs(self.Mv, s.f, s.Dv, h, s.phi, s.driver_rows, secant, self.vmax, self.rhs)
        _add_left_out(self.rhs, h * h, s.Kxv)
        t3 = clk()
        try:
            self.solver.factor(data)
        except np.linalg.LinAlgError as err:
            raise StepFailed(f"t = {state.t:.6g} s: {err}") from None
        t4 = clk()
        self.crhs[:] = self.rhs
        self._solve()  # the step without contact impulses
        self.x[:] = self.x_c
        t5 = clk()
        # ---- contact
        cs = self.contact
        m = cs.detect(s.kin, h)
        t6 = clk()
        it, res, gap = 0, 0.0, 0.0
        gamma = np.zeros(3 * m)
        slip = np.full(m, -1.0)  # the contacts' slip speeds |u_t| (m/s) at the step's end, kept for the next
        if m:
            n3 = 3 * m
            b = np.empty(n3)
            NK.stabilisation(m, cs.c_kind, cs.c_phi, cs.c_un, cs.c_e, h, cs.recovery_speed, cs.bounce_speed, b)
            r = np.empty(n3)
            NK.gather_D(m, cs.c_body, cs.c_D, NK.NO_PERM, self.x, r)
            r += b
            eta = np.empty(m)
            NK.block_scale(m, cs.c_body, cs.c_D, cs.mass, cs.inv_inertia, eta)
            last_slip = np.full(m, -1.0)
            if self.warm:
                cs.warm_start(state, gamma, last_slip)
            newton = self.method == "newton"
            dense = not newton and (self.delassus == "dense" or self.method == "psor" or self._fac is None
                                    or (self.delassus == "auto" and m <= 150))
            u = np.empty(n3)
            mu = cs.c_mu[:m]  # friction coefficients; the rolling blocks' disc radii, set below
            kind = cs.c_kind[:m]
            cone = kind == 0
            rolling = ~cone
            parent = cs.c_parent[:m]
            roll = cs.c_roll[:m]
            any_rolling = bool(rolling.any())
            # the contacts' compliance c (m/N): u_n + (c/h²) γ_n ≥ -φ/h, i.e. at rest a contact gives by c F; on
            # the normal rows only: on a tangential row, with no position bias, it would be a creep u_t = -(c/h) F_t
            # (at 1e-7 m/N the sprocket's pins crept over its teeth under full throttle and the sprocket spun free)
            reg = None
            if self.compliance > 0:
                reg = np.zeros(n3)
                where = cone if self.compliance_on == "all" else cone & np.any(cs.c_body[:m] < 0, axis=1)
                reg[0::3] = np.where(where, self.compliance / (h * h), 0.0)
            if newton:
                if self._newton is None:
                    self._newton = PrimalNewton(s, cs, regularization=self.newton_regularization)
                    self.counters.update(self._newton.counters)
                nd = self.nd

                def exact(g_, out_):
                    self.crhs[:] = 0.0
                    NK.scatter_Dt(0, m, cs.c_body, cs.c_D, NK.NO_PERM, g_, self.crhs)
                    self._solve()
                    out_[:] = self.x_c[:nd]
                N_times = lambda x_, o_: NK.delassus_reg_apply(m, cs.c_body, cs.c_D, _NO_N, self._fac, self._work,
                                                               _NO_WORK if reg is None else reg, x_, o_)
            elif dense:
                N = self._dense_N(m)
                if reg is not None:
                    N[np.diag_indices(n3)] += reg
                kw = {"N": N, "omega": self.omega}
                N_times = lambda x_, o_: np.dot(N, x_, out=o_)
            else:
                operator = (cs.c_body, cs.c_D, self._fac, self._work)
                kw = {"operator": operator, "reg": reg}
                N_times = lambda x_, o_: NK.delassus_reg_apply(m, cs.c_body, cs.c_D, _NO_N, self._fac, self._work,
                                                               _NO_WORK if reg is None else reg, x_, o_)
            slip = np.zeros(m)
            if (self.friction == "coulomb" or any_rolling) and self.warm:
                N_times(gamma, u)
                u += r
                slip = np.where(cone, np.sqrt(u[1::3] ** 2 + u[2::3] ** 2), 0.0)
                if self.warm_slip:
                    # a contact that stuck at the last step's end (slip within 10 x the tolerance) starts from that
                    # slip: |u_t| of the warm-started impulses would shift its normal bias by μ|u_t| and cost
                    # rounds to undo; a sliding one keeps the estimate that includes today's free velocity
                    stuck = cone & (last_slip >= 0.0) & (last_slip <= 10.0 * self.tol)
                    slip = np.where(stuck, last_slip, slip)
            if any_rolling:
                # rolling torque ≤ c_r γ_n: the disc's radius from the contact's normal impulse (fixed point)
                mu[rolling] = roll[rolling] * np.maximum(gamma[3 * parent[rolling]], 0.0)
            r_mod = r.copy()
            outer = 0
            fixed_point = self.friction == "coulomb" or any_rolling
            tol = self.tol
            while True:
                outer += 1
                if self.friction == "coulomb":
                    r_mod[0::3] = r[0::3] + np.where(cone, mu * slip, 0.0)
                if newton and self.friction == "coulomb" and outer == 1:
                    # de Saxcé's bias inside Newton's iterations (one loop); the round's check below then
                    # compares the slip speeds of the solution with those of its last bias
                    info = self._newton_solve(m, kind, mu, eta, r, reg, gamma, u, data, exact, tol,
                                              slip_mu=np.where(cone, mu, 0.0), max_total=self.NEWTON_MERGED_CAP)
                    slip = self._newton.last_slip
                elif newton:
                    info = self._newton_solve(m, kind, mu, eta, r_mod, reg, gamma, u, data, exact, tol)
                else:
                    info = solve_ccp(self.method, m, mu, eta, r_mod, gamma, u, tol=tol, max_iter=self.max_iter,
                                     kind=kind, **kw)
                it += info.iterations
                self.counters["contact_products"] += info.products
                accurate = info.residual <= self.tol
                change = 0.0
                if self.friction == "coulomb":
                    new_slip = np.where(cone, np.sqrt(u[1::3] ** 2 + u[2::3] ** 2), 0.0)
                    change = float(np.max(np.where(cone, mu * np.abs(new_slip - slip), 0.0)))
                    slip = new_slip
                if any_rolling:
                    radius = roll[rolling] * np.maximum(gamma[3 * parent[rolling]], 0.0)
                    # the radius's change as a velocity: times the block's inverse inertia scale
                    change = max(change, float(np.max(np.abs(radius - mu[rolling]) * eta[rolling])))
                    mu[rolling] = radius
                if not fixed_point or (change <= self.tol and accurate):
                    break
                if outer >= self.friction_iterations:
                    self.counters["friction_unconverged"] += 1
                    break
                # inexact fixed point (as an inexact Newton's forcing term): while the slip estimate still moves
                # by `change`, the next round is solved only to forcing x change, never looser than the round
                # before it (the first round: to the tolerance); it stops on a round solved to the tolerance
                tol = max(self.tol, min(tol if outer > 1 else np.inf, self.forcing * change))
            if not accurate:
                self.counters["contact_unconverged"] += 1
            res, gap = info.residual, info.gap
            slip = np.where(cone, np.sqrt(u[1::3] ** 2 + u[2::3] ** 2), 0.0)
            self.counters["friction_iterations"] += outer
            self.last["friction_iterations"] = outer
            # the impulses' velocity and multiplier increments
            self.crhs[:] = 0.0
            NK.scatter_Dt(0, m, cs.c_body, cs.c_D, NK.NO_PERM, gamma, self.crhs)
            self._solve()
            self.x += self.x_c
        t7 = clk()
        v_new = np.empty((s.nb, 6))
        lam_new = np.empty(s.nc)
        q_new = np.empty(q.shape)
        acc = np.empty((s.nb, 6))
        viol = _finish_step(self.x, v, q, h, s.phi, v_new, lam_new, q_new, acc)
        cs.stage(gamma, h, s.kin.pos, it, res, slip)
        t8 = clk()
        tm["forces"] += t1 - t0 - contact_time
        tm["contact"] += contact_time
        tm["constraints"] += t2 - t1
        tm["assembly"] += t3 - t2
        tm["factorization"] += t4 - t3
        tm["solve"] += t5 - t4
        tm["contact_detection"] += t6 - t5
        tm["contact_solve"] += t7 - t6
        tm["update"] += t8 - t7
        self._count_linear_steps()
        self.counters["contact_iterations"] += it
        self.last.update(pos_violation=float(viol) if s.nc else 0.0, contacts=m, contact_iterations=it,
                         contact_residual=res, complementarity_gap=gap)
        new = State(state.t + h, q_new, v_new, lam_new, acc, dict(state.extra))
        s.commit(new)
        return new
