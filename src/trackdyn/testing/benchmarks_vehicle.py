"""Vehicle benchmarks (issue #6): the link-track M113 on flat ground and at a step.

Registered names (``trackdyn bench NAME --json``, ``python bench/m113_*.py``):

- ``m113-flat``: the M113 cruising at 4.2 m/s (PID speed and heading, thesis
  §4.1) on flat rigid ground (the thesis's settings: SMC Hertz contact,
  ``euler-implicit-linearized``, direct solver), ``segments`` consecutive
  segments of ``t_end`` simulated seconds after ``settle`` s of settling, as
  one run (headline: the mean over all of it), with the per-stage split of the
  integrator and, estimated at the final state, the share of contact detection
  in the contact stage.
- ``m113-stepsize``: the largest step at which the road-wheel vertical
  trajectories stay within ``tol`` of those of the h = 1e-4 run over
  ``t_end`` s (all runs start from the same settled state), with the wall
  time per simulated second and the largest joint violation of each run.
- ``m113-step``: full-throttle climb attempt at a 0.6 m rigid step.
- ``m113-memory`` moved to :mod:`trackdyn.testing.benchmarks_memory`.

M113 runs are expensive (about 2-7 ms per step on the reference machine):
every benchmark takes its lengths as arguments so that development runs can
be short. Timings are never asserted in tests.
"""

from __future__ import annotations

import os
import time
import warnings
from fractions import Fraction

import numpy as np

from ..contact import _detect as D
from ..driver import PID, FullThrottle
from ..formulations.absolute import ForceContext
from ..materials import Material
from ..sim.run import prepare
from ..spec.scenario import Scenario
from ..terrain import Flat, Step
from .benchmarks import bench, machine_info, time_per_step, timed_run

__all__ = ["m113_flat", "m113_stepsize", "m113_step", "cruise_scenario", "settled_cruise",
           "time_per_step", "step_size_arg"]

SPEED = 4.2  # m/s, thesis §4.1


def step_size_arg(text: str) -> float:
    """A step size from a command line: a decimal number or a fraction such as ``1/1100`` (11 steps per
    10-ms output sample). Raises ValueError naming the text."""
    try:
        h = float(Fraction(text))
    except (ValueError, ZeroDivisionError):
        raise ValueError(f"step {text!r}: not a number or a fraction such as 1/1100") from None
    if not h > 0:
        raise ValueError(f"step {text!r}: must be positive")
    return h


def cruise_scenario(step: float = 1e-4, output_step: float = 0.01, solver: str = "direct", **kw):
    """The M113 at 4.2 m/s on flat concrete with the PID speed/heading driver."""
    return Scenario(vehicle="m113", driver=PID(speed=SPEED, y=0.0, delay=0.0), t_end=1e6, step=step,
                    output_step=output_step, speed=SPEED, name="m113-flat", solver=solver, **kw)


def _contact_options(explicit_contact: bool) -> dict:
    """The scenario options of a benchmark's ``explicit_contact`` switch."""
    return {"contact.implicit": False} if explicit_contact else {}


def _prepare(sc):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the redundant pin rows closing each loop (expected)
        return prepare(sc)


def settled_cruise(settle: float = 0.5, step: float = 1e-4, **kw):
    """Prepared cruise scenario advanced by ``settle`` s (drop onto the ground, PID transient)."""
    prep = _prepare(cruise_scenario(step=step, **kw))
    prep.sim.run(settle)
    return prep


def _contact_detection_share(prep, reps: int = 30) -> float:
    """Share of the narrow/broad phase in one contact evaluation at the current state (median of ``reps``)."""
    c = prep.contact
    s = prep.sim.system
    st = prep.sim.state
    h = prep.sim.h
    s.update_kinematics(st.q, st.v)
    kin = s.kin
    data = s.data.copy()
    td, tt = [], []
    for _ in range(reps):
        t0 = time.perf_counter()
        D.detect(c.rec, c.shapes, c.scratch, c.filters, c.terrain_arrays, kin.pos, kin.R, c.margin,
                 c.default_radius, c.max_penetration, c.winkler_grid)
        td.append(time.perf_counter() - t0)
        ctx = ForceContext(st.t, h, st, kin, s.f.copy(), s.Dv.copy(), data, h * h, h, s.Kxv.copy())
        t0 = time.perf_counter()
        c.accumulate(ctx)
        tt.append(time.perf_counter() - t0)
    return float(min(1.0, np.median(td) / np.median(tt)))


