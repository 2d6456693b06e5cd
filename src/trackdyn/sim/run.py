"""``td.run(scenario)``: build the vehicle of a scenario, run it, write the results folder.

The runner is the glue of one run: the scenario's fidelity (a
:class:`~trackdyn.formulations.contract.Formulation` looked up by name in the
registry) builds the vehicle, its providers and its system; the runner makes
the :class:`~trackdyn.sim.simulation.Simulation` that steps it and writes the
results. It owns no physics and never branches on a fidelity.
"""

from __future__ import annotations

import time

from ..assembly import fidelities as _fidelities  # noqa: F401  (registers the built-in fidelities)
from ..assembly.placement import vehicle_drivetrain, vehicle_placement
from ..formulations.contract import check_running_gear, get_formulation
from ..integrators import INTEGRATORS
from .realtime import RealtimeSimulation
from .simulation import Simulation

__all__ = ["run", "prepare", "Prepared", "run_metadata", "vehicle_placement", "vehicle_drivetrain"]


class Prepared:
    """A scenario ready to run: the vehicle model, its providers and the simulation."""

    def __init__(self, scenario, spec, vm, contact, drivetrain, sim):
        self.scenario = scenario
        self.spec = spec
        self.vehicle = vm
        self.contact = contact
        self.drivetrain = drivetrain
        self.sim = sim


def prepare(scenario, record=None) -> Prepared:
    """Build everything a scenario needs, without running it.

    The fidelity checks the scenario first (an unsupported integrator or
    option is refused before anything is built), then builds its system; an
    integrator that runs several steps per compiled call (``chunked``) gets
    the :class:`~trackdyn.sim.realtime.RealtimeSimulation` that drives it so.
    """
    sc = scenario
    formulation = get_formulation(sc.fidelity)
    check_running_gear(sc.fidelity, sc.vehicle_spec())
    formulation.check(sc)
    b = formulation.build(sc)
    integrator = INTEGRATORS.get(b.integrator, b.integrator) if isinstance(b.integrator, str) else b.integrator
    sim_cls = RealtimeSimulation if getattr(integrator, "chunked", False) else Simulation
    sim = sim_cls(b.model, integrator=b.integrator, step=sc.step, output_step=sc.output_step, solver=sc.solver,
                  record=record if record is not None else sc.record, system=b.system, **b.integrator_options)
    if sc.speed:
        sim.state = b.system.project_velocities(sim.state)
    return Prepared(sc, b.spec, b.vehicle, b.contact, b.drivetrain, sim)


def run_metadata(prep, scenario, build_s: float) -> dict:
    """What a results folder's ``metadata.json`` says of the run's set-up: scenario, fidelity, spec, geometry."""
    geo = getattr(prep.vehicle, "geometry", None)  # a fidelity without a track geometry has none
    return {
        "scenario": scenario.to_dict(),
        "fidelity": {"name": scenario.fidelity} | get_formulation(scenario.fidelity).info.to_dict(),
        "vehicle": prep.spec.model_dump(mode="json"),
        "geometry": ({s: {"shoes": t.n_shoes, "idler_shift_m": t.idler_shift} for s, t in geo.tracks.items()}
                     if geo is not None else None),
        "build_time_s": build_s,
    }


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

    sim.recorder.extra_metadata.update(run_metadata(prep, scenario, build_s))
    return sim.run(scenario.t_end, callback=cb if (callback or progress) else None, out=out)
