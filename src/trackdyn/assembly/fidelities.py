"""The vehicle fidelities ``links`` and ``massless``, registered in the formulation registry.

Each is a :class:`~trackdyn.formulations.contract.Formulation`: it places the
scenario's vehicle (:func:`~trackdyn.assembly.placement.vehicle_placement`,
the one derived geometry of the run), builds it with its builder of this
package (both share the one running-gear template,
:func:`~trackdyn.assembly.builder.add_running_gear`), adds its force
providers and returns the system for the generic runner
(:func:`trackdyn.sim.run.prepare`). They live here, beside their builders,
because :mod:`trackdyn.formulations` knows nothing about vehicles.

- ``links`` (korner-2024): every shoe a rigid body on single pins with a
  bending spring; SMC contact of shoes, wheels and hull
  (:mod:`trackdyn.assembly.contact`). Options: ``contact.implicit`` (default
  true: the contact stiffness and damping enter the step matrix; false: the
  contact forces act explicitly from the step's start, as in Chrono's SMC
  systems without "stiff contact" -- cheaper per step, stable only below the
  contact's explicit step limit, docs/contact.md) and ``contact.method``
  (``"smc"``, default, or ``"nsc"``: rigid contact with Coulomb friction,
  stepped by ``nsc-euler`` at 1e-3 s by default, docs/contact-nsc.md). Other keys go to the
  integrator; the implicit steppers' ``constraint_stiffness`` defaults to
  false here (:data:`LINKS_CONSTRAINT_STIFFNESS`).
- ``massless`` (agapov-kovalev-pogorelov): no shoe bodies; the track-force
  law :class:`~trackdyn.contact.massless.MasslessTrack` between wheels and
  ground. Options ``massless.*`` (the fields of
  :class:`~trackdyn.contact.massless.MasslessOptions`) and
  ``massless.formulation``: ``"tree"`` (default) steps the minimal
  coordinates with :class:`~trackdyn.integrators.realtime.RealtimeStepper`
  (its own integrator; it takes no integrator options); ``"absolute"`` steps
  the absolute system with the scenario's integrator (the reference the
  real-time stepper is tested against). An integrator other than
  ``massless-realtime`` implies ``"absolute"``.
"""

from __future__ import annotations

import inspect

import numpy as np

from ..contact.massless import MasslessOptions, MasslessTrack
from ..formulations.absolute import AbsoluteSystem
from ..formulations.contract import Build, FormulationInfo, register_formulation
from ..formulations.penalty import PAPER_C, PAPER_K, PenaltyPin, PenaltyPins
from ..mbs import Bushing
from ..formulations.tree import TreeSystem
from ..integrators import INTEGRATORS
from ..integrators.realtime import RealtimeStepper
from .builder import build_vehicle, track_pins
from .contact import CONTACT_METHODS, vehicle_contact
from .massless import build_massless
from .outputs import ShoeTensions
from .placement import vehicle_drivetrain, vehicle_placement
from .visuals import add_vehicle_visuals

__all__ = ["LinksFormulation", "MasslessFormulation", "PenaltyFormulation", "BushingFormulation", "LINKS_STEP",
           "LINKS_EVENT_STEP",
           "split_prefixed", "PinTensions", "LINKS_CONSTRAINT_STIFFNESS"]

#: The link model's default step (s): a fifth of the thesis's 1e-4 s, the step its events and scenarios were
#: measured stable at (docs/events.md, "The default step").
LINKS_STEP = 5e-4
#: The links fidelity's step for the mobility events (obstacle impacts). Measured on the M113's full procedures
#: at 5e-4, 2.5e-4 and 1e-4 s (docs/events.md, "The time step of the events"; issue #28): at 5e-4 the step limit
#: is 4.4 cm low, the gap limit 0.21 m high and the 8 in half-round's limiting speed 1.7 m/s high; at 2.5e-4
#: every checked answer agrees with 1e-4 s (the step limit exactly, the gap within one 1.9 cm bisection step,
#: the half-rounds' brackets and the trapezoids' outcomes the same).
LINKS_EVENT_STEP = 2.5e-4

#: The link model's default for the joints' geometric stiffness in the implicit steppers' Newton matrix
#: (``constraint_stiffness``; the generic :class:`~trackdyn.sim.Simulation` keeps True): off, as in the thesis's
#: eq. 2.13 and Chrono's linearized Euler. Taken at the previous step's multipliers, the term lets a taut track
#: span's pin tension feed itself through the lagged stiffness (docs/events.md, "Stability at impacts": on the
#: 0.55 m step a pin's multiplier grew from 87 kN to 1.2e8 N in 4 ms, no body spinning faster than 39 rad/s,
#: until the step diverged); without it the same trials run through.
LINKS_CONSTRAINT_STIFFNESS = False

