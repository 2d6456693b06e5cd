"""``trackdyn bench chain64-recursive``: chain64 in joint coordinates against MuJoCo's kinematic tree, side by side.

Issue #31's speed goal: chain64 (:data:`~trackdyn.testing.problems.CHAIN64`, 64 links hung from a ground pin and
released horizontal) stepped by the ``recursive`` formulation (:class:`~trackdyn.formulations.recursive.RecursiveSystem`,
:class:`~trackdyn.integrators.recursive.RecursiveRK4`: RK4 on the 64 joint angles, each stage one O(n) recursive
pass) at h = 1e-4 s costs at most what MuJoCo's own kinematic tree of the same chain costs per step on this machine.

One process, one after the other: trackdyn's recursive run, then MuJoCo's tree
(:func:`~trackdyn.testing.benchmarks_peers.chain64_mjcf` ``"tree"``: 64 hinges) with ``implicitfast`` and with
``Euler``, each for ``t_end`` s at ``step``, every run recording its state every 10 ms inside the timed loop.
Accuracy: the tip's (the last link's free end) largest distance over the run from MuJoCo's tree at ``step / 10``
(exact joints: the reference of ``bench chain64 --peers``). Without MuJoCo installed (the ``peers`` extra) only
trackdyn's figures are returned.
"""

from __future__ import annotations

import time

import numpy as np

from ..formulations.recursive import RecursiveSystem
from ..integrators.recursive import RecursiveRK4
from ..math.quaternion import quat_to_matrix
from . import problems as P
from .benchmarks import bench, machine_info

__all__ = ["chain64_recursive"]


def _tip_local() -> np.ndarray:
    return np.array([0.5 * P.CHAIN64["pitch"], 0.0, 0.0])


def run_recursive(step: float, t_end: float, output_step: float = 0.01) -> dict:
    """trackdyn's recursive chain64: timing (whole run, recording inside) and the tip every ``output_step``."""
    system = RecursiveSystem(P.chain(**P.CHAIN64))
    it = RecursiveRK4(system, step)
    state = system.initial_state()
    n = int(round(t_end / step))
    every = max(1, int(round(output_step / step)))
    lever = _tip_local()
    tips, times, stamps = [], [], np.empty(n)
    state = it.step(state)  # the compiled kernels' first call (JIT or cache load) is not measured
    state = system.initial_state()
    clk = time.perf_counter
    cpu0 = time.process_time()
    start = clk()
    for i in range(n):
        state = it.step(state)
        if (i + 1) % every == 0:
            q = state.q[-1]
            tips.append(q[:3] + quat_to_matrix(q[3:7]) @ lever)
            times.append(state.t)
        stamps[i] = clk()
    wall = clk() - start
    cpu = time.process_time() - cpu0
    dt = 1e3 * np.diff(np.concatenate([[start], stamps]))
    finite = bool(np.all(np.isfinite(state.q)))
    return {"engine": "trackdyn", "formulation": "recursive (64 joint angles, one O(n) pass per RK4 stage)",
            "integrator": RecursiveRK4.name, "step_size_s": step, "steps": n, "sim_time_s": n * step,
            "wall_time_s": wall, "ms_per_step": 1e3 * wall / n, "us_per_step": 1e6 * wall / n,
            "wall_per_sim": wall / (n * step), "cpu_ms_per_step": 1e3 * cpu / n,
            "step_ms_p10": float(np.percentile(dt, 10)), "step_ms_median": float(np.median(dt)),
            "status": "complete" if finite else "diverged", "_tip": np.array(tips), "_t": np.array(times)}


@bench("chain64-recursive")
def chain64_recursive(t_end: float = 2.0, step: float = 1e-4, peers: bool = True) -> dict:
    """chain64 recursive against MuJoCo's tree, side by side (module docstring)."""
    if not (t_end > 0 and step > 0 and abs(0.01 / step - round(0.01 / step)) < 1e-9):
        raise ValueError(f"chain64-recursive: t_end and step must be > 0 and step must divide 10 ms, got "
                         f"{t_end!r}, {step!r}")
    td = run_recursive(step, t_end)
    tip, tt = td.pop("_tip"), td.pop("_t")
    out = {"benchmark": "chain64-recursive", "bodies": 64, "machine": machine_info(), "runs": [td],
           "goal": "trackdyn's us per step at most MuJoCo's tree's (implicitfast) on this machine"}
    if not peers:
        return out
    try:
        from .benchmarks_peers import _load_model, _tip, chain64_mjcf, import_mujoco, run_mujoco, settings
        mujoco = import_mujoco()
    except (ImportError, RuntimeError) as err:
        out["peers_error"] = str(err)
        return out
    lever = _tip_local()
    ref_model = _load_model(mujoco, chain64_mjcf("tree", step / 10, settings(step / 10, integrator="Euler")))
    ref = run_mujoco(ref_model, mujoco.MjData(ref_model), t_end)["_rec"]
    ref_tip = _tip(ref, ref_model.nbody - 1, lever)

    def tip_error(t_tip):
        k = min(len(t_tip), len(ref_tip))
        return float(np.max(np.linalg.norm(t_tip[:k] - ref_tip[:k], axis=1)))

    td["tip_error_max_m"] = tip_error(tip)
    for integ in ("implicitfast", "Euler"):
        model = _load_model(mujoco, chain64_mjcf("tree", step, settings(step, integrator=integ)))
        data = mujoco.MjData(model)
        mujoco.mj_forward(model, data)
        r = run_mujoco(model, data, t_end)
        rec = r.pop("_rec")
        r.pop("warnings", None)
        r.update({"engine": "mujoco", "version": mujoco.__version__, "integrator": integ,
                  "formulation": "64 hinges (kinematic tree)", "us_per_step": 1e3 * r["ms_per_step"],
                  "tip_error_max_m": tip_error(_tip(rec, model.nbody - 1, lever))})
        out["runs"].append(r)
    ref_us = next(r["us_per_step"] for r in out["runs"] if r.get("integrator") == "implicitfast")
    for r in out["runs"]:
        r["ratio_to_mujoco_implicitfast"] = r["us_per_step"] / ref_us
    out["reference"] = f"MuJoCo's tree at h = {step / 10:g} s (Euler; exact joints)"
    return out
