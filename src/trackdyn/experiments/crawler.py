"""han-sander-mao §6 (Figs. 13-14): the crawler's track subsystem alone on flat ground, forward and reverse.

The paper drives its crawler's track subsystem on flat ground with the sprocket's speed rising linearly from
rest to 3.14 rad/s in 0.75 s, once forwards (Fig. 13) and once in reverse (Fig. 14). Its text does not say what
the two figures plot, nor give a number read from them. :func:`track_only_study` runs the same two manoeuvres
on the ``links`` fidelity (absolute coordinates) by default, or on any fidelity whose check takes the scenario
(``fidelity``; ``recursive`` with its ``recursive-rk4`` and the sprockets' speed servo):

- **the track subsystem alone**: the vehicle subsystem frozen into one rigid undercarriage (``frame.locked``:
  each undercarriage frame welded to the chassis at its pivot, no spring), so that what moves relative to it is
  the track: the links on their pins, held by the sprocket, idler, lower and carrier rollers, on the ground.
  The undercarriage is free (it settles on its tracks and is carried by them), as in the paper's settling
  step (§3.4: "placing the undercarriage just above ground level ... settles ... with the sprocket locked");
- **the drive**: both sprockets' speed prescribed (:class:`~trackdyn.driver.SprocketSpeed`): held at zero for
  ``settle`` seconds (the paper's settling with the sprocket locked), then the ramp to ``±speed`` in ``ramp``
  seconds, then held for ``hold`` seconds.

Recorded per run: the chassis (the undercarriage), both sprockets' speed, every shoe of one side (position,
its front pin's force) and that side's tensioner force. Figures of merit (``summary``), each against its
closed form where there is one:

- the mean track circulation speed (the rate at which pins cross the middle of the top run, relative to the
  undercarriage, from half a second after the ramp to the end) against ``n p ω / 2π`` (one pitch per tooth: exact for a chain on an n-tooth sprocket), and
  against ``r_p ω`` (the pitch-circle speed, ``sin(π/n)/(π/n)`` times larger);
- the undercarriage's mean speed over the same time against the track speed: the slip (``1 - v / v_track``);
- the speed ripple of the undercarriage at the tooth-passing frequency ``n ω / 2π`` (the amplitude of that
  Fourier component) against the same harmonic of the chordal speed ``r_p ω cos φ``, ``|φ| <= π/n``, which a
  rigid undercarriage on a rigid track would follow exactly (:func:`_chordal_first_harmonic`);
- during the ramp, the bottom strand's tension less the top strand's against the traction ``M a / 2`` a side
  that the undercarriage's measured acceleration needs (the strands' mid-run tensions: the ground under the
  rollers takes some of the difference before the middle of the bottom run);
- the tension of the top and bottom strands (the mean pin force of the links in each straight run) before and
  after the drive starts: forwards the rear sprocket pulls the bottom strand, in reverse the top strand and,
  through it, the idler's recoil spring.
"""

from __future__ import annotations

import math
import time
import warnings
from pathlib import Path

import numpy as np

from ..driver import SprocketSpeed
from ..formulations.contract import check_running_gear, get_formulation
from ..math.quaternion import quat_to_matrix
from ..sim.run import prepare
from ..spec.io import get as get_vehicle
from ..spec.scenario import Scenario
from ..terrain import Flat

__all__ = ["PAPER", "track_only_study", "write_track_only_study"]

#: what the paper states (§6)
PAPER = {"sprocket_speed_radps": 3.14, "ramp_s": 0.75, "ground": "flat", "runs": ("forward", "reverse"),
         "figures": {"forward": "Fig. 13", "reverse": "Fig. 14"}}

#: the record's sampling interval (s)
RECORD_INTERVAL = 5e-3
#: the window (s) at the end of each run over which the steady figures are averaged
STEADY_WINDOW = 1.0


def _record(side: str) -> tuple:
    return ("chassis.pos.*", "chassis.quat.*", "chassis.vel.*", "left.sprocket.omega.y", "right.sprocket.omega.y",
            f"{side}.shoe[*].pos.[xz]", f"{side}.shoe[*].pos.y", f"{side}.shoe[*].pin.force.*",
            f"{side}.tensioner.force", f"{side}.idler.pos.[xz]")


def _in_chassis(s: dict, names: list[str]) -> np.ndarray:
    """(n_t, n_shoes, 3) positions of ``names`` in the chassis frame (x forward, z up of the undercarriage)."""
    q = np.column_stack([s[f"chassis.quat.e{i}"] for i in range(4)])
    R = quat_to_matrix(q)
    c = np.column_stack([s[f"chassis.pos.{a}"] for a in "xyz"])
    P = np.stack([np.column_stack([s[f"{n}.pos.{a}"] for a in "xyz"]) for n in names], axis=1)
    return np.einsum("tji,tkj->tki", R, P - c[:, None, :])


