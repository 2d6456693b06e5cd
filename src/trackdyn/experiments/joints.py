"""The track-joint study of wallin-shabana-2013 §9 on its APC: Figs. 8-16 from trackdyn's own runs (issue #30).

The paper drives its APC (64 links a side, Tables 1-2) on flat ground with both sprockets' speed prescribed:
0 for 1 s, then rising to 25 rad/s at 8 s, then held (its Fig. 7). It compares the track pins as ideal
constraints, penalty forces (k = 1e9 and 1e7 N/m, c = 1e5 N s/m), bushings and ANCF cables. :func:`joints_study`
runs the same scenario at each of trackdyn's fidelities, one after the other in this process:

========================  ========  ============================================================================
run                       fidelity  what it stands for
========================  ========  ============================================================================
``constrained``           links     ideal revolute pins (Lagrange multipliers): the reference
``no-suspension``         links     the same with the road arms welded (``suspension.locked``): Fig. 8
``penalty-1e9``           penalty   the pins' five revolute equations as forces, k = 1e9 N/m, c = 1e5 N s/m
``penalty-1e7``           penalty   the soft penalty, k = 1e7 N/m, c = 1e5 N s/m (Figs. 14-16)
``bushing``               bushing   6-dof linear bushings, the fidelity's defaults (1e9 N/m, 1e5 N s/m)
``ancf``                  ancf      once that fidelity is registered (docs/joints/ancf.md)
========================  ========  ============================================================================

Recorded per run: the chassis's position, attitude and forward speed, and one shoe's position and its pin's force
(``SIDE.shoe[k].pin.force.*``: the world force on the next shoe at the pin, the joint's reaction or the compliant
pin's force, the same series at every fidelity) and, for penalty, the pin's deformation (``.pin.deformation``).
:func:`write_joints_study` draws the paper's figures with every formulation overlaid and writes ``joints.json``
(the figures of merit below and the CPU-time table).

Figures of merit (``summary``): the chassis's drop from its assembled height with and without suspension (Fig. 8:
the largest over the first second, before the drive starts, and the settled one at 1 s); each run's final position
and speed against the constrained run's (Figs. 9-10); the largest distance, in the chassis frame, between the
shoe's path and the constrained run's at the same times (Fig. 11); the RMS of each run's 30 Hz filtered pin force
minus the constrained run's, relative to the constrained run's filtered RMS (Figs. 12-15); the penalty pins'
deformation, and its mean times k against the mean force (Fig. 16: a spring's d = F / k).

Timings: wall and CPU seconds of each run's stepping (the build and the first step's compilation are not in it)
per simulated second, and their ratio to the constrained run's. The runs are sequential, not interleaved:
``trackdyn bench apc-joints`` is the side-by-side measurement.
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..driver import SprocketSpeed
from ..formulations.contract import formulation_names, get_formulation
from ..io.filters import lowpass_fft, sample_interval
from ..math.quaternion import quat_to_matrix
from ..sim.run import prepare
from ..spec.io import get as get_vehicle
from ..spec.scenario import Scenario
from ..terrain import Flat

__all__ = ["JointRun", "JOINT_RUNS", "PAPER", "joints_study", "write_joints_study"]


@dataclass(frozen=True)
class JointRun:
    """One run of the study: a fidelity with its options and spec changes."""

    key: str
    label: str
    fidelity: str
    options: dict = field(default_factory=dict)
    changes: dict = field(default_factory=dict)


#: wallin-shabana-2013 §6.2 / §9: penalty k = 1e9 N/m (and 1e7, the soft study), c = 1e5 N s/m
JOINT_RUNS = (
    JointRun("constrained", "constrained (ideal pins)", "links"),
    JointRun("no-suspension", "constrained, no suspension", "links", changes={"suspension.locked": True}),
    JointRun("penalty-1e9", "penalty k = 1e9 N/m", "penalty", options={"penalty.k": 1e9, "penalty.c": 1e5}),
    JointRun("penalty-1e7", "penalty k = 1e7 N/m", "penalty", options={"penalty.k": 1e7, "penalty.c": 1e5}),
    JointRun("bushing", "bushing", "bushing"),
    JointRun("ancf", "ANCF cable", "ancf"),
)

#: what the paper states (§9), for the comparison in the docs
PAPER = {"drop_with_suspension_m": 0.07, "drop_without_suspension_m": 0.0064,
         "cpu_ratio": {"penalty-1e9": 6.0, "bushing": 3.0, "ancf": 5.0}, "cutoff_hz": 30.0,
         "sprocket_speed_radps": 25.0, "ramp_s": (1.0, 8.0)}


#: the record's sampling interval (s): 2 kHz, so that nothing below 1 kHz folds into the 30 Hz band
RECORD_INTERVAL = 5e-4


def _record(side: str, shoe: int) -> tuple:
    s = f"{side}.shoe[{shoe}]"
    return ("chassis.pos.*", "chassis.quat.*", "chassis.vel.x", f"{s}.pos.*", f"{s}.pin.force.*",
            f"{s}.pin.deformation")


def _scenario(run: JointRun, spec, t_end, ramp, speed, step, side, shoe) -> Scenario:
    """The run's scenario, sampled every :data:`RECORD_INTERVAL` (or every step, if longer): the pin forces carry
    frequencies far above the 30 Hz cut-off, and a coarse record would fold them into the filtered band."""
    sp = spec.replace(run.changes) if run.changes else spec
    if step is None:
        step = get_formulation(run.fidelity).defaults(run.options)[1]
    every = max(1, int(round(RECORD_INTERVAL / step)))
    return Scenario(vehicle=sp, fidelity=run.fidelity, terrain=Flat(), driver=SprocketSpeed.ramp(ramp[0], ramp[1], speed),
                    t_end=t_end, step=step, output_step=every * step, record=_record(side, shoe),
                    name=f"joints-{run.key}", options=dict(run.options))


def joints_study(vehicle: str = "apc", t_end: float = 10.0, ramp=(1.0, 8.0), speed: float = 25.0,
                 step: float | None = None, side: str = "left", shoe: int = 10, cutoff_hz: float = 30.0,
                 runs=None, progress=None) -> dict:
    """Run the study (module docstring). Returns ``{"runs": {key: row}, "series": {key: {name: array}},
    "t": {key: times}, "summary": {...}, "settings": {...}}``.

    ``runs``: keys of :data:`JOINT_RUNS` (default every one whose fidelity is registered; ``constrained`` is
    always run first, the reference). ``progress(key, row)`` is called after each run.
    """
    t0, t1 = (float(x) for x in ramp)
    if not 0.0 <= t0 < t1:
        raise ValueError(f"joints study: ramp = {ramp!r}: expected 0 <= start < end (s)")
    if not (t_end > 0 and math.isfinite(t_end)):
        raise ValueError(f"joints study: t_end must be a positive number of seconds, got {t_end!r}")
    if not (cutoff_hz > 0):
        raise ValueError(f"joints study: cutoff_hz must be > 0, got {cutoff_hz!r}")
    if side not in ("left", "right"):
        raise ValueError(f"joints study: side must be 'left' or 'right', got {side!r}")
    spec = get_vehicle(vehicle)
    count = spec.shoes.count
    if not isinstance(shoe, int) or shoe < 0 or (count is not None and shoe >= count):
        raise ValueError(f"joints study: shoe = {shoe!r}: expected an index 0 .. {count - 1 if count else 'n-1'}")
    by_key = {r.key: r for r in JOINT_RUNS}
    registered = formulation_names()
    if runs is None:
        chosen = [r for r in JOINT_RUNS if r.fidelity in registered]
    else:
        unknown = [k for k in runs if k not in by_key]
        if unknown:
            raise ValueError(f"joints study: unknown runs {unknown}; choose from {list(by_key)}")
        missing = [k for k in runs if by_key[k].fidelity not in registered]
        if missing:
            raise ValueError(f"joints study: runs {missing} need fidelities that are not registered "
                             f"({sorted({by_key[k].fidelity for k in missing})})")
        chosen = [by_key[k] for k in runs]
    if chosen[0].key != "constrained":
        chosen = [by_key["constrained"]] + [r for r in chosen if r.key != "constrained"]
    scenarios = {r.key: _scenario(r, spec, t_end, (t0, t1), speed, step, side, shoe) for r in chosen}
    rows, series, times = {}, {}, {}
    for run in chosen:
        sc = scenarios[run.key]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the closed loops' redundant pin rows (links)
            w0 = time.perf_counter()
            prep = prepare(sc)
            build_s = time.perf_counter() - w0
            w1, c1 = time.perf_counter(), time.process_time()
            res = prep.sim.run(sc.t_end)
            wall, cpu = time.perf_counter() - w1, time.process_time() - c1
        sim_t = float(res.t[-1] - res.t[0]) if len(res.t) > 1 else 0.0
        rows[run.key] = {"label": run.label, "fidelity": run.fidelity, "options": dict(run.options),
                         "changes": dict(run.changes), "step_s": sc.step, "integrator": sc.integrator,
                         "status": res.status, "sim_time_s": sim_t, "build_s": build_s, "wall_s": wall,
                         "cpu_s": cpu, "wall_per_sim": wall / sim_t if sim_t else float("nan"),
                         "cpu_per_sim": cpu / sim_t if sim_t else float("nan"),
                         "bodies": prep.sim.system.nb, "constraint_rows": prep.sim.system.nc}
        series[run.key] = {c: np.asarray(res[c], dtype=float) for c in res.columns}
        times[run.key] = np.asarray(res.t, dtype=float)
        if progress is not None:
            progress(run.key, rows[run.key])
    ref = rows["constrained"]
    for r in rows.values():
        r["wall_ratio"] = r["wall_per_sim"] / ref["wall_per_sim"]
        r["cpu_ratio"] = r["cpu_per_sim"] / ref["cpu_per_sim"]
    out = {"settings": {"vehicle": vehicle, "t_end_s": float(t_end), "ramp_s": [t0, t1], "sprocket_speed_radps": speed,
                        "side": side, "shoe": shoe, "pin": f"{side}.shoe[{shoe}].pin", "cutoff_hz": cutoff_hz,
                        "runs_sequential": True},
           "runs": rows, "series": series, "t": times, "paper": PAPER}
    out["derived"] = _derived(out)
    out["summary"] = _summary(out)
    return out


# ---------------------------------------------------------------------------------------------------------------
def _shoe_in_chassis(s: dict, shoe: str) -> np.ndarray:
    """(n, 3) the shoe's position in the chassis frame (x forward, z up of the hull)."""
    q = np.column_stack([s[f"chassis.quat.e{i}"] for i in range(4)])
    d = np.column_stack([s[f"{shoe}.pos.{a}"] - s[f"chassis.pos.{a}"] for a in "xyz"])
    return np.einsum("nji,nj->ni", quat_to_matrix(q), d)


