"""Mobility events of korner-2024 chapter 4 and the NG-NRMM procedures, with their limit searches.

Five events, each a function returning an :class:`EventResult` (a JSON-ready
``dict`` whose keys are the CLI's ``--json`` output):

==================  ===========================================  ======================================
event               procedure                                    headline keys
==================  ===========================================  ======================================
``half-round``      TOP 1-1-014, thesis §4.2.1                   ``height_in``, ``limiting_speed_mps``,
                                                                 ``peaks`` ``[[speed, g], ...]``
``step-climb``      TOP 2-2-611, §4.2.2                          ``limit_m``
``gap-crossing``    TOP 2-2-611, §4.2.3                          ``limit_m``
``trapezoid``       NG-NRMM, §4.2.4 (12 barriers, 12 ditches)    ``barriers``, ``ditches`` ("S"/"F")
``ride``            constant speed over a road profile           ``rms_g``, ``peak_g``, ``spectrum``
==================  ===========================================  ======================================

Every event takes the vehicle (a spec or a built-in name), ``fidelity``
(passed to the :class:`~trackdyn.spec.scenario.Scenario`, so the cheaper
track models run the same events), the time ``step`` and, optionally, the
§5.1 tensioning procedure (``tension=True``) and a results folder ``out``.
With ``out`` the event writes one results folder per trial under
``out/trials/``, its standard figure(s) and, last, ``out/summary.json`` (the
event result); an ``INCOMPLETE`` marker is present while it runs.

The default step is the fidelity's step for events (``trackdyn fidelities``, ``event_step_s``): for
``links`` 2.5e-4 s, where the M113's procedures agree with the thesis's 1e-4 s (its default 5e-4 s is
not converged on obstacles: docs/events.md, "The time step of the events"); for
``massless`` its real-time 10 ms. A trial whose run diverges (a numerical failure, not an outcome of the
procedure) is repeated with the step halved, up to ``refine`` times (default
1); the repeats are listed under ``refinements`` and each trial reports its
``step_s``. The other trials are not re-run at the smaller step: the result
lists the steps its trials ran at (``steps_s``) and sets ``mixed_steps`` when
they differ. :class:`EventDiverged` is raised only when the last repeat
diverges too (docs/events.md, "Numerical settings").

Example
-------
>>> import trackdyn as td                                            # doctest: +SKIP
>>> r = td.events.step_climb_limit("m113", lo=0.3, hi=0.9, tol=0.01, out="runs/step")
>>> r["limit_m"], [t["mode"] for t in r["trials"] if not t["passed"]]
"""

from __future__ import annotations

import json
import math
import os
import re
import time
from pathlib import Path

import numpy as np

from .. import terrain as T
from .._version import __version__
from ..driver import PID, FullThrottle
from ..assembly.fidelities import LINKS_EVENT_STEP
from ..errors import check_number
from ..formulations.contract import check_running_gear
from ..formulations.contract import event_step as fidelity_event_step
from ..io.results import INCOMPLETE_MARKER, _json_default, write_json_atomic
from ..spec import get as get_spec
from ..spec import scenario as _scenario  # _scenario.FIDELITIES: the fidelities registered at the look-up
from ..spec.scenario import Scenario
from ..viz import plots
from ..viz.mechanism import mechanism_figure
from ..viz.plots import new_figure, save_figure
from .limits import SEARCHES, limit_search
from .tensioning import window_means
from .trials import (EVENT_RECORD, G, LIMITED_BY, TIMBER, classify_failure, mechanism_series, mechanism_summary, moving_average,
                     peak_source, run_trial, vehicle_extent, write_trial)

__all__ = ["EventResult", "EventDiverged", "EVENTS", "DEFAULT_STEP", "resolve_vehicle", "run_event", "half_round",
           "step_climb",
           "step_climb_limit", "gap_crossing", "gap_crossing_limit", "trapezoid", "ride", "event_figures",
           "TRAPEZOID_TOP_LENGTHS_IN", "TRAPEZOID_SLOPES_DEG", "HALF_ROUND_HEIGHTS_IN", "INCH"]

INCH = 0.0254
#: the events a wheeled vehicle (point tyres, no enveloping of obstacles) runs
WHEELED_EVENTS = ("ride",)
DEFAULT_STEP = LINKS_EVENT_STEP  # the links fidelity's step for events; every event takes its fidelity's own
HALF_ROUND_HEIGHTS_IN = (4, 6, 8, 10, 12)
TRAPEZOID_TOP_LENGTHS_IN = (6, 30, 140)
TRAPEZOID_SLOPES_DEG = (16, 26, 38, 68)


# ---------------------------------------------------------------------------------------------- result
class EventResult(dict):
    """The figures of an event: a plain ``dict`` (JSON-ready) with the event's name under ``"event"``.

    ``EventResult.figures()`` draws the event's standard figure(s) from the
    dict alone, so a saved ``summary.json`` can be redrawn.
    """

    @property
    def event(self) -> str:
        return self["event"]

    def to_json(self, **kw) -> str:
        return json.dumps(self, default=_json_default, **kw)

    def figures(self) -> dict:
        """``{file stem: matplotlib Figure}`` of the event's standard figures."""
        return event_figures(self)

    @classmethod
    def load(cls, path) -> "EventResult":
        """Read an event folder's ``summary.json`` (or the file itself)."""
        p = Path(path)
        if p.is_dir():
            p = p / "summary.json"
        if not p.exists():
            raise FileNotFoundError(f"{p}: no event summary (an unfinished or failed event folder?)")
        return cls(json.loads(p.read_text(encoding="utf-8")))


class EventDiverged(RuntimeError):
    """A trial's simulation diverged: the event has no answer at these numerical settings."""


def _check_run(run, what):
    if run.status == "diverged" or run.reason == "diverged":
        raise EventDiverged(f"{what}: the simulation diverged at t = {run.prep.sim.state.t:.4f} s "
                            f"(step {run.prep.sim.h:g} s): "
                            f"{run.result.metadata.get('error') or 'the state left any physical range'}")


def _num(name, value, positive=False, nonneg=False):
    return check_number(name, value, positive=positive, nonneg=nonneg)


def resolve_vehicle(vehicle="m113", sprocket_dx: float = 0.0, sprocket_dz: float = 0.0, idler_dx: float = 0.0,
                    idler_dz: float = 0.0, changes: dict | None = None):
    """A :class:`~trackdyn.spec.vehicle.VehicleSpec` from a name, file or spec, with geometry offsets (m)
    and dotted-path ``changes`` applied (thesis §5.1: the shoe count is re-derived)."""
    spec = get_spec(vehicle) if isinstance(vehicle, (str, os.PathLike)) else vehicle
    if not hasattr(spec, "model_dump"):
        raise ValueError(f"vehicle = {vehicle!r}: expected a VehicleSpec or a vehicle name")
    if changes:
        spec = spec.replace(dict(changes))
    if sprocket_dx or sprocket_dz:
        spec = spec.with_sprocket_offset(dx=float(sprocket_dx), dz=float(sprocket_dz))
    if idler_dx or idler_dz:
        spec = spec.with_idler_offset(dx=float(idler_dx), dz=float(idler_dz))
    return spec