def _split_named(res: dict, share: float) -> dict:
    """The integrator split under the names of issue #6 (ms per step)."""
    sp = res["split_ms"]
    contact = sp.get("contact", 0.0)
    return {
        "force_elements": sp.get("forces", 0.0),
        "contact_detection": contact * share,
        "contact_forces": contact * (1.0 - share),
        "constraints": sp.get("constraints", 0.0),
        "assembly": sp.get("assembly", 0.0),
        "factorization": sp.get("factorization", 0.0),
        "solve": sp.get("solve", 0.0),
        "update": sp.get("update", 0.0),
        "recording": sp.get("recording", 0.0),
        "other": sp.get("other", 0.0),
    }


def _load() -> list:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return []


@bench("m113-flat")
def m113_flat(t_end: float = 2.0, step: float = 1e-4, settle: float = 0.5, segments: int = 3,
              solver: str = "direct", output_step: float = 0.01, explicit_contact: bool = False,
              results: list | None = None, repeats: int | None = None,
              integrator: str | None = None, options: dict | None = None, fidelity: str = "links") -> dict:
    """Cruise at 4.2 m/s on flat ground: one run of ``segments`` consecutive segments of ``t_end`` s after settling.

    The headline ``ms_per_step`` / ``wall_per_sim`` is the mean over the whole measured run (all segments,
    recording included); ``step_ms_p10`` and ``step_ms_median`` are those of all its single steps; each
    segment's own figures are in ``segments`` (consecutive parts of one trajectory, not fresh runs: the
    spread between them is the machine's, not the model's). ``repeats`` is the old name of ``segments``
    (deprecated). ``explicit_contact``: the contact forces act explicitly (scenario option
    ``contact.implicit = false``, Chrono's SMC default), from the drop on. ``integrator`` and ``options``
    (e.g. ``"theta-linearized"``, ``{"theta": 0.5}``) run from the drop on too (None: the fidelity's default,
    ``euler-implicit-linearized`` on links). ``fidelity``: the vehicle's fidelity (``trackdyn bench m113-flat
    --fidelity synthesis``). ``results``: a list that receives each segment's :class:`Result`.
    """
    if repeats is not None:
        warnings.warn("m113_flat: 'repeats' is deprecated, use 'segments' (they are consecutive segments of one "
                      "run, not fresh runs)", FutureWarning, stacklevel=2)
        segments = repeats
    if not isinstance(segments, int) or segments < 1:
        raise ValueError(f"m113_flat: segments must be a positive integer, got {segments!r}")
    t0 = time.perf_counter()
    prep = settled_cruise(settle, step, solver=solver, output_step=output_step, integrator=integrator,
                          options={**(options or {}), **_contact_options(explicit_contact)}, fidelity=fidelity)
    settle_wall = time.perf_counter() - t0
    parts, dts = [], []
    for _ in range(segments):
        load0 = _load()
        r, dt = timed_run(prep.sim, t_end, results)
        r["load_before"] = load0
        r["load_after"] = _load()
        parts.append(r)
        dts.append(dt)
    absolute = hasattr(prep.sim.system, "pattern")  # a KKT system (links, synthesis); not recursive's
    share = _contact_detection_share(prep) if absolute else float("nan")
    for r in parts:
        r["split_named_ms"] = _split_named(r, share)
    s = prep.sim.system
    out = {"benchmark": "m113-flat", "fidelity": fidelity, "integrator": prep.sim.integrator.name, "solver": solver,
           "explicit_contact": bool(explicit_contact), "bodies": s.nb,
           "constraint_rows": s.nc, "kkt_unknowns": s.pattern.n if absolute else None, "settle_s": settle,
           "settle_wall_s": settle_wall, "contact_detection_share": share,
           "contacts_at_end": int(prep.contact.glob_out[0]), "machine": machine_info()}
    out.update(_pooled(parts, np.concatenate(dts)))
    out["split_named_ms"] = _split_named(out, share)
    out["ms_per_step_segments"] = [r["ms_per_step"] for r in parts]
    out["segments"] = parts
    return out


def _pooled(parts: list[dict], dt: np.ndarray) -> dict:
    """The figures of consecutive segments as one run: means over all of it, percentiles over all its steps."""
    steps = sum(r["steps"] for r in parts)
    wall = sum(r["wall_time_s"] for r in parts)
    sim_time = sum(r["sim_time_s"] for r in parts)
    split = {k: sum(r["split_ms"][k] * r["steps"] for r in parts) / steps for k in parts[0]["split_ms"]}
    return {"step_size_s": parts[0]["step_size_s"], "steps": steps, "sim_time_s": sim_time, "wall_time_s": wall,
            "ms_per_step": 1e3 * wall / steps, "wall_per_sim": wall / sim_time,
            "step_ms_p10": float(np.percentile(dt, 10)), "step_ms_median": float(np.median(dt)),
            "cpu_ms_per_step": sum(r["cpu_ms_per_step"] * r["steps"] for r in parts) / steps,
            "max_joint_violation_m": max(r["max_joint_violation_m"] for r in parts), "split_ms": split,
            "status": "complete" if all(r["status"] == "complete" for r in parts) else
            next(r["status"] for r in parts if r["status"] != "complete"),
            "load_before": parts[0]["load_before"], "load_after": parts[-1]["load_after"]}