#: The integrators that step any absolute system with smooth contact: the registry's, less the massless
#: model's own stepper and the non-smooth contact stepper (``nsc-euler`` needs an NscContact: the links
#: fidelity's ``contact.method = "nsc"``, with which it is the only stepper).
GENERIC_INTEGRATORS = tuple(n for n in INTEGRATORS if n not in (RealtimeStepper.name, "nsc-euler"))


def split_prefixed(options: dict, prefix: str, fidelity: str, foreign: dict) -> tuple[dict, dict]:
    """``(keys under prefix without it, the other keys)`` of ``scenario.options``.

    Keys under one of the ``foreign`` prefixes (``{prefix: owning fidelity}``)
    belong to another fidelity and are refused naming the key, its fidelity
    and this one.
    """
    mine, rest = {}, {}
    for k, v in dict(options or {}).items():
        if isinstance(k, str) and k.startswith(prefix):
            mine[k[len(prefix):]] = v
        elif isinstance(k, str) and any(k.startswith(p) for p in foreign):
            owner = next(o for p, o in foreign.items() if k.startswith(p))
            raise ValueError(f"scenario.options[{k!r}]: applies to the {owner} fidelity only, not to {fidelity!r} "
                             f"(which reads {prefix}* and integrator options)")
        else:
            rest[k] = v
    return mine, rest


def _check_integrator(fidelity: str, name, accepted: tuple) -> None:
    if isinstance(name, str) and name not in accepted:
        raise ValueError(f"scenario.integrator = {name!r}: the {fidelity!r} fidelity accepts {list(accepted)}")


