"""Benchmark ``chain64-integrators``: cost of each integrator at the accuracy a user would ask for.

For the 64-link chain of the thesis's shoes released horizontal (2 s), each
integrator runs at the largest step that keeps the free end of the chain
within ``tol`` (1e-3 m) of a converged reference at every 0.01 s; reported:
that step, wall time per simulated second, ms per step, the stage split and
the work counters. ``abm`` has no step to choose: its relative tolerance is
searched instead (atol = 1e-2 rtol); its ``step_size_s``, ``steps`` and
``ms_per_step`` are those of its internal steps (mean step = 2 s / substeps).

Search: steps ``0.01/n`` (so every step divides the 0.01 s comparison grid)
from large to small; a run that diverges or misses ``tol`` fails. After two
failures the measured order predicts the step that would pass and the search
jumps to it; after a pass it bisects back over the steps it skipped, so the
result is the largest passing step of the sequence. Below ``min_step`` nothing is run: the needed step is
extrapolated from the last two runs with the measured order, and the cost per
simulated second from the smallest run's ms per step (``extrapolated: true``).

Register by importing this module (``trackdyn bench chain64-integrators``).
"""

from __future__ import annotations

import math
import time
import warnings

import numpy as np

from ..integrators import INTEGRATORS
from ..sim.simulation import Simulation
from . import problems as P
from .benchmarks import bench, machine_info

__all__ = ["chain64_integrators", "chain_tip"]

GRID = 1e-2
N_SEQUENCE = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512)


def chain_tip(res, n_links=64, pitch=P.CHAIN64["pitch"]):
    """World (x, z) of the free end of :func:`~trackdyn.testing.problems.chain` from its last link's record."""
    k = n_links - 1
    x, z = res[f"link[{k}].pos.x"], res[f"link[{k}].pos.z"]
    e0, e2 = res[f"link[{k}].quat.e0"], res[f"link[{k}].quat.e2"]
    # rotation about y by φ: body x axis = (cos φ, 0, −sin φ), with cos φ = e0² − e2², sin φ = 2 e0 e2
    return np.column_stack([x + 0.5 * pitch * (e0 * e0 - e2 * e2), z - 0.5 * pitch * (2.0 * e0 * e2)])


def _run(integrator, step, t_end, solver="direct", **options):
    """One timed run: (tip (n, 2) or None, info dict)."""
    m = P.chain(**P.CHAIN64)
    sim = Simulation(m, integrator=integrator, step=step, output_step=GRID, solver=solver,
                     record=["link[63].pos.*", "link[63].quat.*"], **options)
    it = sim.integrator
    t0 = time.perf_counter()
    res = sim.run(t_end)
    wall = time.perf_counter() - t0
    steps = max(1, sim.steps)
    info = {"integrator": integrator, "solver": solver, "step_size_s": step, "status": res.status,
            "steps": sim.steps, "sim_time_s": sim.state.t, "wall_time_s": wall, "ms_per_step": 1e3 * wall / steps,
            "wall_per_sim": wall / max(sim.state.t, 1e-300),
            "split_ms": {k: 1e3 * v / steps for k, v in it.timing.items()},
            "counters": {k: (int(v) if float(v).is_integer() else float(v)) for k, v in it.counters.items()}}
    info["split_ms"]["recording"] = 1e3 * sim.record_time / steps
    info["split_ms"]["other"] = info["ms_per_step"] - sum(info["split_ms"].values())
    if options:
        info["options"] = dict(options)
    if res.status != "complete":
        info["error"] = res.metadata.get("error")
        return None, info
    return chain_tip(res), info


