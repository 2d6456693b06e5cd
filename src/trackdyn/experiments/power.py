"""Power audit: the energy balance of a run, every term from its own law, summed over every step.

Over a stretch of a run (from ``start`` to the end), the work put in at the
sprockets must reappear as

``W_in = ΔKE + ΔPE + ΔV + D``

with ``ΔKE``, ``ΔPE`` the change of kinetic and gravitational energy, ``ΔV``
the change of energy stored in elastic elements (the spring parts of TSDAs and
RSDAs: torsion bars, shoe bending springs, tensioner; the contacts' normal
elasticity and shear springs) and ``D`` the work dissipated (the damping parts
of TSDAs and RSDAs: dampers, bending damping; each contact class's normal
damping and friction). Every term comes from its element's law
(:mod:`._power_kernels`), never from a difference of the others; what is left,
the residual, is the integrator's own (numerical) dissipation.

How each term is taken. A step of ``euler-implicit-linearized`` evaluates
every force once, at its start (positions ``q``, velocities ``v``), and
applies it linearized to the new velocities ``v⁺`` with which it moves the
positions (``q⁺ = q ⊕ h v⁺``); each step's work is therefore taken at ``q``
with ``v⁺``, and summed over every step (exact per step, not a sampled
integral):

- sprocket work ``W_in = Σ h Σ_sides τ̃ ω⁺``: ``τ̃ = τ + ∂τ/∂ω (ω⁺ - ω)`` the
  torque the drivetrain applied in the step (map, brake or servo, and its
  Jacobian; :class:`~trackdyn.powertrain.Drivetrain`,
  ``left.sprocket.torque``), ``ω⁺`` the sprocket's angular velocity *relative
  to the chassis* about the chassis's y axis (``left.sprocket.speed``): the
  torque acts on the sprocket and reacts on the chassis, so ``τ ω`` is its
  power;
- dissipation: TSDA/RSDA ``(c ẋ⁺ + F_d(ẋ⁺)) ẋ⁺`` (``ẋ⁺`` the element's rate
  at ``v⁺``); contact normal damping ``c δ̇⁺²`` (``c = ∂F_n/∂δ̇`` of the law
  at the step's end penetration, ``δ + h δ̇⁺``, to first order; the elastic
  energy released while the law is clamped at zero), friction ``-F_t · v_t⁺``
  of the tangential law at ``v⁺`` with the step's history and Coulomb limit
  (:func:`._power_kernels.contact_terms`);
- stored energies as state functions at the start and the end: ``KE``,
  ``PE``, ``½ k (x - x0)² - actuation x + ∫ table_s``, contact ``∫₀^δ F_el``,
  shear ``½ k_t |P H|²``.

The integrator's share is measured beside the balance, per step, from what
the step applied (``M (v⁺ - v) = h f̃ - h Jᵀλ⁺`` times ``v⁺``, with ``f̃`` the
force the linearized step applied: the force at its start plus its Jacobians,
as far as the step matrix holds them, times the step's motion):

- ``kinetic (½ΔvᵀMΔv)``: the kinetic energy implicit Euler removes;
- ``constraint forces``: the energy the constraint forces take,
  ``h λ⁺ · J v⁺ - h² v⁺ᵀ K_λ v⁺`` (the drift correction ``J v⁺ = -C/h`` and
  the joints' geometric stiffness; zero for exact joints);
- ``gyroscopic (explicit)``: what the explicit gyroscopic torque takes;
- ``force elements (applied - law)``, ``contact ... (applied - law)``: the
  work the elements and contacts drew from the bodies as the steps applied
  their forces (:func:`._power_kernels.applied_work`,
  :func:`._power_kernels.contact_applied_work`) less what their laws stored
  and dissipated: implicit Euler's potential-side dissipation
  (``½ Δxᵀ K Δx``), the semi-explicit coupling of "diagonal" families, the
  energy of a contact found already penetrated.

With them the discrete energy theorem closes: ``unexplained`` (the residual
less the integrator's share) is round-off and the joints' geometric-stiffness
coupling that the step matrix leaves out (about 1 J in 300 kJ on the M113).
The residual itself is the independent check: it must be positive and vanish
with the step (first order).

Example
-------
>>> audit = power_audit(prep, start=1.0)                 # doctest: +SKIP
>>> prep.sim.run(3.0)                                   # doctest: +SKIP
>>> bal = audit.balance()                               # doctest: +SKIP
>>> bal.residual / bal.input_work                       # doctest: +SKIP
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field

import numpy as np

from ..assembly.outputs import ShoeTensions
from ..contact.system import ContactSystem
from ..formulations.absolute import AbsoluteSystem
from ..mbs.forces import RSDABlock, TSDABlock
from ..mbs.markers import MarkerOutputs
from ..mbs import _kernels as MK
from ..powertrain import SERVO_GAIN
from . import _power_kernels as PK

__all__ = ["PowerAudit", "PowerBalance", "power_audit"]

OUTPUT_ONLY = (ShoeTensions, MarkerOutputs)  # providers that add no force
INTEGRATORS = ("euler-implicit-linearized",)  # one force evaluation per step, at its start; v⁺ in commit


@dataclass
class PowerBalance:
    """The terms of an energy balance, J (see :mod:`trackdyn.experiments.power`).

    ``residual = input_work - kinetic - potential - Σ stored - Σ dissipated``;
    ``integrator`` holds the integrator's measured share (not in the residual's
    formula); ``unexplained = residual - Σ integrator``.
    """

    t_start: float
    t_end: float
    step: float
    steps: int
    input_work: float
    input_by_sprocket: dict
    kinetic: float
    potential: float
    stored: dict = field(default_factory=dict)
    dissipated: dict = field(default_factory=dict)
    integrator: dict = field(default_factory=dict)

    @property
    def residual(self) -> float:
        return (self.input_work - self.kinetic - self.potential - sum(self.stored.values())
                - sum(self.dissipated.values()))

    @property
    def unexplained(self) -> float:
        return self.residual - sum(self.integrator.values())

    def to_dict(self) -> dict:
        d = asdict(self)
        w = self.input_work
        d.update(residual=self.residual, unexplained=self.unexplained,
                 residual_rel=self.residual / w if w else float("nan"),
                 unexplained_rel=self.unexplained / w if w else float("nan"))
        return d


def power_audit(prep, start: float = 0.0) -> "PowerAudit":
    """The :class:`PowerAudit` of a prepared scenario (:func:`trackdyn.sim.run.prepare`), attached from
    ``start`` (s): run ``prep.sim``, then call :meth:`PowerAudit.balance`."""
    return PowerAudit(prep.sim, contact=prep.contact, drivetrain=prep.drivetrain, start=start).attach()


def _group(name: str) -> str:
    """An element's group: its name without indices and side (``left.shoe[3].bending`` -> ``shoe.bending``)."""
    g = re.sub(r"\[\d+\]", "", name or "unnamed")
    for side in ("left.", "right."):
        if g.startswith(side):
            return g[len(side):]
    return g