def _derived(res: dict) -> dict:
    """Per run, once for the summary and the figures: the shoe's path in the chassis frame (``shoe_path``) and
    the pin's longitudinal and vertical forces low-passed at the cut-off (``force_x``, ``force_z``)."""
    st = res["settings"]
    shoe = f"{st['side']}.shoe[{st['shoe']}]"
    out = {}
    for key, s in res["series"].items():
        d = {}
        if f"{shoe}.pos.x" in s:
            d["shoe_path"] = _shoe_in_chassis(s, shoe)
            dt = sample_interval(res["t"][key], "the record's times")
            for a in "xz":
                d[f"force_{a}"] = lowpass_fft(s[f"{st['pin']}.force.{a}"], dt, st["cutoff_hz"])
        out[key] = d
    return out


def _summary(res: dict) -> dict:
    st = res["settings"]
    ser, tt, rows, der = res["series"], res["t"], res["runs"], res["derived"]
    pin = st["pin"]
    t_ramp = st["ramp_s"][0]
    out = {}
    # Fig. 8: the chassis's drop from its assembled height before the drive starts
    for key in ("constrained", "no-suspension"):
        if key in ser:
            t, z = tt[key], ser[key]["chassis.pos.z"]
            pre = t <= t_ramp + 1e-9
            out[f"drop_{key}"] = {"largest_m": float(z[0] - z[pre].min()),
                                  "settled_m": float(z[0] - z[pre][-1]), "at_s": float(t[pre][-1])}
    ref = ser["constrained"]
    tref = tt["constrained"]
    p_ref = der["constrained"]["shoe_path"]
    f_ref = {a: der["constrained"][f"force_{a}"] for a in "xz"}
    per = {}
    for key, s in ser.items():
        t = tt[key]
        row = {"x_end_m": float(s["chassis.pos.x"][-1]), "vx_end_mps": float(s["chassis.vel.x"][-1]),
               "status": rows[key]["status"]}
        if key != "constrained":
            row["x_end_minus_constrained_m"] = row["x_end_m"] - float(ref["chassis.pos.x"][-1])
            row["vx_end_minus_constrained_mps"] = row["vx_end_mps"] - float(ref["chassis.vel.x"][-1])
        if key != "no-suspension" and "shoe_path" in der[key] and len(t) == len(tref):
            p = der[key]["shoe_path"]
            if key != "constrained":
                row["shoe_path_max_dev_m"] = float(np.max(np.linalg.norm(p - p_ref, axis=1)))
            row["shoe_path_extent_m"] = [float(np.ptp(p[:, 0])), float(np.ptp(p[:, 2]))]
            for a in "xz":
                raw = s[f"{pin}.force.{a}"]
                flt = der[key][f"force_{a}"]
                row[f"pin_force_{a}_raw_rms_N"] = float(np.sqrt(np.mean(raw ** 2)))
                row[f"pin_force_{a}_filtered_rms_N"] = float(np.sqrt(np.mean(flt ** 2)))
                row[f"pin_force_{a}_raw_max_N"] = float(np.max(np.abs(raw)))
                if key != "constrained":
                    row[f"pin_force_{a}_filtered_rel_rms_diff"] = float(
                        np.sqrt(np.mean((flt - f_ref[a]) ** 2)) / np.sqrt(np.mean(f_ref[a] ** 2)))
            dname = f"{pin}.deformation"
            if dname in s:
                d = s[dname]
                fmag = np.sqrt(sum(s[f"{pin}.force.{a}"] ** 2 for a in "xyz"))
                k = float(rows[key]["options"].get("penalty.k", float("nan")))
                row["deformation_max_m"] = float(np.max(d))
                row["deformation_mean_m"] = float(np.mean(d))
                row["deformation_k_over_force"] = float(k * np.mean(d) / np.mean(fmag))
        per[key] = row
    out["runs"] = per
    return out


