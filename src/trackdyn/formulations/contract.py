"""The fidelity contract: the one interface every track model implements, and the registry by name.

A *fidelity* (DESIGN.md, "Fidelity levels of one vehicle") is a formulation
of one vehicle: ``links`` (every shoe a body), ``massless`` (track forces on
the wheels), later ``recursive``, ``penalty``, ``bushing``, ``ancf`` and
``synthesis``. Each is an object implementing :class:`Formulation`,
registered here by name with :func:`register_formulation`; the runner
(:func:`trackdyn.sim.run.prepare`) looks the name up with
:func:`get_formulation` and never branches on it.

The contract, for implementers (as SciPy's ``OdeSolver`` states its own):

``name`` : str
    The registry key (``Scenario.fidelity``, ``--fidelity``).
``info`` : :class:`FormulationInfo`
    What it models, its cost class, its paper, its defaults and what it
    accepts; ``trackdyn fidelities`` and the docs are written from it.
``defaults(options) -> (integrator, step)``
    The integrator name and time step (s) a scenario with these
    ``options`` gets when it leaves them unset. A fidelity's default step
    is its own: the massless model's real-time 10 ms, not the link model's
    0.5 ms.
``check(scenario) -> None``
    Refuse an unsupported combination before anything is built: raise
    ``ValueError`` naming the fidelity, the option (or integrator) and what
    it accepts.
``build(scenario) -> Build``
    The model and the system that the generic integrators and
    :class:`~trackdyn.sim.simulation.Simulation` step, with its force
    providers, as a :class:`Build`. It records the same series names for
    the same vehicle parts as every other fidelity (``chassis.*``,
    ``left.roadwheel[2].*``, ``driver.acc.z``); series it cannot have (shoe
    tensions without shoes) are absent, never zero-filled.

Nothing here knows about vehicles (DESIGN.md's layer rules): a vehicle
fidelity is defined beside its builder in :mod:`trackdyn.assembly`
(:mod:`trackdyn.assembly.fidelities` holds ``links`` and ``massless``) and
registers itself here; its equations live in this package, its stepper in
:mod:`trackdyn.integrators`, its force laws in :mod:`trackdyn.contact`.

Example
-------
>>> from trackdyn.formulations.contract import formulation_names, get_formulation
>>> "links" in formulation_names() and get_formulation("massless").info.default_step
0.01
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

__all__ = ["Formulation", "FormulationInfo", "Build", "register_formulation", "unregister_formulation",
           "get_formulation", "formulation_names", "formulations", "event_step", "check_running_gear"]


@dataclass(frozen=True)
class FormulationInfo:
    """What a fidelity is, for users and the registry listing.

    Parameters
    ----------
    models : str
        One line: what the fidelity models (and what it leaves out).
    cost : str
        Cost class, e.g. ``"reference"`` or ``"real-time"``.
    paper : str
        The seed paper it follows (``korner-2024``, ...).
    default_step : float
        Its own time step, s, for scenarios that give none.
    default_integrator : str
        Its own integrator (a name of the integrator registry or its own stepper).
    event_step : float, optional
        Its step for the mobility events (obstacle impacts), s, where ``default_step`` is not converged on
        them (measured, with the measurement named where it is set); None: ``default_step``. It applies to the
        fidelity's default configuration: options that choose another default step (e.g. NSC contact) keep it.
    integrators : tuple of str
        The integrators it accepts.
    option_prefixes : tuple of str
        ``scenario.options`` key prefixes it reads (``"contact."``,
        ``"massless."``); keys of another fidelity's prefix are refused.
    benchmark : str
        The ``trackdyn bench`` case that measures its cost on the M113.
    conformance : tuple
        ``(scenario, metric, tolerance, reason)`` rows: how far its chassis
        figures may stand from the reference fidelity's in the cross-fidelity
        conformance scenarios (:mod:`trackdyn.testing.conformance`), and why
        the physics allows that much. Empty for the reference. The scenarios
        named in the rows are the ones it runs.
    conformance_vehicle : str
        The built-in vehicle of its conformance runs (and of the reference's
        runs it is held against): ``"m113"``, or a vehicle it can build where
        it cannot build the M113.
    extra_conformance : tuple
        ``(vehicle, rows)`` pairs: the same conformance on further built-in vehicles, each with its own
        ``(scenario, metric, tolerance, reason)`` rows (the ``synthesis`` fidelity's M113 beside its
        ``robot-6x6``).
    running_gear : tuple of str
        The running gear of the vehicles it builds: ``"tracks"`` (a
        :class:`~trackdyn.spec.vehicle.VehicleSpec`) and/or ``"wheels"`` (a
        :class:`~trackdyn.spec.wheeled.WheeledVehicleSpec`);
        :func:`check_running_gear` refuses the others before anything is built.
    """

    models: str
    cost: str
    paper: str
    default_step: float
    default_integrator: str
    integrators: tuple = ()
    option_prefixes: tuple = ()
    benchmark: str = ""
    conformance: tuple = ()
    event_step: float | None = None
    conformance_vehicle: str = "m113"
    running_gear: tuple = ("tracks",)
    extra_conformance: tuple = ()

    def to_dict(self) -> dict:
        return {"models": self.models, "cost": self.cost, "paper": self.paper, "default_step_s": self.default_step,
                "event_step_s": self.event_step if self.event_step is not None else self.default_step,
                "default_integrator": self.default_integrator, "integrators": list(self.integrators),
                "option_prefixes": list(self.option_prefixes), "benchmark": self.benchmark,
                "conformance": [{"scenario": s, "metric": m, "tolerance": t, "reason": r}
                                for s, m, t, r in self.conformance],
                "conformance_vehicle": self.conformance_vehicle, "running_gear": list(self.running_gear),
                "extra_conformance": [{"vehicle": v, "conformance": [
                    {"scenario": s, "metric": m, "tolerance": t, "reason": r} for s, m, t, r in rows]}
                    for v, rows in self.extra_conformance]}


@dataclass
class Build:
    """What :meth:`Formulation.build` returns: a system ready for an integrator, and its handles.

    ``vehicle`` is the built vehicle (its ``model``, ``sides``, ``geometry``,
    ``origin``: what events and recorders read); ``contact`` the provider of
    the terrain forces (``contacts()`` gives the active contacts), ``drivetrain``
    the powertrain provider or None; ``integrator`` a name or an integrator
    class, with ``integrator_options`` for it.
    """

    spec: Any
    vehicle: Any
    system: Any
    contact: Any = None
    drivetrain: Any = None
    integrator: Any = "euler-implicit-linearized"
    integrator_options: dict = field(default_factory=dict)

    @property
    def model(self):
        return self.system.model


@runtime_checkable
class Formulation(Protocol):
    """A fidelity of a vehicle (module docstring: the contract)."""

    name: str
    info: FormulationInfo

    def defaults(self, options: dict) -> tuple[str, float]: ...

    def check(self, scenario) -> None: ...

    def build(self, scenario) -> Build: ...


_REGISTRY: dict[str, Formulation] = {}


def register_formulation(formulation: Formulation, replace: bool = False) -> Formulation:
    """Register a fidelity under ``formulation.name``; returns it (usable as a class decorator's tail).

    Raises ValueError for a name already taken (unless ``replace``) or an
    object that does not implement :class:`Formulation`.
    """
    if isinstance(formulation, type):
        formulation = formulation()
    if not isinstance(formulation, Formulation) or not isinstance(getattr(formulation, "info", None),
                                                                      FormulationInfo):
        raise ValueError(f"register_formulation: {formulation!r} does not implement Formulation "
                         "(name, info: FormulationInfo, defaults, check, build)")
    name = formulation.name
    if not isinstance(name, str) or not name:
        raise ValueError(f"register_formulation: name = {name!r}: expected a non-empty string")
    if name in _REGISTRY and not replace and _REGISTRY[name] is not formulation:
        raise ValueError(f"register_formulation: a fidelity named {name!r} is registered already")
    _REGISTRY[name] = formulation
    return formulation


def unregister_formulation(name: str) -> None:
    """Remove a registered fidelity (tests register toys and take them away again)."""
    _REGISTRY.pop(name, None)


def get_formulation(name: str) -> Formulation:
    """The fidelity registered as ``name``; ValueError naming the choices otherwise."""
    try:
        return _REGISTRY[name]
    except (KeyError, TypeError):
        raise ValueError(f"fidelity {name!r}: choose one of {formulation_names()}") from None


def formulation_names() -> tuple:
    """Registered fidelity names, in registration order (``links`` first)."""
    return tuple(_REGISTRY)


def formulations() -> dict:
    """``name -> Formulation`` of every registered fidelity (a copy)."""
    return dict(_REGISTRY)


def check_running_gear(name: str, spec) -> None:
    """Refuse a vehicle whose running gear (``spec.running_gear``: ``"tracks"``, ``"wheels"``) the fidelity
    ``name`` does not build, naming the vehicle, its running gear and the fidelities that build it."""
    gear = getattr(spec, "running_gear", "tracks")
    if gear in get_formulation(name).info.running_gear:
        return
    able = [n for n, f in _REGISTRY.items() if gear in f.info.running_gear]
    raise ValueError(f"fidelity {name!r}: vehicle {getattr(spec, 'name', spec)!r} runs on {gear}, and the "
                     f"{name!r} fidelity models {' and '.join(get_formulation(name).info.running_gear)} only; "
                     f"fidelities for {gear}: {able}")


def event_step(name: str, options: dict | None = None) -> float:
    """The time step the mobility events take on fidelity ``name`` when none is given: its
    ``info.event_step`` in its default configuration, else its default step for these scenario options."""
    f = get_formulation(name)
    step = f.defaults(dict(options or {}))[1]
    if f.info.event_step is not None and step == f.info.default_step:
        return f.info.event_step
    return step
