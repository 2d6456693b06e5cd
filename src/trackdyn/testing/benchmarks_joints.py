"""The track-joint formulations of wallin-shabana-2013 side by side on its APC (issue #30): ``apc-joints``.

The APC (``apc``: Tables 1-2, 64 shoes a side) on flat ground under the
paper's kinematic sprocket drive (Fig. 7's shape: 0, a linear ramp, then a
constant 25 rad/s), built at each fidelity of :data:`JOINT_FIDELITIES` that
is registered (``links``: ideal revolute pins with Lagrange multipliers, the
reference; ``penalty``; ``bushing``; ``ancf`` once it is). Every fidelity is
prepared and driven through the ramp first (build, JIT compilation and the
start transient are not measured); then the measured run is ``segments``
rounds, each one segment of ``t_end`` simulated seconds per fidelity in
turn, so that all of them see the same machine load over the same minutes
(the paper's CPU-time ratios, penalty 6x, bushing 3x, ANCF 5x, are of whole
runs on an idle machine). The figures per fidelity are the means over its
segments (recording included, as every benchmark here); ``ratio_to_links``
divides its wall (and CPU) time per simulated second by that of ``links``.
The chassis's forward position and speed at the end tell that the models
ran the same manoeuvre. Timings are never asserted in tests; the figures
live in ``bench/README.md``.
"""

from __future__ import annotations

import os
import time
import warnings

import numpy as np

from ..driver import SprocketSpeed
from ..formulations.contract import formulation_names
from ..sim.run import prepare
from ..spec.scenario import Scenario
from ..terrain import Flat
from .benchmarks import bench, machine_info, timed_run
from . import benchmarks_vehicle as BV  # a module, not its names: benchmarks_vehicle imports benchmarks, which imports this

__all__ = ["JOINT_FIDELITIES", "PAPER_RATIOS", "SPROCKET_SPEED", "apc_joints", "apc_joints_stepsize"]

#: the formulations the paper compares, by trackdyn fidelity name; the first is the reference
JOINT_FIDELITIES = ("links", "penalty", "bushing", "ancf")
#: wallin-shabana-2013 §9: CPU time relative to the constrained model
PAPER_RATIOS = {"penalty": 6.0, "bushing": 3.0, "ancf": 5.0}
#: wallin-shabana-2013 Fig. 7: the sprocket speed it holds after its ramp (rad/s)
SPROCKET_SPEED = 25.0


def _load() -> list:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return []


def _scenario(fidelity: str, step, ramp, record=None, name="apc-joints", integrator=None) -> Scenario:
    """The APC under the sprocket ramp on ``fidelity``; ``integrator``: None (the fidelity's own) or
    ``(name, options)`` (the options go to ``scenario.options``)."""
    t0, t1 = ramp
    kw = {} if integrator is None else {"integrator": integrator[0], "options": dict(integrator[1])}
    return Scenario(vehicle="apc", fidelity=fidelity, terrain=Flat(), driver=SprocketSpeed.ramp(t0, t1, SPROCKET_SPEED),
                    t_end=1e6, step=step, output_step=0.01, record=record, name=name, **kw)


def _fidelities(fidelities, who: str) -> list[str]:
    """The registered fidelities to run (default those of :data:`JOINT_FIDELITIES`), ``links`` first; ValueError
    naming the ones asked for that are not registered."""
    registered = formulation_names()
    missing = [f for f in (fidelities or ()) if f not in registered]
    if missing:
        raise ValueError(f"{who}: fidelities {missing} are not registered; choose from {list(registered)}")
    fids = [f for f in (fidelities or JOINT_FIDELITIES) if f in registered]
    return fids if "links" in fids else ["links", *fids]