class LinksFormulation:
    """``links``: every shoe a rigid body (module docstring)."""

    name = "links"
    info = FormulationInfo(
        models="every shoe a rigid body on single pins with a bending spring; SMC contact of shoes, wheels and hull; "
               "a wheeled vehicle (no track): arms, wheels and point tyres",
        cost="reference", paper="korner-2024", default_step=LINKS_STEP,
        default_integrator="euler-implicit-linearized", integrators=GENERIC_INTEGRATORS,
        option_prefixes=("contact.",), benchmark="m113-flat", event_step=LINKS_EVENT_STEP,
        running_gear=("tracks", "wheels"))
    #: contact options (keys after "contact."): "implicit" (bool, SMC only), "method" ("smc" or "nsc")
    CONTACT_OPTIONS = ("implicit", "method")
    #: option prefixes of the other fidelities (refused, naming their owner)
    FOREIGN = {"massless.": "massless", "penalty.": "penalty", "bushing.": "bushing", "ancf.": "ancf"}
    #: ``contact.method = "nsc"``: its stepper and default step (s), issue #29's vehicle step
    NSC_INTEGRATOR = "nsc-euler"
    NSC_STEP = 1e-3
    #: ``contact.method = "nsc"``: the contact solver's settings on the vehicle unless the scenario gives them
    #: (``nsc-euler``'s own defaults, 1e-9 m/s and 1 000 iterations, are those of the small validation
    #: problems). 1e-9 m/s is out of reach on the M113 (its Delassus operator's spread is 8 000,
    #: docs/contact-nsc.md): every Coulomb round of a step-climb trial's settle hit the cap, 46 000 iterations
    #: in one step, 3.6 s of wall time per step. 1e-5 m/s moves a point by 1e-8 m per step; 5 000 iterations
    #: left no Anitescu step of the cruise above it (1 000 left 4 of 20). ``contact_compliance`` 1e-7 m/N
    #: (1e7 N/m per contact point): rigid, the track jams between its sprocket and a step's edge (the 0.852 m
    #: trial at 2.68 s: 250 000 iterations without converging, then shoes at 268 m/s, at h = 1e-3 and 5e-4);
    #: with it on the terrain contacts' normal rows the same state steps on (one step of 10 unconverged). On
    #: every contact it also softened the sprocket's teeth, which then skipped the pins under full throttle
    #: (94 rad/s at 0.6 s on flat ground against 8.1 rigid): ``compliance_on = "terrain"``. A regularisation,
    #: not a material: a ground contact gives by 0.07 mm under the ~700 N it carries at rest, 1/350 of the
    #: SMC pads' calibrated static deflection (1 in, korner-2024 §3.2.4). 0 gives the rigid contact.
    #: ``contact_solver = "newton"`` (issue #29): the same tolerance as APGD at 5.8 times less CPU per step on
    #: one cruise state (docs/contact-nsc.md, "The Newton solver"); the 0.852 m step-climb trial at 5e-4 s
    #: climbed at 4.26 s with slip 0.171 / 0.178 and the hull at up to 22.1 kN in 372 s of wall time, APGD's
    #: run the same (4.26 s, 0.17 / 0.18, 22 kN) in 1 024 s (docs/events/results.json, step-climb-nsc*).
    NSC_OPTIONS = {"contact_solver": "newton", "contact_tolerance": 1e-5, "contact_max_iterations": 5000,
                   "contact_compliance": 1e-7, "compliance_on": "terrain"}

    @staticmethod
    def _method(options) -> str:
        m = dict(options or {}).get("contact.method", "smc")
        if m not in CONTACT_METHODS:
            raise ValueError(f"scenario.options['contact.method'] = {m!r}: choose one of {list(CONTACT_METHODS)}")
        return m

    def defaults(self, options):
        if self._method(options) == "nsc":
            return self.NSC_INTEGRATOR, self.NSC_STEP
        return self.info.default_integrator, self.info.default_step

    def _options(self, sc):
        contact, rest = split_prefixed(sc.options, "contact.", self.name, self.FOREIGN)
        method = self._method(sc.options)
        contact.pop("method", None)
        for k, v in contact.items():
            if k not in self.CONTACT_OPTIONS:
                raise ValueError(f"scenario.options['contact.{k}']: unknown contact option; choose from "
                                 f"{['contact.' + c for c in self.CONTACT_OPTIONS]}")
            if not isinstance(v, (bool, np.bool_)):
                raise ValueError(f"scenario.options['contact.{k}'] = {v!r}: expected true or false")
        if method == "nsc" and contact:
            raise ValueError(f"scenario.options {['contact.' + k for k in contact]}: smooth-contact options; "
                             "contact.method = 'nsc' takes none (its solver options are the nsc-euler "
                             "integrator's: contact_solver, contact_tolerance, ...)")
        return method, {k: bool(v) for k, v in contact.items()}, rest

    def check(self, sc) -> None:
        if sc.vehicle_spec().running_gear == "wheels":  # no track: arms, wheels and tyres (assembly/wheeled.py)
            from .wheeled import check_wheeled_scenario

            return check_wheeled_scenario(sc, self.name, self.info.integrators)
        method, _, _ = self._options(sc)
        if method == "nsc":
            if sc.integrator != self.NSC_INTEGRATOR:
                raise ValueError(f"scenario.integrator = {sc.integrator!r}: contact.method = 'nsc' steps with "
                                 f"{self.NSC_INTEGRATOR!r} only")
            from ..contact.nsc import NscContact

            NscContact.check_terrain(vehicle_placement(sc)[1])  # profile and mesh terrains: not yet
        else:
            _check_integrator(self.name, sc.integrator, self.info.integrators)

    def build(self, sc) -> Build:
        if sc.vehicle_spec().running_gear == "wheels":
            from .wheeled import build_wheeled_scenario

            return build_wheeled_scenario(sc, self._integrator_options(sc, {k: v for k, v in sc.options.items()}))
        method, contact_options, integrator_options = self._options(sc)
        spec, terrain, geo, z0 = vehicle_placement(sc)
        vm = build_vehicle(spec, origin=(sc.start_x, 0.0, z0), geometry=geo, speed=sc.speed)
        add_vehicle_visuals(vm)
        contact = vehicle_contact(vm, terrain, method, **contact_options)
        m = vm.model
        idx = {n: k for k, n in enumerate(m.body_names)}
        drivetrain = vehicle_drivetrain(spec, idx, vm.sides, sc.driver)
        system = AbsoluteSystem(m, providers=[contact, ShoeTensions(vm.sides), drivetrain, *vm.providers], coupling="diagonal")
        integrator_options = self._integrator_options(sc, integrator_options)
        if method == "nsc":
            integrator_options = {**self.NSC_OPTIONS, **integrator_options}
        return Build(spec, vm, system, contact, drivetrain, sc.integrator, integrator_options)


    def _integrator_options(self, sc, integrator_options: dict) -> dict:
        """The scenario's integrator options, with the implicit steppers' ``constraint_stiffness`` defaulting to
        :data:`LINKS_CONSTRAINT_STIFFNESS`."""
        integrator = sc.integrator or self.info.default_integrator
        cls = INTEGRATORS.get(integrator, integrator) if isinstance(integrator, str) else integrator
        if "constraint_stiffness" in inspect.signature(cls).parameters:
            integrator_options = {"constraint_stiffness": LINKS_CONSTRAINT_STIFFNESS, **integrator_options}
        return integrator_options