class PowerAudit:
    """Accumulates the energy balance of a run, every step (an output-only force provider).

    Appended last to the system's providers (:meth:`attach`, or :func:`power_audit` for a prepared
    scenario), so that at each step's force evaluation the elements, the contacts and the drivetrain hold
    the step's values; ``commit`` adds the step's terms once it is accepted, :meth:`balance` returns them.

    Parameters
    ----------
    sim : Simulation
        Its system must be an :class:`~trackdyn.formulations.absolute.AbsoluteSystem` stepped by
        ``euler-implicit-linearized``; force elements TSDA (without user callables) and RSDA; providers a
        :class:`~trackdyn.contact.system.ContactSystem`, a :class:`~trackdyn.powertrain.Drivetrain` and
        output-only ones. Anything else is refused (its work would be unaccounted).
    contact, drivetrain : optional
        The run's contact system and drivetrain (those of ``sim``'s system).
    start : float
        Time (s) from which the balance is taken.
    """

    name = "power-audit"

    def __init__(self, sim, contact=None, drivetrain=None, start: float = 0.0):
        reason = self.unsupported(sim, contact, drivetrain)
        if reason:
            raise ValueError(f"PowerAudit: {reason}")
        system = sim.system
        self.blocks = []
        for blk in system.blocks:
            if isinstance(blk, TSDABlock):
                self.blocks.append((blk, blk.l0, blk.f_act, "length"))
            else:
                self.blocks.append((blk, blk.theta0, blk.t_act, "angle"))
        self.sim, self.system, self.contact, self.drivetrain = sim, system, contact, drivetrain
        self.start = float(start)
        self.elem_names = [n for blk, *_ in self.blocks for n in blk.names]
        n_el = len(self.elem_names)
        self._p_el = np.zeros(n_el)
        self._rate = np.zeros(n_el)
        self._w_el = np.zeros(n_el)
        self._acc_work_el = np.zeros(n_el)  # work the elements did on the bodies, as the steps applied them
        self._v1x = np.zeros((system.nb + 1, 6))  # the step's new velocities and the ground's (at rest)
        self._vel_w, self._omega_w = np.zeros((system.nb + 1, 3)), np.zeros((system.nb + 1, 3))
        self._gamma, self._Jw = np.zeros((3, system.nc)), np.zeros((system.nc, 12))
        self._t3 = np.zeros(3)
        self._u_el = np.zeros(n_el)
        self._acc_el = np.zeros(n_el)
        if contact is not None:
            fams = contact.shape_families()
            ns = len(fams)
            labels, table = {}, np.zeros((ns, ns + 1), np.int64)
            for i in range(ns):
                for j in range(ns + 1):
                    lab = "/".join(sorted((fams[i], fams[j] if j < ns else "terrain")))
                    table[i, j] = labels.setdefault(lab, len(labels))
            self.contact_classes = list(labels)
            self._shape_class = table
        else:
            self.contact_classes, self._shape_class = [], np.zeros((0, 1), np.int64)
        nc = len(self.contact_classes)
        self._c = {k: np.zeros(nc) for k in ("p_damp", "p_tan", "u_norm", "u_shear")}
        self._acc_damp, self._acc_tan = np.zeros(nc), np.zeros(nc)
        self._w_c, self._acc_work_c = np.zeros(nc), np.zeros(nc)  # the contacts' work, as the steps applied it
        self._f_scratch = np.zeros((system.nb, 6))
        self._no_key, self._no_disp = np.zeros((0, 2), np.int64), np.zeros((0, 3))
        n_sp = len(drivetrain.sprockets) if drivetrain is not None else 0
        self._acc_in = np.zeros(n_sp)
        self._p_in = np.zeros(n_sp)
        self._staged = None
        self._first = None
        self.steps = 0
        self.t_last = None
        self.integrator_terms = {"kinetic (½ΔvᵀMΔv)": 0.0, "constraint forces": 0.0, "gyroscopic (explicit)": 0.0}
        self._joint_stiffness = bool(getattr(sim.integrator, "constraint_stiffness", False))

    @staticmethod
    def unsupported(sim, contact=None, drivetrain=None) -> str | None:
        """Why a run cannot be audited (its work would be unaccounted), or None."""
        system = sim.system
        if not isinstance(system, AbsoluteSystem):
            return f"needs a system in absolute coordinates, got {type(system).__name__}"
        if contact is not None and not isinstance(contact, ContactSystem):
            return (f"contact provider {type(contact).__name__}: its forces do not expose their dissipation "
                    "(the massless track's damping, friction and irregularities)")
        for prov in system.providers:
            if not (prov is contact or prov is drivetrain or isinstance(prov, (PowerAudit, *OUTPUT_ONLY))):
                return f"force provider {prov.name!r} ({type(prov).__name__}) is not accounted"
        for blk in system.blocks:
            if not (isinstance(blk, TSDABlock) and not blk.callables or isinstance(blk, RSDABlock)):
                return (f"force elements {type(blk).__name__} ({', '.join(map(str, blk.names[:3]))}...) "
                        "are not accounted")
        name = sim.integrator.settings().get("integrator")
        if name not in INTEGRATORS:
            return f"integrator {name!r}: the per-step terms assume {', '.join(INTEGRATORS)}"
        return None

    def attach(self) -> "PowerAudit":
        """Append the audit to its system's providers (last: it reads what the others computed); returns it."""
        provs = self.system.providers
        if self not in provs:
            provs.append(self)
        return self

    # -- provider protocol (adds no force)
    def coupling_pairs(self):
        return []

    def bind(self, system):
        pass

    def initial_extra(self):
        return {}

    def series(self):
        return {}

    def accumulate(self, ctx):
        self._staged = None
        st = ctx.state
        if ctx.data is None or st is None or st.t < self.start - 0.5 * ctx.h:
            return
        if self._first is None:
            self._first = self._energies(st)
        # the step's start: its velocities and the drive's torque and speed (the drivetrain ran before us)
        dt = self.drivetrain
        drive = (dt.out[:, 0].copy(), dt.out[:, 1].copy()) if dt is not None else None
        cs = self.contact
        hist = ((st.extra.get(f"{cs.name}.key", self._no_key), st.extra.get(f"{cs.name}.disp", self._no_disp))
                if cs is not None else None)
        self._staged = (ctx.h, st.v.copy(), st.lam.copy(), drive, hist)

    def commit(self, state):
        """Add the accepted step's terms: the step's new velocities at its start's positions (the kinematics,
        the element buffers and the contact records still hold the step's evaluation)."""
        if self._staged is None:
            return
        h, v0, lam0, drive, hist = self._staged
        self._staged = None
        s = self.system
        kin = s.kin
        v1x = self._v1x
        v1x[:-1] = state.v
        if drive is not None:
            dt = self.drivetrain
            servo = SERVO_GAIN if getattr(dt.driver, "kinematic", False) else 0.0
            PK.drive_power(dt.chassis, dt.sprockets, kin.R, v1x, drive[0], drive[1], dt.throttle, dt.braking,
                           dt.brake_torque, dt.map_w, dt.map_t, dt.map_scale, servo, self._p_in)
            self._acc_in += h * self._p_in
        off = 0
        for blk, *_ in self.blocks:
            sl = slice(off, off + blk.n)
            rate = self._rate[sl]
            if isinstance(blk, TSDABlock):
                PK.tsda_rates(blk.body, blk.s, kin.pos, kin.R, v1x, rate)
            else:
                PK.rsda_rates(blk.body, blk.zi, kin.R, v1x, rate)
            PK.damping_power(blk.c, blk.tab_x, blk.tab_y, blk.damper_tab, rate, self._p_el[sl])
            PK.applied_work(blk.body, blk.Q, blk.Kx, blk.Kv, blk.slot, h, v0, v1x, self._w_el[sl])
            off += blk.n
        self._acc_el += h * self._p_el
        self._acc_work_el += self._w_el
        it = self.integrator_terms
        cs = self.contact
        if cs is not None:
            self._contact_terms(v1x, h)
            self._acc_damp += h * self._c["p_damp"]
            self._acc_tan += h * self._c["p_tan"]
            rec, out, n = cs.records()
            PK.contact_applied_work(n, rec, out, cs.pair_law, cs.pair_par, cs.mass, hist[0], hist[1], kin.pos,
                                    kin.R, kin.vel, kin.omega_w, v0, v1x, float(h), cs.implicit, self._shape_class,
                                    self._f_scratch, self._w_c)
            self._acc_work_c += self._w_c
        t = self._t3
        PK.step_terms(s.mass, s.inertia, v0, v1x, s.J, s.row_body, state.lam, t)
        it["kinetic (½ΔvᵀMΔv)"] += float(t[0])
        it["gyroscopic (explicit)"] -= h * float(t[1])
        if s.nc:
            # the step's constraint impulse -Jᵀ(hλ⁺) on v⁺ (J at the step's start, as solved; J v⁺ is the drift
            # correction -C/h, zero for exact joints) and the change of the constraint force over the step that
            # the step matrix carries, K_λ h v⁺ (the joints' geometric stiffness at the start's multipliers):
            # v⁺ᵀ K_λ v⁺ = λ · γ(q, v⁺), γ the acceleration right-hand side (J v̇ = γ)
            taken = h * float(t[2])
            if self._joint_stiffness:
                PK.world_velocities(kin.R, v1x, self._vel_w, self._omega_w)
                g = self._gamma
                MK.constraint_eval(s.row_type, s.row_body, s.row_a, s.row_s, s.row_c, s.row_u, s.row_f, kin.pos,
                                   kin.R, self._vel_w, self._omega_w, True, g[0], self._Jw, g[1], g[2])
                taken -= h * h * float(lam0 @ g[2])
            it["constraint forces"] += taken
        self.steps += 1
        self.t_last = state.t

    def _contact_terms(self, v1x, h):
        cs = self.contact
        rec, out, n = cs.records()
        c = self._c
        kin = self.system.kin
        PK.contact_terms(n, rec.body, rec.pair, rec.reff, rec.weight, rec.area, rec.wtype, rec.ra, rec.key,
                         out.delta, out.normal, out.point, out.vrel, out.fn, out.s_d0, out.s_kt, out.s_cap, out.s_hist,
                         cs.pair_law, cs.pair_par, cs.mass, self._shape_class, kin.pos, kin.R, v1x, float(h),
                         PK.GL_U, PK.GL_W, c["p_damp"], c["p_tan"], c["u_norm"], c["u_shear"])

    def _energies(self, state) -> dict:
        """Kinetic, gravitational and elastic energies at ``state``, from the evaluation just made there."""
        s = self.system
        off = 0
        for blk, x0, act, kind in self.blocks:
            out = self._u_el[off:off + blk.n]
            PK.spring_energy(blk.k, x0, act, blk.tab_x, blk.tab_y, blk.spring_tab, getattr(blk, kind), out)
            off += blk.n
        e = {"t": state.t, "kinetic": s.kinetic_energy(state.v), "potential": s.potential_energy(state.q),
             "elements": self._u_el.copy()}
        if self.contact is not None:
            self._contact_terms(self._v1x, 0.0)  # energies only (the rates are not used)
            e["contact_normal"] = self._c["u_norm"].copy()
            e["contact_shear"] = self._c["u_shear"].copy()
        return e

    def balance(self, state=None) -> PowerBalance:
        """The balance from ``start`` to ``state`` (default: the simulation's current state, the last step's)."""
        if self._first is None:
            raise ValueError(f"PowerAudit.balance(): no step counted (start = {self.start} s)")
        state = self.sim.state if state is None else state
        if self.t_last is None or abs(state.t - self.t_last) > 1e-9:
            raise ValueError(f"PowerAudit.balance(): state at t = {state.t} is not the last step's ({self.t_last})")
        self.system.evaluate_outputs(state)
        last = self._energies(state)
        first = self._first
        stored, dissipated = {}, {}
        groups = [_group(n) for n in self.elem_names]
        d_el = last["elements"] - first["elements"]
        for g, dv, dd in zip(groups, d_el, self._acc_el):
            stored[g] = stored.get(g, 0.0) + float(dv)
            dissipated[g] = dissipated.get(g, 0.0) + float(dd)
        integrator = dict(self.integrator_terms)
        # what the steps took in the elements beyond their laws: the work the elements' applied forces drew
        # from the bodies less the energy their laws stored and dissipated (implicit Euler's potential-side
        # dissipation, ½ Δxᵀ K Δx, and the semi-explicit coupling of "diagonal" elements)
        integrator["force elements (applied - law)"] = float(-np.sum(self._acc_work_el) - np.sum(d_el)
                                                              - np.sum(self._acc_el))
        if self.contact is not None:
            # the same for the contacts (½ Δxᵀ K Δx of their springs, the damping and friction a stiff
            # contact's linearization applies beyond the law at the step's velocities, the semi-explicit
            # coupling of "diagonal" families, a contact found already penetrated)
            d_c = (last["contact_normal"] - first["contact_normal"] + last["contact_shear"] - first["contact_shear"])
            n_c = -self._acc_work_c - d_c - self._acc_damp - self._acc_tan
            for k, lab in enumerate(self.contact_classes):
                if n_c[k] != 0.0:
                    integrator[f"contact {lab} (applied - law)"] = float(n_c[k])
        for k, lab in enumerate(self.contact_classes):
            stored[f"contact {lab}"] = float(last["contact_normal"][k] - first["contact_normal"][k]
                                             + last["contact_shear"][k] - first["contact_shear"][k])
            dissipated[f"contact {lab} normal damping"] = float(self._acc_damp[k])
            dissipated[f"contact {lab} friction"] = float(self._acc_tan[k])
        # terms that are zero for this model (no element of a group carries a spring or a damper) say nothing
        stored = {k: v for k, v in stored.items() if v != 0.0}
        dissipated = {k: v for k, v in dissipated.items() if v != 0.0}
        names = self.system.body_names
        by_sprocket = ({names[b]: float(w) for b, w in zip(self.drivetrain.sprockets, self._acc_in)}
                       if self.drivetrain is not None else {})
        return PowerBalance(
            t_start=float(first["t"]), t_end=float(state.t), step=float(self.sim.h), steps=self.steps,
            input_work=float(np.sum(self._acc_in)), input_by_sprocket=by_sprocket,
            kinetic=float(last["kinetic"] - first["kinetic"]), potential=float(last["potential"] - first["potential"]),
            stored=stored, dissipated=dissipated, integrator=integrator)