@bench("apc-joints")
def apc_joints(t_end: float = 0.5, segments: int = 3, ramp=(0.2, 1.2), step: float | None = None,
               fidelities=None, results: dict | None = None) -> dict:
    """CPU time of the compliant track-joint fidelities relative to ``links`` on the APC (module docstring).

    Parameters
    ----------
    t_end : float
        Simulated seconds of one measured segment (s).
    segments : int
        Rounds of one segment per fidelity.
    ramp : (float, float)
        The drive's ramp from 0 to 25 rad/s (s); the measured run starts at its end. The paper ramps over
        1-8 s; the bench reaches the same final speed sooner to keep the unmeasured start short.
    step : float, optional
        The time step (s) of every fidelity; default each fidelity's own.
    fidelities : sequence of str, optional
        Default those of :data:`JOINT_FIDELITIES` that are registered (``links`` always first).
    results : dict, optional
        Receives ``fidelity -> [Result per segment]``.
    """
    if not isinstance(segments, int) or segments < 1:
        raise ValueError(f"apc_joints: segments must be a positive integer, got {segments!r}")
    if not (t_end > 0):
        raise ValueError(f"apc_joints: t_end must be > 0, got {t_end!r}")
    t0, t1 = (float(x) for x in ramp)
    if not 0.0 <= t0 < t1:
        raise ValueError(f"apc_joints: ramp = {ramp!r}: expected 0 <= start < end (s)")
    fids = _fidelities(fidelities, "apc_joints")
    preps, build_s = {}, {}
    for f in fids:
        w0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the closed loops' redundant pin rows (links)
            preps[f] = prepare(_scenario(f, step, (t0, t1)))
        preps[f].sim.run(t1)  # compile, drop onto the ground, ramp up: not measured
        build_s[f] = time.perf_counter() - w0
    parts = {f: [] for f in fids}
    schedule = []
    for _ in range(segments):
        for f in fids:
            load0 = _load()
            got = [] if results is None else results.setdefault(f, [])
            r, _ = timed_run(preps[f].sim, t_end, got)
            r["load_before"], r["load_after"] = load0, _load()
            parts[f].append(r)
            schedule.append(f)
    runs = []
    for f in fids:
        ps = parts[f]
        steps = sum(p["steps"] for p in ps)
        wall = sum(p["wall_time_s"] for p in ps)
        sim_time = sum(p["sim_time_s"] for p in ps)
        sim = preps[f].sim
        s = sim.state
        idx = sim.system.body_names.index("chassis")
        split = {k: sum(p["split_ms"][k] * p["steps"] for p in ps) / steps for k in ps[0]["split_ms"]}
        runs.append({
            "fidelity": f, "step_size_s": ps[0]["step_size_s"], "steps": steps, "sim_time_s": sim_time,
            "wall_time_s": wall, "ms_per_step": 1e3 * wall / steps, "wall_per_sim": wall / sim_time,
            "cpu_per_sim": sum(p["cpu_ms_per_step"] * p["steps"] for p in ps) / 1e3 / sim_time,
            "wall_per_sim_segments": [p["wall_per_sim"] for p in ps],
            "cpu_per_sim_segments": [p["cpu_ms_per_step"] * p["steps"] / 1e3 / p["sim_time_s"] for p in ps],
            "load_segments": [[p["load_before"], p["load_after"]] for p in ps], "split_ms": split,
            "status": next((p["status"] for p in ps if p["status"] != "complete"), "complete"),
            "build_and_ramp_wall_s": build_s[f], "bodies": sim.system.nb, "constraint_rows": sim.system.nc,
            "chassis_x_m": float(s.q[idx, 0]), "chassis_speed_mps": float(s.v[idx, 0]),
            "load_before": ps[0]["load_before"], "load_after": ps[-1]["load_after"]})
    ref = runs[0]
    for r in runs:
        r["ratio_to_links"] = r["wall_per_sim"] / ref["wall_per_sim"]
        r["cpu_ratio_to_links"] = r["cpu_per_sim"] / ref["cpu_per_sim"]
        r["paper_ratio"] = PAPER_RATIOS.get(r["fidelity"])
        r["chassis_x_minus_links_m"] = r["chassis_x_m"] - ref["chassis_x_m"]
    out = {"benchmark": "apc-joints", "vehicle": "apc", "sprocket_speed_radps": SPROCKET_SPEED,
           "ramp_s": [t0, t1], "segment_s": t_end, "segments": segments, "schedule": schedule,
           "machine": machine_info(), "load_before": runs[0]["load_before"], "load_after": _load()}
    out.update({k: ref[k] for k in ("step_size_s", "steps", "sim_time_s", "wall_time_s", "ms_per_step",
                                    "wall_per_sim", "split_ms", "status")})
    out["ratio_to_links"] = {r["fidelity"]: r["ratio_to_links"] for r in runs}
    out["runs"] = runs
    return out