class MasslessFormulation:
    """``massless``: the track as forces between wheels and ground, no shoe bodies (module docstring)."""

    name = "massless"
    info = FormulationInfo(
        models="no shoe bodies: track-terrain forces on the road wheels in track planes fixed to the hull, "
               "with factitious irregularities between wheels",
        cost="real-time", paper="agapov-kovalev-pogorelov", default_step=1e-2,
        default_integrator=RealtimeStepper.name, integrators=(RealtimeStepper.name,) + GENERIC_INTEGRATORS,
        option_prefixes=("massless.",), benchmark="m113-massless-flat",
        # measured differences from links (tests/integration/test_conformance.py, docs/massless.md): settle height
        # 5.6 mm, pitch 0.08 deg, drift 0.5 mm/s; bump rise 11 mm, pitch 0.80 deg, mean speed 0.068 m/s
        conformance=(
            ("settle", "height_m", 0.01,
             "the wheels sink into a calibrated virtual track (25.4 mm at the static load, korner-2024 §3.2.4) "
             "instead of compressing the shoes' pads and bending the chain between wheels; the tracks' mass "
             "sits in the hull, not on the wheels"),
            ("settle", "pitch_deg", 0.3,
             "the idler turns on a fixed axle at its closed-track place (no tensioner, no strand tension "
             "pulling the front down) and the track mass is lumped at the shoes' places into the hull"),
            ("settle", "speed_mps", 0.005,
             "both stand on their brakes: the mean speed over the last second is a drift of the brakes' "
             "smooth torque law, the same law in both; the link model's fore-aft rocking after the drop "
             "(about 1 s period) has decayed to mm/s by then"),
            ("bump", "rise_m", 0.02,
             "the link chain spans the bump between wheels (its shoes bear on the bump ahead of and behind a "
             "wheel), the massless track acts on a wheel only through the ground under that wheel's window"),
            ("bump", "pitch_max_deg", 1.5,
             "the same spanning, and the shoes' own mass and impacts on the bump at 4 m/s, which the massless "
             "track (its mass lumped into the hull) does not have"),
            ("bump", "speed_mean_mps", 0.2,
             "the same PID drives both; the link model's sprocket engages tooth by tooth (chordal speed "
             "ripple) and its shoes take their impacts, the massless track's speed is the sprocket's"),
        ))
    FORMULATIONS = ("tree", "absolute")
    #: the absolute formulation's default step (s): the step its tests compare it with the tree at
    ABSOLUTE_STEP = 1e-3

    def _formulation(self, options, integrator=None) -> str:
        f = dict(options or {}).get("massless.formulation")
        if f is None:
            return "tree" if integrator in (None, RealtimeStepper.name) else "absolute"
        if f not in self.FORMULATIONS:
            raise ValueError(f"scenario.options['massless.formulation'] = {f!r}: choose one of {self.FORMULATIONS}")
        return f

    def defaults(self, options):
        if self._formulation(options) == "absolute":
            return "euler-implicit-linearized", self.ABSOLUTE_STEP
        return self.info.default_integrator, self.info.default_step

    def _options(self, sc):
        mine, rest = split_prefixed(sc.options, "massless.", self.name,
                                    {"contact.": "links", "penalty.": "penalty", "bushing.": "bushing"})
        mine.pop("formulation", None)
        f = self._formulation(sc.options, sc.integrator)
        if f == "tree":
            if sc.integrator != RealtimeStepper.name:
                raise ValueError(f"scenario.integrator = {sc.integrator!r}: the {self.name!r} fidelity's tree "
                                 f"formulation steps with its own {RealtimeStepper.name!r} (use "
                                 "massless.formulation = 'absolute' for another integrator)")
            if rest:
                raise ValueError(f"scenario.options {sorted(rest)}: the massless real-time stepper takes no "
                                 "integrator options (use massless.formulation = 'absolute' for the scenario's "
                                 "integrator)")
        elif sc.integrator == RealtimeStepper.name:
            raise ValueError(f"scenario.integrator = {sc.integrator!r}: massless.formulation = 'absolute' steps "
                             f"with one of {list(GENERIC_INTEGRATORS)}")
        return MasslessOptions.from_dict(mine), f, rest

    def check(self, sc) -> None:
        _check_integrator(self.name, sc.integrator, self.info.integrators)
        self._options(sc)
        if getattr(sc.driver, "kinematic", False):
            raise ValueError("scenario.driver: SprocketSpeed drivers need the kinematic drive of the links "
                             "builder; the 'massless' fidelity does not take them (yet)")

    def build(self, sc) -> Build:
        opts, formulation, rest = self._options(sc)
        spec, terrain, geo, z0 = vehicle_placement(sc)
        vm = build_massless(spec, origin=(sc.start_x, 0.0, z0), geometry=geo, speed=sc.speed, planes=opts.planes,
                            track_mass=opts.track_mass)
        add_vehicle_visuals(vm)
        track = MasslessTrack(vm, terrain, opts)
        m = vm.model
        idx = {n: k for k, n in enumerate(m.body_names)}
        drivetrain = vehicle_drivetrain(spec, idx, vm.sides, sc.driver)
        system = (TreeSystem if formulation == "tree" else AbsoluteSystem)(m, providers=[track, drivetrain],
                                                                           coupling="diagonal")
        if formulation == "tree":
            return Build(spec, vm, system, track, drivetrain, RealtimeStepper, {"tree": vm.tree})
        return Build(spec, vm, system, track, drivetrain, sc.integrator, rest)