class _Context:
    """Settings every event shares: vehicle, fidelity, numerics, tensioning, output folder, progress."""

    def __init__(self, event, vehicle, fidelity, step, output_step, tension, out, progress, scenario_options,
                 refine=1):
        self.event = event
        self.spec = resolve_vehicle(vehicle)
        fidelities = _scenario.FIDELITIES
        if fidelity not in fidelities:
            raise ValueError(f"fidelity = {fidelity!r}: choose one of {fidelities}")
        self.fidelity = fidelity
        check_running_gear(fidelity, self.spec)
        if self.spec.running_gear == "wheels" and event not in WHEELED_EVENTS:
            raise ValueError(f"event {event}: {self.spec.name!r} runs on point tyres (kim-2012's tyre: the ground "
                             "straight under the wheel centre), which meet an obstacle's face as a wall; it runs "
                             f"{list(WHEELED_EVENTS)} (docs/synthesis.md, 'The whole robot')")
        if step is None:  # the fidelity's step for events (links 2.5e-4, NSC 1e-3, massless 1e-2)
            # scenario_options are Scenario fields; the fidelity's own options are their ``options``
            step = fidelity_event_step(fidelity, dict((scenario_options or {}).get("options") or {}))
        self.step = _num("step", step, positive=True)
        self.output_step = _num("output_step", output_step, positive=True)
        ratio = self.output_step / self.step
        if abs(ratio - round(ratio)) > 1e-6 * ratio or ratio < 1 - 1e-9:
            self.output_step = self.step * max(1, round(ratio))
        self.extent = vehicle_extent(self.spec)  # GeometryError before anything runs
        if isinstance(refine, bool) or not isinstance(refine, (int, np.integer)) or not 0 <= refine <= 4:
            raise ValueError(f"refine = {refine!r}: expected an integer 0..4 (step halvings on divergence)")
        self.refine = int(refine)
        self.refinements = []
        self.trial_steps = []  # the step of every trial's kept run (after any halving)
        if tension is True:
            tension = {}
        if tension not in (None, False) and not isinstance(tension, dict):
            raise ValueError(f"tension = {tension!r}: expected True/False or a dict of tensioning options")
        self.tension = tension if isinstance(tension, dict) else None
        self.out = None if out is None else Path(out)
        self.progress = progress
        self.scenario_options = dict(scenario_options or {})
        self.t_start = time.perf_counter()
        self.sim_time = 0.0
        self.trial_wall = 0.0
        self.build_wall = 0.0
        self.n_trials = 0
        if self.out is not None:
            self.out.mkdir(parents=True, exist_ok=True)
            s = self.out / "summary.json"
            if s.exists():
                s.unlink()
            # trial folders of an earlier event in this folder would mix with this one's
            import shutil

            shutil.rmtree(self.out / "trials", ignore_errors=True)
            (self.out / INCOMPLETE_MARKER).write_text(
                f"event {event} is writing this folder (pid {os.getpid()}); summary.json is written last\n",
                encoding="utf-8")

    def mass(self) -> float:
        """Chassis mass, kg: its weight scales the hull-contact threshold of the failure modes."""
        return self.spec.chassis.mass

    def scenario(self, name, terrain, driver, t_end, start_x, speed=0.0, step=None):
        h = self.step if step is None else step
        out_step = h * max(1, round(self.output_step / h))
        return Scenario(vehicle=self.spec, terrain=terrain, driver=driver, t_end=t_end, fidelity=self.fidelity,
                        step=h, output_step=out_step, start_x=start_x, speed=speed, name=name,
                        **self.scenario_options)

    def run(self, what, attempt):
        """Run a trial, ``attempt(step) -> TrialRun``; a diverged run is repeated with the step halved.

        A divergence is numerical (a stiff impact the step cannot resolve), not an outcome of the
        procedure: up to ``refine`` halvings are tried, each recorded in :attr:`refinements` (with the
        diverged attempt's partial results under ``diverged/`` of the event folder); when the last one
        diverges too, :class:`EventDiverged` is raised.
        """
        h = self.step
        for k in range(self.refine + 1):
            run = attempt(h)
            self.account(run)
            if not (run.status == "diverged" or run.reason == "diverged"):
                self.trial_steps.append(h)
                return run
            rec = {"trial": what, "step_s": h, "t_s": float(run.prep.sim.state.t),
                   "error": run.result.metadata.get("error")}
            if self.out is not None:  # the diverged attempt's partial results are kept, for the diagnosis
                run.summary = {"event_trial": what, "diverged": True, **rec}
                d = write_trial(run, self.out / "diverged" / re.sub(r"[^A-Za-z0-9.-]+", "_", f"{what} h{h:g}"))
                rec["folder"] = str(d.relative_to(self.out))
            self.refinements.append(rec)
            if k < self.refine:
                self.say(f"  diverged at t = {run.prep.sim.state.t:.3f} s with h = {h:g} s: "
                         f"again with h = {h / 2:g} s")
                h /= 2
        _check_run(run, what)

    def trial_dir(self, label):
        return None if self.out is None else self.out / "trials" / label

    def say(self, msg):
        if self.progress is not None:
            self.progress(msg)

    def account(self, run):
        self.n_trials += 1
        self.sim_time += float(run.prep.sim.state.t)
        self.trial_wall += run.wall_time_s
        self.build_wall += run.build_time_s

    def finish(self, result: EventResult, figures=True) -> EventResult:
        result.setdefault("vehicle", self.spec.name)
        result.setdefault("fidelity", self.fidelity)
        result.setdefault("step_size_s", self.step)
        # the steps the result's trials ran at: a halving on divergence (refine) leaves the other trials at
        # the larger step; the result says so instead of re-running them (docs/events.md, Numerical settings)
        result.setdefault("steps_s", sorted(set(self.trial_steps), reverse=True))
        result["mixed_steps"] = len(result["steps_s"]) > 1
        result["tensioning"] = self.tension is not None
        # the ground model of every trial (scenario option terrain.ground, docs/terrain.md)
        result.setdefault("ground", (self.scenario_options.get("options") or {}).get("terrain.ground", "rigid"))
        result["refinements"] = self.refinements
        result["trials_run"] = self.n_trials
        result["sim_time_s"] = self.sim_time
        result["wall_time_s"] = time.perf_counter() - self.t_start
        result["run_wall_time_s"] = self.trial_wall
        result["build_wall_time_s"] = self.build_wall
        result["wall_per_sim"] = self.trial_wall / self.sim_time if self.sim_time > 0 else None
        result["trackdyn_version"] = __version__
        result.update(_finite(dict(result)))
        if self.out is not None:
            if figures:
                files = []
                for stem, fig in event_figures(result).items():
                    files.append(save_figure(fig, self.out / f"{stem}.png", dpi=100).name)
                result["figures"] = files
            marker = self.out / INCOMPLETE_MARKER
            if marker.exists():
                marker.unlink()
            write_json_atomic(self.out / "summary.json", dict(result))
            result["out"] = str(self.out)
        return result


def _finite(obj):
    """``obj`` with every non-finite float replaced by ``None``: the result is strict JSON (no NaN)."""
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    if isinstance(obj, (float, np.floating)):
        return float(obj) if math.isfinite(obj) else None
    if isinstance(obj, np.integer):
        return int(obj)
    return obj


def _tension_opts(ctx, settle_time):
    """Tensioning options fitted into a settle phase of ``settle_time`` s (lock before it ends)."""
    if ctx.tension is None:
        return None
    opts = dict(ctx.tension)
    avg = opts.setdefault("average_time", min(0.4, 0.25 * settle_time))
    opts.setdefault("free_time", 0.4 * settle_time)
    opts.setdefault("max_free_time", max(opts["free_time"], settle_time - avg - 0.1 * settle_time))
    return opts


def _fig55(ctx, run, t0, t1):
    """ITT and idler position over the settle window (thesis Fig. 5.5)."""
    info = run.tensioning
    if info and info.get("lock_s") is not None and info.get("free_end_s") is not None:
        t0, t1 = info["free_end_s"], info["lock_s"]
    w = window_means(run.result, t0, t1, ctx.spec.chassis.com)
    return {"itt_N": w["itt_N"], "idler_x_m": w.get("idler_x_m"), "idler_z_m": w.get("idler_z_m"),
            "settle_window_s": w["window_s"]}


def _path(mon, dt=0.05):
    t, x, z = mon.arr("t"), mon.arr("x"), mon.arr("z")
    if len(t) == 0:
        return [[], []]
    keep = np.unique(np.searchsorted(t, np.arange(t[0], t[-1] + 1e-9, dt)).clip(0, len(t) - 1))
    return [np.round(x[keep], 4).tolist(), np.round(z[keep], 4).tolist()]


def _profile(terrain, x0, x1):
    x, z = terrain.profile(x0, x1, 0.0, 800)
    return {"type": "profile", "x": np.round(np.asarray(x), 4).tolist(), "z": np.round(np.asarray(z), 4).tolist()}