def _wheel_names(prep):
    return [w for side in prep.vehicle.sides.values() for w in side.wheels]


@bench("m113-stepsize")
def m113_stepsize(t_end: float = 2.0, settle: float = 0.5, steps=(2e-4, 5e-4, 1e-3, 2e-3), tol: float = 1e-3,
                  h_ref: float = 1e-4, explicit_contact: bool = False,
                  integrator: str = "euler-implicit-linearized", options: dict | None = None,
                  record: str = "all", repeats: int = 1, perturb: float = 0.0, contact_method: str = "smc",
                  nsc_options: dict | None = None, fidelity: str = "links") -> dict:
    """Largest step whose road-wheel vertical trajectories stay within ``tol`` (m) of the ``h_ref`` run.

    With ``contact_method="nsc"`` every run, the reference included, is the NSC M113 (scenario options
    ``contact.method = "nsc"`` and ``nsc_options``, e.g. ``{"friction": "anitescu"}``; stepper
    ``nsc-euler``; ``integrator``, ``options`` and ``explicit_contact`` do not apply): issue #29 asks for
    the largest step within 1 mm of the h = 5e-4 s NSC run.
    Otherwise the reference run is always ``euler-implicit-linearized`` with implicit contact; the other runs use
    ``integrator`` with ``options`` (e.g. ``"theta-linearized"``, ``{"theta": 0.5}``). With
    ``explicit_contact`` their contact forces act explicitly (scenario option ``contact.implicit = false``:
    no contact Jacobians in the step matrix), which shows what the implicit treatment buys. ``record``: ``"all"``
    (every series every 10 ms, as a study would keep them) or ``"wheels"`` (only the compared road-wheel
    heights, and the poses drawn by the viewer: no element outputs are evaluated at a sample). ``repeats``
    fresh runs of each larger step (the same trajectory each time) give ``wall_per_sim`` as their mean
    (recording included, the headline), ``wall_per_sim_median`` and ``wall_per_sim_best`` (their minimum) as
    secondary figures: on a machine whose speed changes within minutes one 2-s run is not a figure.
    ``perturb`` scales the settled state's velocities by ``1 ± perturb`` (fixed pseudo-random
    signs per entry) before every run, the reference included: runs with a few values show how much the
    error itself moves with the state it starts from (an error near the tolerance is then a spread, not a
    figure).
    ``fidelity``: the fidelity of the runs other than the reference (its own integrator unless ``integrator``
    is given; e.g. ``"synthesis"``), all of them starting from the links reference's settled state (the same
    bodies in the same order).
    """
    if record not in ("all", "wheels"):
        raise ValueError(f"m113_stepsize: record must be 'all' or 'wheels', got {record!r}")
    if not isinstance(repeats, int) or repeats < 1:
        raise ValueError(f"m113_stepsize: repeats must be a positive integer, got {repeats!r}")
    if not isinstance(perturb, (int, float)) or not 0.0 <= perturb < 0.01:
        raise ValueError(f"m113_stepsize: perturb must be a number in [0, 0.01), got {perturb!r}")
    if contact_method not in ("smc", "nsc"):
        raise ValueError(f"m113_stepsize: contact_method must be 'smc' or 'nsc', got {contact_method!r}")
    nsc = contact_method == "nsc"
    if nsc and (explicit_contact or options or integrator not in ("euler-implicit-linearized", "nsc-euler")):
        raise ValueError("m113_stepsize: with contact_method='nsc' every run steps with nsc-euler "
                         "(integrator, options and explicit_contact do not apply; use nsc_options)")
    ref_kw = {"options": {"contact.method": "nsc", **(nsc_options or {})}} if nsc else {}
    base = settled_cruise(settle, h_ref, **ref_kw)
    state0 = base.sim.state.copy()
    if perturb:
        signs = np.random.default_rng(1).choice([-1.0, 1.0], size=state0.v.shape)
        state0.v = state0.v * (1.0 + perturb * signs)
    wheels = _wheel_names(base)
    patterns = None if record == "all" else tuple(w + ".pos.z" for w in wheels)
    ref = None
    runs = []
    for h in (h_ref,) + tuple(steps):
        walls = []
        for _ in range(1 if ref is None else repeats):
            kw = ref_kw
            if ref is not None and not nsc:
                kw = {"integrator": integrator, "options": {**(options or {}), **_contact_options(explicit_contact)}}
                if fidelity != "links":
                    kw = {"fidelity": fidelity, "options": dict(options or {}),
                          **({"integrator": integrator} if integrator != "euler-implicit-linearized" else {})}
            prep = _prepare(cruise_scenario(step=h, output_step=0.01, record=patterns, **kw))
            prep.sim.state = state0.copy()
            it = prep.sim.integrator
            worst = [0.0]

            def cb(sim, it=it, worst=worst):
                v = it.last.get("pos_violation", 0.0)
                if v > worst[0]:
                    worst[0] = v
                return False

            t0 = time.perf_counter()
            try:
                res = prep.sim.run(state0.t + t_end, callback=cb)
                status = res.metadata.get("status")
            except (FloatingPointError, np.linalg.LinAlgError, ValueError) as err:
                res, status = None, f"failed: {err}"
            walls.append(time.perf_counter() - t0)
        wall = float(np.mean(walls))
        ok = status == "complete"
        z = np.array([res[w + ".pos.z"] for w in wheels]) if ok else None
        row = {"step_size_s": h, "status": status, "wall_time_s": wall,
               "wall_per_sim": wall / t_end, "ms_per_step": 1e3 * wall / max(prep.sim.steps, 1),
               "wall_per_sim_median": float(np.median(walls)) / t_end,
               "wall_per_sim_best": min(walls) / t_end, "wall_per_sim_runs": [w / t_end for w in walls],
               "max_joint_violation_m": worst[0], "load": _load()}
        if ref is None:
            ref = (res.t.copy(), z)
        elif ok:
            n = min(len(ref[0]), len(res.t))
            if np.max(np.abs(ref[0][:n] - res.t[:n])) > 1e-9:
                raise RuntimeError("m113-stepsize: output times differ between runs")
            row["max_wheel_z_error_m"] = float(np.max(np.abs(z[:, :n] - ref[1][:, :n])))
        runs.append(row)
    passing = [r for r in runs[1:] if r.get("max_wheel_z_error_m", np.inf) <= tol]
    best = max(passing, key=lambda r: r["step_size_s"]) if passing else runs[0]
    return {"benchmark": "m113-stepsize", "fidelity": fidelity, "contact_method": contact_method,
            "integrator": "nsc-euler" if nsc else integrator,
            "options": dict(ref_kw["options"]) if nsc else dict(options or {}), "h_ref_s": h_ref,
            "explicit_contact": bool(explicit_contact), "tolerance_m": tol, "record": record,
            "t_end_s": t_end, "settle_s": settle, "perturb": perturb,
            "largest_step_s": best["step_size_s"], "wall_per_sim_at_largest": best["wall_per_sim"],
            "wall_per_sim_median_at_largest": best.get("wall_per_sim_median"),
            "wall_per_sim_best_at_largest": best["wall_per_sim_best"], "repeats": repeats,
            "runs": runs, "machine": machine_info()}