def track_only_study(vehicle: str = "crawler", speed: float = 3.14, ramp: float = 0.75, settle: float = 0.5,
                     hold: float = 2.5, step: float | None = None, side: str = "left", progress=None,
                     fidelity: str = "links") -> dict:
    """Run the forward and reverse manoeuvres (module docstring) on ``fidelity`` (a registered fidelity whose
    check takes both scenarios, prescribed sprocket speeds included; ValueError naming it and the reason
    otherwise, before any run). Returns ``{"settings", "runs", "series", "t", "summary", "closed_form",
    "paper"}``; ``progress(direction, row)`` is called after each run."""
    for name, v in (("speed", speed), ("ramp", ramp), ("hold", hold)):
        if not (math.isfinite(v) and v > 0):
            raise ValueError(f"crawler study: {name} = {v!r}: must be a positive number")
    if not (math.isfinite(settle) and settle >= 0):
        raise ValueError(f"crawler study: settle = {settle!r}: must be a non-negative number of seconds")
    if side not in ("left", "right"):
        raise ValueError(f"crawler study: side must be 'left' or 'right', got {side!r}")
    if hold < STEADY_WINDOW:
        raise ValueError(f"crawler study: hold = {hold} s: the steady figures average the last {STEADY_WINDOW} s")
    spec = get_vehicle(vehicle)
    if getattr(spec, "running_gear", "tracks") != "tracks":
        raise ValueError(f"crawler study: vehicle {vehicle!r} has no tracks")
    if spec.frame is not None:
        spec = spec.replace({"frame.locked": True})
    try:
        formulation = get_formulation(fidelity)
    except ValueError as err:
        raise ValueError(f"crawler study: fidelity = {fidelity!r}: not a registered fidelity ({err})") from None
    if step is None:
        step = formulation.defaults({})[1]
    every = max(1, int(round(RECORD_INTERVAL / step)))
    t_end = settle + ramp + hold
    n = spec.sprocket.n_teeth
    rp = spec.sprocket.assembly_radius
    pitch = spec.shoes.pitch
    closed = {"track_speed_mps": n * pitch * speed / (2 * math.pi), "pitch_circle_speed_mps": rp * speed,
              "chordal_ripple": 1.0 - math.cos(math.pi / n), "chordal_first_harmonic": _chordal_first_harmonic(n),
              "tooth_frequency_hz": n * speed / (2 * math.pi)}
    scenarios = {direction: Scenario(vehicle=spec, fidelity=fidelity, terrain=Flat(),
                                     driver=SprocketSpeed.ramp(settle, settle + ramp, sign * speed), t_end=t_end,
                                     step=step, output_step=every * step, record=_record(side),
                                     name=f"crawler-track-only-{direction}")
                 for direction, sign in (("forward", 1.0), ("reverse", -1.0))}
    for sc in scenarios.values():  # both refused before either runs
        try:
            check_running_gear(fidelity, spec)
            formulation.check(sc)
        except ValueError as err:
            raise ValueError(f"crawler study: fidelity = {fidelity!r} cannot run the track-only study, whose "
                             f"sprocket speeds are prescribed (SprocketSpeed): {err}") from None
    rows, series, times = {}, {}, {}
    for direction, sc in scenarios.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the closed loops' redundant pin rows
            prep = prepare(sc)
            w0 = time.perf_counter()
            res = prep.sim.run(sc.t_end)
            wall = time.perf_counter() - w0
        sim_t = float(res.t[-1] - res.t[0]) if len(res.t) > 1 else 0.0
        rows[direction] = {"status": res.status, "sim_time_s": sim_t, "wall_s": wall, "step_s": step,
                           "integrator": sc.integrator, "bodies": prep.sim.system.nb,
                           "wall_per_sim": wall / sim_t if sim_t else float("nan")}
        series[direction] = {c: np.asarray(res[c], dtype=float) for c in res.columns}
        times[direction] = np.asarray(res.t, dtype=float)
        if progress is not None:
            progress(direction, rows[direction])
    out = {"settings": {"vehicle": vehicle, "fidelity": fidelity, "track_only": True, "frame_locked": spec.frame is not None,
                        "sprocket_speed_radps": speed, "ramp_s": ramp, "settle_s": settle, "hold_s": hold,
                        "t_end_s": t_end, "step_s": step, "record_interval_s": every * step, "side": side,
                        "n_teeth": n, "pitch_m": pitch, "pitch_radius_m": rp, "shoes": spec.shoes.count,
                        "mass_kg": _vehicle_mass(spec)},
           "runs": rows, "series": series, "t": times, "closed_form": closed, "paper": PAPER}
    out["summary"] = _summary(out, spec)
    return out