def _search_kwargs(search, lo, hi, tol, increment, values):
    if search not in SEARCHES:
        raise ValueError(f"search = {search!r}: choose one of {SEARCHES}")
    if search == "bisect":
        return {"method": "bisect", "lo": lo, "hi": hi, "tol": tol}
    if search == "stepped":
        return {"method": "stepped", "start": lo, "stop": hi, "increment": increment}
    return {"method": "values", "values": values if values is not None else [lo]}


# ---------------------------------------------------------------------------------------------- half-round
def half_round(vehicle="m113", height_in: float = 8.0, speeds=(2.0, 3.0, 4.0, 5.0, 6.0), *,
               lead_time: float = 3.0, limit_g: float = 2.5, filter_window: float = 0.01, limit_on: str = "unfiltered",
               stop_after_limit: bool = False, clear: float = 1.0, refine: int = 1,
               fidelity: str = "links",
               step: float | None = None, output_step: float = 0.01, tension=False, out=None, progress=None,
               scenario_options=None) -> EventResult:
    """Half-round obstacle ride-limiting speed (TOP 1-1-014, korner-2024 §4.2.1, Figs. 4.7/4.8).

    For each speed the vehicle starts rolling at that speed with its front
    ``lead_time · speed`` m (3 × speed in the thesis) before a rigid
    half-round of ``height_in`` inches; a PID driver holds speed and heading.
    The run ends when the rear of the vehicle is ``clear`` m past the
    obstacle. The peak |a_z| of the driver's seat (thesis Table 3.1, the
    point's acceleration without gravity, at every time step) is taken from
    half a metre before the front reaches the obstacle on, unfiltered and
    after a centred moving average over ``filter_window`` s. The
    ride-limiting speed is where the peak (``limit_on``: ``"unfiltered"``
    as the thesis, or ``"filtered"``) first crosses ``limit_g`` g, by linear
    interpolation between the neighbouring speeds; ``None`` when no speed
    crosses (``limit_status`` says whether the limit is above or below the
    speeds tried). Only runs that completed (the rear ``clear`` m past the
    obstacle) enter ``peaks`` and the limit; the others are listed under
    ``excluded`` with their peak and the reason.

    Each run's ``peak_source`` names the impact that makes its peak
    (:func:`~trackdyn.experiments.trials.peak_source`: the road wheel, idler
    or hull hit hardest within 5 ms of it, its time, and a road wheel's arm
    against the jounce stop); ``peak_sources`` lists them per speed.

    Returns ``{"event": "half-round", "height_in", "limiting_speed_mps",
    "peaks": [[speed, g], ...], "peaks_filtered": ..., "excluded": [{"speed_mps",
    "peak_g", "peak_filtered_g", "reason"}, ...], "runs": [...],
    "peak_sources": [[speed, source, t], ...], ...}``.
    """
    h_in = _num("height_in", height_in, positive=True)
    speeds = sorted(_num("speeds[]", v, positive=True) for v in (speeds if np.iterable(speeds) else [speeds]))
    if not speeds:
        raise ValueError("speeds: give at least one speed")
    _num("lead_time", lead_time, positive=True)
    _num("limit_g", limit_g, positive=True)
    _num("filter_window", filter_window, nonneg=True)
    if limit_on not in ("unfiltered", "filtered"):
        raise ValueError(f"limit_on = {limit_on!r}: choose 'unfiltered' or 'filtered'")
    ctx = _Context("half-round", vehicle, fidelity, step, output_step, tension, out, progress, scenario_options,
                   refine)
    ext = ctx.extent
    H = h_in * INCH
    runs = []
    for v in speeds:
        x_obs = ext.front_x + lead_time * v  # world x of the obstacle's leading edge (start_x = 0)
        x_end = x_obs + 2 * H
        rear_off = ext.rear_x - ext.com[0]
        front_off = ext.front_x - ext.com[0]
        t_nom = (lead_time * v + 2 * H + ext.length + clear) / v
        terrain = T.Flat() + T.HalfRound(H, x=x_obs)
        def attempt(h, v=v, terrain=terrain, t_nom=t_nom):
            sc = ctx.scenario(f"half-round {h_in:g} in at {v:g} m/s", terrain, PID(speed=v, y=0.0),
                              1.5 * t_nom + 1.0, start_x=0.0, speed=v, step=h)
            return run_trial(sc, stop=stop, driver_acc=True, tension=_tension_opts(ctx, min(lead_time * 0.8, 2.0)))

        def stop(mon, x_end=x_end):
            return "passed" if mon.samples["x"][-1] + rear_off > x_end + clear else None

        ctx.say(f"half-round {h_in:g} in: {v:g} m/s")
        label = f"v{v:06.3f}"
        run = ctx.run(f"half-round {h_in:g} in at {v:g} m/s", attempt)
        mon = run.monitor
        t_s, x_s = mon.arr("t"), mon.arr("x")
        arrive = np.nonzero(x_s + front_off >= x_obs - 0.5)[0]
        t_arr = float(t_s[arrive[0]]) if len(arrive) else float("inf")
        t_az, az = mon.driver_acc()
        n_f = max(1, int(round(filter_window / run.prep.sim.h)))
        azf = moving_average(az, n_f)
        win = t_az >= t_arr
        ok = bool(win.any()) and run.reason == "passed"
        if ok:
            why = None
        elif not win.any():
            why = "the front never came within 0.5 m of the obstacle"
        else:
            why = (f"did not complete: the run ended (status {run.status}, stop reason "
                   f"{run.reason or 'time limit'}) before the rear was {clear:g} m past the obstacle")
        peak = float(np.max(np.abs(az[win])) / G) if win.any() else float("nan")
        peak_f = float(np.max(np.abs(azf[win])) / G) if win.any() else float("nan")
        t_peak = float(t_az[win][np.argmax(np.abs(az[win]))]) if win.any() else None
        approach = (t_s < t_arr) & (t_s > 0.5 * t_arr)
        r = {"speed_mps": v, "peak_g": peak, "peak_filtered_g": peak_f, "t_peak_s": t_peak,
             "t_arrive_s": t_arr if math.isfinite(t_arr) else None,
             "approach_speed_mps": float(mon.arr("v")[approach].mean()) if approach.any() else None,
             "status": run.status, "stop_reason": run.reason, "completed": bool(ok), "excluded_reason": why,
             "sim_time_s": float(run.prep.sim.state.t), "wall_time_s": run.wall_time_s, "step_s": run.prep.sim.h}
        # which impact makes the peak: the road wheel, idler or hull hit hardest within 5 ms of it, and where
        # it was relative to the obstacle's leading edge (m, world x; the half-round spans 0 .. 2 H)
        src = peak_source(mon, t_peak)
        if src is not None:
            src["x_from_obstacle_m"] = _body_x_at(run, mon, src, x_obs)
        r["peak_source"] = src
        r.update(_fig55(ctx, run, max(0.0, 0.5 * t_arr - 0.5), 0.5 * t_arr))
        run.summary = dict(r)
        d = ctx.trial_dir(label)
        if d is not None:
            write_trial(run, d)
            r["folder"] = str(Path("trials") / label)
        runs.append(r)
        ctx.say(f"  peak {peak:.3f} g (filtered {peak_f:.3f} g), {run.status}, {run.wall_time_s:.0f} s wall")
        crossed = ok and (peak_f if limit_on == "filtered" else peak) >= limit_g
        if stop_after_limit and crossed:
            break
    # the limit comes from the completed runs only: a run that stopped short of the obstacle's far side
    # has not seen the whole crossing, so its peak is no measurement of it
    used = [r for r in runs if r["completed"]]
    sp = np.array([r["speed_mps"] for r in used])
    pk = np.array([r["peak_g"] for r in used])
    pkf = np.array([r["peak_filtered_g"] for r in used])
    y = pkf if limit_on == "filtered" else pk
    lim, status = _crossing(sp, y, limit_g)
    res = EventResult({
        "event": "half-round", "height_in": h_in, "limiting_speed_mps": lim,
        "peaks": [[float(a), float(b)] for a, b in zip(sp, pk)],
        "peaks_filtered": [[float(a), float(b)] for a, b in zip(sp, pkf)],
        "excluded": [{"speed_mps": r["speed_mps"], "peak_g": r["peak_g"], "peak_filtered_g": r["peak_filtered_g"],
                      "reason": r["excluded_reason"]} for r in runs if not r["completed"]],
        "limit_g": float(limit_g), "limit_on": limit_on, "limit_status": status,
        "filter_window_s": float(filter_window), "lead_time_s": float(lead_time), "runs": runs,
        "all_completed": all(r["completed"] for r in runs),
        "peak_sources": [[r["speed_mps"], (r.get("peak_source") or {}).get("source"),
                          (r.get("peak_source") or {}).get("t_s")] for r in runs],
        "steps_s": sorted({r["step_s"] for r in used}, reverse=True),
        "itt_N": runs[0].get("itt_N"), "idler_x_m": runs[0].get("idler_x_m"), "idler_z_m": runs[0].get("idler_z_m"),
    })
    return ctx.finish(res)


