"""Memory benchmark (issue #34): peak RSS of M113 cruise runs of growing length, streamed to a results folder.

Registered name (``trackdyn bench m113-memory --json``, ``python bench/m113_memory.py``):

- ``m113-memory``: the M113 cruising at 4.2 m/s on flat ground (the
  ``m113-flat`` scenario: PID speed and heading, SMC Hertz contact) for each
  length in ``lengths`` simulated seconds, every series every ``output_step``
  (10 ms), streamed to a results folder (a Parquet dataset of parts), each run
  in a fresh process. Reported per run: the peak RSS (``ru_maxrss``) after
  the model build and at the end, the RSS along the run (a thread reads
  ``/proc/self/statm`` at each tenth of the simulated time), wall and CPU time
  per simulated second, the samples and parts written. The acceptance of
  issue #34: the longest run's peak within 5 % of the shortest's and below
  600 MiB (``flat`` and ``below_600_mib`` in the JSON).

The defaults are the issue's: 10, 100 and 1000 s at h = 5e-4 with the link
track, which takes hours on a shared 2-core machine (the 1000-s run is
≈ 1000 s × several wall seconds per simulated second); development runs pass
shorter lengths or ``fidelity="massless"`` (the same recorder and writer, 495
series instead of 4888). Timings are never asserted in tests.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import warnings

from ..io.results import part_files
from ..sim.run import prepare
from .benchmarks import bench, machine_info

__all__ = ["m113_memory", "memory_child"]

MIB = 1024.0 * 1024.0


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # KiB (Linux)


def _rss_mib() -> float:
    try:
        with open("/proc/self/statm", encoding="ascii") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / MIB
    except (OSError, ValueError):
        return float("nan")


def memory_child(t_end: float, step: float, output_step: float, fidelity: str, out: str) -> dict:
    """One run of :func:`m113_memory` in this process; returns (and prints as JSON) its figures."""
    from .benchmarks_vehicle import cruise_scenario  # here: benchmarks_vehicle imports this module's registry

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the redundant pin rows closing each loop (expected)
        prep = prepare(cruise_scenario(step=step, output_step=output_step, fidelity=fidelity))
    sim = prep.sim
    built = _peak_mib()
    profile: list[list[float]] = []
    done = threading.Event()

    def watch():
        # the current RSS at each tenth of the simulated time (no step callback: it would take the massless
        # fidelity off its compiled multi-step path)
        marks = [t_end * k / 10 for k in range(1, 11)]
        while not done.wait(0.05):
            while marks and sim.state.t >= marks[0] - 0.5 * step:
                profile.append([round(marks.pop(0), 6), round(_rss_mib(), 1)])

    th = threading.Thread(target=watch, daemon=True)
    th.start()
    c0, w0 = time.process_time(), time.perf_counter()
    res = sim.run(t_end, out=out)
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    done.set()
    th.join()
    it = sim.integrator
    steps = sim.steps
    split = {k: 1e3 * v / max(steps, 1) for k, v in it.timing.items()}
    split["recording"] = 1e3 * sim.record_time / max(steps, 1)
    row = {"t_end_s": t_end, "step_size_s": step, "output_step_s": output_step, "fidelity": fidelity,
           "steps": steps, "samples": len(res.t), "series": len(res.columns), "parts": len(part_files(out)),
           "status": res.status, "peak_rss_after_build_mib": round(built, 1), "peak_rss_mib": round(_peak_mib(), 1),
           "rss_end_mib": round(_rss_mib(), 1), "rss_along_run_mib": profile,
           "wall_time_s": wall, "cpu_time_s": cpu, "wall_per_sim": wall / t_end, "cpu_per_sim": cpu / t_end,
           "ms_per_step": 1e3 * wall / max(steps, 1), "recording_us_per_sample": 1e6 * sim.record_time / max(len(res.t), 1),
           "split_ms": split}
    print(json.dumps(row))
    return row


@bench("m113-memory")
def m113_memory(lengths=(10.0, 100.0, 1000.0), step: float = 5e-4, output_step: float = 0.01,
                fidelity: str = "links", out: str | None = None) -> dict:
    """Peak RSS (MiB) of fresh-process M113 cruise runs of each length, every series streamed every 10 ms.

    Parameters
    ----------
    lengths : sequence of float
        Simulated seconds of each run (one fresh process each, in this order).
    step : float
        Time step, s (the memory depends on it only through the work buffers).
    output_step : float
        Sampling interval of every series, s.
    fidelity : str
        ``links`` (4888 series) or ``massless`` (495 series, ~50x faster).
    out : path, optional
        Keep each run's results folder as ``out/run_<length>``; default: a
        temporary folder, removed afterwards.

    Returns
    -------
    dict
        ``runs`` (one row per length: peak RSS after build and at the end,
        the RSS along the run, wall and CPU per simulated second, samples,
        parts) and ``peak_ratio`` (longest run's peak over the shortest's),
        ``flat`` (ratio ≤ 1.05) and ``below_600_mib``.
    """
    runs = []
    tmp = None if out is not None else tempfile.mkdtemp(prefix="trackdyn-m113-memory-")
    base = out if out is not None else tmp
    try:
        for T in lengths:
            dest = os.path.join(str(base), f"run_{float(T):g}")
            code = (f"from trackdyn.testing.benchmarks_memory import memory_child; "
                    f"memory_child({float(T)!r}, {float(step)!r}, {float(output_step)!r}, {fidelity!r}, {dest!r})")
            p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
            if p.returncode != 0:
                raise RuntimeError(f"m113-memory: the {T:g}-s run failed:\n{p.stderr[-2000:]}")
            runs.append(json.loads(p.stdout.strip().splitlines()[-1]))
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    peaks = [r["peak_rss_mib"] for r in runs]
    ratio = peaks[-1] / peaks[0] if peaks else None
    return {"benchmark": "m113-memory", "fidelity": fidelity, "step_size_s": step, "output_step_s": output_step,
            "lengths_s": list(lengths), "peak_rss_mib": peaks, "peak_ratio": ratio,
            "flat": bool(ratio is not None and ratio <= 1.05), "below_600_mib": bool(peaks and max(peaks) < 600.0),
            "runs": runs, "machine": machine_info()}