class PinTensions:
    """Output provider: ``SIDE.shoe[k].tension`` of compliant pins, from the force each pin puts on its
    second shoe (``force`` (n_pin, 3), world, refreshed by the pin forces' own evaluation) as
    :class:`~trackdyn.assembly.outputs.ShoeTensions` computes it from an ideal pin's reaction: the pull along
    that shoe's rear-to-front axis, with the sign of a tension."""

    name = "pin-tensions"

    def __init__(self, sides, pin_names, force=None):
        self.pin_names = list(pin_names)
        self.force = np.zeros((len(self.pin_names), 3)) if force is None else force
        order = {nm: k for k, nm in enumerate(self.pin_names)}
        self.names, rows, bodies = [], [], []
        for side in sides.values():
            n = len(side.shoes)
            for k in range(n):
                self.names.append(f"{side.name}.shoe[{k}].tension")
                rows.append(order[side.pins[k]])
                bodies.append(side.shoes[(k + 1) % n])
        self.rows = np.array(rows, dtype=np.int64)
        self._bodies = bodies
        self.tension = np.zeros(len(self.names))

    def read_forces(self, force, names) -> None:
        """Read the pins' forces from ``force`` (n, 3) whose rows are the pins ``names`` (any order)."""
        order = {nm: k for k, nm in enumerate(names)}
        self.rows = np.array([order[self.pin_names[r]] for r in self.rows], dtype=np.int64)
        self.pin_names = list(names)
        self.force = force

    def coupling_pairs(self):
        return []

    def bind(self, system):
        idx = {nm: k for k, nm in enumerate(system.body_names)}
        self.body_idx = np.array([idx[b] for b in self._bodies], dtype=np.int64)

    def initial_extra(self):
        return {}

    def accumulate(self, ctx):
        if ctx.data is not None:
            return
        d = ctx.kin.R[self.body_idx][:, :, 0]
        self.tension[:] = -np.einsum("ij,ij->i", self.force[self.rows], d)

    def commit(self, state):
        pass

    def series(self):
        return {nm: (self.tension, k) for k, nm in enumerate(self.names)}


def _nonneg(key, v):
    try:
        x = float(v)
    except (TypeError, ValueError):
        raise ValueError(f"scenario.options[{key!r}] = {v!r}: expected a number >= 0") from None
    if not (np.isfinite(x) and x >= 0):
        raise ValueError(f"scenario.options[{key!r}] = {v!r}: expected a finite number >= 0")
    return x


def _triple(key, v):
    """A number or three numbers >= 0 (per direction of the shoe frame: along, across, normal)."""
    arr = np.atleast_1d(np.asarray(v, dtype=object))
    if arr.size == 1:
        return np.full(3, _nonneg(key, arr[0]))
    if arr.size != 3:
        raise ValueError(f"scenario.options[{key!r}] = {v!r}: expected a number or 3 numbers "
                         "(along the shoe, along the pin, normal to the shoe)")
    return np.array([_nonneg(key, x) for x in arr])


#: the compliant pins' integrator and step: links' own, measured. At 5e-4 s both run the conformance
#: scenarios (M113 settle and 4 m/s bump) and their chassis figures stand within 2 mm, 0.006 deg and
#: 0.002 m/s of links'; Newton-iterated Euler and HHT do not start on the vehicle (their Newton fails at t = 0
#: on the contacts, as for links). The pin *forces* carry a step error, measured on the spinning 8-link ring
#: at 16 rad/s (a pin going round the sprocket at 4 m/s; ideal reaction 1635-1667 N): k = 1e9 gives 8766 N at
#: h = 5e-4, 3248 at 2e-4, 2202 at 1e-4, 1870 at 5e-5 (the discrete velocities of a turning body lag its
#: rotation by O(h), which the damping turns into c h ω² L, plus the stiff force's O(k h² ω² L)
#: linearisation error); pin-force studies need h <= 5e-5 (docs/formulation.md, "Compliant pins")
COMPLIANT_INTEGRATOR = "euler-implicit-linearized"


#: how far the compliant pins' chassis figures may stand from links' (measured differences in the fidelities'
#: comments, these tolerances about twice them)
_COMPLIANT_CONFORMANCE = (
    ("settle", "height_m", 0.004,
     "the pins stretch under the track tension (T/k, ~1e-5 m a pin at 1e9 N/m, over ~60 pins a side): a longer "
     "loop that the tensioner takes up and a different sag between the wheels lower the hull by about 2 mm"),
    ("settle", "pitch_deg", 0.05,
     "the same longer loop moves the idler carrier and the strands' pull on the front of the hull"),
    ("settle", "speed_mps", 0.005,
     "both stand on their brakes; the residual drift is the brakes' smooth torque law and the rocking after the "
     "drop, which the compliant pins' extra damping c = 1e5 N s/m changes at the mm/s level"),
    ("bump", "rise_m", 0.003,
     "the chain spans the bump with slightly stretched pins; its wrap around the wheels and the shoes' impacts "
     "are the links model's, so the rise differs by the loop's stretch, about a millimetre"),
    ("bump", "pitch_max_deg", 0.05,
     "the same chain and contacts as links, pins compliant by T/k: the hull's pitch differs by thousandths of a "
     "degree"),
    ("bump", "speed_mean_mps", 0.01,
     "the same PID and drive; the sprocket engages the same shoes, with the pins' compliance in the chordal "
     "speed ripple"),
)