def _body_x_at(run, mon, src, x_obs):
    """World x of the peak's source body (or the hull's front) relative to the obstacle's edge at its time."""
    t = mon.arr("t")
    if src["source"] == "hull" or len(t) == 0:
        return None
    try:
        res = run.result
        tt = np.asarray(res["t"], float)
        x = np.asarray(res[f"{src['source']}.pos.x"], float)
    except (KeyError, ValueError):
        return None
    return float(np.interp(src["t_s"], tt, x) - x_obs)


def _crossing(x, y, limit):
    """First upward crossing of ``limit`` by the polyline (x, y), linearly interpolated; and a status."""
    ok = np.isfinite(y)
    x, y = x[ok], y[ok]
    if len(x) == 0:
        return None, "no data"
    if y[0] >= limit:
        return None, "below-range"
    for k in range(1, len(x)):
        if y[k] >= limit:
            return float(x[k - 1] + (limit - y[k - 1]) * (x[k] - x[k - 1]) / (y[k] - y[k - 1])), "found"
    return None, "above-range"


# ---------------------------------------------------------------------------------------------- step climb
def _climb_trial(ctx, kind, value, terrain, start_x, driver, t_end, speed, settle, give_up_after, success_rule,
                 fall=None, after_success=0.5, label=None):
    """One obstacle trial shared by the step, gap and trapezoid events.

    ``success_rule(monitor, z_start) -> bool`` is checked at every monitor
    sample after ``settle`` s; the trial also stops on a fall of ``fall`` m,
    when it overturns, or after ``give_up_after`` s without progress.
    """
    ext = ctx.extent
    state = {}

    def stop(mon):
        t = mon.samples["t"][-1]
        if "z0" not in state:
            state["z0"] = mon.samples["z"][0]
        z0 = state["z0"]
        if state["t_success"] is None and t >= settle and success_rule(mon, z0):
            state["t_success"] = t
        if state["t_success"] is not None:
            return "success" if t >= state["t_success"] + after_success else None
        if fall is not None and mon.samples["z"][-1] < z0 - fall:
            return "fell"
        pitch, roll = mon.samples["pitch"][-1], mon.samples["roll"][-1]
        if abs(pitch) > math.radians(75) or abs(roll) > math.radians(75):
            return "overturned"
        if give_up_after and t > settle + give_up_after and not mon.progressed(t - give_up_after):
            return "no progress"
        return None

    opts = _tension_opts(ctx, settle) if settle > 0 else (None if ctx.tension is None else dict(ctx.tension))

    def attempt(h):
        state.clear()
        state["t_success"] = None  # a repeated attempt starts afresh
        sc = ctx.scenario(f"{kind} {value:g}", terrain, driver, t_end, start_x=start_x, speed=speed, step=h)
        return run_trial(sc, stop=stop, tension=opts)

    run = ctx.run(f"{kind} {label or value}", attempt)
    z0 = state.get("z0")
    mon = run.monitor
    passed = state["t_success"] is not None and run.status in ("complete", "stopped")
    info = {"passed": bool(passed), "t_success_s": state["t_success"], "stop_reason": run.reason or "time limit",
            "status": run.status, "sim_time_s": float(run.prep.sim.state.t), "wall_time_s": run.wall_time_s,
            "max_x_m": float(mon.arr("x").max()) if mon.samples["x"] else None, "step_s": run.prep.sim.h}
    info["mode"] = None if passed else classify_failure(mon, ext, ctx.mass(), fall_depth=fall, z_start=z0)
    info["limited_by"] = None if passed else LIMITED_BY.get(info["mode"])
    # the mechanism: a failure over the classifier's window (its last 2 s), a pass over its whole climb
    t_last = float(mon.samples["t"][-1]) if mon.samples["t"] else 0.0
    info["mechanism"] = mechanism_summary(mon, ctx.mass(), window=2.0 if not passed else max(t_last - settle, 0.5))
    info["mechanism_series"] = mechanism_series(mon, dt=0.05)
    t_settle = settle if settle > 0 else min(1.0, float(run.prep.sim.state.t))
    info.update(_fig55(ctx, run, max(0.0, t_settle - 0.5), t_settle))
    info["path"] = _path(mon)
    run.summary = {k: v for k, v in info.items() if k not in ("path", "mechanism_series")}
    run.summary.update({"event": kind, "value": value})
    d = ctx.trial_dir(label or f"{value:.4f}")
    if d is not None:
        write_trial(run, d)
        info["folder"] = str(d.relative_to(ctx.out))
    return info


_NOT_IN_TRIALS = ("path", "mechanism_series")


def _fail_text(info):
    return f"FAIL ({info['mode']}: limited by {info.get('limited_by')})"  # kept for the last success and the first failure only


def _mechanism(res, s, infos):
    """The mechanism of a limit search's last success and first failure, and what limited it.

    ``res["mechanism"] = {"last_success": {"value", "summary", "series"}, "first_failure": {...}}``
    (:func:`~trackdyn.experiments.trials.mechanism_summary`, ``mechanism_series``) and
    ``res["limited_by"]``: ``geometry``, ``track slip``, ``torque-limited`` or ``undetermined`` — the first
    failure's, ``None`` when nothing failed.
    """
    out = {}
    for key, t in (("last_success", s.last_success), ("first_failure", s.first_failure)):
        info = infos.get(t.value) if t is not None else None
        if info is None:
            continue
        out[key] = {"value": t.value, "passed": info["passed"], "mode": info.get("mode"),
                    "limited_by": info.get("limited_by"), "summary": info.get("mechanism"),
                    "series": info.get("mechanism_series")}
    res["mechanism"] = out
    ff = out.get("first_failure")
    res["limited_by"] = ff["limited_by"] if ff else None
    res["failure_mode"] = ff["mode"] if ff else None


def _edge_start(ext, height, gap):
    return -gap - ext.front_below(height)


def step_climb(vehicle="m113", height: float = 0.5, **kw) -> EventResult:
    """A single step-climb trial at ``height`` m (see :func:`step_climb_limit` for the procedure)."""
    return step_climb_limit(vehicle, search="values", values=[height], **kw)


