"""The stairs scene: a vehicle drives at a flight of stairs; did it climb, and if not, why.

:func:`stairs_scene` is the terrain (flat approach, ``n`` steps of ``riser``
and ``tread``, the landing at the top); :func:`climb_stairs` runs a vehicle
(default the ``robot``, massless fidelity; any registered fidelity works) at
it under a PID speed driver as a trial of the mobility events
(:func:`~trackdyn.experiments.trials.run_trial`), stops when the outcome is
decided and classifies it with :func:`classify`:

- ``"climbed"``: the hull rose by the flight's height and the whole track
  passed the last nosing;
- ``"overturned"``: pitch or roll beyond 75° (the vehicle tipped over,
  typically backwards off a riser it could not take) -- an outcome the
  mobility events do not name, reported as such;
- otherwise the failure mode of the events' one classifier,
  :func:`~trackdyn.experiments.trials.classify_failure`, from the last
  ``window`` seconds: ``"nose-in"``, ``"high-centred"``, ``"track slip"``,
  ``"stalled"``.
"""

from __future__ import annotations

import math

import numpy as np

from ..driver import PID
from ..spec.io import get
from ..spec.scenario import Scenario
from ..terrain import Flat, Stairs
from .trials import FAILURE_MODES, classify_failure, run_trial, vehicle_extent

__all__ = ["stairs_scene", "climb_stairs", "classify", "OUTCOMES"]

OUTCOMES = ("climbed", "overturned") + tuple(m for m in FAILURE_MODES if m != "fell in")
TIP_OVER = math.radians(75.0)


def stairs_scene(riser: float = 0.17, tread: float = 0.28, n: int = 5, x: float = 1.2, material=None):
    """Flat ground with a flight of ``n`` stairs whose first riser stands at ``x`` (m)."""
    return Flat(material=material) + Stairs(riser=riser, tread=tread, n=n, x=x, material=material)


def classify(mon, extent, mass: float, rise: float, last_nosing_x: float, window: float = 2.0,
             z0: float | None = None) -> str:
    """Outcome of a stairs run from its trial monitor's samples (see the module docstring).

    Parameters
    ----------
    mon : Monitor
        The trial's :class:`~trackdyn.experiments.trials.Monitor`.
    extent : VehicleExtent
        The vehicle's extent (its track's rear, its centre of mass, its hull).
    mass : float
        Total mass, kg.
    rise : float
        Height of the flight, m.
    last_nosing_x : float
        World x of the last riser, m.
    """
    z, x, pitch, roll = mon.arr("z"), mon.arr("x"), mon.arr("pitch"), mon.arr("roll")
    if len(z) == 0:
        return "stalled"
    z0 = float(z[0]) if z0 is None else z0
    if np.nanmax(np.abs(pitch)) > TIP_OVER or np.nanmax(np.abs(roll)) > TIP_OVER:
        return "overturned"
    # the rear of the track (along the hull's x axis from the centre of mass) beyond the last nosing
    rear_x = x[-1] + (extent.rear_x - extent.com[0]) * math.cos(pitch[-1])
    if z[-1] - z0 > rise - 0.05 * max(rise, 0.1) and rear_x > last_nosing_x:
        return "climbed"
    return classify_failure(mon, extent, mass, window=window)


def climb_stairs(vehicle="robot", riser: float = 0.17, tread: float = 0.28, n: int = 5, speed: float = 0.5,
                 approach: float = 0.4, t_max: float | None = None, stall_time: float = 4.0, step: float = 2e-3,
                 output_step: float = 0.02, fidelity: str = "massless", options: dict | None = None, out=None):
    """Drive ``vehicle`` at a flight of stairs with a PID speed driver; returns ``(summary, result)``.

    The vehicle starts with its front ``approach`` m before the first riser.
    The run stops when the vehicle has climbed (and rolled 0.3 m onto the
    landing), when it has made no progress (2 cm in x or z) for ``stall_time``
    s, when it overturned, or at ``t_max`` (default: twice the time the
    flight takes at ``speed``, plus 5 s). ``summary["outcome"]`` is one of
    :data:`OUTCOMES`.
    """
    spec = get(vehicle) if isinstance(vehicle, str) else vehicle
    ext = vehicle_extent(spec)
    x_riser = 1.0 + ext.front_x + approach  # start_x = 1 m: the vehicle frame's origin
    terrain = stairs_scene(riser, tread, n, x=x_riser)
    last_nosing = x_riser + (n - 1) * tread
    run_len = (last_nosing - x_riser) + ext.length + approach + 0.3
    if t_max is None:
        t_max = 2.0 * run_len / speed + 5.0
    sc = Scenario(vehicle=spec, terrain=terrain, driver=PID(speed=speed, y=0.0), t_end=t_max, fidelity=fidelity,
                  step=step, output_step=output_step, start_x=1.0, name="stairs", options=dict(options or {}),
                  record=("chassis.*", "*.track.*", "hull.*", "*.sprocket.*"))
    rise = n * riser
    state = {"best": -np.inf, "t_best": 0.0}

    def stop(mon):
        x, z, t = mon.samples["x"][-1], mon.samples["z"][-1], mon.t
        if x + z > state["best"] + 0.02:
            state["best"], state["t_best"] = x + z, t
        pitch, roll = mon.samples["pitch"][-1], mon.samples["roll"][-1]
        if abs(pitch) > TIP_OVER or abs(roll) > TIP_OVER:
            return "overturned"
        rear_x = x + (ext.rear_x - ext.com[0]) * math.cos(pitch)
        if z - mon.samples["z"][0] > rise - 0.05 * max(rise, 0.1) and rear_x > last_nosing + 0.3:
            return "climbed"
        return "stalled" if t - state["t_best"] > stall_time else None

    trial = run_trial(sc, stop=stop, every=0.05, out=out)
    res, sim = trial.result, trial.prep.sim
    mass = float(np.sum(sim.system.mass))
    mon = trial.monitor
    outcome = (classify(mon, ext, mass, rise, last_nosing) if res.status in ("complete", "stopped")
               else res.status)
    z = mon.arr("z")
    summary = {
        "scene": "stairs", "vehicle": spec.name, "fidelity": fidelity, "riser_m": riser, "tread_m": tread, "steps": n,
        "speed_mps": speed, "outcome": outcome, "status": res.status,
        "rise_m": float(z.max() - z[0]) if len(z) else 0.0,
        "max_pitch_deg": float(np.degrees(np.nanmax(mon.arr("pitch")))) if len(z) else 0.0,
        "time_s": float(res.t[-1]), "sim_time_s": sim.state.t, "wall_time_s": sim.wall_time,
        "wall_per_sim": sim.wall_time / max(sim.state.t, 1e-12), "step_size_s": sim.h,
    }
    return summary, res
