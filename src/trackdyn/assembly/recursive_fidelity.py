"""The ``recursive`` fidelity (han-sander-mao): the links vehicle in relative joint coordinates with cut joints.

The vehicle is the ``links`` fidelity's (:func:`~trackdyn.assembly.builder.build_vehicle`: the same bodies,
joints, springs, contact shapes and drivetrain), written in relative joint coordinates by
:class:`~trackdyn.formulations.recursive_spatial.RecursiveSpatialSystem`: the chassis is a free base (6
coordinates), the suspension arms, wheels, idler carriers, sprockets and the seat hang from it as a tree; each
track loop is a chain of shoe pins from a floating shoe, closed by one cut pin (2 independent rows: the loop is
planar in its own plane). The forces -- the springs, the SMC contact of shoes, wheels and hull (explicit: no step
matrix), the drivetrain -- are evaluated on the absolute body states by the system's embedded absolute
formulation and projected on the joints (``Q = Bᵀ f``).

Integrators (``scenario.integrator``):

- ``recursive-rk4`` (default): classical RK4 on the joint coordinates, projected on the cut joints' closure
  after every step (:class:`~trackdyn.integrators.recursive.RecursiveRK4`), at :data:`RECURSIVE_STEP`;
- ``recursive-abm``: han-sander-mao's variable-step Adams-Bashforth-Moulton (rtol 1e-9 by default here,
  :data:`ABM_OPTIONS`); each returned step (``scenario.step``) is one step of the force providers (the contact's
  tangential history and the driver advance once per returned step, not per internal step).

Integrator options (``scenario.options`` without a dot): ``closure_tol``, ``closure_max_iter``; with
``recursive-abm`` also ``rtol``, ``atol``, ``order``, ``first_step``, ``max_step``.

The drivetrain's brake (``T_b tanh(ω / 0.05 rad/s)``, a slope of 2e5 N m s/rad at rest on the M113's 1.52 kg m²
sprocket: explicit RK4 chatters above about 2e-5 s) is taken backward-Euler over the step on each sprocket's joint
coordinate under ``recursive-rk4`` (:class:`_BrakeLaw`, ``RecursiveSpatialSystem(implicit_damping=...)``), so
braking drivers run at :data:`RECURSIVE_STEP`. So is the speed servo of a prescribed sprocket speed
(``K (ω_ref − ω_s)``, K = 1e6 N m s/rad: :class:`_ServoLaw`), its reference taken at the end of each
evaluation's backward-Euler step (t + h), as the links' implicit Euler takes it at the end of its step.

Refused by name: NSC contact and implicit contact (``contact.*``: the stepper is explicit, nothing enters a
step matrix), the other fidelities' options, the absolute integrators (they step body coordinates through the
KKT matrix this system does not have), a saddle-point solver other than ``direct``, prescribed sprocket speeds
with ``recursive-abm`` (the servo stays explicit there: a time constant J / K of 1.5e-6 s) and wheeled vehicles.
"""

from __future__ import annotations

import math

import numpy as np

from ..formulations.contract import Build, FormulationInfo, register_formulation
from ..formulations.recursive_spatial import RecursiveSpatialSystem
from ..integrators.recursive import RecursiveABM, RecursiveRK4
from ..powertrain import BRAKE_SPEED, SERVO_GAIN
from .builder import build_vehicle
from .contact import vehicle_contact
from .outputs import ShoeTensions
from .placement import vehicle_drivetrain, vehicle_placement
from .visuals import add_vehicle_visuals

__all__ = ["RecursiveFormulation", "RECURSIVE_STEP", "RECURSIVE_INTEGRATORS", "ABM_OPTIONS"]

#: The fidelity's default step (s), measured (docs/recursive.md, "The `recursive` vehicle fidelity"): the
#: explicit RK4 with the explicit SMC contact runs the M113 and the crawler's settle and cruise at it.
RECURSIVE_STEP = 5e-4
#: the fidelity's steppers, by scenario name
RECURSIVE_INTEGRATORS = {RecursiveRK4.name: RecursiveRK4, RecursiveABM.name: RecursiveABM}
#: ``recursive-abm``'s options unless the scenario gives them: the paper's relative tolerance (han-sander-mao §3.6)
ABM_OPTIONS = {"rtol": 1e-9}
_COMMON_OPTIONS = ("closure_tol", "closure_max_iter")
_ABM_ONLY = ("rtol", "atol", "order", "first_step", "max_step")
#: option prefixes of the other fidelities (refused, naming their owner)
_FOREIGN = {"massless.": "massless", "penalty.": "penalty", "bushing.": "bushing", "ancf.": "ancf"}