def step_climb_limit(vehicle="m113", *, search: str = "bisect", lo: float = 0.3, hi: float = 0.9, tol: float = 0.01,
                     increment: float = 0.02, values=None, settle_time: float = 2.0, climb_time: float = 20.0,
                     gap: float = 0.05, give_up_after: float = 5.0, after_success: float = 0.5,
                     material=None, ground_material=None, refine: int = 1, fidelity: str = "links",
                     step: float | None = None, output_step: float = 0.01,
                     tension=False, out=None, progress=None, scenario_options=None) -> EventResult:
    """Largest vertical step the vehicle climbs (TOP 2-2-611, korner-2024 §4.2.2, Fig. 4.14).

    A trial: a vertical step of timber (E 10 GPa, μ 0.8: ``material``) at
    world x = 0, on flat ground of the terrain's default material (concrete,
    μ 0.8: ``ground_material``); the vehicle's foremost low point (track, or the hull when it
    hangs lower than the step's top) starts ``gap`` m in front of the face;
    brakes on for ``settle_time`` s (2 s), then full throttle. It **passes**
    when, within ``climb_time`` s (20 s) of full throttle, the chassis centre
    of mass is past the edge and every road-wheel centre is past the edge
    (the vehicle stands on top); the run continues ``after_success`` s. A trial
    stops as failed when the chassis has made no new progress (2 cm in x or z)
    for ``give_up_after`` s (``None``/0: only the time limit), or overturns.
    Each failure is classified (:func:`~trackdyn.experiments.trials.classify_failure`:
    nose-in, high-centred, track slip, torque-limited, stalled) with what limited it
    (``limited_by``: geometry, track slip, torque-limited), and every trial
    carries its ``mechanism`` (:func:`~trackdyn.experiments.trials.mechanism_summary`:
    per-track slip ratio, sprocket torque against the map's limit, hull
    contact force and where it acts, road-wheel loads, pitch).

    Search (:mod:`~trackdyn.experiments.limits`): ``"bisect"`` of [lo, hi]
    to ``tol`` (1 cm), ``"stepped"`` from ``lo`` by ``increment`` (2 cm, as
    the thesis), or ``"values"`` (the listed heights until one fails).

    Returns ``{"event": "step-climb", "limit_m", "trials": [...], "paths":
    {...}, "mechanism": {"last_success": ..., "first_failure": ...},
    "limited_by", "failure_mode", "itt_N", "idler_x_m", "sprocket_height_m",
    ...}``; ``limit_m`` is ``None`` when even the lowest height failed;
    ``mechanism`` keeps the two trials' summaries and time series (the
    ``mechanism`` figure).
    """
    kw = _search_kwargs(search, lo, hi, tol, increment, values)
    for n, v in (("settle_time", settle_time), ("climb_time", climb_time)):
        _num(n, v, positive=True)
    _num("gap", gap, nonneg=True)
    mat = TIMBER if material is None else material
    ctx = _Context("step-climb", vehicle, fidelity, step, output_step, tension, out, progress, scenario_options,
                   refine)
    ext = ctx.extent
    def success(mon, z0):
        x = mon.samples["x"][-1]
        return x > 0.0 and mon.samples["wheel_x_min"][-1] > 0.0

    infos = {}

    def trial(height):
        height = _num("height", height, positive=True)
        terrain = T.Flat(material=ground_material) + T.Step(height, x=0.0, material=mat)
        ctx.say(f"step-climb: {height:.3f} m")
        info = _climb_trial(ctx, "step-climb", height, terrain, _edge_start(ext, height, gap),
                            FullThrottle(delay=settle_time), settle_time + climb_time, 0.0, settle_time,
                            give_up_after, success, after_success=after_success, label=f"h{height:.4f}")
        infos[height] = info
        ctx.say(f"  {'pass' if info['passed'] else _fail_text(info)} "
                f"[{info['stop_reason']}, {info['sim_time_s']:.1f} s sim, {info['wall_time_s']:.0f} s wall]")
        return info["passed"], {k: v for k, v in info.items() if k not in _NOT_IN_TRIALS}

    s = limit_search(trial, **kw)
    x0 = min(_edge_start(ext, t.value, gap) for t in s.trials) + ext.rear_x - 0.5
    res = EventResult({"event": "step-climb", "limit_m": s.limit, "search": s.to_dict(),
                       "trials": [t.to_dict() for t in s.trials], "bracket_m": list(s.bracket),
                       "search_status": s.status, "material": {"young": mat.young, "friction": mat.friction},
                       "ground_friction": (None if ground_material is None else ground_material.friction)})
    _paths(res, s, infos, "m", lambda v: T.Flat() + T.Step(v, x=0.0), x0, ext.length + 1.0)
    _mechanism(res, s, infos)
    res.update(_first_trial_fig55(s))
    res["sprocket_height_m"] = ext.sprocket_height
    res["limit_over_sprocket_height"] = (s.limit / ext.sprocket_height) if s.limit is not None else None
    return ctx.finish(res)


def _first_trial_fig55(s):
    t = s.trials[0] if s.trials else None
    if t is None:
        return {}
    return {k: t.info.get(k) for k in ("itt_N", "idler_x_m", "idler_z_m")}


def _paths(res, s, infos, unit, terrain_of, x0, x1):
    """x–z paths of the last success and the first failure (korner-2024 Figs. 4.14/4.16)."""
    paths, shown = {}, []
    for t, what in ((s.last_success, "pass"), (s.first_failure, "fail")):
        if t is None:
            continue
        info = infos.get(t.value)
        if info is None:
            continue
        mode = f", {info['mode']}" if info.get("mode") else ""
        paths[f"{t.value:.3f} {unit} ({what}{mode})"] = info["path"]
        shown.append(t.value)
    res["paths"] = paths
    v = max(shown) if shown else (s.trials[-1].value if s.trials else None)
    if v is not None:
        res["terrain_profile"] = _profile(terrain_of(v), x0, x1)


# ---------------------------------------------------------------------------------------------- gap crossing
def gap_crossing(vehicle="m113", width: float = 1.5, **kw) -> EventResult:
    """A single gap-crossing trial at ``width`` m (see :func:`gap_crossing_limit`)."""
    return gap_crossing_limit(vehicle, search="values", values=[width], **kw)


def gap_crossing_limit(vehicle="m113", *, search: str = "bisect", lo: float = 1.0, hi: float = 3.0,
                       tol: float = 0.03, increment: float = 0.03, values=None, speed: float = 0.36,
                       approach: float = 0.5, depth: float = 2.0, clear: float = 0.5, fall: float = 0.4,
                       give_up_after: float = 5.0, after_success: float = 0.5, refine: int = 1,
                       fidelity: str = "links",
                       step: float | None = None, output_step: float = 0.01, tension=False, out=None, progress=None,
                       scenario_options=None) -> EventResult:
    """Widest gap the vehicle crosses (TOP 2-2-611, korner-2024 §4.2.3, Fig. 4.16).

    A trial: a gap of ``width`` m with vertical walls, ``depth`` m deep,
    starts at world x = 0 (concrete: μ 0.8, E 20 GPa); the vehicle rolls at
    ``speed`` (0.36 m/s) with its front ``approach`` m before the gap, a PID
    driver holding speed and heading. It **passes** when the chassis centre
    of mass is ``clear`` m past the far edge, no more than 0.15 m below its
    starting height (it reached the far side and drives on). It fails when the
    centre of mass drops ``fall`` m (``"fell in"``), makes no progress for
    ``give_up_after`` s, or overturns; other failures are classified like
    step climbing. Search: as :func:`step_climb_limit` (3 cm steps in the thesis).

    Returns ``{"event": "gap-crossing", "limit_m", "trials", "paths", "mechanism", "limited_by", ...}``
    (as :func:`step_climb_limit`).
    """
    kw = _search_kwargs(search, lo, hi, tol, increment, values)
    v = _num("speed", speed, positive=True)
    _num("approach", approach, nonneg=True)
    _num("depth", depth, positive=True)
    ctx = _Context("gap-crossing", vehicle, fidelity, step, output_step, tension, out, progress, scenario_options,
                   refine)
    ext = ctx.extent
    infos = {}

    def trial(width):
        width = _num("width", width, positive=True)
        terrain = T.Flat() + T.Gap(width, depth, x=0.0)

        def success(mon, z0, width=width):
            return mon.samples["x"][-1] > width + clear and mon.samples["z"][-1] > z0 - 0.15

        t_end = (approach + width + (ext.front_x - ext.com[0]) + clear) / v * 1.6 + 5.0
        ctx.say(f"gap-crossing: {width:.3f} m")
        info = _climb_trial(ctx, "gap-crossing", width, terrain, -approach - ext.front_x, PID(speed=v, y=0.0),
                            t_end, v, 0.0, give_up_after, success, fall=fall, after_success=after_success,
                            label=f"w{width:.4f}")
        infos[width] = info
        ctx.say(f"  {'pass' if info['passed'] else _fail_text(info)} "
                f"[{info['stop_reason']}, {info['sim_time_s']:.1f} s sim, {info['wall_time_s']:.0f} s wall]")
        return info["passed"], {k: val for k, val in info.items() if k not in _NOT_IN_TRIALS}

    s = limit_search(trial, **kw)
    res = EventResult({"event": "gap-crossing", "limit_m": s.limit, "search": s.to_dict(),
                       "trials": [t.to_dict() for t in s.trials], "bracket_m": list(s.bracket),
                       "search_status": s.status, "speed_mps": v})
    _paths(res, s, infos, "m", lambda w: T.Flat() + T.Gap(w, depth, x=0.0), -approach - ext.length - 0.5,
           max(t.value for t in s.trials) + 3.0)
    _mechanism(res, s, infos)
    res.update(_first_trial_fig55(s))
    return ctx.finish(res)