class _CompliantPins(LinksFormulation):
    """The ``links`` vehicle with its track pins made compliant: shared option handling and build."""

    PREFIX = ""
    OPTIONS: dict = {}

    @staticmethod
    def _info(prefix: str, models: str) -> FormulationInfo:
        """The fields both compliant-pin fidelities share (links' vehicle, step, benchmark and contact options,
        the compliant integrator, the conformance rows against links), with a fidelity's option prefix and
        model line."""
        return FormulationInfo(
            models=models, cost="compliant", paper="wallin-shabana-2013", default_step=LINKS_STEP,
            default_integrator=COMPLIANT_INTEGRATOR, integrators=GENERIC_INTEGRATORS,
            option_prefixes=(prefix, "contact."), benchmark="m113-flat", conformance=_COMPLIANT_CONFORMANCE)

    def _options(self, sc):
        foreign = {p: o for p, o in {**LinksFormulation.FOREIGN, "contact.": "links"}.items()
                   if p != self.PREFIX}
        mine, rest = split_prefixed(sc.options, self.PREFIX, self.name,
                                    {p: o for p, o in foreign.items() if p != "contact."})
        contact, rest = split_prefixed(rest, "contact.", self.name, {})
        for k, v in contact.items():
            if k not in self.CONTACT_OPTIONS:
                raise ValueError(f"scenario.options['contact.{k}']: unknown contact option; choose from "
                                 f"{['contact.' + c for c in self.CONTACT_OPTIONS]}")
            if not isinstance(v, (bool, np.bool_)):
                raise ValueError(f"scenario.options['contact.{k}'] = {v!r}: expected true or false")
        pins = {}
        for k, v in mine.items():
            if k not in self.OPTIONS:
                raise ValueError(f"scenario.options['{self.PREFIX}{k}']: unknown option of the {self.name!r} "
                                 f"fidelity; choose from {[self.PREFIX + o for o in self.OPTIONS]}")
            pins[k] = self.OPTIONS[k](self.PREFIX + k, v)
        return {k: bool(v) for k, v in contact.items()}, pins, rest

    def check(self, sc) -> None:
        _check_integrator(self.name, sc.integrator, self.info.integrators)
        self._options(sc)

    def _pins(self, vm, options):  # pragma: no cover - interface
        raise NotImplementedError

    def build(self, sc) -> Build:
        contact_options, pin_options, integrator_options = self._options(sc)
        spec, terrain, geo, z0 = vehicle_placement(sc)
        vm = build_vehicle(spec, origin=(sc.start_x, 0.0, z0), geometry=geo, speed=sc.speed, pin_joints=False)
        pins, tensions = self._pins(vm, pin_options)
        add_vehicle_visuals(vm)
        contact = vehicle_contact(vm, terrain, **contact_options)
        m = vm.model
        idx = {n: k for k, n in enumerate(m.body_names)}
        drivetrain = vehicle_drivetrain(spec, idx, vm.sides, sc.driver)
        providers = [contact] + ([pins] if pins is not None else []) + [tensions, drivetrain] + list(vm.providers)
        system = AbsoluteSystem(m, providers=providers, coupling="diagonal")
        if pins is None:  # bushing elements: the tensions read their block's forces, known once the system is
            blk = next(b for b in system.blocks if vm.sides["left"].pins[0] in getattr(b, "names", ()))
            tensions.read_forces(blk.force, blk.names)
        return Build(spec, vm, system, contact, drivetrain, sc.integrator, integrator_options)


class PenaltyFormulation(_CompliantPins):
    """``penalty``: every track pin's revolute equations enforced by penalty forces (wallin-shabana-2013 §6.2).

    Options (``penalty.*``): ``k`` (N/m) and ``c`` (N s/m) of the pin point's three rows, default the
    paper's 1e9 and 1e5 (§9; its soft study is k = 1e7); ``k_axis`` (N m) and ``c_axis`` (N m s) of the two
    axis-alignment rows, default ``k`` and ``c`` (eq. 11 has one k and c for all five rows).
    """

    name = "penalty"
    PREFIX = "penalty."
    OPTIONS = {"k": _nonneg, "c": _nonneg, "k_axis": _nonneg, "c_axis": _nonneg}
    # conformance measured against links at 5e-4 s (tests/integration/test_conformance.py): settle height
    # 1.9 mm, pitch 0.006 deg, speed 0.0018 m/s; bump rise 1.1 mm, pitch 0.004 deg, mean speed 0.002 m/s
    info = _CompliantPins._info(
        PREFIX, models="every shoe a rigid body; the pins' revolute equations enforced by penalty forces "
                       "f = k d + c ḋ (exact stiffness and damping in the Newton matrix); SMC contact as links")

    def _pins(self, vm, o):
        pins = [PenaltyPin(nm, a, b, tuple(p), tuple(ax)) for nm, a, b, p, ax in track_pins(vm)]
        prov = PenaltyPins(vm.model, pins, k=o.get("k", PAPER_K), c=o.get("c", PAPER_C), k_axis=o.get("k_axis"),
                           c_axis=o.get("c_axis"), name="penalty-pins")
        return prov, PinTensions(vm.sides, prov.names, prov.force)