def _warm_up(integrator, solver, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sim = Simulation(P.chain(n_links=3), integrator=integrator, step=1e-3, solver=solver, **options)
        sim.run(5e-3)


def _search_step(integrator, ref, t_end, tol, min_step, solver, log, **options):
    tried = []

    def attempt(k):
        h = GRID / N_SEQUENCE[k]
        tip, info = _run(integrator, h, t_end, solver, **options)
        dev = float(np.max(np.abs(tip - ref))) if tip is not None else float("inf")
        info["tip_dev_m"] = dev
        tried.append(info)
        if log:
            log(f"  {integrator} h = {h:.4g} s: {info['status']}, tip deviation {dev:.3g} m, "
                f"{info['wall_per_sim']:.2f} s/s")
        return info

    last_fail = -1
    i = 0
    while i < len(N_SEQUENCE):
        if GRID / N_SEQUENCE[i] < min_step * (1 - 1e-12):
            break
        info = attempt(i)
        if info["tip_dev_m"] <= tol:
            # a jump may have skipped larger steps that pass too: bisect back over them
            best, hi = info, i
            lo = last_fail
            while hi - lo > 1:
                mid = (lo + hi) // 2
                trial = attempt(mid)
                if trial["tip_dev_m"] <= tol:
                    best, hi = trial, mid
                else:
                    lo = mid
            best["passed"] = True
            best["extrapolated"] = False
            return best, sorted(tried, key=lambda t: -t["step_size_s"])
        last_fail = i
        # two finite failures: jump ahead with the measured order, but never past the two smallest
        # steps above min_step (an extrapolation needs two runs in the asymptotic range)
        fin = [t for t in tried if np.isfinite(t["tip_dev_m"])]
        nxt = i + 1
        if len(fin) >= 2:
            a, b = fin[-2], fin[-1]
            p = math.log(a["tip_dev_m"] / b["tip_dev_m"]) / math.log(a["step_size_s"] / b["step_size_s"])
            if p > 0.3:
                h_need = b["step_size_s"] * (tol / b["tip_dev_m"]) ** (1.0 / p)
                while nxt < len(N_SEQUENCE) and GRID / N_SEQUENCE[nxt] > 1.3 * h_need:
                    nxt += 1
                last_ok = max(k for k, n in enumerate(N_SEQUENCE) if GRID / n >= min_step * (1 - 1e-12))
                nxt = max(i + 1, min(nxt - 1, last_ok - 1))
        i = nxt
    # nothing passed above min_step: extrapolate from the two smallest finite runs
    fin = [t for t in tried if np.isfinite(t["tip_dev_m"])]
    out = dict(fin[-1]) if fin else {"integrator": integrator, "status": "diverged"}
    out["passed"] = False
    out["extrapolated"] = True
    if len(fin) >= 2:
        a, b = fin[-2], fin[-1]
        p = math.log(a["tip_dev_m"] / b["tip_dev_m"]) / math.log(a["step_size_s"] / b["step_size_s"])
        h_need = b["step_size_s"] * (tol / b["tip_dev_m"]) ** (1.0 / p)
        out.update(measured_order=p, step_size_s=h_need, smallest_step_run_s=b["step_size_s"],
                   wall_per_sim=1e-3 * b["ms_per_step"] / h_need, steps=int(round(t_end / h_need)))
    return out, tried


def _search_abm(ref, t_end, tol, rtols, solver, log, **options):
    tried = []
    for rtol in rtols:
        tip, info = _run("abm", GRID, t_end, solver, rtol=rtol, atol=1e-2 * rtol, **options)
        dev = float(np.max(np.abs(tip - ref))) if tip is not None else float("inf")
        info.update(tip_dev_m=dev, rtol=rtol, atol=1e-2 * rtol, output_step_s=GRID)
        sub = info["counters"].get("substeps", 0)
        if sub:
            # per internal step, like the fixed-step schemes (the 0.01 s "step" is only the output interval)
            scale = info["steps"] / sub
            info["step_size_s"] = info["mean_internal_step_s"] = info["sim_time_s"] / sub
            info["ms_per_step"] *= scale
            info["split_ms"] = {k: v * scale for k, v in info["split_ms"].items()}
            info["steps"] = sub
        tried.append(info)
        if log:
            log(f"  abm rtol = {rtol:g}: {info['status']}, tip deviation {dev:.3g} m, "
                f"{info['wall_per_sim']:.2f} s/s, {sub} internal steps")
        if dev <= tol:
            info["passed"] = True
            info["extrapolated"] = False
            return info, tried
    out = dict(tried[-1])
    out["passed"] = False
    out["extrapolated"] = False
    return out, tried


@bench("chain64-integrators")
def chain64_integrators(t_end: float = 2.0, tol: float = 1e-3, integrators=None, solver: str = "direct",
                        reference=("rk4", 2.5e-4), min_step: float = 6e-5,
                        abm_rtols=(1e-1, 3e-2, 1e-2, 3e-3, 1e-3, 1e-4, 1e-5, 1e-6), log=None) -> dict:
    """Each integrator at the largest step keeping chain64's tip within ``tol`` of the reference (module docstring).

    Parameters
    ----------
    t_end : float
        Simulated time, s (2).
    tol : float
        Allowed tip deviation, m (1e-3).
    integrators : sequence of str, optional
        Default: every registered fixed-step integrator and ``abm``.
    solver : str
        Saddle-point solver of every run.
    reference : (str, float)
        Integrator and step of the reference; it is checked against the same
        integrator at twice the step (Richardson estimate of its error).
    min_step : float
        Smallest step actually run, s; below it the step is extrapolated.
    abm_rtols : sequence of float
        Relative tolerances tried for ``abm``, loosest first.
    log : callable, optional
        ``log(str)`` for progress lines.
    """
    names = list(integrators) if integrators is not None else [
        "euler-implicit-linearized", "euler-implicit", "euler-implicit-projected", "hht", "ab3", "rk4", "abm"]
    for name in names:
        if name not in INTEGRATORS:
            raise ValueError(f"chain64-integrators: unknown integrator {name!r}; choose one of {sorted(INTEGRATORS)}")
    ref_name, ref_step = reference
    _warm_up(ref_name, solver)
    if log:
        log(f"reference: {ref_name} at h = {ref_step:g} s")
    ref, ref_info = _run(ref_name, ref_step, t_end, solver)
    ref2, _ = _run(ref_name, 2 * ref_step, t_end, solver)
    if ref is None or ref2 is None:
        raise RuntimeError(f"chain64-integrators: the reference run diverged: {ref_info.get('error')}")
    ref_err = float(np.max(np.abs(ref2 - ref)))
    results = []
    for name in names:
        _warm_up(name, solver)
        if name == "abm":
            best, tried = _search_abm(ref, t_end, tol, abm_rtols, solver, log)
        else:
            best, tried = _search_step(name, ref, t_end, tol, min_step, solver, log)
        best = dict(best)
        best["tried"] = [{k: t.get(k) for k in ("step_size_s", "rtol", "status", "tip_dev_m", "wall_per_sim",
                                                "ms_per_step", "steps")} for t in tried]
        results.append(best)
    passed = [r for r in results if r.get("passed") or r.get("extrapolated")]
    top = min(passed, key=lambda r: r.get("wall_per_sim", np.inf)) if passed else results[0]
    out = {"benchmark": "chain64-integrators", "bodies": 64, "t_end_s": t_end, "tip_tolerance_m": tol,
           "solver": solver, "reference": {"integrator": ref_name, "step_size_s": ref_step,
                                           "difference_to_double_step_m": ref_err,
                                           "richardson_error_estimate_m": ref_err / 15.0
                                           if ref_name == "rk4" else None},
           "machine": machine_info(), "fastest": top.get("integrator")}
    for k in ("ms_per_step", "wall_per_sim", "steps", "step_size_s", "split_ms"):
        out[k] = top.get(k)
    out["runs"] = results
    return out