# ---------------------------------------------------------------------------------------------- trapezoids
def trapezoid(vehicle="m113", *, kinds=("barrier", "ditch"), height_in: float = 30.0,
              top_lengths_in=TRAPEZOID_TOP_LENGTHS_IN, slopes_deg=TRAPEZOID_SLOPES_DEG, speed: float = 1.0,
              approach: float = 1.0, clear: float = 1.0, give_up_after: float = 5.0, after_success: float = 0.0,
              refine: int = 1, fidelity: str = "links", step: float | None = None, output_step: float = 0.01,
              tension=False,
              out=None, progress=None, scenario_options=None) -> EventResult:
    """The 12 trapezoidal barriers and 12 ditches of NG-NRMM (korner-2024 §4.2.4, Figs. 4.18/4.19).

    Barriers ``height_in`` (30 in) high with a flat top of each of
    ``top_lengths_in`` (6, 30, 140 in) and flanks at each of ``slopes_deg``
    (16, 26, 38, 68 deg); the ditches are the barriers inverted (depth 30 in,
    bottom length = the barrier's top length, opening = bottom + 2 flank
    runs). Each trial: concrete, the vehicle rolling at ``speed`` m/s with a
    PID driver, front ``approach`` m before the obstacle; it **passes** (S)
    when its centre of mass is ``clear`` m past the obstacle's far end, and
    fails (F) after ``give_up_after`` s without progress or when it
    overturns, with the failure mode classified.

    Lists are ordered top length major, slope minor (6 in × 16, 26, 38, 68 deg,
    then 30 in, then 140 in): ``{"event": "trapezoid", "barriers": ["S"|"F",
    ...12], "ditches": [...12], "table": [...]}``.
    """
    bad = [k for k in kinds if k not in ("barrier", "ditch")]
    if bad or not kinds:
        raise ValueError(f"kinds = {kinds!r}: choose from 'barrier', 'ditch'")
    H = _num("height_in", height_in, positive=True) * INCH
    tops = [_num("top_lengths_in[]", x, positive=True) for x in top_lengths_in]
    slopes = [_num("slopes_deg[]", x, positive=True) for x in slopes_deg]
    if any(s > 90 for s in slopes):
        raise ValueError(f"slopes_deg = {slopes_deg!r}: slopes must be in (0, 90] deg")
    v = _num("speed", speed, positive=True)
    ctx = _Context("trapezoid", vehicle, fidelity, step, output_step, tension, out, progress, scenario_options,
                   refine)
    ext = ctx.extent
    res = EventResult({"event": "trapezoid", "height_in": height_in, "top_lengths_in": tops, "slopes_deg": slopes,
                       "speed_mps": v})
    table = []
    for kind in kinds:
        marks = []
        for top in tops:
            for sl in slopes:
                a = math.radians(sl)
                run_len = H / math.tan(a) if sl < 90 else 0.0
                if kind == "barrier":
                    piece = T.TrapezoidBarrier(H, top * INCH, a, x=0.0)
                    front = ext.front_below(H)
                else:
                    piece = T.TrapezoidDitch(H, top * INCH + 2 * run_len, a, x=0.0)
                    front = ext.front_x
                x_end = piece.extent
                terrain = T.Flat() + piece

                def success(mon, z0, x_end=x_end):
                    return mon.samples["x"][-1] > x_end + clear

                t_end = (approach + x_end + (ext.front_x - ext.com[0]) + clear) / v * 2.0 + 10.0
                label = f"{kind}-{top:g}in-{sl:g}deg"
                ctx.say(f"trapezoid {label}")
                info = _climb_trial(ctx, "trapezoid", H, terrain, -approach - front, PID(speed=v, y=0.0), t_end,
                                    v, 0.0, give_up_after, success, after_success=after_success, label=label)
                mark = "S" if info["passed"] else "F"
                marks.append(mark)
                ctx.say(f"  {mark} {info['mode'] or ''} "
                        f"[{info['sim_time_s']:.1f} s sim, {info['wall_time_s']:.0f} s wall]")
                row = {"kind": kind, "top_length_in": top, "slope_deg": sl, "result": mark, "mode": info["mode"],
                       "stop_reason": info["stop_reason"], "sim_time_s": info["sim_time_s"],
                       "wall_time_s": info["wall_time_s"], "max_x_m": info["max_x_m"], "extent_m": x_end,
                       "limited_by": info["limited_by"], "mechanism": info["mechanism"]}
                if "folder" in info:
                    row["folder"] = info["folder"]
                table.append(row)
        res["barriers" if kind == "barrier" else "ditches"] = marks
        res[f"{kind}s_passed" if kind == "barrier" else "ditches_passed"] = marks.count("S")
    res["table"] = table
    return ctx.finish(res)


# ---------------------------------------------------------------------------------------------- ride
ROADS = ("iso8608", "bump", "trough", "sinusoid")