class _BrakeLaw:
    """The drivetrain's brake, ``−braking_e T_b tanh(ω_s / BRAKE_SPEED)`` (:mod:`trackdyn.powertrain`), as the stiff
    torque law :class:`RecursiveSpatialSystem` makes implicit on each sprocket's joint coordinate (its slope at
    rest, T_b / 0.05 rad/s = 2e5 N m s/rad on the M113, against the sprocket's 1.52 kg m²). It reads the braking the
    drivetrain's driver decided for the step (``drivetrain.braking``), so it follows every driver; the map's drive
    torque stays explicit."""

    axis_b = np.array([0.0, 1.0, 0.0])  # the drivetrain's sprocket speed is about the chassis's y axis

    def __init__(self, drivetrain):
        self.drivetrain = drivetrain
        self.body = drivetrain.body  # (stator = chassis, rotor = sprocket) per element

    def implicit_torque(self, e: int, ws: float):
        b = float(self.drivetrain.braking[e]) * self.drivetrain.brake_torque
        if b == 0.0:
            return 0.0, 0.0
        th = math.tanh(ws / BRAKE_SPEED)
        return -b * th, -b * (1.0 - th * th) / BRAKE_SPEED


class _ServoLaw:
    """The drivetrain's speed servo of a prescribed sprocket speed, ``K (ω_ref(t) − ω_s)`` with K =
    :data:`~trackdyn.powertrain.SERVO_GAIN` (:mod:`trackdyn.powertrain`; 1e6 N m s/rad against the sprocket's
    1.5 kg m²: a time constant of 1.5e-6 s), as the stiff law :class:`RecursiveSpatialSystem` makes implicit on each
    sprocket's joint coordinate. The drivetrain applies it with the reference of the step's end, ω_ref(t_n + h), at
    every evaluation of the step; :meth:`torque_offset` moves it to ω_ref(t + h), the end of the backward-Euler
    step from the evaluation at t (at every RK4 stage the servo then sees the speed its reference will have one
    step on, as links' implicit Euler does at its one evaluation: a ramp is followed with the servo's own lag
    J α / K, not with one of the step's size)."""

    axis_b = np.array([0.0, 1.0, 0.0])  # the drivetrain's sprocket speed is about the chassis's y axis

    def __init__(self, drivetrain):
        self.body = drivetrain.body  # (stator = chassis, rotor = sprocket) per element
        self.profile = drivetrain.driver.speed_profile()
        self.gain = SERVO_GAIN

    def implicit_torque(self, e: int, ws: float):
        # K (ω_ref − ω_s) without its reference part: only the change over the step and the slope enter
        return -self.gain * ws, -self.gain

    def torque_offset(self, e: int, t: float, t_step: float, h: float) -> float:
        return self.gain * (float(self.profile.value(t + h)) - float(self.profile.value(t_step + h)))