#: bushing pins' defaults: wallin-shabana-2013 gives no bushing coefficients; these are its penalty pins'
#: (§9: k 1e9 N/m, c 1e5 N s/m) per translational direction and for the two tilts (N m/rad, N m s/rad), the
#: rotation about the pin free (the shoes' bending spring acts about it, as in every fidelity)
BUSHING_K = (PAPER_K, PAPER_K, PAPER_K)
BUSHING_C = (PAPER_C, PAPER_C, PAPER_C)
BUSHING_K_ROT = (PAPER_K, 0.0, PAPER_K)
BUSHING_C_ROT = (PAPER_C, 0.0, PAPER_C)


class BushingFormulation(_CompliantPins):
    """``bushing``: every track pin a 6-dof linear bushing (wallin-shabana-2013 §7, eq. 15).

    The :class:`~trackdyn.mbs.forces.Bushing` element in the frame of the front shoe (x from its rear to its
    front pin, y along the pin, z normal to the shoe), coupled in the Newton matrix (its exact Jacobian
    between the two shoes). Options (``bushing.*``, a number or three per shoe-frame direction):
    ``k`` (N/m), ``c`` (N s/m), ``k_rot`` (N m/rad), ``c_rot`` (N m s/rad); defaults
    :data:`BUSHING_K`, :data:`BUSHING_C`, :data:`BUSHING_K_ROT`, :data:`BUSHING_C_ROT`.
    """

    name = "bushing"
    PREFIX = "bushing."
    OPTIONS = {"k": _triple, "c": _triple, "k_rot": _triple, "c_rot": _triple}
    # conformance measured against links at 5e-4 s (tests/integration/test_conformance.py): settle height
    # 1.9 mm, pitch 0.006 deg, speed 0.0018 m/s; bump rise 1.0 mm, pitch 0.004 deg, mean speed 0.002 m/s
    info = _CompliantPins._info(
        PREFIX, models="every shoe a rigid body; each pin a 6-dof linear bushing (stiffness and damping per "
                       "shoe-frame direction, free about the pin) with its exact Jacobian in the Newton matrix; "
                       "SMC contact as links")

    def _pins(self, vm, o):
        m = vm.model
        names = []
        for nm, a, b, p, ax in track_pins(vm):
            frame = m._initial_R(b)  # the front shoe's axes at the assembled pose
            m.add_force(Bushing(a, b, point=p, stiffness=np.diag(o.get("k", BUSHING_K)),
                                damping=np.diag(o.get("c", BUSHING_C)),
                                rot_stiffness=np.diag(o.get("k_rot", BUSHING_K_ROT)),
                                rot_damping=np.diag(o.get("c_rot", BUSHING_C_ROT)), frame=frame, name=nm,
                                coupling="full"))
            names.append(nm)
        return None, PinTensions(vm.sides, names)


#: the ancf fidelity's step (s) and integrator: the largest of ``trackdyn bench apc-joints-stepsize``'s steps whose
#: road wheels stay within 1 mm of the fidelity's own 1e-5 s run over 2 s at 25 rad/s, on the linearised
#: θ-method at θ = 1/2 (0.912 mm at 1e-4 s, 1.511 mm at 2e-4 s; the linearised Euler step needs 5e-5 s: 0.82 mm,
#: 1.44 mm at 1e-4 s; ``python bench/apc_joints_stepsize_integrator.py --fidelity ancf --integrator
#: theta-linearized --theta 0.5``, docs/joints/ancf.md "The step"). A linearised step moves the nodes along
#: straight lines, so an element turning at ω gains a stretch (ω h)² / 2 a step, which its EA = 3.0e9 N would
#: turn into a spurious axial force (234 kN at 25 rad/s and 5e-4 s); the cable's elastic force is therefore
#: linearised about the step's predicted end (``CableForces(predictor=True)``), which removes it. What limits
#: the step since is the chain's travel: the vehicle's forward position drifts from the reference first order
#: in h (docs/joints/ancf.md, "The step").
ANCF_STEP = 1e-4
#: the ancf fidelity's integrator: the linearised θ-method at its default θ = 1/2 (the trapezoidal rule, one
#: linear solve of the step matrix and one force evaluation at the step's start more than Euler's step)
ANCF_INTEGRATOR = "theta-linearized"


