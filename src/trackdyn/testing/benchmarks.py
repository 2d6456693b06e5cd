"""Benchmarks (``trackdyn bench NAME``): wall time of whole time loops, model build excluded.

Each benchmark returns a JSON-ready dict with at least ``ms_per_step``,
``wall_per_sim`` (wall seconds per simulated second), ``steps``,
``step_size_s`` and ``split_ms`` (mean ms per step and stage). Timings are
never asserted in tests; the figures live in ``bench/README.md``.
"""

from __future__ import annotations

import os
import platform
import time
from typing import Callable

from ..sim.simulation import Simulation
from . import problems as P

__all__ = ["BENCHMARKS", "run_benchmark", "machine_info"]

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


def time_simulation(sim: Simulation, t_end: float, warmup: float = 0.0) -> dict:
    """Run ``sim`` (after an optional warm-up) and report the timing of the measured part."""
    if warmup > 0:
        sim.run(warmup)
    it = sim.integrator
    t0_sim, steps0, rec0 = sim.state.t, sim.steps, sim.record_time
    timing0 = dict(it.timing)
    start = time.perf_counter()
    sim.run(t0_sim + t_end)
    wall = time.perf_counter() - start
    steps = sim.steps - steps0
    split = {k: 1e3 * (it.timing[k] - timing0[k]) / steps for k in it.timing}
    split["recording"] = 1e3 * (sim.record_time - rec0) / steps
    split["other"] = 1e3 * wall / steps - sum(split.values())
    return {
        "step_size_s": sim.h,
        "steps": steps,
        "sim_time_s": steps * sim.h,
        "wall_time_s": wall,
        "ms_per_step": 1e3 * wall / steps,
        "wall_per_sim": wall / (steps * sim.h),
        "split_ms": split,
    }


@bench("chain64")
def chain64(t_end: float = 2.0, steps=(1e-4, 1e-3), integrator="euler-implicit-linearized", **options) -> dict:
    """64-link chain on revolutes (issue #2 reference), 2 s from horizontal rest."""
    runs = []
    for h in steps:
        m = P.chain(**P.CHAIN64)
        sim = Simulation(m, integrator=integrator, step=h, output_step=max(h, 1e-2), **options)
        sim.run(2 * h)  # compile and warm caches
        sim2 = Simulation(m, integrator=integrator, step=h, output_step=max(h, 1e-2), system=sim.system, **options)
        runs.append(time_simulation(sim2, t_end))
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
from . import benchmarks_vehicle  # noqa: E402,F401  (registers m113-flat, m113-stepsize, m113-step, m113-memory)