@bench("m113-step")
def m113_step(t_end: float = 20.0, step: float = 1e-4, height: float = 0.6, x: float = 1.5,
              delay: float = 0.5, explicit_contact: bool = False) -> dict:
    """Full-throttle climb attempt at a rigid step of ``height`` m (timber on concrete), wall time of the run.

    ``explicit_contact``: the contact forces act explicitly (scenario option ``contact.implicit = false``).
    """
    concrete = Material("concrete", young=2e10, poisson=0.3, restitution=0.1, friction=0.8)
    timber = Material("timber", young=1e10, poisson=0.3, restitution=0.1, friction=0.8)
    sc = Scenario(vehicle="m113", terrain=Flat(material=concrete) + Step(height, x=x, material=timber),
                  driver=FullThrottle(delay=delay), t_end=t_end, step=step, output_step=0.01, name="m113-step",
                  options=_contact_options(explicit_contact))
    prep = _prepare(sc)
    prep.sim.run(2 * step)  # compile
    r = time_per_step(prep.sim, t_end - 2 * step)
    ch = prep.sim.system.body_names.index("chassis")
    q = prep.sim.state.q
    out = {"benchmark": "m113-step", "height_m": height, "step_x_m": x, "t_end_s": t_end,
           "explicit_contact": bool(explicit_contact), "load": _load(),
           "chassis_x_end_m": float(q[ch, 0]), "chassis_z_end_m": float(q[ch, 2]), "machine": machine_info()}
    out.update(r)
    return out