# ---------------------------------------------------------------------------------------------------------------
def _fig(plt, path_stem, fig):
    fig.tight_layout()
    p = f"{path_stem}.png"
    fig.savefig(p, dpi=110)
    plt.close(fig)
    return p


def write_joints_study(res: dict, folder) -> list[str]:
    """The paper's Figs. 8-16 from :func:`joints_study`'s result into ``folder`` (PNG), every formulation
    overlaid; returns their paths. ``joints.json`` is the caller's (the CLI writes it with these paths)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    st = res["settings"]
    ser, tt, rows, der = res["series"], res["t"], res["runs"], res["derived"]
    shoe = f"{st['side']}.shoe[{st['shoe']}]"
    pin = st["pin"]
    cut = st["cutoff_hz"]
    main = [k for k in ser if k != "no-suspension"]
    lab = {k: rows[k]["label"] for k in ser}
    paths = []
    drive = f"sprocket 0 → {st['sprocket_speed_radps']:g} rad/s over {st['ramp_s'][0]:g}-{st['ramp_s'][1]:g} s"
    # Fig. 8
    fig, ax = plt.subplots(figsize=(7.5, 3.4))
    for k in ("constrained", "no-suspension"):
        if k in ser:
            ax.plot(tt[k], 1e3 * (ser[k]["chassis.pos.z"] - ser[k]["chassis.pos.z"][0]), lw=0.9,
                    label="with suspension" if k == "constrained" else "without suspension (arms welded)")
    ax.set_xlabel("t, s")
    ax.set_ylabel("chassis z - z(0), mm")
    ax.set_title(f"Chassis vertical displacement, ideal pins (wallin-shabana Fig. 8); {drive}", fontsize=8)
    ax.legend(fontsize=8)
    paths.append(_fig(plt, folder / "fig08_chassis_vertical", fig))
    # Figs. 9 and 10
    for name, col, ylab, title in (("fig09_chassis_position", "chassis.pos.x", "chassis x, m", "forward position (Fig. 9)"),
                                   ("fig10_chassis_velocity", "chassis.vel.x", "chassis vx, m/s",
                                    "forward velocity (Fig. 10)")):
        fig, ax = plt.subplots(figsize=(7.5, 3.4))
        for k in main:
            ax.plot(tt[k], ser[k][col], lw=0.9, label=lab[k])
        ax.set_xlabel("t, s")
        ax.set_ylabel(ylab)
        ax.set_title(f"Chassis {title}; {drive}", fontsize=8)
        ax.legend(fontsize=7)
        paths.append(_fig(plt, folder / name, fig))
    # Fig. 11: one panel per formulation, as the paper
    ncol = 2 if len(main) > 1 else 1
    nrow = -(-len(main) // ncol)
    fig, axs = plt.subplots(nrow, ncol, figsize=(5.0 * ncol, 1.9 * nrow + 0.6), sharex=True, sharey=True,
                            squeeze=False)
    for ax, k in zip(axs.flat, main):
        p = der[k]["shoe_path"]
        ax.plot(p[:, 0], p[:, 2], lw=0.6)
        ax.set_title(lab[k], fontsize=8)
        ax.set_aspect("equal")
    for ax in axs.flat[len(main):]:
        ax.set_visible(False)
    for ax in axs[-1]:
        ax.set_xlabel("x in chassis, m")
    for ax in axs[:, 0]:
        ax.set_ylabel("z in chassis, m")
    fig.suptitle(f"Trajectory of {shoe} in the chassis frame (Fig. 11)", fontsize=9)
    paths.append(_fig(plt, folder / "fig11_link_trajectory", fig))
    # Figs. 12-15: raw and filtered pin forces
    stiff = [k for k in main if k != "penalty-1e7"]
    soft = [k for k in ("constrained", "penalty-1e7") if k in ser]
    for name, keys, axis, what in (("fig12_pin_force_longitudinal", stiff, "x", "longitudinal"),
                                   ("fig13_pin_force_vertical", stiff, "z", "vertical"),
                                   ("fig14_pin_force_longitudinal_soft", soft, "x", "longitudinal"),
                                   ("fig15_pin_force_vertical_soft", soft, "z", "vertical")):
        fig, (a1, a2) = plt.subplots(2, 1, figsize=(7.5, 5.4), sharex=True)
        for k in keys:
            y = ser[k][f"{pin}.force.{axis}"]
            a1.plot(tt[k], 1e-3 * y, lw=0.5, label=lab[k])
            a2.plot(tt[k], 1e-3 * der[k][f"force_{axis}"], lw=0.9, label=lab[k])
        a1.set_ylabel(f"{what} force, kN")
        a1.set_title(f"{pin}: {what} ({axis}) force, raw (a) and {cut:g} Hz FFT low-pass (b)", fontsize=8)
        a2.set_ylabel("filtered, kN")
        a2.set_xlabel("t, s")
        a1.legend(fontsize=7)
        paths.append(_fig(plt, folder / name, fig))
    # Fig. 16
    pen = [k for k in ("penalty-1e9", "penalty-1e7") if k in ser and f"{pin}.deformation" in ser[k]]
    if pen:
        fig, ax = plt.subplots(figsize=(7.5, 3.4))
        for k in pen:
            ax.semilogy(tt[k], np.maximum(ser[k][f"{pin}.deformation"], 1e-12) * 1e3, lw=0.7, label=lab[k])
        ax.set_xlabel("t, s")
        ax.set_ylabel("pin deformation |r_P^ij|, mm")
        ax.set_title(f"{pin}: penalty joint deformation (Fig. 16)", fontsize=8)
        ax.legend(fontsize=7)
        paths.append(_fig(plt, folder / "fig16_penalty_deformation", fig))
    return [str(p) for p in paths]
