"""Benchmarks of the massless track fidelity (issue #8): ``m113-massless-flat``, ``m113-massless-halfround``.

The M113 at the ``massless`` fidelity (agapov-kovalev-pogorelov; real-time
stepper, :mod:`trackdyn.integrators.realtime`) rolls at 4 m/s under a PID speed
and heading driver, on flat ground or over a rigid 10 in half-round. The
acceptance target is ``wall_per_sim <= 0.01`` (100 x faster than real time).
Each benchmark builds and compiles the model once (a short warm-up run, not
timed), then times ``repeats`` fresh runs of ``t_end`` simulated seconds from
the same rolling start, recording every series at ``output_step`` (recording
is part of the timed loop), and reports the mean over all runs as the
headline (``ms_per_step``, ``wall_per_sim``; ``meets_target`` judges it), the
median run's ``wall_per_sim_median`` and every run as secondary figures, with
the process's CPU time per simulated second next to the wall time (on a
shared machine the wall time includes waiting for a core).
Importing this module registers the benchmarks.
"""

from __future__ import annotations

import statistics
import time

from .. import terrain as T
from ..assembly.builder import vehicle_geometry
from ..driver import PID
from ..sim.run import prepare
from ..spec.io import get
from ..spec.scenario import Scenario
from .benchmarks import bench, machine_info

__all__ = ["massless_run", "m113_massless_flat", "m113_massless_halfround", "TARGET_WALL_PER_SIM"]

TARGET_WALL_PER_SIM = 0.01
INCH = 0.0254


def _scenario(vehicle, terrain, speed, t_end, step, output_step, options):
    return Scenario(vehicle=vehicle, terrain=terrain, driver=PID(speed=speed, y=0.0), t_end=t_end,
                    fidelity="massless", step=step, output_step=output_step, speed=speed, name="bench-massless",
                    options=dict(options or {}))


def massless_run(name: str, terrain_fn, vehicle: str = "m113", speed: float = 4.0, t_end: float = 4.0,
                 step: float = 1e-2, output_step: float = 0.05, repeats: int = 3, options: dict | None = None) -> dict:
    """Time ``repeats`` fresh runs of ``vehicle`` (massless) at ``speed`` on ``terrain_fn()``; mean + every run."""
    warm = prepare(_scenario(vehicle, terrain_fn(), speed, t_end, step, output_step, options))
    warm.sim.run(5 * step)  # compile the kernels, fill the caches
    runs = []
    for _ in range(int(repeats)):
        prep = prepare(_scenario(vehicle, terrain_fn(), speed, t_end, step, output_step, options))
        sim = prep.sim
        it = sim.integrator
        cpu0 = time.process_time()
        res = sim.run(t_end)
        cpu = time.process_time() - cpu0
        steps = sim.steps
        split = {k: 1e3 * v / steps for k, v in it.timing.items()}
        split["recording"] = 1e3 * sim.record_time / steps
        split["other"] = 1e3 * sim.wall_time / steps - sum(split.values())
        runs.append({
            "status": res.status, "steps": steps, "sim_time_s": sim.state.t, "wall_time_s": sim.wall_time,
            "ms_per_step": 1e3 * sim.wall_time / steps, "wall_per_sim": sim.wall_time / sim.state.t,
            "cpu_per_sim": cpu / sim.state.t,
            "split_ms": split, "final_x_m": float(sim.state.q[0, 0]),
        })
    out = {"benchmark": name, "vehicle": vehicle, "fidelity": "massless", "speed_mps": speed,
           "step_size_s": step, "output_step_s": output_step, "integrator": warm.sim.integrator.name,
           "bodies": warm.sim.system.nb, "repeats": len(runs),
           "target_wall_per_sim": TARGET_WALL_PER_SIM, "machine": machine_info()}
    # the headline is the mean over all runs (total wall time over total steps / simulated time, recording
    # included); the median run is a secondary figure
    steps = sum(r["steps"] for r in runs)
    wall = sum(r["wall_time_s"] for r in runs)
    sim_time = sum(r["sim_time_s"] for r in runs)
    bad = [r["status"] for r in runs if r["status"] != "complete"]
    out.update({"status": bad[0] if bad else "complete", "steps": steps, "sim_time_s": sim_time,
                "wall_time_s": wall, "ms_per_step": 1e3 * wall / steps, "wall_per_sim": wall / sim_time,
                "split_ms": {k: sum(r["split_ms"][k] * r["steps"] for r in runs) / steps for k in runs[0]["split_ms"]}})
    out["wall_per_sim_median"] = statistics.median(r["wall_per_sim"] for r in runs)
    # CPU seconds of this process per simulated second: on a machine shared with other jobs the wall time
    # includes the time the process waited for a core; the CPU time approximates an unloaded run
    out["cpu_per_sim"] = sum(r["cpu_per_sim"] * r["sim_time_s"] for r in runs) / sim_time
    out["cpu_per_sim_median"] = statistics.median(r["cpu_per_sim"] for r in runs)
    out["meets_target"] = bool(out["wall_per_sim"] <= TARGET_WALL_PER_SIM and not bad)
    out["runs"] = runs
    return out


@bench("m113-massless-flat")
def m113_massless_flat(t_end: float = 4.0, step: float = 1e-2, speed: float = 4.0, repeats: int = 3, **kw) -> dict:
    """M113, massless fidelity, 4 m/s on flat ground (rolling start, PID speed driver)."""
    return massless_run("m113-massless-flat", lambda: T.Flat(), speed=speed, t_end=t_end, step=step,
                        repeats=repeats, **kw)


@bench("m113-massless-halfround")
def m113_massless_halfround(t_end: float = 4.0, step: float = 1e-2, speed: float = 4.0, height_in: float = 10.0,
                            repeats: int = 3, **kw) -> dict:
    """M113, massless fidelity, 4 m/s over a rigid half-round of ``height_in`` inches 2 m ahead of the front.

    The vehicle frame starts at x = 0 (the sprocket axis, at the rear); the
    obstacle's leading edge is 2 m ahead of the front of the track, so the
    whole vehicle has passed it within 4 s at 4 m/s.
    """
    spec = get("m113")
    geo = vehicle_geometry(spec)
    front = max(float(t.pins[:, 0].max()) for t in geo.tracks.values()) + spec.shoes.bottom
    H = height_in * INCH
    x_obs = front + 2.0
    out = massless_run("m113-massless-halfround", lambda: T.Flat() + T.HalfRound(H, x=x_obs), speed=speed,
                       t_end=t_end, step=step, repeats=repeats, **kw)
    out["obstacle"] = {"kind": "half-round", "height_m": H, "x_m": x_obs}
    return out