class RecursiveFormulation:
    """``recursive``: the links vehicle in relative joint coordinates with cut joints (module docstring)."""

    name = "recursive"
    info = FormulationInfo(
        models="the links vehicle (every shoe a rigid body on single pins) in relative joint coordinates: chassis "
               "as free base, a tree through the running gear, each track loop closed by one cut pin; explicit SMC "
               "contact; no implicit contact, no NSC",
        cost="reduced", paper="han-sander-mao", default_step=RECURSIVE_STEP,
        default_integrator=RecursiveRK4.name, integrators=tuple(RECURSIVE_INTEGRATORS),
        option_prefixes=("contact.",), benchmark="", running_gear=("tracks",),
        # measured against links on the M113 (tests/integration/test_conformance.py), recursive-rk4 at 5e-4 s,
        # links at 5e-4 s: bump rise 0.6 mm lower (0.0581 against 0.0587 m), largest pitch 0.058 deg more, mean
        # speed 0.008 m/s higher. The braked settle (the brake implicit on the sprockets' coordinates): height
        # 1.2e-5 m higher, pitch 0.0005 deg, drift 1.4e-4 m/s less than links
        conformance=(
            ("settle", "height_m", 1e-4,
             "the same bodies, springs and contact laws at rest: the settled pose differs only by the steppers' "
             "residual rocking after the drop (RK4 undamped, implicit Euler damped) and the contact's explicit "
             "treatment, a few hundredths of a millimetre"),
            ("settle", "pitch_deg", 0.01,
             "the same static balance of the suspension and the track tension; the residual rocking after 3 s "
             "leaves thousandths of a degree"),
            ("settle", "speed_mps", 1e-3,
             "both stand on their brakes (the recursive one backward-Euler on the sprockets' coordinates, links' "
             "in the implicit step): the drift is the rocking's decay, tenths of a mm/s"),
            ("bump", "rise_m", 1.5e-3,
             "the same bodies, springs and contact laws in joint coordinates: the rise differs by the integrators "
             "(RK4 without numerical damping against implicit Euler's first-order damping of the bounce the bump "
             "excites) and by the contact acting explicitly from each stage instead of through the step matrix"),
            ("bump", "pitch_max_deg", 0.12,
             "as the rise: the same pitch response, integrated by RK4 (no numerical damping: a little more pitch) "
             "and by implicit Euler (damping the 1-2 Hz pitch mode at 5e-4 s)"),
            ("bump", "speed_mean_mps", 0.02,
             "the same PID driver, engine map and sprocket teeth; the speed moves with the bump's resistance and "
             "the chordal ripple, integrated with the two schemes' different errors and damping"),
        ))

    def defaults(self, options):
        return self.info.default_integrator, self.info.default_step

    def _options(self, sc) -> dict:
        integrator = sc.integrator or self.info.default_integrator
        out = {}
        for k, v in dict(sc.options or {}).items():
            if not isinstance(k, str):
                raise ValueError(f"scenario.options[{k!r}]: option names are strings")
            owner = next((o for p, o in _FOREIGN.items() if k.startswith(p)), None)
            if owner is not None:
                raise ValueError(f"scenario.options[{k!r}]: applies to the {owner} fidelity only, not to "
                                 f"{self.name!r}")
            if k == "contact.method":
                if v != "smc":
                    raise ValueError(f"scenario.options['contact.method'] = {v!r}: the {self.name!r} fidelity "
                                     "steps smooth (SMC) contact only; NSC needs the absolute nsc-euler stepper "
                                     "(use the links fidelity)")
                continue
            if k == "contact.implicit":
                if v is not False and not (isinstance(v, np.bool_) and not v):
                    raise ValueError(f"scenario.options['contact.implicit'] = {v!r}: the {self.name!r} fidelity's "
                                     "steppers are explicit (no step matrix for the contact's stiffness); only "
                                     "false is accepted")
                continue
            if k.startswith("contact."):
                raise ValueError(f"scenario.options[{k!r}]: unknown contact option of the {self.name!r} fidelity; "
                                 "it reads contact.method ('smc') and contact.implicit (false)")
            allowed = _COMMON_OPTIONS + (_ABM_ONLY if integrator == RecursiveABM.name else ())
            if k not in allowed:
                raise ValueError(f"scenario.options[{k!r}]: not an option of {integrator!r} on the {self.name!r} "
                                 f"fidelity; choose from {list(allowed)}")
            out[k] = v
        if integrator == RecursiveABM.name:
            out = {**ABM_OPTIONS, **out}
        return out

    def check(self, sc) -> None:
        if isinstance(sc.integrator, str) and sc.integrator not in RECURSIVE_INTEGRATORS:
            raise ValueError(f"scenario.integrator = {sc.integrator!r}: the {self.name!r} fidelity steps joint "
                             f"coordinates with its own {list(RECURSIVE_INTEGRATORS)}; the absolute integrators "
                             "step body coordinates through a KKT matrix this system does not have")
        if sc.solver != "direct":
            raise ValueError(f"scenario.solver = {sc.solver!r}: the {self.name!r} fidelity solves its m x m "
                             "cut-joint system directly; leave 'direct'")
        self._options(sc)
        integrator = sc.integrator or self.info.default_integrator
        if getattr(sc.driver, "kinematic", False) and integrator != RecursiveRK4.name:
            raise ValueError(f"scenario.driver = {sc.driver!r}: a prescribed sprocket speed acts through the "
                             "drivetrain's speed servo (1e6 N m s/rad on the sprocket's 1.5 kg m², a time constant "
                             f"of 1.5e-6 s), which {integrator!r} keeps explicit; use integrator "
                             f"{RecursiveRK4.name!r} (the servo backward-Euler on the sprockets' coordinates)")

    def build(self, sc) -> Build:
        options = self._options(sc)
        spec, terrain, geo, z0 = vehicle_placement(sc)
        vm = build_vehicle(spec, origin=(sc.start_x, 0.0, z0), geometry=geo, speed=sc.speed)
        add_vehicle_visuals(vm)
        contact = vehicle_contact(vm, terrain, "smc", implicit=False)
        m = vm.model
        idx = {n: k for k, n in enumerate(m.body_names)}
        drivetrain = vehicle_drivetrain(spec, idx, vm.sides, sc.driver)
        tensions = ShoeTensions(vm.sides)
        # recursive-rk4 takes the brake and a prescribed speed's servo backward-Euler on the sprockets'
        # coordinates (its step h); recursive-abm resolves the brake with its own error control
        rk4 = (sc.integrator or self.info.default_integrator) == RecursiveRK4.name
        laws = [_BrakeLaw(drivetrain)] if rk4 else []
        if rk4 and getattr(sc.driver, "kinematic", False):
            laws.append(_ServoLaw(drivetrain))
        system = RecursiveSpatialSystem(m, providers=[contact, tensions, drivetrain, *vm.providers],
                                        implicit_damping=laws)
        tensions.bind(system)  # the pins' reactions come from the recursive system (tree joints and cut pins)
        integrator = RECURSIVE_INTEGRATORS[sc.integrator or self.info.default_integrator]
        return Build(spec, vm, system, contact, drivetrain, integrator, options)


register_formulation(RecursiveFormulation())