def _vehicle_mass(spec) -> float:
    """The built vehicle's mass, kg (every body: chassis, frames, running gear, shoes, seat)."""
    from ..assembly.builder import build_vehicle

    return float(np.sum(build_vehicle(spec).model.body_arrays()[0]))


def _chordal_first_harmonic(n: int) -> float:
    """Amplitude of the tooth-frequency harmonic of the chordal speed ``r ω cos φ``, ``|φ| <= π/n``, over
    ``r ω``: ``(n/π) (sin((n-1)π/n)/(n-1) + sin((n+1)π/n)/(n+1))`` (1.64 % for n = 11): what a rigid
    undercarriage on a rigid track would show."""
    a = math.pi / n
    return (n / math.pi) * (math.sin((n - 1) * a) / (n - 1) + math.sin((n + 1) * a) / (n + 1))


def _strands(P: np.ndarray, spec) -> tuple[np.ndarray, np.ndarray]:
    """Masks (n_t, n_shoes) of the shoes in the straight top and bottom runs between sprocket and idler (chassis
    frame; the chassis's origin is its centre of mass: offsets from the spec's vehicle frame)."""
    com = np.asarray(spec.chassis.com)
    x = P[..., 0] + com[0]
    z = P[..., 2] + com[2]
    sx = spec.sprocket.location[0]
    ix = spec.idler.location[0]
    lo, hi = min(sx, ix), max(sx, ix)
    span = (x > lo + 0.5) & (x < hi - 0.5)  # clear of the sprocket's and idler's wraps
    zc = 0.5 * (spec.sprocket.location[1] + spec.idler.location[1])
    return span & (z > zc), span & (z < zc)


def _summary(res: dict, spec) -> dict:
    st, cf = res["settings"], res["closed_form"]
    side = st["side"]
    shoes = [f"{side}.shoe[{k}]" for k in range(st["shoes"])]
    out = {}
    for direction, s in res["series"].items():
        t = res["t"][direction]
        sign = 1.0 if direction == "forward" else -1.0
        P = _in_chassis(s, shoes)
        top, bottom = _strands(P, spec)
        steady = t >= t[-1] - STEADY_WINDOW + 1e-9
        cruise = t >= st["settle_s"] + st["ramp_s"] + 0.5  # from half a second after the ramp
        before = (t >= st["settle_s"] - 0.2) & (t <= st["settle_s"])
        # track circulation: the pins crossing the middle of the top run (x fixed in the undercarriage frame),
        # their crossing times interpolated: p (crossings - 1) / (last - first) over the steady window
        track = _crossing_speed(t, P, top, cruise, 0.5 * (spec.sprocket.location[0] + spec.idler.location[0])
                                - spec.chassis.com[0], st["pitch_m"])
        vx = s["chassis.vel.x"]
        v_mean = float(np.mean(vx[cruise]))
        force = np.stack([np.sqrt(sum(s[f"{n}.pin.force.{a}"] ** 2 for a in "xyz")) for n in shoes], axis=1)

        def strand(mask_, window):
            sel = mask_[window]
            f = force[window]
            return float(np.mean(f[sel])) if np.any(sel) else float("nan")

        om = s[f"{side}.sprocket.omega.y"]
        # ripple at the tooth-passing frequency: the amplitude of vx's Fourier component there over the window
        tt = t[steady]
        fz = cf["tooth_frequency_hz"]
        e = np.exp(-2j * math.pi * fz * tt)
        amp = float(2 * abs(np.mean((vx[steady] - np.mean(vx[steady])) * e)))
        # during the ramp (its middle, clear of the jerks at its ends): the strands' difference and the traction
        # the undercarriage's acceleration needs, M a / 2 a side
        mid = (t > st["settle_s"] + 0.2 * st["ramp_s"]) & (t < st["settle_s"] + 0.8 * st["ramp_s"])
        acc = float(np.polyfit(t[mid], vx[mid], 1)[0]) if np.count_nonzero(mid) > 2 else float("nan")
        diff = np.nanmean(np.where(bottom, force, np.nan), axis=1) - np.nanmean(np.where(top, force, np.nan), axis=1)
        rest = (t >= st["settle_s"] - 0.2) & (t <= st["settle_s"])
        out[direction] = {
            "status": res["runs"][direction]["status"],
            "ramp_acceleration_mps2": acc,
            "ramp_traction_per_side_N": 0.5 * res["settings"]["mass_kg"] * acc,
            "ramp_bottom_minus_top_N": float(np.nanmean(diff[mid])),
            "rest_bottom_minus_top_N": float(np.nanmean(diff[rest])),
            "sprocket_speed_end_radps": float(np.mean(om[steady])),
            "track_speed_mps": sign * track,
            "track_speed_over_closed_form": sign * track / cf["track_speed_mps"],
            "track_speed_over_pitch_circle": sign * track / cf["pitch_circle_speed_mps"],
            "undercarriage_speed_mps": v_mean,
            "slip": 1.0 - (sign * v_mean) / (sign * track) if track else float("nan"),
            "distance_m": float(s["chassis.pos.x"][-1] - s["chassis.pos.x"][0]),
            "speed_ripple_at_tooth_frequency_mps": amp,
            "speed_ripple_over_pitch_circle_speed": amp / cf["pitch_circle_speed_mps"],
            "speed_ripple_over_chordal": amp / (cf["pitch_circle_speed_mps"] * cf["chordal_first_harmonic"]),
            "pitch_deg_range": _pitch_range(s, steady),
            "top_strand_tension_before_N": strand(top, before),
            "bottom_strand_tension_before_N": strand(bottom, before),
            "top_strand_tension_steady_N": strand(top, steady),
            "bottom_strand_tension_steady_N": strand(bottom, steady),
            "tensioner_force_steady_N": float(np.mean(s[f"{side}.tensioner.force"][steady]))
            if f"{side}.tensioner.force" in s else float("nan"),
        }
    return out