def ride(vehicle="m113", *, road: str = "iso8608", speed: float = 5.0, length: float = 40.0, road_class: str = "D",
         seed: int = 0, height: float = 0.1, wavelength: float = 2.0, bump_length: float = 1.0,
         lead: float = 5.0, refine: int = 1, fidelity: str = "links", step: float | None = None,
         output_step: float = 0.01,
         tension=False, out=None, progress=None, scenario_options=None) -> EventResult:
    """Ride over a road profile at constant speed: driver-seat vertical acceleration RMS, peak and spectrum.

    ``road``: ``"iso8608"`` (random road of ``road_class`` A..H over
    ``length`` m, ``seed``), ``"bump"`` / ``"trough"`` (cosine, ``height`` m
    over ``bump_length`` m), ``"sinusoid"`` (amplitude ``height`` m,
    ``wavelength`` m, over ``length`` m). The vehicle rolls at ``speed`` with
    its front ``lead`` m before the profile; a PID driver holds speed and
    heading. Statistics of the driver's-seat vertical acceleration (every
    step, gravity excluded) over the time the seat is above the profile:
    RMS, peak |a_z|, and the one-sided power spectral density (Welch,
    Hann windows of ~2 s, 50 % overlap) up to 50 Hz.

    Returns ``{"event": "ride", "rms_mps2", "rms_g", "peak_mps2", "peak_g",
    "dominant_frequency_hz", "spectrum": {"f_hz": [...], "psd": [...]}, ...}``;
    with a ``[seat]`` in the spec also ``"seat"`` (:func:`seat_ride`: RMS, peak
    and FFT amplitude spectrum of ``seat.rel.z`` and ``seat.acc.z``), drawn in
    the figure ``seat.png``.
    """
    from scipy.signal import welch

    if road not in ROADS:
        raise ValueError(f"road = {road!r}: choose one of {ROADS}")
    v = _num("speed", speed, positive=True)
    L = _num("length", length, positive=True)
    _num("lead", lead, nonneg=True)
    ctx = _Context("ride", vehicle, fidelity, step, output_step, tension, out, progress, scenario_options,
                   refine)
    ext = ctx.extent
    x0 = ext.front_x + lead
    if road == "iso8608":
        piece = T.RandomRoad(road_class=str(road_class), length=L, seed=int(seed), x=x0)
    elif road == "bump":
        piece = T.Bump(_num("height", height, positive=True), _num("bump_length", bump_length, positive=True), x=x0)
    elif road == "trough":
        piece = T.Trough(_num("height", height, positive=True), _num("bump_length", bump_length, positive=True), x=x0)
    else:
        piece = T.Sinusoid(_num("height", height, positive=True), _num("wavelength", wavelength, positive=True), L,
                           x=x0)
    x1 = x0 + piece.extent
    terrain = T.Flat() + piece
    drv_off = ctx.spec.chassis.driver_position[0] - ext.com[0]
    rear_off = ext.rear_x - ext.com[0]
    t_end = (lead + piece.extent + ext.length + 1.0) / v * 1.5 + 1.0
    def stop(mon):
        return "passed" if mon.samples["x"][-1] + rear_off > x1 + 1.0 else None

    ctx.say(f"ride: {road} at {v:g} m/s")
    def attempt(h):
        sc = ctx.scenario(f"ride {road} at {v:g} m/s", terrain, PID(speed=v, y=0.0), t_end, start_x=0.0, speed=v,
                          step=h)
        if ctx.spec.seat is not None and sc.record is None:  # the seat's series beside the events' own
            sc = sc.replace(record=EVENT_RECORD + ("seat.*",))
        return run_trial(sc, stop=stop, driver_acc=True, tension=_tension_opts(ctx, min(1.0, 0.8 * lead / v)))

    run = ctx.run(f"ride over {road}", attempt)
    mon = run.monitor
    t_s, x_s = mon.arr("t"), mon.arr("x")
    seat = x_s + drv_off
    on = np.nonzero((seat >= x0) & (seat <= x1))[0]
    t_az, az = mon.driver_acc()
    if len(on):
        w = (t_az >= t_s[on[0]]) & (t_az <= t_s[on[-1]])
    else:
        w = np.zeros_like(t_az, dtype=bool)
    a = az[w]
    if len(a) < 16:
        raise ValueError(f"ride: the driver's seat spent too little time over the {road} profile "
                         f"({len(a)} steps); lengthen the road or lower the speed")
    rms = float(np.sqrt(np.mean(a ** 2)))
    peak = float(np.max(np.abs(a)))
    fs = 1.0 / run.prep.sim.h
    nper = int(min(len(a), 2 ** int(round(math.log2(max(16, 2.0 * fs))))))
    f, psd = welch(a - a.mean(), fs=fs, nperseg=nper)
    keep = f <= 50.0
    f, psd = f[keep], psd[keep]
    dom = float(f[1:][np.argmax(psd[1:])]) if len(f) > 1 else None
    res = EventResult({
        "event": "ride", "road": road, "speed_mps": v, "rms_mps2": rms, "rms_g": rms / G, "peak_mps2": peak,
        "peak_g": peak / G, "dominant_frequency_hz": dom, "window_s": [float(t_az[w][0]), float(t_az[w][-1])],
        "spectrum": {"f_hz": np.round(f, 4).tolist(), "psd": [float(p) for p in psd], "unit": "(m/s²)²/Hz"},
        "status": run.status, "stop_reason": run.reason,
        "road_params": {"road_class": road_class, "seed": seed, "length": L, "height": height,
                        "wavelength": wavelength, "bump_length": bump_length, "x0": x0, "x1": x1},
    })
    step_k = max(1, int(round(0.005 / run.prep.sim.h)))
    res["trace"] = {"t": np.round(t_az[w][::step_k], 4).tolist(), "az": np.round(a[::step_k], 4).tolist()}
    if ctx.spec.seat is not None:
        res["seat"] = seat_ride(run.result, float(t_az[w][0]))
    run.summary = {k: res[k] for k in ("rms_mps2", "peak_mps2", "dominant_frequency_hz", "status")}
    d = ctx.trial_dir("run")
    if d is not None:
        write_trial(run, d)
        res["folder"] = "trials/run"
    return ctx.finish(res)


def amplitude_spectrum(x, dt: float):
    """One-sided FFT amplitude spectrum of ``x`` (mean removed, Hann window), sampled every ``dt`` s.

    Returns ``(f_hz, amplitude)``: a sinusoid of amplitude A at a bin frequency reads A (the window's coherent
    gain, ``sum(w) / n``, divided out).
    """
    x = np.asarray(x, float)
    w = np.hanning(len(x))
    X = np.fft.rfft((x - x.mean()) * w)
    amp = 2.0 * np.abs(X) / w.sum()
    amp[0] *= 0.5
    return np.fft.rfftfreq(len(x), dt), amp


def seat_ride(result, t0: float) -> dict:
    """The seat's ride figures from a run's recorded series (docs/events.md, "The seat").

    From ``t0`` (the driver's reaching the profile) to the end of the run: the seat's displacement relative to
    the cab ``seat.rel.z`` (its mean, and RMS and peak about the mean: the vibration about the static sag) and
    its absolute vertical acceleration ``seat.acc.z`` (RMS and peak |a|, gravity excluded), each with its FFT
    amplitude spectrum (:func:`amplitude_spectrum`) and the frequency of the spectrum's peak. A fidelity that
    does not record ``seat.rel.z`` gives it as ``seat.spring.length`` minus the spring's length at rest, the same
    quantity (both ends of the spring lie on the seat's slide axis; ``rel_source`` says which).
    """
    from ..spec.vehicle import SEAT_SPRING_LENGTH

    t = result.t
    if "seat.rel.z" in result:
        rel_all, source = result["seat.rel.z"], "seat.rel.z"
    else:
        rel_all, source = result["seat.spring.length"] - SEAT_SPRING_LENGTH, "seat.spring.length"
    acc_all = result["seat.acc.z"]
    keep = (t >= t0 - 1e-9) & np.isfinite(rel_all) & np.isfinite(acc_all)
    tt, rel, acc = t[keep], rel_all[keep], acc_all[keep]
    if len(tt) < 16:
        raise ValueError(f"ride: only {len(tt)} recorded seat samples after t = {t0:.3f} s; lower output_step")
    dt = float(np.median(np.diff(tt)))
    out = {"window_s": [float(tt[0]), float(tt[-1])], "sample_s": dt, "rel_source": source}
    for key, x, unit in (("rel", rel, "m"), ("acc", acc, "m/s²")):
        f, A = amplitude_spectrum(x, dt)
        k = int(np.argmax(A[1:])) + 1 if len(A) > 1 else 0
        about = x - x.mean() if key == "rel" else x
        out[key] = {"series": f"seat.{key}.z", "unit": unit, "mean": float(x.mean()),
                    "rms": float(np.sqrt(np.mean(about ** 2))), "peak": float(np.max(np.abs(about))),
                    "peak_frequency_hz": float(f[k]), "df_hz": float(f[1]) if len(f) > 1 else None,
                    "spectrum": {"f_hz": np.round(f, 4).tolist(), "amplitude": [float(a) for a in A], "unit": unit}}
    step_k = max(1, int(round(0.005 / dt)))
    out["trace"] = {"t": np.round(tt[::step_k], 4).tolist(), "rel": [float(r) for r in rel[::step_k]],
                    "acc": [float(a) for a in acc[::step_k]]}
    return out


def _seat_figure(result):
    """The seat's relative displacement and absolute acceleration against time, and their amplitude spectra."""
    seat = result["seat"]
    fig, axes = plots.new_figure(7.0, 7.0, nrows=3)
    tr = seat["trace"]
    axes[0].plot(tr["t"], 1000.0 * np.asarray(tr["rel"]), lw=0.8, color="C0")
    axes[0].set_ylabel("seat.rel.z [mm]")
    axes[0].set_title(f"{result.get('vehicle', '')} seat, {result['road']} at {result['speed_mps']:g} m/s: "
                      f"rel RMS {1000 * seat['rel']['rms']:.1f} mm, acc RMS {seat['acc']['rms'] / G:.3f} g, "
                      f"peak {seat['acc']['peak'] / G:.3f} g", fontsize=9)
    axes[1].plot(tr["t"], np.asarray(tr["acc"]) / G, lw=0.8, color="C1")
    axes[1].set_ylabel("seat.acc.z [g]")
    axes[1].set_xlabel("t [s]")
    for key, col, scale, lab in (("rel", "C0", 1000.0, "rel [mm]"), ("acc", "C1", 1.0, "acc [m/s²]")):
        sp = seat[key]["spectrum"]
        axes[2].semilogy(sp["f_hz"][1:], scale * np.asarray(sp["amplitude"][1:]), lw=1.0, color=col,
                         label=f"{lab}, peak {seat[key]['peak_frequency_hz']:.2f} Hz")
    axes[2].set_xlabel("frequency [Hz]")
    axes[2].set_ylabel("FFT amplitude")
    axes[2].legend(fontsize=8)
    for ax in axes:
        ax.grid(True, alpha=0.3)
    return fig