@bench("apc-joints-stepsize")
def apc_joints_stepsize(t_end: float = 2.0, ramp=(0.2, 1.2), h_ref: float = 1e-5,
                        steps=(5e-5, 1e-4, 2.5e-4, 5e-4), tol: float = 1e-3, fidelities=None,
                        integrators: dict | None = None) -> dict:
    """Per fidelity: the largest step whose run stays within ``tol`` (m) of its own ``h_ref`` run, and the wall
    time per simulated second at that step, relative to ``links`` at its own largest step (issue #30's goal:
    each compliant formulation at most 2x).

    Every fidelity is driven through the ramp at its default step (the APC at 25 rad/s; not measured); from that
    one state it then runs ``t_end`` s at ``h_ref`` and at each of ``steps`` (recording the road wheels' and the
    chassis's positions every 10 ms). The error of a run is the largest difference, over the record, of any road
    wheel's vertical position from the ``h_ref`` run's (the M113's measure, ``m113-stepsize``); the chassis's
    forward and vertical position errors are reported beside it (``chassis_x_error_m``: the driven vehicle's
    travel, which the step changes through the tracks' slip, grows over the run). Runs
    are sequential (fidelity after fidelity), so the ratio is of runs minutes apart: the load is in the record.
    ``integrators`` (optional): ``{fidelity: (integrator, options)}`` to run a fidelity's reference and steps on
    another integrator than its own (e.g. ``{"ancf": ("theta-linearized", {"theta": 0.5})}``); the ramp stays
    on its own.
    """
    if not (t_end > 0 and h_ref > 0 and tol > 0):
        raise ValueError(f"apc_joints_stepsize: t_end, h_ref and tol must be > 0, got {t_end!r}, {h_ref!r}, {tol!r}")
    t0, t1 = (float(x) for x in ramp)
    if not 0.0 <= t0 < t1:
        raise ValueError(f"apc_joints_stepsize: ramp = {ramp!r}: expected 0 <= start < end (s)")
    steps = tuple(float(h) for h in steps)
    for h in steps:
        if not (h > h_ref and abs(0.01 / h - round(0.01 / h)) < 1e-6):
            raise ValueError(f"apc_joints_stepsize: step {h!r} must be larger than h_ref and divide 10 ms")
    fids = _fidelities(fidelities, "apc_joints_stepsize")
    stray = sorted(set(integrators or {}) - set(fids))
    if stray:
        raise ValueError(f"apc_joints_stepsize: integrators = {integrators!r}: fidelities {stray} are not run "
                         f"(fidelities: {fids})")
    out_runs = []
    for f in fids:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            base = prepare(_scenario(f, None, (t0, t1)))
        base.sim.run(t1)
        state0 = base.sim.state.copy()
        wheels = BV._wheel_names(base)
        names = [w + ".pos.z" for w in wheels] + ["chassis.pos.x", "chassis.pos.z"]
        ref = None
        rows = []
        for h in (h_ref,) + steps:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                prep = prepare(_scenario(f, h, (t0, t1), record=tuple(names), name="apc-joints-stepsize",
                                         integrator=(integrators or {}).get(f)))
            prep.sim.state = state0.copy()
            load0 = _load()
            w0, c0 = time.perf_counter(), time.process_time()
            try:
                res = prep.sim.run(state0.t + t_end)
                status = res.metadata.get("status")
            except (FloatingPointError, np.linalg.LinAlgError, ValueError) as err:
                res, status = None, f"failed: {err}"
            wall, cpu = time.perf_counter() - w0, time.process_time() - c0
            row = {"step_size_s": h, "status": status, "wall_per_sim": wall / t_end, "cpu_per_sim": cpu / t_end,
                   "load_before": load0, "load_after": _load()}
            if status == "complete":
                y = np.array([res[n] for n in names])
                if ref is None:
                    ref = y
                else:
                    n = min(ref.shape[1], y.shape[1])
                    err = np.max(np.abs(y[:, :n] - ref[:, :n]), axis=1)
                    row["max_error_m"] = float(np.max(err[:len(wheels)]))
                    row["chassis_x_error_m"] = float(err[len(wheels)])
                    row["chassis_z_error_m"] = float(err[len(wheels) + 1])
            rows.append(row)
        ok = [r for r in rows[1:] if r.get("max_error_m", np.inf) <= tol]
        best = max(ok, key=lambda r: r["step_size_s"]) if ok else None
        out_runs.append({"fidelity": f, "integrator": (integrators or {}).get(f), "runs": rows,
                         "largest_step_s": best["step_size_s"] if best else None,
                         "wall_per_sim_at_largest": best["wall_per_sim"] if best else None,
                         "cpu_per_sim_at_largest": best["cpu_per_sim"] if best else None})
    ref_row = out_runs[0]
    for r in out_runs:
        ok = r["cpu_per_sim_at_largest"] is not None and ref_row["cpu_per_sim_at_largest"] is not None
        r["cpu_ratio_to_links"] = r["cpu_per_sim_at_largest"] / ref_row["cpu_per_sim_at_largest"] if ok else None
        r["wall_ratio_to_links"] = (r["wall_per_sim_at_largest"] / ref_row["wall_per_sim_at_largest"]
                                    if ok else None)
    return {"benchmark": "apc-joints-stepsize", "vehicle": "apc", "t_end_s": t_end, "ramp_s": [t0, t1],
            "h_ref_s": h_ref, "tolerance_m": tol, "compared": "road wheels' z (chassis x and z reported)",
            "machine": machine_info(), "fidelities": out_runs,
            "cpu_ratio_to_links": {r["fidelity"]: r["cpu_ratio_to_links"] for r in out_runs}}