def _crossing_speed(t, P, top, window, x_c: float, pitch: float) -> float:
    """Mean speed (m/s, signed: + when the top run moves forwards) at which the pins of the top run cross
    ``x = x_c`` (chassis frame) within ``window``: ``pitch (k - 1) / (t_k - t_1)`` over the k interpolated
    crossing times. NaN with fewer than two crossings."""
    x = P[..., 0] - x_c
    times, signs = [], []
    for i in np.nonzero(window[1:] & window[:-1])[0]:
        a, b = x[i], x[i + 1]
        cross = top[i] & top[i + 1] & (np.sign(a) != np.sign(b)) & (a != b)
        for k in np.nonzero(cross)[0]:
            times.append(t[i] + (t[i + 1] - t[i]) * a[k] / (a[k] - b[k]))
            signs.append(1.0 if b[k] > a[k] else -1.0)
    if len(times) < 2:
        return float("nan")
    times = np.sort(np.asarray(times))
    return float(np.sign(np.mean(signs)) * pitch * (len(times) - 1) / (times[-1] - times[0]))


def _pitch_range(s: dict, window) -> list[float]:
    q = np.column_stack([s[f"chassis.quat.e{i}"] for i in range(4)])[window]
    R = quat_to_matrix(q)
    pitch = np.degrees(np.arctan2(-R[:, 2, 0], R[:, 0, 0]))
    return [float(pitch.min()), float(pitch.max())]