# ---------------------------------------------------------------------------------------------- registry
EVENTS = {
    "half-round": half_round,
    "step-climb": step_climb_limit,
    "gap-crossing": gap_crossing_limit,
    "trapezoid": trapezoid,
    "ride": ride,
}


def run_event(name: str, vehicle="m113", **options) -> EventResult:
    """Run an event by its CLI name (``half-round``, ``step-climb``, ``gap-crossing``, ``trapezoid``, ``ride``)."""
    if name not in EVENTS:
        raise ValueError(f"unknown event {name!r}; choose one of {', '.join(EVENTS)}")
    fn = EVENTS[name]
    import inspect

    params = inspect.signature(fn).parameters
    unknown = [k for k in options if k not in params]
    if unknown:
        known = [p for p in params if p not in ("vehicle",)]
        raise ValueError(f"event {name}: unknown option(s) {unknown}; known: {known}")
    return fn(vehicle, **options)


# ---------------------------------------------------------------------------------------------- figures
def event_figures(result) -> dict:
    """The standard figures of an event result: ``{stem: Figure}``."""
    ev = result["event"]
    figs = {}
    if ev == "half-round":
        def g(pairs):  # a trial without a peak is None in the JSON
            return [np.nan if p[1] is None else p[1] for p in pairs]

        sp = [p[0] for p in result["peaks"]]
        curves = {"unfiltered": g(result["peaks"])}
        if result.get("filter_window_s"):
            curves[f"moving average {1000 * result['filter_window_s']:g} ms"] = g(result["peaks_filtered"])
        if result.get("limit_on") == "filtered":
            curves = dict(reversed(list(curves.items())))
        lim = result.get("limiting_speed_mps")
        title = (f"{result.get('vehicle', '')} over a {result['height_in']:g} in half-round: "
                 + (f"ride-limiting speed {lim:.2f} m/s" if lim is not None else f"limit {result['limit_status']}"))
        fig = plots.peak_vs_parameter(sp, curves, limit=result["limit_g"], xlabel="speed [m/s]",
                                      ylabel="peak |a_z| at the driver [g]", limit_label="ride limit [g]",
                                      title=title)
        # each completed speed's peak labelled with the impact that makes it (peak_source)
        ax = fig.axes[0]
        for r in result.get("runs", []):
            src = r.get("peak_source") or {}
            if r.get("completed") and src.get("source") and r.get("peak_g") is not None:
                label = src["source"] + (" (jounce stop)" if src.get("on_jounce_stop") else "")
                ax.annotate(label, (r["speed_mps"], r["peak_g"]), textcoords="offset points", xytext=(3, 4),
                            fontsize=6, color="0.3")
        excluded = result.get("excluded") or []
        if excluded:  # runs that did not complete: shown, not part of the curves or the limit
            ax = fig.axes[0]
            ax.plot([e["speed_mps"] for e in excluded],
                    [np.nan if e["peak_g"] is None else e["peak_g"] for e in excluded],
                    ls="none", marker="x", color="0.5", label="did not complete (excluded)")
            ax.legend(fontsize=8)
        figs["figure"] = fig
    elif ev in ("step-climb", "gap-crossing"):
        what = "step height" if ev == "step-climb" else "gap width"
        lim = result.get("limit_m")
        status = result.get("search_status")
        tried = [t["value"] for t in result.get("trials", [])]
        if status == "above-range" and lim is not None:
            lim_text = f"at least {lim:.3f} m (every {what} tried passed)"
        elif lim is None:
            lim_text = f"below {min(tried):.3f} m (the smallest failed)" if tried else "not found"
        else:
            lim_text = f"{lim:.3f} m"
        title = f"{result.get('vehicle', '')} {ev}: limit {lim_text}"
        if result.get("paths"):
            figs["figure"] = plots.paths_xz({k: tuple(v) for k, v in result["paths"].items()},
                                            terrain=result.get("terrain_profile"),
                                            title=title + " — chassis centre of mass")
        mech = mechanism_figure(result, what)
        if mech is not None:
            figs["mechanism"] = mech
        tr = result.get("trials", [])
        if tr:
            figs["trials"] = plots.pass_fail_vs_parameter([t["value"] for t in tr], [t["passed"] for t in tr],
                                                          limit=lim, xlabel=f"{what} [m]", title=title)
    elif ev == "trapezoid":
        figs["figure"] = _trapezoid_table(result)
    elif ev == "ride":
        fig, axes = plots.new_figure(7.0, 5.0, nrows=2)
        tr = result.get("trace") or {}
        if tr:
            axes[0].plot(tr["t"], np.asarray(tr["az"]) / G, lw=0.8)
        axes[0].set_xlabel("t [s]")
        axes[0].set_ylabel("a_z at the driver [g]")
        axes[0].set_title(f"{result.get('vehicle', '')} ride, {result['road']} at {result['speed_mps']:g} m/s: "
                          f"RMS {result['rms_g']:.3f} g, peak {result['peak_g']:.3f} g", fontsize=9)
        axes[0].grid(True, alpha=0.3)
        sp = result["spectrum"]
        axes[1].semilogy(sp["f_hz"][1:], sp["psd"][1:], lw=1.0)
        axes[1].set_xlabel("frequency [Hz]")
        axes[1].set_ylabel("PSD [(m/s²)²/Hz]")
        axes[1].grid(True, alpha=0.3, which="both")
        figs["figure"] = fig
        if result.get("seat"):
            figs["seat"] = _seat_figure(result)
    else:
        raise ValueError(f"event_figures: unknown event {ev!r}")
    return figs


def _trapezoid_table(result):
    """Pass/fail tables (korner-2024 Figs. 4.18/4.19): rows top length, columns slope; S green, F red."""
    tops, slopes = result["top_lengths_in"], result["slopes_deg"]
    kinds = [k for k in ("barriers", "ditches") if k in result]
    fig, axes = new_figure(3.2 * len(kinds) + 0.6, 2.9, ncols=len(kinds))
    axes = np.atleast_1d(axes)
    modes = {(r["kind"], r["top_length_in"], r["slope_deg"]): r.get("mode") for r in result.get("table", [])}
    for ax, kind in zip(axes, kinds):
        marks = result[kind]
        ax.set_xlim(-0.5, len(slopes) - 0.5)
        ax.set_ylim(len(tops) - 0.5, -0.5)
        for i, top in enumerate(tops):
            for j, sl in enumerate(slopes):
                m = marks[i * len(slopes) + j] if i * len(slopes) + j < len(marks) else "?"
                col = "seagreen" if m == "S" else "crimson"
                ax.text(j, i, m, ha="center", va="center", color=col, fontsize=15, fontweight="bold")
                mode = modes.get((kind[:-1] if kind == "barriers" else "ditch", top, sl))
                if m == "F" and mode:
                    ax.text(j, i + 0.32, mode, ha="center", va="center", color="0.3", fontsize=6)
        ax.set_xticks(range(len(slopes)), [f"{s:g}°" for s in slopes])
        ax.set_yticks(range(len(tops)), [f'{t:g}"' for t in tops])
        ax.set_xlabel("slope")
        ax.set_ylabel("top length" if kind == "barriers" else "bottom length")
        ax.set_title(f"{kind} ({result['height_in']:g} in)", fontsize=10)
        for k in range(len(slopes) + 1):
            ax.axvline(k - 0.5, color="0.8", lw=0.6)
        for k in range(len(tops) + 1):
            ax.axhline(k - 0.5, color="0.8", lw=0.6)
        ax.tick_params(length=0)
    fig.suptitle(f"{result.get('vehicle', '')} trapezoidal obstacles at {result['speed_mps']:g} m/s", fontsize=10)
    return fig
