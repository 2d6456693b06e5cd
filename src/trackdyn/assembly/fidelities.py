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
  contact's explicit step limit, docs/contact.md). Other keys go to the
  integrator.
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

import numpy as np

from ..contact.massless import MasslessOptions, MasslessTrack
from ..formulations.absolute import AbsoluteSystem
from ..formulations.contract import Build, FormulationInfo, register_formulation
from ..formulations.tree import TreeSystem
from ..integrators import INTEGRATORS
from ..integrators.realtime import RealtimeStepper
from .builder import build_vehicle
from .contact import vehicle_contact
from .massless import build_massless
from .outputs import ShoeTensions
from .placement import vehicle_drivetrain, vehicle_placement
from .visuals import add_vehicle_visuals

__all__ = ["LinksFormulation", "MasslessFormulation", "LINKS_STEP", "split_prefixed"]

#: The link model's default step (s): a fifth of the thesis's 1e-4 s, the step its events and scenarios were
#: measured stable at (docs/events.md, "The default step").
LINKS_STEP = 5e-4

#: The integrators that step any absolute system (the registry's, less the massless model's own stepper).
GENERIC_INTEGRATORS = tuple(n for n in INTEGRATORS if n != RealtimeStepper.name)


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
        models="every shoe a rigid body on single pins with a bending spring; SMC contact of shoes, wheels and hull",
        cost="reference", paper="korner-2024", default_step=LINKS_STEP,
        default_integrator="euler-implicit-linearized", integrators=GENERIC_INTEGRATORS,
        option_prefixes=("contact.",), benchmark="m113-flat")
    #: contact options (keys after "contact."): "implicit" (bool)
    CONTACT_OPTIONS = ("implicit",)

    def defaults(self, options):
        return self.info.default_integrator, self.info.default_step

    def _options(self, sc):
        contact, rest = split_prefixed(sc.options, "contact.", self.name, {"massless.": "massless"})
        for k, v in contact.items():
            if k not in self.CONTACT_OPTIONS:
                raise ValueError(f"scenario.options['contact.{k}']: unknown contact option; choose from "
                                 f"{['contact.' + c for c in self.CONTACT_OPTIONS]}")
            if not isinstance(v, (bool, np.bool_)):
                raise ValueError(f"scenario.options['contact.{k}'] = {v!r}: expected true or false")
        return {k: bool(v) for k, v in contact.items()}, rest

    def check(self, sc) -> None:
        _check_integrator(self.name, sc.integrator, self.info.integrators)
        self._options(sc)

    def build(self, sc) -> Build:
        contact_options, integrator_options = self._options(sc)
        spec, terrain, geo, z0 = vehicle_placement(sc)
        vm = build_vehicle(spec, origin=(sc.start_x, 0.0, z0), geometry=geo, speed=sc.speed)
        add_vehicle_visuals(vm)
        contact = vehicle_contact(vm, terrain, **contact_options)
        m = vm.model
        idx = {n: k for k, n in enumerate(m.body_names)}
        drivetrain = vehicle_drivetrain(spec, idx, vm.sides, sc.driver)
        system = AbsoluteSystem(m, providers=[contact, ShoeTensions(vm.sides), drivetrain], coupling="diagonal")
        return Build(spec, vm, system, contact, drivetrain, sc.integrator, integrator_options)


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
        mine, rest = split_prefixed(sc.options, "massless.", self.name, {"contact.": "links"})
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
        track = MasslessTrack(vm, terrain, opts)
        m = vm.model
        idx = {n: k for k, n in enumerate(m.body_names)}
        drivetrain = vehicle_drivetrain(spec, idx, vm.sides, sc.driver)
        system = (TreeSystem if formulation == "tree" else AbsoluteSystem)(m, providers=[track, drivetrain],
                                                                           coupling="diagonal")
        if formulation == "tree":
            return Build(spec, vm, system, track, drivetrain, RealtimeStepper, {"tree": vm.tree})
        return Build(spec, vm, system, track, drivetrain, sc.integrator, rest)


register_formulation(LinksFormulation())
register_formulation(MasslessFormulation())