class AncfFormulation:
    """``ancf``: each track a closed chain of 3-D ANCF cable elements, one per link, pinned at the links' pins
    (wallin-shabana-2013 §8; :mod:`trackdyn.assembly.ancf_track`).

    Options (``ancf.*``): ``sprocket`` (``"teeth"``, default: the tooth gaps on the pins; ``"circle"``: the pin
    circle, a friction drive) and ``points`` (contact points per element, default :data:`ANCF_POINTS`).
    Flat ground and profile terrains along +x, at rest or rolling; its own step :data:`ANCF_STEP`.
    """

    name = "ancf"
    PREFIX = "ancf."
    info = FormulationInfo(
        models="each track a closed chain of ANCF cable elements (12 coordinates each, axial EA and bending EI "
               "by Gauss quadrature), one per link, sharing positions at the pins (free about them, with the "
               "links' bending spring), axial dashpots; Kelvin-Voigt contact on points of the elements; flat and "
               "profile terrains",
        cost="compliant", paper="wallin-shabana-2013", default_step=ANCF_STEP,
        default_integrator=ANCF_INTEGRATOR, integrators=GENERIC_INTEGRATORS, option_prefixes=(PREFIX,),
        benchmark="apc-joints", conformance_vehicle="apc", conformance=(
            # measured against links on the APC, ancf at its 1e-4 s on θ = 0.5, links at its 5e-4 s
            # (tests/integration/test_conformance.py): settle height 0.89 mm higher, pitch 0.038 deg, drift
            # 0.0005 m/s; bump rise 1.24 mm lower, largest pitch 0.111 deg less, mean speed 0.052 m/s lower (at
            # 5e-5 s on Euler: 0.9 mm, 0.038 deg, 0.0005 m/s; 1.3 mm, 0.115 deg, 0.052 m/s)
            ("settle", "height_m", 0.004,
             "the same loop on four contact points per element instead of the shoes' plates and pads, each point "
             "carrying the law times the links' points it stands for: the chain sits on the wheels and the ground "
             "a millimetre differently and holds its own tension"),
            ("settle", "pitch_deg", 0.1,
             "the chain's tension pulls on the idler at the rear of the hull and its pads meet the ground at four "
             "points per element, not at the pads' corners: a few hundredths of a degree"),
            ("settle", "speed_mps", 0.003,
             "both stand on their brakes; the residual drift is the rocking after the drop, which the chain's "
             "dashpots, pin springs and point contacts damp differently at the mm/s level"),
            ("bump", "rise_m", 0.004,
             "the chain spans the bump on its elements' points (the links' pads are boxes with corners and edges) "
             "and its stiff elements ride the bump's curve as chords: the hull rises a millimetre or so less"),
            ("bump", "pitch_max_deg", 0.25,
             "the same suspension and chain geometry; the chain's elements meet the bump's flanks at their four "
             "points a few centimetres from where the links' pad corners do: a tenth of a degree"),
            ("bump", "speed_mean_mps", 0.1,
             "the same PID and engine map; the chain rolls over the wheels on points every 38.5 mm rather than a "
             "flat plate, a little more rolling resistance under the same throttle")))

    def defaults(self, options):
        return self.info.default_integrator, self.info.default_step

    def _options(self, sc):
        foreign = {**LinksFormulation.FOREIGN, "contact.": "links"}
        foreign.pop("ancf.", None)
        mine, rest = split_prefixed(sc.options, self.PREFIX, self.name, foreign)
        out = {}
        for k, v in mine.items():
            if k == "sprocket":
                from .ancf_track import SPROCKET_CONTACTS

                if v not in SPROCKET_CONTACTS:
                    raise ValueError(f"scenario.options['ancf.sprocket'] = {v!r}: choose one of "
                                     f"{list(SPROCKET_CONTACTS)}")
                out[k] = v
            elif k == "points":
                if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                    raise ValueError(f"scenario.options['ancf.points'] = {v!r}: expected an integer >= 1 "
                                     "(contact points per element)")
                out[k] = int(v)
            else:
                raise ValueError(f"scenario.options['ancf.{k}']: unknown option of the 'ancf' fidelity; choose "
                                 "from ['ancf.sprocket', 'ancf.points']")
        return out, rest

    def check(self, sc) -> None:
        _check_integrator(self.name, sc.integrator, self.info.integrators)
        self._options(sc)
        from .ancf_track import check_materials, check_sprocket, check_terrain

        spec, terrain = vehicle_placement(sc)[:2]
        check_sprocket(spec)
        check_materials(spec)
        check_terrain(terrain)

    def build(self, sc) -> Build:
        from .ancf_track import ANCF_POINTS, build_ancf_vehicle

        mine, rest = self._options(sc)
        return build_ancf_vehicle(sc, sprocket=mine.get("sprocket", "teeth"), points=mine.get("points", ANCF_POINTS),
                                  integrator_options=rest)


register_formulation(LinksFormulation())
register_formulation(MasslessFormulation())
register_formulation(PenaltyFormulation())
register_formulation(BushingFormulation())
register_formulation(AncfFormulation())
from . import synthesis_fidelity as _synthesis_fidelity  # noqa: E402,F401  (registers the 'synthesis' fidelity)
from . import recursive_fidelity as _recursive_fidelity  # noqa: E402,F401  (registers the 'recursive' fidelity)
