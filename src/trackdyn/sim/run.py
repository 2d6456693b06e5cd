"""``td.run(scenario)``: build the vehicle of a scenario, run it, write the results folder.

The runner is the glue of one run: spec -> geometry -> model (placed on the
terrain, rolling at the initial speed) -> contact, drivetrain and outputs ->
simulation -> results. It owns no physics.
"""

from __future__ import annotations

import time

import numpy as np

from ..assembly.builder import build_vehicle, vehicle_geometry
from ..formulations.absolute import AbsoluteSystem
from .simulation import Simulation

__all__ = ["run", "prepare", "Prepared", "split_contact_options", "CONTACT_OPTIONS"]

# scenario.options keys of the links fidelity's contact (the rest go to the integrator):
# "contact.implicit" (default True): the contact stiffness and damping enter the step matrix (implicit
# contact); False: the contact forces act explicitly, from the step's start, as in Chrono's SMC systems
# without "stiff contact" (korner-2024 ran Chrono's defaults) -- cheaper per step, stable only below the
# contact's explicit step limit (docs/contact.md)
CONTACT_OPTIONS = ("contact.implicit",)


class Prepared:
    """A scenario ready to run: the vehicle model, its providers and the simulation."""

    def __init__(self, scenario, spec, vm, contact, drivetrain, sim):
        self.scenario = scenario
        self.spec = spec
        self.vehicle = vm
        self.contact = contact
        self.drivetrain = drivetrain
        self.sim = sim


def _default_terrain():
    from ..contact import Material
    from ..terrain import Flat

    # NG-NRMM rigid ground: mu 0.8, E 20 GPa (concrete), korner-2024 §4.2
    return Flat(material=Material("concrete", young=2e10, poisson=0.3, restitution=0.1, friction=0.8))


def _ground_under(terrain, x0: float, x1: float, ys) -> float:
    xs = np.linspace(x0, x1, 200)
    return float(max(np.max([terrain.height(x, y) for x in xs]) for y in ys))


def vehicle_placement(sc):
    """(spec, terrain, geometry, z0) of a scenario: the origin height z0 puts the lowest pad ``sc.drop``
    above the highest ground under the tracks (shared by every fidelity level)."""
    spec = sc.vehicle_spec()
    terrain = sc.terrain if sc.terrain is not None else _default_terrain()
    geo = vehicle_geometry(spec)
    xs = np.concatenate([t.pins[:, 0] for t in geo.tracks.values()])
    y = spec.tracks.lateral_offset
    ground = _ground_under(terrain, sc.start_x + xs.min(), sc.start_x + xs.max(), (y, -y))
    return spec, terrain, geo, ground + sc.drop - geo.ground_z()


def vehicle_drivetrain(spec, idx, sides, driver):
    """The spec's powertrain on a built model (``idx``: body name → index; ``sides``: side infos).

    A map against track speed (``map_speed = "track"``) is read at the
    sprocket's speed times its pin-circle (assembly) radius.
    """
    from ..powertrain import Drivetrain

    scale = spec.sprocket.assembly_radius if spec.powertrain.map_speed == "track" else 1.0
    return Drivetrain(idx["chassis"], (idx[sides["left"].sprocket], idx[sides["right"].sprocket]),
                      spec.powertrain.torque_map, spec.powertrain.brake_torque, driver, map_scale=scale)


def split_contact_options(options: dict):
    """``(ContactSystem keywords, other options)`` from a scenario's ``options`` (keys ``contact.*``).

    Raises ValueError naming the key and the value for an unknown ``contact.*`` key or a bad value.
    """
    contact, rest = {}, {}
    for k, v in dict(options or {}).items():
        if not (isinstance(k, str) and k.startswith("contact.")):
            rest[k] = v
        elif k not in CONTACT_OPTIONS:
            raise ValueError(f"scenario.options[{k!r}]: unknown contact option; choose from {CONTACT_OPTIONS}")
        elif not isinstance(v, (bool, np.bool_)):
            raise ValueError(f"scenario.options[{k!r}] = {v!r}: expected true or false")
        else:
            contact[k[len("contact."):]] = bool(v)
    return contact, rest


def prepare(scenario, record=None) -> Prepared:
    """Build everything a scenario needs, without running it."""
    from ..assembly.contact import vehicle_contact
    from ..assembly.outputs import ShoeTensions
    from ..assembly.visuals import add_vehicle_visuals

    sc = scenario
    contact_options, integrator_options = split_contact_options(sc.options)
    if contact_options and sc.fidelity != "links":
        raise ValueError(f"scenario.options: {sorted('contact.' + k for k in contact_options)} apply to the "
                         f"links fidelity only, not to {sc.fidelity!r}")
    if sc.fidelity == "massless":
        # the massless-track fidelity (agapov-kovalev-pogorelov): its own builder, provider and stepper
        from ..massless.run import prepare_massless

        return prepare_massless(sc, record)
    if sc.fidelity != "links":
        raise ValueError(f"scenario.fidelity = {sc.fidelity!r}: choose 'links' or 'massless'")
    spec, terrain, geo, z0 = vehicle_placement(sc)
    vm = build_vehicle(spec, origin=(sc.start_x, 0.0, z0), geometry=geo, speed=sc.speed)
    add_vehicle_visuals(vm)
    contact = vehicle_contact(vm, terrain, **contact_options)
    providers = [contact, ShoeTensions(vm.sides)]
    drivetrain = None
    m = vm.model
    idx = {n: k for k, n in enumerate(m.body_names)}
    drivetrain = vehicle_drivetrain(spec, idx, vm.sides, sc.driver)
    providers.append(drivetrain)
    system = AbsoluteSystem(m, providers=providers, coupling="diagonal")
    sim = Simulation(m, integrator=sc.integrator, step=sc.step, output_step=sc.output_step, solver=sc.solver,
                     record=record if record is not None else sc.record, system=system, **integrator_options)
    if sc.speed:
        sim.state = system.project_velocities(sim.state)
    return Prepared(sc, spec, vm, contact, drivetrain, sim)


def run(scenario, out=None, callback=None, progress=None):
    """Run a scenario; write ``out`` (a results folder) when given. Returns the :class:`Result`.

    ``progress`` is a callable ``(sim) -> bool | None`` called every step (e.g.
    the CLI's progress bar); returning True stops the run.
    """
    t0 = time.perf_counter()
    prep = prepare(scenario)
    build_s = time.perf_counter() - t0
    sim = prep.sim

    def cb(s):
        stop = False
        if callback is not None:
            stop = bool(callback(s))
        if progress is not None:
            stop = bool(progress(s)) or stop
        return stop

    sim.recorder.extra_metadata.update({
        "scenario": scenario.to_dict(),
        "vehicle": prep.spec.model_dump(mode="json"),
        "geometry": {s: {"shoes": t.n_shoes, "idler_shift_m": t.idler_shift}
                     for s, t in prep.vehicle.geometry.tracks.items()},
        "build_time_s": build_s,
    })
    return sim.run(scenario.t_end, callback=cb if (callback or progress) else None, out=out)