def write_track_only_study(res: dict, folder: Path, spec=None) -> list[str]:
    """The figures of the study into ``folder``: per direction (the paper's Fig. 13 forward, Fig. 14 reverse) the
    track's side view at four instants, the sprocket and track speeds, the strand tensions and one link's path;
    and one figure overlaying both directions. Returns the paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    st, cf = res["settings"], res["closed_form"]
    spec = spec or get_vehicle(st["vehicle"])
    side = st["side"]
    shoes = [f"{side}.shoe[{k}]" for k in range(st["shoes"])]
    com = np.asarray(spec.chassis.com)
    paths = []
    for direction, fig_name in (("forward", "fig13-forward"), ("reverse", "fig14-reverse")):
        s, t = res["series"][direction], res["t"][direction]
        sign = 1.0 if direction == "forward" else -1.0
        P = _in_chassis(s, shoes)
        top, bottom = _strands(P, spec)
        fig, ax = plt.subplots(2, 2, figsize=(12, 7.5))
        # (a) side view of the track in the undercarriage's frame
        t0, t1 = st["settle_s"], st["settle_s"] + st["ramp_s"]
        for tk, col in zip((t0, 0.5 * (t0 + t1), t1, t[-1]), ("0.6", "C0", "C1", "C3")):
            i = int(np.argmin(abs(t - tk)))
            x = np.append(P[i, :, 0], P[i, 0, 0]) + com[0]
            z = np.append(P[i, :, 2], P[i, 0, 2]) + com[2]
            ax[0, 0].plot(x, z, "-o", ms=2.5, lw=0.8, color=col, label=f"t = {t[i]:.2f} s")
        ax[0, 0].plot(x[:1], z[:1], "k*", ms=9, label=f"{shoes[0]} at the end")
        ax[0, 0].set_aspect("equal")
        ax[0, 0].set_xlabel("x in the undercarriage frame, m (forward)")
        ax[0, 0].set_ylabel("z, m")
        ax[0, 0].set_title("track pins (side view)")
        ax[0, 0].legend(fontsize=7, loc="upper center", ncol=3)
        # (b) speeds
        ax[0, 1].plot(t, s[f"{side}.sprocket.omega.y"] * cf["track_speed_mps"] / st["sprocket_speed_radps"], lw=1,
                      label="sprocket ω × n p / 2π (track speed, no slip)")
        ax[0, 1].plot(t, s["chassis.vel.x"], lw=1, label="undercarriage forward speed")
        ax[0, 1].axhline(sign * cf["pitch_circle_speed_mps"], color="0.5", ls=":", lw=0.8, label="r_p ω at 3.14 rad/s")
        ax[0, 1].set_xlabel("t, s")
        ax[0, 1].set_ylabel("m/s")
        ax[0, 1].set_title("speeds")
        ax[0, 1].legend(fontsize=7)
        # (c) strand tensions
        force = np.stack([np.sqrt(sum(s[f"{n}.pin.force.{a}"] ** 2 for a in "xyz")) for n in shoes], axis=1)
        for mask, lab in ((top, "top strand"), (bottom, "bottom strand")):
            f = np.where(mask, force, np.nan)
            ax[1, 0].plot(t, 1e-3 * np.nanmean(f, axis=1), lw=1, label=f"{lab} (mean pin force)")
        if f"{side}.tensioner.force" in s:
            ax[1, 0].plot(t, 1e-3 * np.abs(s[f"{side}.tensioner.force"]), lw=1, ls="--", label="idler recoil spring")
        ax[1, 0].set_xlabel("t, s")
        ax[1, 0].set_ylabel("kN")
        ax[1, 0].set_title("track tension")
        ax[1, 0].legend(fontsize=7)
        # (d) one link's path relative to the undercarriage
        ax[1, 1].plot(P[:, 0, 0] + com[0], P[:, 0, 2] + com[2], lw=0.8)
        ax[1, 1].set_aspect("equal")
        ax[1, 1].set_xlabel("x, m")
        ax[1, 1].set_ylabel("z, m")
        ax[1, 1].set_title(f"path of {shoes[0]} in the undercarriage frame")
        fig.suptitle(f"crawler, track subsystem alone, {direction}: sprocket 0 → {sign * st['sprocket_speed_radps']:g} "
                     f"rad/s in {st['ramp_s']:g} s (han-sander-mao {PAPER['figures'][direction]}'s run)")
        fig.tight_layout()
        p = folder / f"{fig_name}.png"
        fig.savefig(p, dpi=110)
        plt.close(fig)
        paths.append(str(p))
    fig, ax = plt.subplots(1, 2, figsize=(12, 4))
    for direction in ("forward", "reverse"):
        s, t = res["series"][direction], res["t"][direction]
        ax[0].plot(t, s["chassis.vel.x"], lw=1, label=direction)
        P = _in_chassis(s, shoes)
        top, bottom = _strands(P, spec)
        force = np.stack([np.sqrt(sum(s[f"{n}.pin.force.{a}"] ** 2 for a in "xyz")) for n in shoes], axis=1)
        for mask, ls, lab in ((top, "-", "top"), (bottom, "--", "bottom")):
            ax[1].plot(t, 1e-3 * np.nanmean(np.where(mask, force, np.nan), axis=1), ls=ls, lw=1,
                       label=f"{direction}, {lab} strand")
    ax[0].set_xlabel("t, s")
    ax[0].set_ylabel("undercarriage speed, m/s")
    ax[0].legend(fontsize=8)
    ax[1].set_xlabel("t, s")
    ax[1].set_ylabel("mean pin force, kN")
    ax[1].legend(fontsize=8)
    fig.suptitle("crawler, track subsystem alone: forward against reverse")
    fig.tight_layout()
    p = folder / "forward-reverse.png"
    fig.savefig(p, dpi=110)
    plt.close(fig)
    paths.append(str(p))
    return paths
