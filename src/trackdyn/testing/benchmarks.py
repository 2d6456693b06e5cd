"""Benchmarks (``trackdyn bench NAME``): wall time of whole time loops, model build excluded.

Each benchmark returns a JSON-ready dict with at least ``ms_per_step``,
``wall_per_sim`` (wall seconds per simulated second), ``steps``,
``step_size_s`` and ``split_ms`` (mean ms per step and stage). The headline
figures ``ms_per_step`` and ``wall_per_sim`` are always the mean over the
whole measured run, recording included; ``step_ms_p10`` and
``step_ms_median`` (single steps) are secondary. Model build and JIT
compilation are excluded. Timings are never asserted in tests; the figures
live in ``bench/README.md``.
"""

from __future__ import annotations

import os
import platform
import time
from typing import Callable

import numpy as np

from ..sim.simulation import Simulation
from . import problems as P

__all__ = ["BENCHMARKS", "run_benchmark", "machine_info", "timed_run", "time_per_step"]

BENCHMARKS: dict[str, Callable[..., dict]] = {}


def bench(name):
    def deco(fn):
        BENCHMARKS[name] = fn
        return fn

    return deco


def machine_info() -> dict:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "python": platform.python_version()}


def timed_run(sim: Simulation, t_end: float, results: list | None = None) -> tuple[dict, np.ndarray]:
    """Run ``sim`` for ``t_end`` s; (figures, single-step wall times in ms).

    The figures' headline is the mean over the whole run, recording included:
    ``ms_per_step`` (wall time / steps) and ``wall_per_sim`` (wall time /
    simulated time). Secondary: ``step_ms_p10`` and ``step_ms_median`` of the
    single steps (the 10th percentile estimates a step on an idle core of a
    shared machine; it is never the headline), ``cpu_ms_per_step``,
    ``max_joint_violation_m`` (the integrator's largest position violation of
    any step) and the per-stage split (mean ms per step). ``results``: a list
    that receives the run's :class:`Result` (for accuracy figures).
    """
    clk = time.perf_counter
    stamps = []
    worst = [0.0]
    it = sim.integrator

    def cb(_sim):
        stamps.append(clk())
        v = it.last.get("pos_violation", 0.0) if hasattr(it, "last") else 0.0
        if v > worst[0]:
            worst[0] = v
        return False

    cpu0 = time.process_time()
    t0_sim, steps0, rec0 = sim.state.t, sim.steps, sim.record_time
    timing0 = dict(it.timing)
    start = clk()
    res = sim.run(t0_sim + t_end, callback=cb)
    wall = clk() - start
    cpu = time.process_time() - cpu0
    steps = sim.steps - steps0
    split = {k: 1e3 * (it.timing[k] - timing0.get(k, 0.0)) / steps for k in it.timing}
    split["recording"] = 1e3 * (sim.record_time - rec0) / steps
    split["other"] = 1e3 * wall / steps - sum(split.values())
    dt = 1e3 * np.diff(np.array([start] + stamps))
    if results is not None:
        results.append(res)
    return {
        "step_size_s": sim.h, "steps": steps, "sim_time_s": steps * sim.h, "wall_time_s": wall,
        "ms_per_step": 1e3 * wall / steps, "wall_per_sim": wall / (steps * sim.h),
        "step_ms_p10": float(np.percentile(dt, 10)), "step_ms_median": float(np.median(dt)),
        "cpu_ms_per_step": 1e3 * cpu / steps, "max_joint_violation_m": float(worst[0]), "split_ms": split,
        "status": res.metadata.get("status"),
    }, dt


def time_per_step(sim: Simulation, t_end: float, results: list | None = None) -> dict:
    """:func:`timed_run`'s figures: headline the mean over the whole run (recording included), p10 and
    median of the single steps secondary."""
    return timed_run(sim, t_end, results)[0]


@bench("chain64")
def chain64(t_end: float = 2.0, steps=(1e-4, 1e-3), integrator="euler-implicit-linearized",
            results: list | None = None, **options) -> dict:
    """64-link chain on revolutes (issue #2 reference), 2 s from horizontal rest, every series every 10 ms.

    ``results``: a list that receives each run's :class:`Result` (the side-by-side peers read the tip).
    """
    runs = []
    for h in steps:
        m = P.chain(**P.CHAIN64)
        sim = Simulation(m, integrator=integrator, step=h, output_step=max(h, 1e-2), **options)
        sim.run(2 * h)  # compile and warm caches
        sim2 = Simulation(m, integrator=integrator, step=h, output_step=max(h, 1e-2), system=sim.system, **options)
        runs.append(time_per_step(sim2, t_end, results))
    out = {"benchmark": "chain64", "integrator": integrator, "bodies": 64,
           "constraint_rows": sim.system.nc, "machine": machine_info()}
    out.update(runs[0])
    out["runs"] = runs
    return out


def run_benchmark(name: str, **kwargs) -> dict:
    try:
        fn = BENCHMARKS[name]
    except KeyError:
        raise ValueError(f"unknown benchmark {name!r}; choose one of {sorted(BENCHMARKS)}") from None
    return fn(**kwargs)


from . import benchmarks_integrators  # noqa: E402,F401  (registers chain64-integrators)
from . import benchmarks_contact  # noqa: E402,F401  (registers contact-loop)
from . import benchmarks_massless  # noqa: E402,F401  (registers m113-massless-flat, m113-massless-halfround)
from . import benchmarks_vehicle  # noqa: E402,F401  (registers m113-flat, m113-stepsize, m113-step)
from . import benchmarks_memory  # noqa: E402,F401  (registers m113-memory)
from . import benchmarks_nsc  # noqa: E402,F401  (registers m113-flat-nsc)
from . import benchmarks_joints  # noqa: E402,F401  (registers apc-joints, apc-joints-stepsize)
from . import benchmarks_recursive  # noqa: E402,F401  (registers chain64-recursive)
